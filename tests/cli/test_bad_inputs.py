"""The command line never answers bad input with a traceback (issue 14).

Each row: the arguments, the exit code and a text the message must contain (the culprit).
"""
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from frictionkit.runtime.cli import main
from tests.results.test_atomic_and_corrupt import CORRUPT, _corrupt, read_only_dir, unprivileged

BELT = ["continue", "belt", "--param", "Vb", "--start", "0.05", "--stop", "12"]
HOPF = BELT + ["--set", "n=10", "FN=5", "--from-hopf", "1"]


def _files(tmp):
    (tmp / "raises.py").write_text("raise RuntimeError('boom in model file')\n")
    (tmp / "syntax.py").write_text("def model(:\n")
    (tmp / "notpy.txt").write_text("x = 1\n")
    (tmp / "nomodel.py").write_text("x = 1\n")
    (tmp / "wrongret.py").write_text("def model():\n    return 3\n")
    (tmp / "empty.h5").write_bytes(b"")
    (tmp / "text.h5").write_text("hello\n")
    (tmp / "random.h5").write_bytes(np.random.default_rng(1).bytes(2048))
    with h5py.File(tmp / "foreign.h5", "w") as f:
        f["x"] = np.arange(3)
    (tmp / "exists.h5").write_bytes(b"x")
    (tmp / "exists.png").write_bytes(b"x")
    (tmp / "cut.py").write_text(CUT_MODEL)


# equilibria x = sqrt(mu - x) end at mu = 0 (the sqrt argument vanishes); the recast goes on
# along the other root x = R < 0, which is no equilibrium of the model
CUT_MODEL = """
import sympy as sp
from frictionkit.modelspec import ModelSpec

def model():
    spec = ModelSpec("sqrtcut", "x'' + c x' + x = sqrt(mu - x)")
    c, mu = spec.parameter("c", 0.5), spec.parameter("mu", 2.0)
    x, v = spec.second_order("x", velocity="v")
    spec.ode(v, -c * v - x + sp.sqrt(mu - x))
    return spec
"""
CURVE = ["--param", "Vb", "--start", "0.05", "--stop", "12", "--set", "n=10", "FN=5", "--second", "FN",
         "--min", "0.01", "--max", "5"]


