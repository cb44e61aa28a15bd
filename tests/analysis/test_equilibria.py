"""Equilibria and Hopf points of the belt oscillator against an independent root-find.

The sliding equilibrium of seed 000 eq. (5) is ``y = FN mu_n(-Vb) / (M1 omega1^2)``,
``y' = 0``; its Jacobian has trace ``-2 zeta omega1 + (FN/M1) mu_n'(-Vb)`` and determinant
``omega1^2 > 0``, so Hopf points solve ``2 zeta omega1 = (FN/M1) mu_n'(-Vb)`` (issue 3).
``mu_n`` is rebuilt here with sympy from seed 000 eq. (2) (not from the model module),
differentiated symbolically and root-found with scipy's brentq.
"""
import numpy as np
import pytest
import sympy as sp
from scipy.optimize import brentq

from frictionkit.runtime.drivers._branches import equilibrium_branch, periodic_start_from_hopf, periodic_branch
from frictionkit.runtime.analysis._equilibria import find_equilibrium, eigenvalues
from frictionkit.runtime.model._interface import Model
from frictionkit.runtime.errors import InputError
from tests.models import belt_handwritten, belt_fn_handwritten

P = dict(zip(belt_handwritten.PARAMETERS, belt_handwritten.DEFAULTS))


def _dmu(n):
    """mu_n'(Vr) of seed 000 eq. (2), by sympy."""
    vr = sp.symbols("Vr", real=True)
    mus, mud, eps = P["mus"], P["mud"], P["eps"]
    alpha = sp.sqrt(sp.Rational(str(mus)) * (sp.Rational(str(mus)) - sp.Rational(str(mud))))
    mu = (-sp.Rational(str(mud)) * vr * sp.sqrt(vr**2 + sp.Float(eps) / n**2) - 2 * alpha / n * vr) \
        / (vr**2 + sp.Rational(1, n**2))
    return sp.lambdify(vr, sp.diff(mu, vr), "math")


def _hopf_roots_vb(n, FN=5.0, lo=1e-3, hi=30.0):
    d = _dmu(n)
    g = lambda vb: 2 * P["zeta"] * P["omega1"] - FN / P["M1"] * d(-vb)   # noqa: E731
    grid = np.geomspace(lo, hi, 4000)
    vals = np.array([g(v) for v in grid])
    return [brentq(g, grid[i], grid[i + 1], xtol=1e-15, rtol=1e-15)
            for i in np.flatnonzero(np.sign(vals[1:]) != np.sign(vals[:-1]))]


@pytest.mark.parametrize("n", [10, 25, 50, 100])
def test_hopf_points_in_belt_speed(n):
    ref = _hopf_roots_vb(n)
    assert len(ref) == 2
    br = equilibrium_branch(Model(belt_handwritten, {"n": n, "FN": 5}), 1e-3, 30)
    hopf = br.special_points("hopf")
    assert br.success and br.status == "range"
    assert [h.param for h in hopf] == pytest.approx(ref, rel=1e-8)
    if n == 10:   # seed 000 Fig. 4: B1 ~ 0.14, B3 ~ 3.65 m/s
        assert hopf[0].param == pytest.approx(0.14, abs=0.005)
        assert hopf[1].param == pytest.approx(3.65, abs=0.01)
    # the crossing pair is +-i omega1 (trace zero, determinant omega1^2)
    for h in hopf:
        assert h.omega == pytest.approx(P["omega1"], rel=1e-12)
    # stable outside [B1, B3], unstable inside
    inside = (br.param > ref[0]) & (br.param < ref[1])
    assert np.all(br.stable[inside] == 0) and np.all(br.stable[~inside] == 1)


@pytest.mark.parametrize("n, direction", [(10, +1), (25, -1)])
def test_hopf_in_normal_force_and_criticality(n, direction):
    """FN-continuation at Vb = 0.2 (seed 000 §4.3): Hopf at the root of the same condition;
    the periodic branch leaves towards larger FN for n = 10 (supercritical) and smaller FN for
    n = 25 (subcritical), DESIGN §6 / seed 000 Fig. 9."""
    d = _dmu(n)
    g = lambda fn: 2 * P["zeta"] * P["omega1"] - fn / P["M1"] * d(-0.2)   # noqa: E731
    ref = brentq(g, 1e-4, 100.0, xtol=1e-15, rtol=1e-15)
    m = Model(belt_fn_handwritten, {"n": n, "Vb": 0.2})
    br = equilibrium_branch(m, 0.01, 20)
    (hopf,) = br.special_points("hopf")
    assert hopf.param == pytest.approx(ref, rel=1e-8)
    disc, Z, dvec = periodic_start_from_hopf(m, hopf, 8)
    per = periodic_branch(disc, Z, 0.001, 20, dvec, options=dict(max_steps=4))
    assert np.sign(per.param[-1] - hopf.param) == direction


def test_equilibrium_matches_closed_form():
    m = Model(belt_handwritten, {"n": 10, "FN": 5})
    disc, Z = find_equilibrium(m, 0.5)
    vr = -0.5
    n = 10
    alpha = np.sqrt(P["mus"] * (P["mus"] - P["mud"]))
    mu = (-P["mud"] * vr * np.sqrt(vr**2 + P["eps"] / n**2) - 2 * alpha / n * vr) / (vr**2 + 1 / n**2)
    assert Z[0] == pytest.approx(5 / P["M1"] * mu / P["omega1"] ** 2, rel=1e-13)
    assert abs(Z[1]) < 1e-15
    ev = eigenvalues(m, Z[:2], 0.5)
    tr = -2 * P["zeta"] * P["omega1"] + 5 / P["M1"] * _dmu(10)(vr)
    assert np.sum(ev).real == pytest.approx(tr, rel=1e-10)
    assert np.prod(ev).real == pytest.approx(P["omega1"] ** 2, rel=1e-12)


def test_newton_and_anm_equilibria_agree():
    m = Model(belt_handwritten, {"n": 25, "FN": 5})
    a = equilibrium_branch(m, 0.01, 5, method="anm")
    b = equilibrium_branch(m, 0.01, 5, method="newton")
    assert [h.param for h in a.special_points("hopf")] == pytest.approx(
        [h.param for h in b.special_points("hopf")], rel=1e-10)
    assert b.counters["factorizations"] > a.counters["factorizations"]


def test_equilibrium_range_errors():
    m = Model(belt_handwritten, {"n": 10})
    with pytest.raises(InputError, match="empty"):
        equilibrium_branch(m, 1.0, 1.0)
    with pytest.raises(InputError, match="x_guess"):
        find_equilibrium(m, 1.0, x_guess=[0.0, 0.0, 0.0])
