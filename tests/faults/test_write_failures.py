"""Issue 28, items 7 and 8 of the work: a write that fails, and Ctrl-C while the program loads.

* A full disk during a save or a sweep commit gave four tracebacks: now every writer raises an
  :class:`InputError` naming the file and saying the disk is full, the previous file is
  unchanged and no temporary file is left (the disk is "filled" by an ``os.fsync`` or a copy
  raising ``OSError(ENOSPC)``, as the system does).
* An ``--out`` that passed its check but failed at the save (its folder removed during the
  run, a full disk) lost the whole computed branch: now the branch goes to a rescue file that
  the message names, and the command exits 1 without a traceback.
* Ctrl-C while the command line or a command's modules load gave a traceback (or "Aborted!"
  with exit code 1): now a sentence and exit code 130.
"""
import errno
import os
from pathlib import Path
import shutil
import subprocess
import sys
import warnings

from click.testing import CliRunner
import h5py
import numpy as np
import pytest

from frictionkit.runtime.analysis._curves import BifurcationCurve
from frictionkit.runtime.cli import main
from frictionkit.runtime.drivers import _compose
from frictionkit.runtime.drivers._compose import run_continuation
from frictionkit.runtime.errors import InputError
from frictionkit.runtime.model._load import load_model
from frictionkit.runtime.results._branch import load_run, save_run
from frictionkit.runtime.results._export import write_csv, write_mat
from frictionkit.runtime.results._plots import plot_branches
from frictionkit.runtime.results._report import report
from frictionkit.runtime.sweeps import SweepSpec, SweepStore

RUN = ["continue", "belt", "-p", "Vb", "--start", "0.05", "--stop", "12", "--set", "n=10", "FN=5", "-q"]


@pytest.fixture(scope="module")
def branches():
    m = load_model("belt", continuation="Vb", n=10, FN=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return run_continuation(m, 0.05, 12, start="hopf", harmonics=5, progress=False, echo=lambda s: None,
                                options=dict(max_steps=20))


def _full_disk(monkeypatch, folder):
    """``os.fsync`` of any file in ``folder`` fails as on a full disk (other files are untouched)."""
    real = os.fsync

    def fsync(fd):
        if Path(os.readlink(f"/proc/self/fd/{fd}")).parent == Path(folder).resolve():
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd)
    monkeypatch.setattr(os, "fsync", fsync)


def _writers(branches):
    eq, per = branches
    curve = BifurcationCurve("belt", "Vb", "FN", np.array([1.0, 2.0]), np.array([5.0, 4.0]), np.ones(2),
                             np.zeros((2, 2)), "range", "test")
    return {"run.h5": lambda p: save_run(p, equilibria=eq, periodic=per),
            "branch.h5": per.save,
            "report.html": lambda p: report([eq, per], p),
            "table.csv": lambda p: write_csv(per, p),
            "table.mat": lambda p: write_mat(per, p),
            "figure.png": lambda p: plot_branches([eq, per], path=p),
            "curve.h5": curve.save}


@pytest.mark.parametrize("name", ["run.h5", "branch.h5", "report.html", "table.csv", "table.mat", "figure.png",
                                  "curve.h5"])
def test_a_full_disk_during_a_save_is_named_and_leaves_the_previous_file(branches, name, tmp_path, monkeypatch):
    target = tmp_path / name
    target.write_bytes(b"previous content")
    _full_disk(monkeypatch, tmp_path)
    with pytest.raises(InputError) as info:
        _writers(branches)[name](target)
    message = str(info.value)
    assert str(target) in message and "disk is full" in message and "previous file is unchanged" in message, message
    assert target.read_bytes() == b"previous content"
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]           # no temporary file left


@pytest.mark.parametrize("where", ["copy", "fsync"])
def test_a_full_disk_during_a_sweep_commit_keeps_the_store(where, tmp_path, monkeypatch):
    path = tmp_path / "s.h5"
    spec = SweepSpec.build("belt", "abc", "Vb", 0.05, 12, {"FN": [1.0, 2.0]}, {"n": 10}, harmonics=5)
    row = {"FN": 1.0, "status": "failed", "message": "m"}
    with SweepStore(path, spec) as store:
        store.commit([{"index": 0, "branches": {}, "row": row}])
    before = path.read_bytes()
    if where == "copy":
        def copyfile(src, dst, **kwargs):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        monkeypatch.setattr(shutil, "copyfile", copyfile)
    else:
        _full_disk(monkeypatch, tmp_path)
    with SweepStore(path, spec) as store:
        with pytest.raises(InputError, match="disk is full") as info:
            store.commit([{"index": 1, "branches": {}, "row": {**row, "FN": 2.0}}])
    assert str(path) in str(info.value) and "1 task(s) committed before are kept" in str(info.value)
    assert path.read_bytes() == before and SweepStore(path).done == {0}
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")) == ["s.h5"]


