"""The ANM's end-point correction (engine/_anm.py): chord iterations with the step's own LU,
the residual-driven step shortening, and the fold started from the series' turning point.

References: the belt's fold of cycles B2 (seed 000 §4.2, n = 10, F_N = 5 N) converged to
10.2874838639 m/s (AUTO-07p NTST 100/200 and frictionkit H = 100 agree, DESIGN §6); the same
branch with the Newton correction alone (``chord_iterations=0``, a second corrector); and the
analytic fold of ``x' = lam - x^2`` at (0, 0)."""
from __future__ import annotations

import numpy as np
import pytest

from frictionkit.runtime import equilibrium_branch, load_model, periodic_branch, periodic_start_from_hopf
from frictionkit.runtime.engine._newton import correct
from frictionkit.runtime.errors import InputError
from tests.models._fold_system import fold_by_extremum

FOLD_CONVERGED = 10.2874838639


@pytest.fixture(scope="module")
def belt_start():
    m = load_model("belt", continuation="Vb", n=10)
    eq = equilibrium_branch(m, 0.05, 12)
    return periodic_start_from_hopf(m, eq.special_points("hopf")[0], 40)


def _branch(start, **options):
    disc, Z, d = start
    return periodic_branch(disc, Z, 0.0, 30.0, d, options=dict(stability=False, branch_points=False, **options))


def test_chord_correction_keeps_the_branch_with_one_factorization_per_step(belt_start):
    chord = _branch(belt_start)
    newton = _branch(belt_start, chord_iterations=0)
    (f_chord,), (f_newton,) = chord.special_points("fold"), newton.special_points("fold")
    # H = 40 is 7e-8 below the converged fold (truncation); both correctors give the same one
    assert abs(f_chord.param / FOLD_CONVERGED - 1) < 1e-7
    assert f_chord.param == pytest.approx(f_newton.param, rel=1e-12)
    assert chord.status == newton.status == "equilibrium"
    c = chord.counters
    assert c["factorizations"] / c["steps"] <= 1.5          # issue 12: at most 1.5 LU per step
    assert newton.counters["factorizations"] / newton.counters["steps"] > 1.5


def test_every_step_end_is_where_newton_puts_it(belt_start):
    """Each step end (chord-corrected, Newton-corrected or accepted as the series gave it) is
    the solution Newton converges to from it on the same hyperplane, to 1e-9 of |Z|."""
    br = _branch(belt_start)
    disc = br.discretization
    worst = 0.0
    for Z, t in zip(br.solutions[1:-1], br.tangents[1:-1]):       # the ends are the Hopf points
        Zn, _ = correct(disc, Z, t, float(t @ Z), xtol=1e-13, max_iter=20)
        worst = max(worst, float(np.linalg.norm(Zn - Z) / np.linalg.norm(Z)))
    assert worst < 1e-9


def test_a_diverging_chord_is_finished_with_one_factorization_at_the_end(belt_start, monkeypatch):
    """Next to the Hopf point the step's own factorization does not contract at the step's end
    (the chord diverges); the end point is then corrected by chord iterations on one
    factorization at the end itself.  Each such point is Newton's solution from the series'
    end on the same hyperplane (to 1e-13 of |Z|), for one factorization each."""
    from frictionkit.runtime.engine import _anm
    rescued = []
    plain = _anm._chord_at_end

    def recorded(disc, Z, te, scale, noise, options, counters):
        before = counters.factorizations
        out = plain(disc, Z, te, scale, noise, options, counters)
        rescued.append((Z, te, out, counters.factorizations - before))
        return out

    monkeypatch.setattr(_anm, "_chord_at_end", recorded)
    _branch(belt_start)
    done = [r for r in rescued if r[2] is not None]
    assert done, "the branch has no step whose chord diverged: the test no longer exercises the path"
    disc = belt_start[0]
    for Z, te, out, lu in done:
        Zn, _ = correct(disc, Z, te, float(te @ Z), xtol=1e-13, max_iter=20)
        # (the correction itself is 1e-12 .. 4e-11 of |Z|: the point must be on the same
        # hyperplane as Newton's, not merely close to the series' end)
        assert np.linalg.norm(out - Zn) <= 1e-13 * np.linalg.norm(Zn)
        assert lu == 1