CASES = [
    # sizes and budgets
    (HOPF + ["-H", "100000"], 1, "GiB"),
    (HOPF + ["-H", "0"], 1, "--harmonics 0"),
    (HOPF + ["-H", "-3"], 1, "--harmonics -3"),
    (BELT + ["--max-steps", "0"], 1, "--max-steps 0"),
    (BELT + ["--max-steps", "-5"], 1, "--max-steps -5"),
    (BELT + ["--from-hopf", "0"], 1, "--from-hopf 0"),
    (BELT + ["--from-hopf", "-1"], 1, "--from-hopf -1"),
    (BELT + ["--set", "n=10", "FN=5", "--from-hopf", "7"], 1, "--from-hopf 7"),
    (HOPF + ["--method", "collocation", "--intervals", "1"], 1, "--intervals 1"),
    (HOPF + ["--method", "collocation", "--degree", "40"], 1, "--degree 40"),
    (HOPF + ["--method", "collocation", "--intervals", "100000"], 1, "GiB"),
    (BELT + ["--checkpoint-steps", "-1"], 2, "--checkpoint-steps"),
    (BELT + ["--checkpoint-seconds", "-1"], 2, "--checkpoint-seconds"),
    (BELT + ["-H", "abc"], 2, "abc"),
    (BELT + ["--max-steps", "1.5"], 2, "1.5"),
    # ranges
    (["continue", "belt", "--param", "Vb", "--start", "nan", "--stop", "12"], 1, "nan"),
    (["continue", "belt", "--param", "Vb", "--start", "0.05", "--stop", "inf"], 1, "inf"),
    (["continue", "belt", "--param", "Vb", "--start", "1", "--stop", "1"], 1, "--start 1"),
    (["continue", "belt", "--param", "Vb", "--start", "x", "--stop", "1"], 2, "x"),
    (["continue", "belt", "--param", "Vb", "--stop", "1"], 1, "--start"),
    (["continue", "belt", "--start", "0.1", "--stop", "1"], 1, "--param"),
    (["continue", "--param", "Vb", "--start", "0.1", "--stop", "1"], 1, "MODEL"),
    (["continue", "belt", "--param", "nope", "--start", "0.1", "--stop", "1"], 1, "nope"),
    (["continue", "nosuchmodel", "--param", "Vb", "--start", "0.1", "--stop", "1"], 1, "nosuchmodel"),
    # parameter values
    (BELT + ["--set", "n=nan"], 1, "'n'"),
    (BELT + ["--set", "FN=inf"], 1, "'FN'"),
    (BELT + ["--set", "M1=0"], 1, "M1"),
    (BELT + ["--set", "n=0"], 1, "n"),
    (BELT + ["--set", "bogus=1"], 1, "bogus"),
    (BELT + ["--set", "n10"], 2, "n10"),
    (BELT + ["--set", "n=ten"], 2, "ten"),
    (BELT + ["--set", "=3"], 2, "=3"),
    # output targets
    (BELT + ["--out", "{tmp}/missing/a.h5"], 1, "missing"),
    (BELT + ["--out", "{tmp}/a.xyz"], 1, ".xyz"),
    (BELT + ["--out", "{tmp}/a"], 1, "(no extension)"),
    (BELT + ["--plot", "{tmp}/b.xyz"], 1, ".xyz"),
    (BELT + ["--plot", "{tmp}/missing/b.png"], 1, "missing"),
    (BELT + ["--out", "{tmp}/exists.h5", "--no-clobber"], 1, "--no-clobber"),
    (BELT + ["--plot", "{tmp}/exists.png", "--no-clobber"], 1, "--no-clobber"),
    (BELT + ["--out", "{tmp}"], 2, "directory"),
    # model files
    (["codegen", "belt", "--param", "nope"], 1, "nope"),
    # restart files
    (["continue", "--restart", "{tmp}/empty.h5"], 1, "empty.h5"),
    (["continue", "--restart", "{tmp}/text.h5"], 1, "text.h5"),
    (["continue", "--restart", "{tmp}/random.h5"], 1, "random.h5"),
    (["continue", "--restart", "{tmp}/foreign.h5"], 1, "foreign.h5"),
    (["continue", "--restart", "{tmp}/absent.h5"], 1, "absent.h5"),
    (["continue", "--restart", "{tmp}/absent.h5@3"], 1, "absent.h5"),
    (["continue", "belt", "--restart", "{tmp}/foreign.h5"], 1, "belt"),
    # out of a declared domain (ModelSpec.parameter(..., positive=True)): refused at load,
    # naming the parameter, its value and the condition
    (BELT + ["--set", "eps=-1"], 1, "parameter 'eps' (value eps = -1.0): eps = -1 must be positive"),
    (BELT + ["--set", "eps=0"], 1, "parameter 'eps' (value eps = 0.0)"),
    (BELT + ["--set", "n=-10"], 1, "parameter 'n' (value n = -10.0): n = -10 must be positive"),
    (BELT + ["--set", "M1=-0.1"], 1, "parameter 'M1' (value M1 = -0.1)"),
    (["continue", "drill", "--param", "eta", "--start", "0.5", "--stop", "5", "--set", "kappa=-1"], 1,
     "parameter 'kappa' (value kappa = -1.0): kappa = -1 must be positive"),
    (["continue", "weakstrong", "--param", "vd", "--start", "3", "--stop", "0.3", "--set", "delta=0"], 1,
     "parameter 'delta'"),
    # --append: only into the --restart file
    (BELT + ["--append"], 1, "--append"),
    (["continue", "--restart", "{tmp}/foreign.h5", "--append", "--out", "{tmp}/a.h5"], 1, "drop --out"),
    # a branch entering an invalid region of the recast stops there (exit 3), naming it
    (["continue", "{tmp}/cut.py", "--param", "mu", "--start", "2", "--stop", "-1", "-q"], 3, "sqrt(mu - x)"),
    (["continue", "{tmp}/cut.py", "--param", "mu", "--start", "2", "--stop", "-1", "--validity", "x"], 2,
     "--validity"),
    # other commands: --at, outputs checked before computing
    (["study", "convergence", "belt", "--param", "Vb", "--at", "nan"], 1, "--at nan"),
    (["study", "convergence", "belt", "--param", "Vb", "--at", "0.5", "--out", "{tmp}/missing/s.h5"], 1,
     "missing"),
    (["hopf-curve", "belt"] + CURVE + ["--out", "{tmp}/missing/a.h5"], 1, "missing"),
    (["hopf-curve", "belt"] + CURVE + ["--plot", "{tmp}/b.xyz"], 1, ".xyz"),
    (["fold-curve", "belt"] + CURVE + ["--out", "{tmp}/a.xyz"], 1, ".xyz"),
    (["fold-curve", "belt"] + CURVE + ["--plot", "{tmp}/missing/b.png"], 1, "missing"),
    (["demo", "--out-dir", "{tmp}/exists.h5/sub"], 1, "--out-dir"),
    # a branch that runs out of steps: non-zero, says so
    (HOPF + ["-H", "4", "--max-steps", "2", "-q"], 3, "max_steps"),
]
# model files that raise, have a syntax error, are not Python, define no model, return a
# wrong type or do not exist: each reported with its own name, by `continue` and `codegen`
MODEL_FILES = ("raises.py", "syntax.py", "notpy.txt", "nomodel.py", "wrongret.py", "absent.py")
CASES += [(["continue", "{tmp}/" + name, "--param", "Vb", "--start", "0.1", "--stop", "1"], 1, name)
          for name in MODEL_FILES]
