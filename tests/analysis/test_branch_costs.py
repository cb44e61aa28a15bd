"""The per-branch passes after the engine (issue 12 speed): batched extrema, batched motion
labels, multipliers only where needed — each checked against an independent value."""
import copy

import numpy as np
import pytest

from frictionkit.runtime.analysis._motion import classify_motions, limit_velocities, limit_velocity
from frictionkit.runtime.analysis._stability import branch_stability
from frictionkit.runtime.drivers._branches import equilibrium_branch, periodic_branch, periodic_start_from_hopf
from frictionkit.runtime.results._branch import trig_extrema
from tests.models._orbits import belt


def test_trig_extrema_batched_single_harmonics_analytic():
    # u = c + R cos(k theta - phi): max c + R, min c - R, for every row of a (4, 3, 2H+1) batch
    rng = np.random.default_rng(1)
    H = 12
    shape = (4, 3)
    c, R = rng.normal(size=shape), rng.uniform(0.1, 5.0, size=shape)
    k, phi = rng.integers(1, H + 1, size=shape), rng.uniform(0, 2 * np.pi, size=shape)
    coef = np.zeros(shape + (2 * H + 1,))
    for idx in np.ndindex(shape):
        coef[idx + (0,)] = c[idx]
        coef[idx + (2 * k[idx] - 1,)] = R[idx] * np.cos(phi[idx])
        coef[idx + (2 * k[idx],)] = R[idx] * np.sin(phi[idx])
    lo, hi = trig_extrema(coef)
    assert lo.shape == hi.shape == shape
    np.testing.assert_allclose(hi, c + R, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(lo, c - R, rtol=1e-13, atol=1e-13)


def test_trig_extrema_batched_against_dense_sampling():
    # general series: the Newton extrema bound the dense-grid extrema from outside, and
    # exceed them by no more than the grid's error h^2/2 max|u''| (h = 2 pi / 2^18)
    rng = np.random.default_rng(2)
    H = 8
    coef = rng.normal(size=(6, 2 * H + 1)) / (1 + np.arange(2 * H + 1)) ** 1.5
    theta = 2 * np.pi * np.arange(2 ** 18) / 2 ** 18
    kk = np.arange(1, H + 1)
    u = coef[:, :1] + coef[:, 1::2] @ np.cos(np.outer(kk, theta)) + coef[:, 2::2] @ np.sin(np.outer(kk, theta))
    lo, hi = trig_extrema(coef)
    bound = 0.5 * (2 * np.pi / 2 ** 18) ** 2 * np.sum(np.abs(coef[:, 1:]) * np.repeat(kk, 2) ** 2, axis=1)
    assert np.all(hi >= u.max(axis=1) - 1e-14) and np.all(hi - u.max(axis=1) <= bound + 1e-14)
    assert np.all(lo <= u.min(axis=1) + 1e-14) and np.all(u.min(axis=1) - lo <= bound + 1e-14)


class _LawStub:
    """The members limit_velocities uses; law 2 (v/a) / (1 + (v/a)^2), largest (= 1) at
    v = a: a = lam (``depends``) or a = 0.7."""

    contacts = ("c",)

    def __init__(self, depends):
        self.depends, self.calls = depends, 0
        self.contact_laws_use_lam = depends

    def param_vector(self, lam=None):
        return np.array([lam if self.depends else 0.7])

    def contact_law(self, vr, p):
        self.calls += 1
        w = np.asarray(vr, dtype=float) / p[0]
        return 2 * w / (1 + w * w)


@pytest.mark.parametrize("depends", [True, False])
def test_limit_velocities_analytic_with_and_without_lam_in_the_law(depends):
    lams = np.linspace(0.3, 2.0, 9)
    stub = _LawStub(depends)
    v_n = limit_velocities(stub, lams)
    # a maximum's abscissa is fixed only to about sqrt(machine epsilon), relative
    np.testing.assert_allclose(v_n[:, 0], lams if depends else 0.7, rtol=1e-7)
    one = _LawStub(depends)
    limit_velocity(one, lams[0])
    # a law without lam is searched once; with lam, at every value (a bounded search of
    # several evaluations each)
    assert stub.calls == one.calls if not depends else stub.calls > 5 * len(lams)


@pytest.mark.parametrize("continuation, uses", [("Vb", False), ("mus", True), ("n", True)])
def test_generated_models_say_whether_a_law_involves_the_continuation_parameter(continuation, uses):
    """Seed 000's law mu_n(vr; mus, mud, eps, n) (eq. 2) involves mus and n, not the belt speed
    Vb (which enters the relative velocity only): V_n is then searched once per branch."""
    from frictionkit.modelspec import zoo
    from frictionkit.runtime import load_model
    model = load_model(zoo.belt(), continuation=continuation, backend="numpy")
    assert model.contact_laws_use_lam is uses


def test_classify_motions_batch_of_synthetic_orbits_analytic_fractions():
    # belt states (y, v), V_r = v - Vb; stick while |V_r| <= |V_n| (seed 000 eq. (26))
    model = belt(10)
    Vb, m = 0.5, 4000
    v_n = abs(limit_velocity(model, Vb)[0])
    theta = 2 * np.pi * np.arange(m) / m
    vr = [-0.3 + 0.05 * np.cos(theta), -0.3 + 0.25 * np.cos(theta), -0.3 + 0.25 * np.cos(2 * theta),
          -0.05 + 0.01 * np.cos(theta)]
    x = np.array([np.vstack([0 * theta, r + Vb]) for r in vr])
    res = classify_motions(model, [Vb] * len(vr), x)
    assert [r.label for r in res] == ["slipping", "stick-slip", "multiple stick", "sticking"]
    assert [r.stick_intervals for r in res] == [(0,), (1,), (2,), (1,)]
    # stick where cos(k theta) >= (0.3 - |V_n|) / 0.25: a fraction arccos(.) / pi of the period
    frac = np.arccos((0.3 - v_n) / 0.25) / np.pi
    for r, expect in zip(res, [0.0, frac, frac, 1.0]):
        assert r.stick_fraction[0] == pytest.approx(expect, abs=2.0 / m)


@pytest.fixture(scope="module")
def belt_branch():
    model = belt(10, 5.0)
    eq = equilibrium_branch(model, 0.05, 12.0)
    disc, Z, d = periodic_start_from_hopf(model, eq.special_points("hopf")[0], 20)
    # multipliers at every 8th step end, bracketed and bisected (the default is every step end)
    return periodic_branch(disc, Z, 0.0, 12.0, d, options=dict(multiplier_stride=8))


def test_branch_extrema_columns_against_dense_time_series(belt_branch):
    br = belt_branch
    for s, name in enumerate(br.states):
        scale = np.max(np.abs(br.max[name]))
        for i in range(0, len(br), 7):
            _, x = br.time_series(i, n_t=2 ** 14)
            assert br.max[name][i] >= x[s].max() - 1e-13 * scale
            assert br.min[name][i] <= x[s].min() + 1e-13 * scale
            assert br.max[name][i] - x[s].max() < 1e-6 * scale and x[s].min() - br.min[name][i] < 1e-6 * scale


def test_multipliers_where_needed_give_the_flags_and_points_of_every_point(belt_branch):
    # the continuation's pass brackets and bisects; the second method computes every point
    br = belt_branch
    done = np.isfinite(br.max_multiplier)
    assert done.sum() < len(br) / 2
    full = copy.copy(br)
    full.special = [copy.copy(s) for s in br.special]
    for s in full.special:
        s.data = dict(s.data)
    branch_stability(full, br.discretization, stride=1)
    assert np.all(np.isfinite(full.max_multiplier))
    np.testing.assert_array_equal(br.stable, full.stable)
    np.testing.assert_array_equal(br.max_multiplier[done], full.max_multiplier[done])
    assert [(s.kind, s.index, s.param) for s in br.special] == [(s.kind, s.index, s.param) for s in full.special]
    fold, fold_full = br.special_points("fold")[0], full.special_points("fold")[0]
    assert fold.data["crossing_param"] == fold_full.data["crossing_param"]


def test_neimark_sacker_and_inherited_flags_analytic_on_a_longer_branch():
    # tests/models/cycle_ns_handwritten.py: stable exactly for lam < 0 (multipliers
    # exp(2 pi (lam +- i nu))), the pair leaving the circle at lam = 0; 40 Newton steps,
    # most of whose points inherit their flag
    from frictionkit.runtime.drivers._branches import periodic_start_from_orbit
    from frictionkit.runtime.model._interface import Model
    from tests.models import cycle_ns_handwritten

    model = Model(cycle_ns_handwritten, {"lam": -0.2, "nu": 0.3})
    theta = 2 * np.pi * np.arange(32) / 32
    x = np.vstack([np.cos(theta), np.sin(theta), 0 * theta, 0 * theta])
    disc, Z = periodic_start_from_orbit(model, -0.2, x, 2 * np.pi, 3)
    br = periodic_branch(disc, Z, -0.2, 0.2, 1.0, method="newton",
                         options=dict(step=0.01, max_step=0.01, multiplier_stride=8))
    assert len(br) > 30 and np.isfinite(br.max_multiplier).sum() < len(br) / 2
    assert [s.kind for s in br.special] == ["ns"] and abs(br.special[0].param) < 1e-10
    np.testing.assert_array_equal(br.stable, np.where(br.param < 0, 1.0, 0.0))


def test_multiplier_stride_option_and_the_report_of_an_inherited_point(belt_branch):
    """``multiplier_stride=1`` computes the multipliers at every step end (AUTO's ISP = 2);
    a point that inherited its flag says so in the report instead of showing no multipliers."""
    from frictionkit.runtime.errors import InputError
    from frictionkit.runtime.results._report import _point
    br = belt_branch
    disc = br.discretization
    every = periodic_branch(disc, br.solutions[0], 0.0, 12.0, br.tangents[0], options=dict(multiplier_stride=1))
    assert np.all(np.isfinite(every.max_multiplier))          # one point per step here
    np.testing.assert_array_equal(every.stable, br.stable)
    with pytest.raises(InputError, match="multiplier_stride"):
        periodic_branch(disc, br.solutions[0], 0.0, 12.0, br.tangents[0], options=dict(multiplier_stride=0))
    i = int(np.flatnonzero(~np.isfinite(br.max_multiplier))[0])
    assert "not computed at this point" in _point(br, i, br.states[0], 64)["numbers"]["Floquet multipliers"]


def test_motion_labels_in_parts_are_each_orbits_own(belt_branch, monkeypatch):
    """The branch's motion labels, computed in parts of the branch (here of 5 points, to cross
    part boundaries), are those of each orbit classified alone from its own time series."""
    from frictionkit.runtime.analysis import _stability
    from frictionkit.runtime.analysis._motion import classify_motion
    br = belt_branch
    monkeypatch.setattr(_stability, "MOTION_PART_BYTES", 5 * 8 * _stability.MOTION_SAMPLES * len(br.states))
    labels = _stability._motion_labels(br, br.discretization)
    model = br.discretization.model
    alone = [classify_motion(model, br.param[i], br.time_series(i, n_t=_stability.MOTION_SAMPLES)[1]).label
             for i in range(len(br))]
    assert len(labels) == len(br) and labels == alone == list(br.motion)
    assert {"slipping", "stick-slip"} <= set(labels)
