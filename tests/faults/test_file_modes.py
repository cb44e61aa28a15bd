"""Issue 28, item 6 of the issue (item 4 of the work): files keep their mode on replacement,
follow the umask when created, and a symbolic link is written through to its target.

Replacing a 0600 result made it 0644, a read-only file was replaced, a symlinked ``--out``
became a regular file, and sweep stores and reports were created 0600 while branches were
0644.  Every writer of the package is checked: branch and run files, an appended restart, the
report, CSV and MAT exports, figures and sweep stores, and ``continue --out`` end to end.
"""
import os
from pathlib import Path
import stat
import subprocess
import sys

import h5py
import pytest

from frictionkit.runtime.drivers._branches import equilibrium_branch
from frictionkit.runtime.errors import InputError
from frictionkit.runtime.model._load import load_model
from frictionkit.runtime.results._atomic import HDF5_FORMATS, check_output
from frictionkit.runtime.results._branch import append_branch, load_branch, save_run
from frictionkit.runtime.results._export import write_csv, write_mat
from frictionkit.runtime.results._plots import plot_branches
from frictionkit.runtime.results._report import report
from frictionkit.runtime.sweeps import SweepSpec, SweepStore


@pytest.fixture(scope="module")
def branch():
    m = load_model("belt", continuation="Vb", n=10, FN=5)
    return equilibrium_branch(m, 0.05, 12)


def _sweep(path):
    spec = SweepSpec.build("belt", "abc", "Vb", 0.05, 12, {"FN": [1.0, 2.0]}, {"n": 10}, harmonics=5)
    with SweepStore(path, spec) as store:
        store.commit([{"index": 0, "branches": {}, "row": {"FN": 1.0, "status": "failed", "message": "m"}}])


WRITERS = {
    "branch.h5": lambda br, p: br.save(p),
    "run.h5": lambda br, p: save_run(p, equilibria=br),
    "report.html": lambda br, p: report([br], p),
    "table.csv": write_csv,
    "table.mat": write_mat,
    "figure.png": lambda br, p: plot_branches([br], path=p),
    "sweep.h5": lambda br, p: _sweep(p),
}


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _leftovers(folder):
    return [p.name for p in Path(folder).iterdir() if ".tmp" in p.name]


@pytest.mark.parametrize("name", sorted(WRITERS))
@pytest.mark.parametrize("mode", [0o600, 0o640, 0o664], ids=lambda m: f"{m:04o}")
def test_a_replaced_file_keeps_its_mode(branch, tmp_path, name, mode):
    path = tmp_path / name
    WRITERS[name](branch, path)
    os.chmod(path, mode)
    WRITERS[name](branch, path)
    assert _mode(path) == mode
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("mode", [0o600, 0o640], ids=lambda m: f"{m:04o}")
def test_an_appended_restart_keeps_the_files_mode(branch, tmp_path, mode):
    path = tmp_path / "run.h5"
    save_run(path, equilibria=branch)
    os.chmod(path, mode)
    append_branch(path, branch)
    assert _mode(path) == mode and load_branch(path, "restart_1").param.size == branch.param.size


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077, 0o002], ids=lambda m: f"{m:03o}")
def test_a_new_file_follows_the_umask(branch, tmp_path, umask):
    old = os.umask(umask)
    try:
        for name, write in WRITERS.items():
            write(branch, tmp_path / name)
    finally:
        os.umask(old)
    modes = {name: _mode(tmp_path / name) for name in WRITERS}
    assert modes == {name: 0o666 & ~umask for name in WRITERS}
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_a_read_only_file_is_refused_not_replaced(branch, tmp_path, name):
    path = tmp_path / name
    WRITERS[name](branch, path)
    before = path.read_bytes()
    os.chmod(path, 0o444)
    with pytest.raises(InputError, match=rf"{name}.*read-only \(mode 0444\).*chmod u\+w"):
        WRITERS[name](branch, path)
    assert path.read_bytes() == before and _mode(path) == 0o444
    assert _leftovers(tmp_path) == []
    with pytest.raises(InputError, match=r"--out .* read-only \(mode 0444\)"):
        check_output(path)


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_a_symbolic_link_is_written_through(branch, tmp_path, name):
    real = tmp_path / "data" / name
    real.parent.mkdir()
    WRITERS[name](branch, real)
    os.chmod(real, 0o640)
    before = real.stat().st_ino
    link = tmp_path / f"link{Path(name).suffix}"
    link.symlink_to(real)
    if name == "sweep.h5":                   # the same sweep resumes through the link
        with SweepStore(link, SweepSpec.build("belt", "abc", "Vb", 0.05, 12, {"FN": [1.0, 2.0]}, {"n": 10},
                                              harmonics=5)) as store:
            store.commit([{"index": 1, "branches": {}, "row": {"FN": 2.0, "status": "failed", "message": "m"}}])
        assert SweepStore(real).done == {0, 1}
    else:
        WRITERS[name](branch, link)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.stat().st_ino != before and _mode(real) == 0o640      # replaced, mode kept
    assert _leftovers(tmp_path) == [] and _leftovers(real.parent) == []


def test_a_dangling_link_creates_its_target(branch, tmp_path):
    link = tmp_path / "out.h5"
    link.symlink_to(tmp_path / "elsewhere.h5")
    check_output(link, HDF5_FORMATS)
    branch.save(link)
    assert link.is_symlink() and load_branch(tmp_path / "elsewhere.h5").param.size == branch.param.size
    gone = tmp_path / "gone.h5"
    gone.symlink_to(tmp_path / "no" / "such" / "folder.h5")
    with pytest.raises(InputError, match=rf"--out {gone} \(a link to .*folder.h5\): the directory .* does not exist"):
        check_output(gone, HDF5_FORMATS)


def test_continue_out_through_a_link_keeps_link_and_mode(tmp_path):
    real = tmp_path / "kept" / "belt.h5"
    real.parent.mkdir()
    real.write_bytes(b"")
    os.chmod(real, 0o600)
    link = tmp_path / "belt.h5"
    link.symlink_to(real)
    r = subprocess.run([sys.executable, "-c", "from frictionkit.runtime.cli import main; main()", "continue",
                        "belt", "--param", "Vb", "--start", "0.05", "--stop", "12", "--set", "n=10", "FN=5",
                        "--out", str(link), "-q"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and _mode(real) == 0o600
    with h5py.File(real, "r") as f:
        assert "equilibria" in f