CASES += [(["codegen", "{tmp}/" + name, "--param", "Vb", "--out", "{tmp}"], 1, name) for name in MODEL_FILES]


@pytest.mark.parametrize("args, code, culprit", CASES, ids=[" ".join(c[0][-3:]) for c in CASES])
def test_bad_invocation(args, code, culprit, tmp_path):
    _files(tmp_path)
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    res = CliRunner().invoke(main, args)
    text = res.output + (res.stderr if hasattr(res, "stderr") and res.stderr_bytes is not None else "")
    assert "Traceback" not in text
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert res.exit_code == code, text
    assert culprit.replace("{tmp}", str(tmp_path)) in text, text


def test_table_size():
    assert len(CASES) >= 60


def test_validity_warn_keeps_going(tmp_path):
    """``--validity warn``: the recast HBM's branch past the branch cut (its auxiliary on the
    other root) is kept, with a warning.  (The default pointwise path has no other root: it
    stops at the cut, the case with exit code 3 in the table above.)"""
    _files(tmp_path)
    res = CliRunner().invoke(main, ["continue", str(tmp_path / "cut.py"), "--param", "mu", "--start", "2",
                                    "--stop", "-1", "-q", "--validity", "warn", "--method", "hbm"])
    assert res.exit_code == 0, res.output
    assert "status range" in res.output


@pytest.mark.parametrize("kind", CORRUPT)
def test_compare_coulomb_corrupt_branch(kind, tmp_path):
    path = _corrupt(kind, tmp_path / f"{kind}.h5", tmp_path)
    res = CliRunner().invoke(main, ["compare", "coulomb", "--param", "Vb", "--branch", str(path)])
    assert "Traceback" not in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert res.exit_code in (1, 2) and str(path) in res.output, res.output


@pytest.mark.parametrize("option", ["--out", "--plot"])
def test_read_only_output_directory(option):
    """The real CLI in a process that honours directory permissions: refused before computing."""
    base = read_only_dir()
    target = base / "ro" / ("a.h5" if option == "--out" else "a.png")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    try:
        res = subprocess.run(unprivileged() + [sys.executable, "-c", "from frictionkit.runtime.cli import main; main()"]
                             + BELT + [option, str(target)], capture_output=True, text=True, timeout=120,
                             cwd=base, env=env)
        assert res.returncode == 1, res.stderr
        assert "Traceback" not in res.stderr and f"{option} {target}" in res.stderr
        assert "not writable" in res.stderr and list((base / "ro").iterdir()) == []
    finally:
        (base / "ro").chmod(0o755)
        shutil.rmtree(base)


@pytest.mark.parametrize("values, culprit", [(dict(eps=-1), "parameter 'eps' (value eps = -1.0)"),
                                             (dict(n=0), "parameter 'n' (value n = 0.0)")])
def test_python_api_refuses_out_of_domain_values(values, culprit):
    """``load_model`` and ``Model.with_params`` refuse a value outside a declared domain at once."""
    from frictionkit.runtime import load_model
    from frictionkit.runtime.errors import InputError
    with pytest.raises(InputError) as exc:
        load_model("belt", continuation="Vb", **values)
    assert culprit in str(exc.value) and "must be positive" in str(exc.value)
    with pytest.raises(InputError) as exc:
        load_model("belt", continuation="Vb").with_params(**values)
    assert culprit in str(exc.value)