def test_fold_from_the_series_turning_point_is_the_extremum_of_lam(belt_start):
    """The fold started from the turning point of lam on the step's series (one Newton
    correction and one tangent) against the extremum of lam along the branch."""
    br = _branch(belt_start)
    (fold,) = br.special_points("fold")
    i = fold.index
    ref = fold_by_extremum(br.discretization, br.solutions[i - 1], br.solutions[i + 2])
    assert fold.param == pytest.approx(ref, rel=1e-12)


def test_chord_iterations_must_not_be_negative(belt_start):
    with pytest.raises(InputError, match="chord_iterations"):
        _branch(belt_start, chord_iterations=-1)


def test_a_non_finite_series_order_is_reported_with_its_order(belt_start, monkeypatch):
    """The series is tested for NaN/inf once per step (not per order): a NaN right-hand side at
    order 3 must still stop the step with NonFiniteError naming order 3, not pass silently."""
    from frictionkit.runtime.engine._anm import anm_series
    from frictionkit.runtime.errors import NonFiniteError
    disc, Z, d = belt_start
    clean = disc.series_rhs

    def spoiled(terms, origin=None):
        F = clean(terms, origin=origin)
        if len(terms) + 1 == 3:
            F[5] = np.nan
        return F

    monkeypatch.setattr(disc, "series_rhs", spoiled)
    # the contract's loop, which calls series_rhs order by order (the AFT's compiled one does not)
    from frictionkit.runtime.discretizations import Discretization
    monkeypatch.setattr(disc, "series_terms", Discretization.series_terms.__get__(disc))
    with pytest.raises(NonFiniteError, match="from order 3 on"):
        anm_series(disc, Z, d, 20)


def test_the_hopf_point_a_branch_ends_on_is_the_equilibria_one(belt_start):
    """The periodic branch from B1 ends where its series reaches zero amplitude, at B3; the
    Hopf point it records (corrected at three small amplitudes, extrapolated to zero) is the
    one located on the equilibria independently (eigenvalues of the 2 x 2 Jacobian crossing
    the imaginary axis), to 1e-9; the uncorrected series point was 1.7e-8 off."""
    m = load_model("belt", continuation="Vb", n=10)
    b3 = equilibrium_branch(m, 0.05, 12).special_points("hopf")[1].param
    br = _branch(belt_start)
    assert br.status == "equilibrium"
    end = br.special_points("hopf")[-1]
    assert end.param == pytest.approx(b3, rel=1e-9)
    assert f"{end.param:.10g}" in br.message


def test_vanishing_amplitude_extrapolation_is_exact_for_an_even_branch():
    """A branch closing in on a Hopf point without reaching it (``Recorder._vanishing``): its
    last three step ends are extrapolated to zero amplitude.  On the model branch
    ``Z(A) = (A, A^3, lam_H + c A^2 + d A^4)`` (lam even in the signed amplitude A, the other
    component odd) with amplitudes halving below 1e-3, ``lam`` is extrapolated by the quadratic
    in ``A^2`` through the last three (A_1, A_2, A_3), exact for ``lam_H + c A^2 + d A^4``; the
    orbit by the quadratic in ``A``, exact for the ``A`` part, which at A = 0 leaves,
    analytically, ``A_1 A_2 A_3`` of ``A^3``.  (The quadratic in ``A`` for ``lam`` too left
    ``d A_1 A_2 A_3 (A_1 + A_2 + A_3)``.)"""
    from frictionkit.runtime.engine._recorder import Recorder
    lam_h, c, d = 3.6555597013, -2.5, 7.0
    rec = Recorder.__new__(Recorder)          # only the points and the amplitude functional
    rec.amp_w = np.array([1.0, 0.0, 0.0])
    amps = [4e-3, 1e-3, 5e-4, 2.5e-4]
    rec.points = [np.array([A, A ** 3, lam_h + c * A ** 2 + d * A ** 4]) for A in amps]
    rec.step_ends = list(range(len(amps)))
    lam, Zh = rec._hopf_extrapolated(np.array([1.0, 0.0, 0.0]))
    a1, a2, a3 = amps[1:]
    assert lam == pytest.approx(lam_h, rel=1e-15, abs=1e-15)
    assert abs(lam - lam_h) < 0.1 * abs(d * a1 * a2 * a3 * (a1 + a2 + a3))       # the old formula's error
    assert Zh[0] == pytest.approx(0.0, abs=1e-18)
    assert Zh[1] == pytest.approx(a1 * a2 * a3, rel=1e-9)


