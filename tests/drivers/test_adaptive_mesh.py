"""The adaptive mesh of the collocation of the states along a branch (issue 26): de Boor's
equidistribution between steps and a growing interval count, against the independent
shooting reference of the LuGre belt (``tests/analysis/_lugre_shooting.py``: solve_ivp
DOP853, rtol 1e-12, multipliers from the variational equation).
"""
import numpy as np
import pytest

from frictionkit.runtime.drivers._compose import run_continuation
from frictionkit.runtime.model._load import load_model
from tests.analysis import _lugre_shooting as shooting
from tests.models.state_law_specs import lugre

TOL = 1e-6


@pytest.fixture(scope="module")
def pd_pair():
    """The LuGre belt from its first Hopf point to vb = 0.047 (the pair of period doublings),
    collocation from 30 x 4 intervals, default tolerance 1e-6."""
    model = load_model(lugre(), "vb", backend="numpy")
    _, per = run_continuation(model, 0.01, 0.047, start="hopf", hopf_index=1, discretization="collocation",
                              intervals=30, degree=4, progress=False, echo=lambda *a: None)
    return per


def _reference(disc, Z, vb):
    """Shooting orbit ``(y0, T, M)`` at ``vb`` from the collocated orbit ``Z`` (its point where
    the velocity passes 0 downwards, its period)."""
    x = disc.states_at(Z, np.arange(4096) / 4096)
    k = np.flatnonzero((x[1, :-1] > 0) & (x[1, 1:] <= 0))[0]
    return shooting.periodic_orbit(vb, x[:, k], disc.unpack(Z)["T"])


def _pd_test(vb, guess):
    y, T, M = shooting.periodic_orbit(vb, *guess)
    return float(np.min(shooting.nontrivial(M).real) + 1)


def test_mesh_adapts_and_meets_the_tolerance(pd_pair):
    per = pd_pair
    segs = per.provenance["adaptive_mesh"]["segments"]
    # the stick-slip sharpens along the branch: the mesh is re-equidistributed and grows
    assert len(segs) >= 2 and segs[-1]["intervals"] > segs[0]["intervals"]
    intervals = per.accuracy["intervals"]
    assert np.all(np.diff(intervals) >= 0) and intervals[0] == 30
    err = per.accuracy["err_mesh"]
    assert np.nanmax(err) <= TOL
    disc = per.discretization
    assert not disc.uniform and disc.n_intervals == segs[-1]["intervals"]
    assert per.provenance["sizes"]["mesh"] == list(disc.mesh)
    # the stored orbits (on the last mesh) keep their segments' columns
    j = len(per) // 3
    assert abs(disc.ptp(per.solutions[j])[0] / per.ptp["x"][j] - 1) < 1e-6


def test_period_doublings_and_orbits_against_shooting(pd_pair):
    """Both doublings within 1e-6 of the shooting reference (measured 3.0e-7 and 5e-11:
    shooting roots 0.0402594933, 0.0437820014); the period of an orbit between them to 1e-7."""
    per = pd_pair
    disc = per.discretization
    pds = [s for s in per.special if s.kind == "pd"]
    assert len(pds) == 2
    for pd in pds:
        y, T, _ = _reference(disc, pd.solution, pd.param)
        lo, hi = _pd_test(pd.param - TOL, (y, T)), _pd_test(pd.param + TOL, (y, T))
        assert lo * hi < 0, (pd.param, lo, hi)
    j = int(np.argmin(np.abs(per.param - 0.042)))
    y, T, M = _reference(disc, per.solutions[j], per.param[j])
    assert abs(disc.unpack(per.solutions[j])["T"] / T - 1) < 1e-7
    assert per.stable[j] == 0.0 and np.min(shooting.nontrivial(M).real) < -1


def test_fixed_mesh_when_asked():
    model = load_model(lugre(), "vb", backend="numpy")
    _, per = run_continuation(model, 0.01, 0.03, start="hopf", hopf_index=1, discretization="collocation",
                              intervals=20, degree=3, progress=False, echo=lambda *a: None,
                              options=dict(adaptive_mesh=False, max_steps=3))
    assert "adaptive_mesh" not in per.provenance and per.discretization.uniform
    assert per.discretization.n_intervals == 20
