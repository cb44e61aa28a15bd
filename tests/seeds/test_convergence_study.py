"""Seed 003 accuracy study (issue 4 item 5): case W1 (n = 10, FN = 5 N, Vb = 0.5 m/s).

The reference here has H = 200 harmonics instead of the paper's 500 (seed 003 §3.1) to keep
the tests fast (one Newton iteration at H = 500 costs about 6 s on one core).  It is
converged far below every error that is fitted: the H = 150 and H = 200 references differ
by less than 1e-13 in the mean error of eq. (16), while the smallest HBM error in the fitted
range (N_dis = 183) is about 2e-11.  The benchmark (benchmarks/bench_study.py) uses H = 500.
"""
import numpy as np
import pytest
from click.testing import CliRunner

from frictionkit.runtime import load_model
from frictionkit.runtime.discretizations._hbm import coefficients_to_samples, shift_phase
from frictionkit.runtime.drivers._study import (ConvergenceStudy, _aligned_phase, _newton, convergence_study,
                                        parse_int_range, reference_orbit, relative_errors)
from frictionkit.runtime.cli import main
from frictionkit.runtime.errors import ConvergenceError, InputError

N_T = 100_000            # seed 003 §3.2


@pytest.fixture(scope="module")
def belt():
    return load_model("belt", continuation="Vb", n=10, FN=5)


@pytest.fixture(scope="module")
def reference(belt):
    return reference_orbit(belt, 0.5, 200)


@pytest.fixture(scope="module")
def w1(belt, reference):
    # HBM over the paper's fit range 61 <= N_dis <= 183 (H = 30..91); collocation over its
    # log-log fit range 394 <= N_dis <= 484 (N_int = 131..161), seed 003 §4.1
    omega1 = belt.value("omega1")
    return convergence_study(belt, 0.5, harmonics=range(30, 92), intervals=range(131, 162, 3),
                             reference_harmonics=200, reference=reference[:2], n_t=N_T,
                             variable_scales={"v": 1 / omega1})


def test_reference_is_converged_in_harmonics(belt, reference):
    disc, Z, _ = reference
    d150, Z150 = disc.resize(Z, 150)
    Z150, _ = _newton(d150, Z150)
    ref = coefficients_to_samples(shift_phase(disc.split(Z)[0], 0), N_T)
    other = coefficients_to_samples(shift_phase(d150.split(Z150)[0], 0), N_T)
    per, mean = relative_errors(ref, other)
    assert mean < 1e-13
    assert abs(Z150[-2] - Z[-2]) < 1e-12 * Z[-2]


def test_reference_agrees_with_shooting(belt, reference):
    # an independent method: the shooting orbit of the original ODE (seed 003 §4.1 quotes
    # 1e-11 (y) and 1e-10 (z) between ode15s and its H = 500 reference)
    disc, Z, orbit = reference
    U, omega, _ = disc.split(Z)
    assert omega == pytest.approx(orbit.omega, rel=1e-10)
    n_t = 512
    x = orbit.samples(n_t)
    phi = _aligned_phase(x[0])
    x = orbit.at(orbit.times(n_t) + phi / orbit.omega)
    per, _ = relative_errors(coefficients_to_samples(shift_phase(U, 0)[:2], n_t), x)
    assert np.all(per < 1e-9), per


def test_w1_hbm_slope_matches_seed_003(w1):
    # seed 003 §4.1: log10(eps_rm) linear in N_dis with coefficient -0.052 on 61..183,
    # c = exp(2 * 0.052 ln 10) = 1.27
    assert np.all(w1.hbm.converged)
    fit = w1.fit_hbm(61, 183)
    assert fit["points"] == 62
    assert fit["slope"] == pytest.approx(-0.052, rel=0.2)
    assert fit["c"] == pytest.approx(1.27, rel=0.05)
    # exponential convergence: monotone decrease of the mean error
    assert np.all(np.diff(w1.hbm.mean_error) < 0)
    # the energy match moves lam back to the reference value as H grows
    assert abs(w1.hbm.lam[-1] - 0.5) < 1e-9


def test_w1_collocation_algebraic_rate(w1):
    # Gauss collocation of degree p: O(N_int^-(p+1)) (seed 003 §2.2); paper fit -4.3 on 394..484
    assert np.all(w1.collocation.converged)
    fit = w1.fit_collocation(394, 484)
    assert fit["slope"] == pytest.approx(-(w1.degree + 1), abs=0.25)
    # seed 003 Fig. 5: HBM far more accurate than collocation at equal N_dis
    hbm_183 = w1.hbm.mean_error[w1.hbm.n_dis == 183][0]
    assert hbm_183 < 1e-3 * w1.collocation.mean_error.min()
    # second method agrees with the reference
    assert w1.collocation.mean_error.min() < 1e-7


