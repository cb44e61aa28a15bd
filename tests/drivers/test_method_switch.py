"""The default periodic branch changes method where the harmonic balance runs out of harmonics
(issue 26): on the LuGre belt the stick-slip sharpens past vb = 0.05 until the estimates ask
for more than ``HARMONICS_MAX`` harmonics, and the branch goes on by the collocation of the
states on an adaptive mesh.  Checked against the independent shooting reference
(``tests/analysis/_lugre_shooting.py``: solve_ivp DOP853, rtol 1e-12).
"""
from pathlib import Path

import numpy as np
import pytest

from frictionkit.runtime.drivers._accuracy import HARMONICS_MAX, error_of
from frictionkit.runtime.drivers._compose import run_continuation
from frictionkit.runtime.model._load import load_model
from tests.analysis import _lugre_shooting as shooting
from tests.models.state_law_specs import lugre

TOL = 1e-6
STOP = 0.06


@pytest.fixture(scope="module")
def model():
    return load_model(lugre(), "vb", backend="numpy")


@pytest.fixture(scope="module")
def switched(model):
    """The default branch (no harmonic count, no method) from the first Hopf point to 0.06."""
    _, per = run_continuation(model, 0.01, STOP, start="hopf", hopf_index=1, progress=False,
                              echo=lambda *a: None)
    return per


def _shooting(disc, Z, vb):
    """Shooting orbit ``(y0, T, M)`` at ``vb`` from the stored orbit ``Z`` (its point where the
    velocity passes 0 downwards, its period)."""
    x = disc.states_at(Z, np.arange(4096) / 4096)
    k = np.flatnonzero((x[1] > 0) & (np.roll(x[1], -1) <= 0))[0]     # (the phase puts it at the end)
    return shooting.periodic_orbit(vb, x[:, k], disc.unpack(Z)["T"])


def test_the_branch_goes_on_by_collocation(switched):
    per = switched
    where = per.provenance["method_switch"]
    assert where["to"] == "collocation-states" and where["harmonics_needed"] > HARMONICS_MAX
    assert 0.044 < where["at"] < STOP and per.param[-1] == pytest.approx(STOP)
    assert per.discretization.kind == "collocation-states"
    assert "by the collocation of the states" in per.message
    # each point says what it was computed with: a harmonic count before, a mesh after
    H, N = per.accuracy["harmonics"], per.accuracy["intervals"]
    before = per.param <= where["at"]
    assert np.all(np.isfinite(H[before])) and np.all(np.isnan(N[before]))
    assert np.all(np.isnan(H[~before])) and np.all(np.isfinite(N[~before])) and np.any(~before)
    err = error_of(per.accuracy)
    assert np.all(np.isfinite(err)) and np.max(err) <= TOL


def test_orbits_on_both_sides_against_shooting(switched):
    """Period and peak-to-peak of x of a harmonic-balance point and of a collocation point to
    1e-7 (the tolerance 1e-6 is on the orbit; both columns measured within 1e-9)."""
    per = switched
    disc, at = per.discretization, per.provenance["method_switch"]["at"]
    ends = np.array(per.step_ends)
    for side in (0.045, 0.5 * (at + STOP)):
        j = int(ends[np.argmin(np.abs(per.param[ends] - side))])
        vb = float(per.param[j])
        y, T, _ = _shooting(disc, per.solutions[j], vb)
        assert abs(2 * np.pi / per.omega[j] / T - 1) < 1e-7, (vb, 2 * np.pi / per.omega[j], T)
        ref = shooting.peak_to_peak(vb, y, T)
        assert abs(per.ptp["x"][j] / ref - 1) < 1e-7, (vb, per.ptp["x"][j], ref)
        # the stored orbit (a harmonic-balance orbit evaluated on the last mesh) is that orbit
        assert abs(disc.ptp(per.solutions[j])[0] / ref - 1) < 1e-6


def test_period_doublings_of_the_harmonic_balance_part(switched):
    """The pair of doublings before the switch, each within 1e-6 of shooting's (the sign of
    shooting's test function changes across +-1e-6 of it)."""
    pds = [s for s in switched.special if s.kind == "pd"]
    assert len(pds) == 2
    disc = switched.discretization
    for pd in pds:
        y, T, _ = _shooting(disc, pd.solution, pd.param)
        sides = []
        for vb in (pd.param - TOL, pd.param + TOL):
            _, _, M = shooting.periodic_orbit(vb, y, T)
            sides.append(float(np.min(shooting.nontrivial(M).real) + 1))
        assert sides[0] * sides[1] < 0, (pd.param, sides)


def test_a_chosen_method_is_kept(model):
    """``--method aft`` (or a harmonic count) is the user's choice: the count stops at its
    ceiling and the message says what the estimates ask for."""
    _, per = run_continuation(model, 0.01, 0.052, start="hopf", hopf_index=1, discretization="aft",
                              progress=False, echo=lambda *a: None)
    assert "method_switch" not in per.provenance and per.discretization.kind == "aft"
    assert per.discretization.H == HARMONICS_MAX
    assert f"above {HARMONICS_MAX}" in per.message and "--method collocation" in per.message


def test_the_command(tmp_path):
    """The README's command (to vb = 0.06): the summary says where the method changed, and the
    saved branch is the collocation with both parts."""
    from click.testing import CliRunner

    from frictionkit.runtime.cli import main
    from frictionkit.runtime.results._branch import load_branch
    spec = str(Path(__file__).resolve().parents[1] / "models" / "state_law_specs.py")
    out = tmp_path / "lugre.h5"
    r = CliRunner().invoke(main, ["continue", spec, "--param", "vb", "--start", "0.01", "--stop", str(STOP),
                                  "--from-hopf", "1", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "by the collocation of the states (adaptive mesh)" in r.output
    assert "H = 30.." in r.output and "intervals (adaptive mesh)" in r.output
    br = load_branch(out)            # the file says it by its message and each point's columns
    assert br.provenance["discretization"] == "collocation-states" and "by the collocation" in br.message
    assert np.isfinite(br.accuracy["harmonics"][0]) and np.isnan(br.accuracy["intervals"][0])
    assert np.isnan(br.accuracy["harmonics"][-1]) and np.isfinite(br.accuracy["intervals"][-1])
