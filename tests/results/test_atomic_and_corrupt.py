"""Atomic output and corrupt branch files (issue 14)."""
import os
from pathlib import Path
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np
import pytest

from frictionkit.runtime import load_branch
from frictionkit.runtime.errors import InputError
from frictionkit.runtime.results._atomic import atomic_path, check_output, HDF5_FORMATS, WriteFailed


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_failed_or_interrupted_write_keeps_previous_file(tmp_path, error):
    target = tmp_path / "x.h5"
    target.write_bytes(b"previous")
    with pytest.raises(error):
        with atomic_path(target) as tmp:
            tmp.write_bytes(b"half")
            raise error("disk full")
    assert target.read_bytes() == b"previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.h5"]     # no temporary left


def test_full_disk_keeps_previous_file(tmp_path):
    """A size-limited writer: RLIMIT_FSIZE makes the write fail with EFBIG like a full disk."""
    resource = pytest.importorskip("resource")
    import signal
    target = tmp_path / "x.bin"
    target.write_bytes(b"previous")
    old = resource.getrlimit(resource.RLIMIT_FSIZE)
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024, old[1]))
    try:
        with pytest.raises(WriteFailed, match=f"cannot write {target}: File too large; the previous file is unchanged"):
            with atomic_path(target) as tmp:
                with open(tmp, "wb") as fh:
                    fh.write(b"y" * 100_000)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old)
        signal.signal(signal.SIGXFSZ, old_handler)
    assert target.read_bytes() == b"previous"
    assert len(list(tmp_path.iterdir())) == 1


def test_success_replaces(tmp_path):
    target = tmp_path / "x.txt"
    target.write_text("old")
    with atomic_path(target) as tmp:
        tmp.write_text("new")
    assert target.read_text() == "new"


def unprivileged():
    """Command prefix under which directory permissions hold.  Root ignores them through the
    capabilities CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH / CAP_FOWNER: as root, drop them from
    the bounding set with ``setpriv`` (keeping uid 0: user ``nobody`` cannot run this
    interpreter, which lives under /root, mode 0700)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: cannot drop the permission override")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search,-fowner"]


def read_only_dir():
    """A directory under /tmp (0o755) holding ``ro`` (0o555); removed by the caller."""
    base = Path(tempfile.mkdtemp(prefix="fk-ro-", dir="/tmp"))
    base.chmod(0o755)
    (base / "ro").mkdir()
    (base / "ro").chmod(0o555)
    return base


def test_read_only_directory():
    """check_output and atomic_path refuse a read-only directory, naming it (run in a
    process that honours directory permissions)."""
    base = read_only_dir()
    code = f"""
import pytest
from frictionkit.runtime.errors import InputError
from frictionkit.runtime.results._atomic import atomic_path, check_output, HDF5_FORMATS
d = {str(base / "ro")!r}
with pytest.raises(InputError, match="not writable"):
    check_output(d + "/a.h5", HDF5_FORMATS)
with pytest.raises(InputError, match="cannot write"):
    with atomic_path(d + "/a.h5"):
        pass
print("ok")
"""
    try:
        res = subprocess.run(unprivileged() + [sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=120, cwd=base)
        assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr
        assert list((base / "ro").iterdir()) == []
    finally:
        (base / "ro").chmod(0o755)
        shutil.rmtree(base)


def test_check_output_messages(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        check_output(tmp_path / "no" / "a.h5", HDF5_FORMATS)
    with pytest.raises(InputError, match="unknown file type"):
        check_output(tmp_path / "a.xyz", HDF5_FORMATS)
    with pytest.raises(InputError, match="is a directory"):
        check_output(tmp_path, None)
    (tmp_path / "a.h5").write_bytes(b"")
    with pytest.raises(InputError, match="--no-clobber"):
        check_output(tmp_path / "a.h5", HDF5_FORMATS, no_clobber=True)


def _good(path):
    from frictionkit.runtime import Branch
    br = Branch(kind="periodic", states=["x"], variables=["x"], harmonics=1, index_omega=3,
                solutions=np.ones((2, 5)), tangents=np.ones((2, 5)), param=[1.0, 2.0], omega=[1.0, 1.0],
                ptp={"x": np.ones(2)}, vmin={"x": np.ones(2)}, vmax={"x": np.ones(2)}, mean={"x": np.ones(2)})
    br.save(path)
    return path


def _corrupt(kind, path, tmp_path):
    good = _good(tmp_path / "good.h5")
    data = good.read_bytes()
    if kind == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif kind == "header_only":
        path.write_bytes(data[:512])
    elif kind == "random":
        path.write_bytes(np.random.default_rng(0).bytes(4096))
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "text":
        path.write_text("param,omega\n1,2\n")
    elif kind == "wrong_types":
        path.write_bytes(data)
        with h5py.File(path, "r+") as f:
            del f["param"]
            f["param"] = np.array([b"a", b"b"])
    elif kind == "missing_groups":
        path.write_bytes(data)
        with h5py.File(path, "r+") as f:
            del f["special"]
            del f["ptp"]
    elif kind == "foreign":
        with h5py.File(path, "w") as f:
            f["data"] = np.arange(3)
    elif kind == "inconsistent":
        path.write_bytes(data)
        with h5py.File(path, "r+") as f:
            del f["param"]
            f["param"] = np.arange(7.0)
    elif kind == "directory":
        path.mkdir()
    return path


CORRUPT = ["truncated", "header_only", "random", "empty", "text", "wrong_types", "missing_groups", "foreign",
           "inconsistent", "directory"]


@pytest.mark.parametrize("kind", CORRUPT)
def test_corrupt_branch_file_is_named(kind, tmp_path):
    path = _corrupt(kind, tmp_path / f"{kind}.h5", tmp_path)
    with pytest.raises(InputError) as info:
        load_branch(path)
    assert str(path) in str(info.value)


def test_good_file_round_trip_keeps_restart_metadata(tmp_path):
    br = load_branch(_good(tmp_path / "g.h5"))
    assert np.array_equal(br.param, [1.0, 2.0])