def test_per_variable_order_of_seed_003(w1):
    # seed 003 §4.1: y more accurate than z, itself more accurate than mu_n
    names = list(w1.variables)
    e = w1.hbm.relative_error
    iy, iv, imu = names.index("y"), names.index("v"), names.index("mu_belt")
    assert np.all(e[:, iy] < e[:, iv]) and np.all(e[:, iv] < e[:, imu])


def test_hdf5_roundtrip_and_plot(w1, tmp_path):
    path = tmp_path / "w1.h5"
    w1.save(path)
    back = ConvergenceStudy.load(path)
    assert back.variables == w1.variables
    assert np.array_equal(back.hbm.mean_error, w1.hbm.mean_error)
    assert np.array_equal(back.collocation.relative_error, w1.collocation.relative_error)
    assert back.fit_hbm() == w1.fit_hbm()
    import h5py
    with h5py.File(path) as f:            # readable without frictionkit
        assert f.attrs["format"] == "frictionkit-convergence-study"
        assert f["hbm/n_dis"][0] == 61
        assert f["reference/coefficients"].shape == (6, 401)
    w1.plot(tmp_path / "w1.png")
    assert (tmp_path / "w1.png").stat().st_size > 10_000


def test_relative_errors_definition():
    t = np.linspace(0, 2 * np.pi, 1000, endpoint=False)
    ref = np.vstack([3 + np.cos(t), 10 * np.sin(t)])
    test = ref.copy()
    test[0] += 0.01 * np.cos(t)                  # eq. (15): bias removed, so 0.01 exactly
    per, mean = relative_errors(ref, test)
    assert per == pytest.approx([0.01, 0.0], abs=1e-14)
    assert mean == pytest.approx(0.01 / np.sqrt(101), rel=1e-12)


def test_bad_input(belt):
    with pytest.raises(InputError, match="harmonics H must be >= 1"):
        convergence_study(belt, 0.5, harmonics=[0, 5])
    with pytest.raises(InputError, match="N_int must be >= 2"):
        convergence_study(belt, 0.5, harmonics=[], intervals=[1])
    with pytest.raises(InputError, match="not a variable"):
        convergence_study(belt, 0.5, harmonics=[5], energy_variable="w")
    with pytest.raises(InputError, match="below the reference"):
        convergence_study(belt, 0.5, harmonics=[60], reference_harmonics=50)
    with pytest.raises(InputError, match="must be an integer >= 1"):
        reference_orbit(belt, 0.5, 0)
    with pytest.raises(InputError):
        parse_int_range("1..x")


def test_no_orbit_is_a_convergence_error(belt):
    # beyond the fold (about 10.3 m/s for n = 10) the equilibrium is the only attractor
    with pytest.raises(ConvergenceError, match="no periodic orbit found at Vb = 20"):
        reference_orbit(belt, 20.0, 20)


@pytest.mark.parametrize("args, message", [
    (["nosuch", "--param", "Vb", "--at", "0.5"], "unknown zoo model 'nosuch'"),
    (["belt", "--param", "Vx", "--at", "0.5"], "'Vx' is not a parameter"),
    (["belt", "--param", "Vb", "--at", "0.5", "-H", "0..3"], "H must be >= 1"),
    (["belt", "--param", "Vb", "--at", "0.5", "--scale", "v=1/omega9"], "unknown parameter 'omega9'"),
])
def test_cli_bad_input(args, message):
    res = CliRunner().invoke(main, ["study", "convergence", *args, "-q"])
    assert res.exit_code != 0
    assert message in res.output


def test_cli_small_run(tmp_path):
    out, png = tmp_path / "s.h5", tmp_path / "s.png"
    res = CliRunner().invoke(main, ["study", "convergence", "belt", "--param", "Vb", "--at", "0.5", "--set", "n=10",
                                    "FN=5", "-H", "20..40:10", "--intervals", "40,60", "--reference-harmonics",
                                    "100", "--n-t", "20000", "--out", str(out), "--plot", str(png), "-q"])
    assert res.exit_code == 0, res.output
    assert "HBM semilog slope" in res.output
    st = ConvergenceStudy.load(out)
    assert list(st.hbm.n_dis) == [41, 61, 81] and list(st.collocation.n_dis) == [121, 181]
    assert png.exists()
