"""Validity of the recast is enforced along every kind of branch (issue 14 item 5).

References are independent of the recast: the original right-hand side (``sqrt`` on its
principal root), the analytic point where a sqrt argument vanishes, and hand-made orbits.
"""
import re
import warnings

import numpy as np
import pytest
import sympy as sp

from frictionkit.modelspec import ModelSpec
from frictionkit.runtime import CollocationDiscretization, HBMDiscretization, load_model
from frictionkit.runtime.drivers._branches import equilibrium_branch, periodic_branch, periodic_start_from_hopf
from frictionkit.runtime.engine._validity import check_point
from frictionkit.runtime.errors import InputError
from frictionkit.runtime.engine._options import ANMOptions
from frictionkit.runtime.model._interface import Model
from tests.models import belt_handwritten


@pytest.fixture(scope="module")
def cut():
    """x'' + c x' + x = sqrt(mu - x): equilibria x = sqrt(mu - x), i.e. mu = x^2 + x with
    x >= 0; the sqrt argument vanishes at x = 0, mu = 0.  The recast (R^2 = mu - x) also
    has the other root x = R < 0 (mu from 0 down to the fold at -1/4): no equilibria of the model."""
    spec = ModelSpec("sqrtcut", "x'' + c x' + x = sqrt(mu - x)")
    c, mu = spec.parameter("c", 0.5), spec.parameter("mu", 2.0)
    x, v = spec.second_order("x", velocity="v")
    spec.ode(v, -c * v - x + sp.sqrt(mu - x))
    return load_model(spec, continuation="mu", backend="numpy")


def _ode_residual(br):
    """|x'' of the original model| at each equilibrium (principal root; NaN off its domain)."""
    x, mu = br.mean["x"], br.param
    with np.errstate(invalid="ignore"):
        return np.abs(-x + np.sqrt(mu - x))


@pytest.mark.parametrize("discretization", [None, "hbm"])
def test_equilibrium_branch_stops_at_the_branch_cut(cut, discretization):
    """The default (pointwise) path stops where the model's sqrt turns NaN; the recast HBM
    where its auxiliary reaches the other root: both at the analytic end mu = 0."""
    br = equilibrium_branch(cut, 2.0, -1.0, discretization=discretization)
    assert not br.success and br.status == "invalid"
    assert "sqrt(mu - x)" in br.message and "mu = " in br.message and "harmonics" not in br.message
    # every kept point is an equilibrium of the original model, on the valid side mu > 0
    assert np.all(br.param > 0) and np.max(_ode_residual(br)) < 1e-8
    # the last kept point is within one step of the analytic end mu = 0, and the
    # interpolated crossing is close to it
    assert br.param[-1] < 0.1
    near = float(re.search(r"near mu ~ (\S+?)\)", br.message).group(1))
    assert abs(near) < 0.01
    assert br.validity["R1"].min() > 0


def test_warn_keeps_the_wrong_root_and_says_so(cut):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # the recast HBM: its auxiliary R (R^2 = mu - x) can follow the other root; the
        # pointwise path cannot (its sqrt is the principal root, NaN past the cut)
        br = equilibrium_branch(cut, 2.0, -1.0, options=dict(on_invalid="warn"), discretization="hbm")
    texts = [str(w.message) for w in caught if "validity condition" in str(w.message)]
    assert br.success and len(texts) == 1 and "harmonics" not in texts[0]
    # the points it warned about are not equilibria of the model (the residual 1.24)
    bad = br.validity["R1"] <= 0
    assert bad.any() and np.all(_ode_residual(br)[bad] > 1e-3)
    assert np.all(_ode_residual(br)[~bad] < 1e-8)


def test_option_is_checked():
    with pytest.raises(InputError, match="on_invalid"):
        ANMOptions(on_invalid="ignore")


@pytest.fixture(scope="module")
def belt():
    m = Model(belt_handwritten, {"n": 10, "FN": 5})
    return m, equilibrium_branch(m, 0.05, 12)


def test_one_harmonic_on_the_other_root_stops(belt):
    """H = 1: R = sqrt(Vr^2 + eps/n^2) dips to -17 % of its scale (the other root) and the
    denominator S = Vr^2 + 1/n^2 changes sign, deeper than the tolerated Gibbs undershoot:
    the branch stops, naming the condition and the parameter."""
    m, eq = belt
    disc, Z, d = periodic_start_from_hopf(m, eq.special_points("hopf")[0], 1)
    br = periodic_branch(disc, Z, 0.0, 30.0, d, options=dict(stability=False, branch_points=False))
    assert not br.success and br.status == "invalid"
    assert re.search(r"\((R = sqrt|mu = \(\.\.\.\)/S)", br.message) and "Vb = " in br.message
    assert "add harmonics" in br.message and len(br) > 1
    assert min(v.min() for v in br.validity.values()) >= -0.1


def _orbit_states(m, amp=0.5, omega=1.0):
    """A hand-made orbit of the belt's states (y, v) = (a cos, -a omega sin)."""
    return lambda t: np.array([amp * np.cos(omega * t), -amp * omega * np.sin(omega * t)])


def test_collocation_orbit_on_the_wrong_root_is_fatal(belt):
    m, _ = belt
    disc = CollocationDiscretization(m, 20, 3)
    Z = disc.from_states(_orbit_states(m), 1.0, 1.0)           # auxiliaries by model.aux: valid
    assert check_point(disc, Z).violations == []
    U = Z[: m.N * disc.G].reshape(m.N, disc.G)                  # a view: flip R's sign
    U[m.variables.index("R")] *= -1
    fatal = check_point(disc, Z).fatal
    assert [v[0] for v in fatal] == ["R"] and fatal[0][1] == pytest.approx(-1.0)


def test_denominator_changing_sign_between_samples_is_fatal(belt):
    """S = cos(t) + 1e-3 changes sign twice a period and is never zero on the samples."""
    m, _ = belt
    disc = HBMDiscretization(m, 3)
    U, omega, lam = disc.split(np.zeros(disc.size))
    U = np.zeros_like(U)
    U[m.variables.index("R"), 0] = 1.0                           # R = 1 > 0: valid
    iS = m.variables.index("S")
    U[iS, 0], U[iS, 1] = 1e-3, 1.0
    Z = disc.pack(U, 1.0, 1.0)
    u = disc.unpack(Z)["samples"](256, variables=True)[iS]
    assert np.all(u != 0) and np.any(u < 0)
    assert [v[0] for v in check_point(disc, Z).fatal] == ["S"]