def test_pade_tangent_is_the_derivative_of_the_approximant():
    """The Padé tangent is the exact derivative of the rational approximant: against a central
    difference of the approximant's values (step 1e-5, error about 1e-10 here), on a series
    with two independent geometric directions and a generic third."""
    from frictionkit.runtime.engine._anm import Series
    rng = np.random.default_rng(3)
    u, v, w = (rng.standard_normal(40) for _ in range(3))     # more unknowns than orders
    terms = [1.5 ** p * u + (-0.8) ** p * v + 0.3 ** p * w for p in range(1, 16)]
    s = Series(rng.standard_normal(40), terms, 0.3, pade=True)
    h = 1e-5
    for a in (0.05, 0.15, 0.25):
        fd = (s(a + h) - s(a - h)) / (2 * h)
        np.testing.assert_allclose(s.tangent(a), fd / np.linalg.norm(fd), atol=1e-8)


def test_a_step_ending_on_the_range_bound_is_corrected_by_the_chord(belt_start, monkeypatch):
    """A step clipped to a parameter bound is corrected on ``lam = bound`` with the step's own
    LU (``_chord_on_bound``): the end point's lam is the bound exactly, and the point is
    Newton's solution at fixed lam from the series' end (to 1e-13 of |Z|), with no
    factorization of its own."""
    from frictionkit.runtime.engine import _anm
    seen = []
    plain = _anm._chord_on_bound

    def recorded(disc, Z, bound, Z1, lu, scale, noise, options, counters):
        before = counters.factorizations
        out = plain(disc, Z, bound, Z1, lu, scale, noise, options, counters)
        seen.append((Z.copy(), bound, out, counters.factorizations - before))
        return out

    monkeypatch.setattr(_anm, "_chord_on_bound", recorded)
    disc, Z, d = belt_start
    br = periodic_branch(disc, Z, 0.0, 5.0, d, options=dict(stability=False, branch_points=False))
    assert br.status == "range" and len(seen) == 1
    Zs, bound, out, lu = seen[0]
    assert out is not None and lu == 0
    assert br.solutions[-1][-1] == bound == 5.0
    e = np.zeros(disc.size)
    e[-1] = 1.0
    Zn, _ = correct(disc, Zs, e, bound, xtol=1e-13, max_iter=20)
    assert np.linalg.norm(br.solutions[-1] - Zn) <= 1e-13 * np.linalg.norm(Zn)


def test_the_start_tangent_from_newtons_last_factorization(belt_start):
    """A run's first tangent and determinant sign come from the start correction's last
    factorization (``correct(..., keep_factorization=True)``, then ``tangent_at(..., lu=)``,
    as ``engine._run._follow`` does): the same as a factorization at the corrected start,
    to 1e-9, for one factorization less."""
    from frictionkit.runtime.engine._bordered import Counters
    from frictionkit.runtime.engine._newton import tangent_at
    disc, Z, d = belt_start
    border = d / np.linalg.norm(d)
    # a start as the drivers hand it over: converged to about 1e-10 (the tangent then differs
    # from the fresh one by about the last update times its sensitivity, 6.7e-9 from 1e-6)
    Zs = Z * (1 + 1e-10 * np.random.default_rng(3).standard_normal(Z.size))
    counters = Counters()
    Zc, _, lu = correct(disc, Zs, border, float(border @ Zs), counters=counters, keep_factorization=True)
    n_lu = counters.factorizations
    t, sign = tangent_at(disc, Zc, border, counters, with_det_sign=True, lu=lu)
    assert counters.factorizations == n_lu
    t_ref, s_ref = tangent_at(disc, Zc, border, with_det_sign=True)
    assert np.linalg.norm(t - t_ref) < 1e-9
    assert sign == s_ref