def _rows(path):
    with h5py.File(path, "r") as f:
        return {g: f[g]["param"][()] for g in ("equilibria", "periodic") if g in f}


def test_a_full_disk_at_the_end_of_continue_rescues_the_branch(tmp_path, monkeypatch):
    out_dir, here = tmp_path / "disk", tmp_path / "here"
    out_dir.mkdir()
    here.mkdir()
    monkeypatch.chdir(here)
    _full_disk(monkeypatch, out_dir)
    r = CliRunner().invoke(main, RUN + ["--out", str(out_dir / "run.h5"), "--checkpoint-steps", "0",
                                        "--checkpoint-seconds", "0"])
    assert r.exit_code == 1 and isinstance(r.exception, SystemExit), (r.output, r.exception)
    assert "Traceback" not in r.output and "disk is full" in r.output and str(out_dir / "run.h5") in r.output
    rescued = list(here.glob("run.rescued-*.h5"))
    assert len(rescued) == 1 and str(rescued[0].resolve()) in r.output, r.output
    assert list(out_dir.iterdir()) == []
    eq = load_run(rescued[0])[0]
    assert eq.kind == "equilibrium" and eq.param[0] == 0.05 and eq.param[-1] == 12


def test_an_out_folder_removed_during_the_run_rescues_the_branch(tmp_path, monkeypatch):
    out_dir, here = tmp_path / "gone", tmp_path / "here"
    out_dir.mkdir()
    here.mkdir()
    monkeypatch.chdir(here)
    real = _compose.run_continuation

    def run_then_remove(*args, **kwargs):
        result = real(*args, **kwargs)
        shutil.rmtree(out_dir)                   # the folder goes away while the branch is computed
        return result
    # the command imports run_continuation from the drivers when it runs (an instant --help)
    monkeypatch.setattr(_compose, "run_continuation", run_then_remove)
    r = CliRunner().invoke(main, RUN + ["--out", str(out_dir / "run.h5"), "--checkpoint-steps", "0",
                                        "--checkpoint-seconds", "0"])
    assert r.exit_code == 1 and isinstance(r.exception, SystemExit), (r.output, r.exception)
    assert "Traceback" not in r.output and f"cannot write {out_dir / 'run.h5'}" in r.output, r.output
    rescued = list(here.glob("run.rescued-*.h5"))
    assert len(rescued) == 1 and "saved to" in r.output and str(rescued[0].resolve()) in r.output, r.output
    assert load_run(rescued[0])[0].param[-1] == 12


def test_a_checkpoint_that_cannot_be_written_warns_and_the_run_goes_on(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "disk").mkdir()
    _full_disk(monkeypatch, tmp_path / "disk")
    r = CliRunner().invoke(main, RUN + ["--out", str(tmp_path / "disk" / "run.h5"), "--checkpoint-steps", "1"])
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    assert r.output.count("checkpoint not saved") == 1, r.output         # warned once, the run went on
    assert "disk is full" in r.output and len(list(tmp_path.glob("run.rescued-*.h5"))) == 1, r.output


# -- Ctrl-C while the program loads ----------------------------------------------------------

# a finder that sends SIGINT to its own process when the module named is first imported: the
# KeyboardInterrupt then arrives while that import runs, as a Ctrl-C at that moment would
_INTERRUPT_AT_IMPORT = """
import os, signal, sys

MODULE = sys.argv[1]

class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == MODULE:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, Interrupt())
from frictionkit.runtime.cli import main
sys.argv = ["frictionkit"] + sys.argv[2:]
main()
"""


@pytest.mark.parametrize("module, argv", [
    ("click", ["--version"]),                                   # the command line itself
    ("scipy", RUN),                                             # a command's numerical modules
], ids=["cli", "command"])
def test_ctrl_c_while_loading_is_exit_130_without_traceback(module, argv):
    run = subprocess.run([sys.executable, "-c", _INTERRUPT_AT_IMPORT, module, *argv], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 130, (run.returncode, run.stderr[-2000:])
    assert "Traceback" not in run.stderr and "interrupted (Ctrl-C)" in run.stderr, run.stderr[-2000:]
