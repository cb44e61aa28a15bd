"""Stability along a branch by default (issue 26, items 3 and 4) on the LuGre belt, against
an independent shooting reference (``tests/analysis/_lugre_shooting.py``: solve_ivp DOP853
rtol 1e-12, Newton on the period, multipliers from the variational equation).

* The pair of period doublings at vb = 0.0402595 and 0.043782 lies within one multiplier
  stride of 8 step ends: the default (every step end) finds both, within 1e-5 of the
  reference at the default H = 30 (measured 5e-6 and 5e-6: the orbit's truncation at H = 30
  limits them, not the multipliers' quadrature nor the locating).
* The monodromy with error-controlled Magnus steps (the default) or on uniform grids doubled
  until converged gives the non-trivial multiplier of the unstable slip cycle at vb = 1 (an
  orbit H = 30 resolves to 1e-11) to 1e-5, where the discretization's own grid (n_t = 128)
  is 3.7e-3 off.
"""
import numpy as np
import pytest
from scipy.optimize import brentq

from frictionkit.runtime.analysis._floquet import FloquetResult
from frictionkit.runtime.analysis._stability import _uncertain, orbit_stability, refined_monodromy_stability
from frictionkit.runtime.drivers._branches import equilibrium_branch, periodic_branch, periodic_start_from_hopf
from frictionkit.runtime.engine import ANMOptions
from frictionkit.runtime.engine._newton import correct
from frictionkit.runtime.errors import InputError
from frictionkit.runtime.model._load import load_model
from tests.analysis import _lugre_shooting as shooting
from tests.models.state_law_specs import lugre


@pytest.fixture(scope="module")
def lugre_model():
    model = load_model(lugre(), "vb", backend="numpy")
    return model, equilibrium_branch(model, 0.01, 2.0)


def _reference_orbit(disc, Z, vb):
    """The shooting orbit at ``vb`` from a guess on the balanced orbit ``Z`` (its point where
    the velocity passes 0 downwards, its period)."""
    x = disc.state_samples(Z, 4096)
    k = np.flatnonzero((x[1, :-1] > 0) & (x[1, 1:] <= 0))[0]
    return shooting.periodic_orbit(vb, x[:, k], 2 * np.pi / disc.unpack(Z)["omega"])


def _pd_test(vb, guess):
    y, T, M = shooting.periodic_orbit(vb, *guess)
    return float(np.min(shooting.nontrivial(M).real) + 1)


def test_default_finds_the_pair_of_period_doublings_within_a_stride(lugre_model):
    model, eq = lugre_model
    disc, Z, d = periodic_start_from_hopf(model, eq.special_points("hopf")[0], 30)
    assert ANMOptions().multiplier_stride == 1
    br = periodic_branch(disc, Z, 0.0, 0.1, d)
    pds = [s for s in br.special if s.kind == "pd"]
    assert len(pds) == 2 and all(s.data["located"] for s in pds)
    disc = br.discretization
    for pd, tol in zip(pds, (1e-5, 1e-5)):
        y, T, _ = _reference_orbit(disc, pd.solution, pd.param)
        # the reference root lies within tol of the located one: the PD test changes sign
        # across [pd - tol, pd + tol] on the shooting orbits
        lo, hi = _pd_test(pd.param - tol, (y, T)), _pd_test(pd.param + tol, (y, T))
        assert lo * hi < 0, (pd.param, lo, hi)
    # stable before the first, unstable between, stable after the second
    first, second = pds[0].param, pds[1].param
    assert np.all(br.stable[(br.param < first - 1e-4) & (br.param > 0.03)] == 1.0)
    between = (br.param > first + 1e-4) & (br.param < second - 1e-4)
    assert between.any() and np.all(br.stable[between] == 0.0)
    # the reason for the default: with a stride of 8 step ends, consecutive points with
    # multipliers are further apart near the pair than the pair's own interval, so both
    # crossings can fall between two of them and go unseen (whether they do depends on
    # where the steps land: a rounding-level change of the start moves them)
    coarse = periodic_branch(disc, br.solutions[0], 0.0, 0.1, br.tangents[0], options=dict(multiplier_stride=8))
    sampled = np.sort(coarse.param[np.isfinite(coarse.stable)])
    near = sampled[(sampled > first - 0.01) & (sampled < second + 0.01)]
    assert np.diff(near).max() > second - first, (np.diff(near).max(), second - first)


def test_refined_monodromy_gives_the_multipliers_of_the_slip_cycle_at_vb_1(lugre_model):
    model, eq = lugre_model
    # the unstable slip cycles grow from the second Hopf point
    disc, Z, d = periodic_start_from_hopf(model, eq.special_points("hopf")[1], 30)
    br = periodic_branch(disc, Z, 0.0, 1.05, d, options=dict(stability=False))
    disc = br.discretization
    i = int(np.flatnonzero(np.diff(np.sign(br.param - 1.0)))[0])
    e = np.zeros(disc.size)
    e[-1] = 1.0
    Zc, _ = correct(disc, br.solutions[i], e, 1.0)
    _, _, M = _reference_orbit(disc, Zc, 1.0)
    ref = shooting.nontrivial(M)
    own = orbit_stability(disc, Zc)
    default = orbit_stability(disc, Zc, rtol=ANMOptions().multiplier_rtol)      # adaptive steps
    doubled = refined_monodromy_stability(disc, Zc, disc.unpack(Zc)["n_t"], rtol=1e-6)                 # uniform grids
    for res in (default, doubled):
        assert res.method == "variational"
        assert np.max(np.abs(np.sort_complex(res.nontrivial()) - np.sort_complex(ref))) < 1e-5
        assert res.trivial_multiplier_error < 1e-5
    assert np.max(np.abs(np.sort_complex(own.nontrivial()) - np.sort_complex(ref))) > 1e-3


def test_uncertain_when_the_trivial_multiplier_is_farther_from_1_than_a_multiplier_from_the_circle():
    def res(mu):
        mu = np.asarray(mu, dtype=complex)
        return FloquetResult(multipliers=mu, trivial_multiplier_error=float(np.min(np.abs(mu - 1))),
                             stable=True, method="variational")

    assert _uncertain(res([1.0 + 1e-3, 0.9995, 0.1]), 1e-3)        # 5e-4 from the circle
    assert not _uncertain(res([1.0 + 1e-6, 0.99, 0.1]), 1e-6)
    assert not _uncertain(res([1.0, 0.5]), np.nan)


def test_multiplier_options_are_checked():
    with pytest.raises(InputError, match="multiplier_rtol"):
        ANMOptions(multiplier_rtol=-1.0)
    with pytest.raises(InputError, match="multiplier_stride"):
        ANMOptions(multiplier_stride=0)


def test_cli_multiplier_stride_option():
    from click.testing import CliRunner

    from frictionkit.runtime.cli import main

    res = CliRunner().invoke(main, ["continue", "belt", "--param", "Vb", "--start", "0.05", "--stop", "12",
                                    "--from-hopf", "1", "--multiplier-stride", "0"])
    assert res.exit_code != 0 and "--multiplier-stride" in res.output and "Traceback" not in res.output
    res = CliRunner().invoke(main, ["continue", "--help"])
    assert "--multiplier-stride" in res.output
