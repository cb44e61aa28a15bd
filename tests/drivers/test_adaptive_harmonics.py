"""The adaptive harmonic count (drivers/_accuracy.py, issue 26 item 2).

The tanh x exp belt (examples/tanh_exp_belt.py) from its first Hopf point with no harmonic
count: the branch chooses the count along itself for the default tolerance (1e-6 relative on
the orbit), so the count changes along it (the small cycles next to the Hopf point need few
harmonics, the stick-slip cycles many); its estimates meet the tolerance, its periods agree
with simple shooting on the original ODE (solve_ivp, rtol 1e-12; an independent method) to
1e-6 at points across the branch, and its fold of cycles, located at the count of its
segment, is AUTO-07p's (NTST 100 and 200, NCOL 4: 0.98434561264, benchmarks/bench_auto.py)
to 1e-8.  The branch with its per-point counts survives a save, a load and a restart.  A
given harmonic count is kept as is.
"""
import numpy as np
import pytest

from frictionkit.runtime import load_branch, load_model
from frictionkit.runtime.drivers._accuracy import HARMONICS_FIRST, error_of
from frictionkit.runtime.drivers._compose import run_continuation
from frictionkit.runtime.drivers._orbits import find_periodic_orbit

#: AUTO-07p's fold of cycles of the tanh x exp belt (NTST 100 and 200, NCOL 4 agree to all
#: printed digits; README "Comparison with AUTO-07p", benchmarks/bench_auto.py)
AUTO_FOLD = 0.98434561264


@pytest.fixture(scope="module")
def tanh_exp():
    return load_model("examples/tanh_exp_belt.py", continuation="vb")


@pytest.fixture(scope="module")
def adaptive(tanh_exp):
    return run_continuation(tanh_exp, 0.1, 1.5, start="hopf", progress=False, echo=lambda *a: None)[1]


def _shooting_period_errors(model, br, count=6):
    disc = br.discretization
    ends = np.unique(br.step_ends)[1:-1]          # not the ends next to the Hopf points
    out = []
    for i in ends[np.linspace(0, len(ends) - 1, count).astype(int)]:
        Z = br.solutions[i]
        _, x = disc.samples(Z, 512)
        T = 2 * np.pi / disc.unpack(Z)["omega"]
        k = int(np.argmax(x[0]))                   # shooting's phase: an extremum of the first state
        orbit = find_periodic_orbit(model, float(Z[-1]), x[:, k], T)
        out.append(abs(T / orbit.T - 1))
    return np.array(out)


def test_the_count_changes_along_the_branch_and_meets_the_tolerance(tanh_exp, adaptive):
    br = adaptive
    H = br.accuracy["harmonics"]
    segments = br.provenance["adaptive_harmonics"]["segments"]
    assert segments[0]["harmonics"] == HARMONICS_FIRST and len(segments) > 1
    assert H.min() < H.max() == br.discretization.H        # stored padded to the largest count
    assert H[0] == HARMONICS_FIRST and sorted({int(h) for h in H}) == sorted({s["harmonics"] for s in segments})
    assert np.nanmax(error_of(br.accuracy)) <= 1e-6
    assert np.max(_shooting_period_errors(tanh_exp, br)) <= 1e-6
    assert br.success and br.status in ("range", "equilibrium")


def test_the_fold_is_autos(adaptive):
    folds = adaptive.special_points("fold")
    assert len(folds) == 1 and abs(folds[0].param / AUTO_FOLD - 1) < 1e-8
    # located at the count of its segment, its solution stored padded like the points
    assert folds[0].data["harmonics"] == adaptive.accuracy["harmonics"][folds[0].index]
    assert folds[0].solution.shape == adaptive.solutions[0].shape


def test_save_load_restart_round_trip(adaptive, tmp_path):
    adaptive.save(tmp_path / "a.h5")
    back = load_branch(tmp_path / "a.h5")
    np.testing.assert_array_equal(back.accuracy["harmonics"], adaptive.accuracy["harmonics"])
    np.testing.assert_array_equal(back.solutions, adaptive.solutions)
    assert back.harmonics == adaptive.discretization.H
    # a point computed at the smallest count, restarted from the file at the file's count: the
    # padded vector is the same orbit, so Newton leaves it where it was
    H = adaptive.accuracy["harmonics"]
    inner = np.flatnonzero(H[1:-2] == H.min()) + 1          # not the ends (Hopf points)
    i = int(inner[len(inner) // 2])
    again = back.restart(i, options=dict(max_steps=2, stability=False, branch_points=False),
                         model="examples/tanh_exp_belt.py")
    assert again.param[0] == pytest.approx(adaptive.param[i], abs=1e-12)
    assert again.omega[0] == pytest.approx(adaptive.omega[i], rel=1e-7)


def test_fixed_harmonics_are_kept(tanh_exp):
    _, br = run_continuation(tanh_exp, 0.1, 1.5, start="hopf", harmonics=30, progress=False,
                             echo=lambda *a: None, options=dict(stability=False, branch_points=False))
    assert br.discretization.H == 30 and "adaptive_harmonics" not in br.provenance
    assert np.all(br.accuracy["harmonics"] == 30)
    # the estimate says what the fixed count misses
    assert np.nanmax(error_of(br.accuracy)) > 1e-6
