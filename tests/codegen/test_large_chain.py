"""A chain of moderate size through the general recast path (issue 28): the generated residual
f(x) and Jacobian df/dx agree with an independent NumPy copy of the chain written by hand
(``tests/models/chain_spec.py``), and the Jacobian with central finite differences of the
generated residual.  The chain has more than ``printers.SORTED_PRINT_MAX_VARIABLES`` variables,
so it is printed the way large models are (unsorted terms, cse without the basic pass, the
compiled Jacobian's zeros filled by one loop)."""
import numpy as np
import pytest

from frictionkit.codegen import generate_module, generate_sources, printers, split_linear
from tests.models import chain_spec

N_MASSES = 16            # 32 states, 68 recast variables


@pytest.fixture(scope="module")
def modules():
    spec = chain_spec.chain(N_MASSES)
    npm = generate_module(spec, "Vb", backend="numpy")
    try:
        cym = generate_module(spec, "Vb", backend="cython")
    except Exception as exc:       # no compiler on this machine: the NumPy module is still checked
        cym = None
        print(f"compiled backend unavailable: {exc}")
    return spec, npm, cym


def _states(seed, samples):
    rng = np.random.default_rng(seed)
    return rng.normal(scale=0.3, size=(2 * N_MASSES, samples))


def test_chain_takes_the_general_path_and_is_large():
    spec = chain_spec.chain(N_MASSES)
    assert split_linear(spec, "Vb") is None          # cubic links: not linear but for the contact
    system, _ = generate_sources(spec, "Vb", backends=("numpy",))
    assert system.n_states == 2 * N_MASSES
    assert system.n_vars > printers.SORTED_PRINT_MAX_VARIABLES


@pytest.mark.parametrize("backend", ["numpy", "cython"])
def test_residual_and_jacobian_match_hand_written_chain(modules, backend):
    spec, npm, cym = modules
    mod = npm if backend == "numpy" else cym
    if mod is None:
        pytest.skip("no compiled backend")
    p = np.array(mod.DEFAULTS)
    X = _states(1, 7)
    X[1, 3] = chain_spec.DEFAULTS["Vb"]               # a sample at the sticking velocity
    f = mod.rhs(0.0, X, p)
    J = mod.jac(0.0, X, p)
    for m in range(X.shape[1]):
        ref_f = chain_spec.rhs(X[:, m], N_MASSES)
        ref_J = chain_spec.jacobian(X[:, m], N_MASSES)
        np.testing.assert_allclose(f[:, m], ref_f, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(J[:, :, m], ref_J, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("law", chain_spec.LAWS)
def test_jacobian_matches_finite_differences(law):
    spec = chain_spec.chain(8, law=law, name=f"chain_fd_{law}")
    mod = generate_module(spec, "Vb", backend="numpy")
    p = np.array(mod.DEFAULTS)
    x = _states(2, 1)[:16, 0]
    J = mod.jac(0.0, x, p)
    h = 1e-6
    fd = np.empty_like(J)
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = h
        fd[:, j] = (mod.rhs(0.0, x + e, p) - mod.rhs(0.0, x - e, p)) / (2 * h)
    # central differences: error O(h^2 f''') + O(eps f / h), ~1e-8 here
    np.testing.assert_allclose(J, fd, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(mod.rhs(0.0, x, p), chain_spec.rhs(x, 8, law=law), rtol=1e-12, atol=1e-12)


def test_recast_operators_reproduce_the_residual(modules):
    """The quadratic recast of the chain (operators c0, L0, Q evaluated at the auxiliaries'
    definitions) gives back the hand-written f on the differential rows and zero on the others."""
    spec, npm, _ = modules
    p = np.array(npm.DEFAULTS)
    ops = npm.operators(p)
    x = _states(3, 1)[:, 0]
    u = npm.aux(x, 0.0, p)
    lam = p[list(npm.PARAMETERS).index("Vb")]
    r = ops["c0"] + lam * ops["c1"] + ops["L0"] @ u + lam * (ops["L1"] @ u) + npm.quad(ops["qc"], u, u)
    n = 2 * N_MASSES
    alg = [k for k, kind in enumerate(npm.KINDS) if kind == "algebraic"]
    np.testing.assert_allclose(r[:n] / np.where(ops["mass"][:n] == 0, 1, ops["mass"][:n]),
                               chain_spec.rhs(x, N_MASSES), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(r[alg], 0.0, atol=1e-10)


def test_progress_on_stderr_unless_quiet(capsys):
    spec = chain_spec.chain(1, name="chain_progress")
    generate_sources(spec, "Vb", backends=("numpy",), progress=True)
    err = capsys.readouterr().err
    assert "generating chain_progress (2 states)" in err and "2/2 stages" in err
    generate_sources(spec, "Vb", backends=("numpy",), progress=False)
    assert capsys.readouterr().err == ""
    generate_sources(spec, "Vb", backends=("numpy",))           # small model: none by default
    assert capsys.readouterr().err == ""


def test_cli_codegen_shows_progress_for_a_large_model_unless_quiet(tmp_path):
    from click.testing import CliRunner

    from frictionkit.runtime.cli import main
    f = tmp_path / "chain_cli.py"
    f.write_text(f"import sys\nsys.path.insert(0, {str(chain_spec.__file__.rsplit('/tests/', 1)[0])!r})\n"
                 "from tests.models.chain_spec import chain\n"
                 "def model():\n"
                 "    return chain(10, name='chain_cli')\n")
    args = ["codegen", str(f), "--param", "Vb", "--backend", "numpy", "--out", str(tmp_path)]
    loud = CliRunner().invoke(main, args)
    assert loud.exit_code == 0, loud.output
    assert "generating chain_cli (20 states)" in loud.stderr
    quiet = CliRunner().invoke(main, args + ["-q"])
    assert quiet.exit_code == 0, quiet.output
    assert "generating" not in quiet.stderr and (tmp_path / "chain_cli__Vb.py").exists()
