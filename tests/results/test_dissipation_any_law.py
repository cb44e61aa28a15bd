"""The energy each contact dissipates per cycle, for every kind of model (issue 25): laws the
recast inlines (linear in the relative velocity), sampled (non-analytic path) models, and
structures (a numeric linear structure with symbolic contacts, condensed or not).

References, each independent of the column's code (the generated ``contact_force`` paired with
the velocities on a time grid):

* a linear viscous contact ``cd v_rel`` (with a cubic spring, so the orbit has many
  harmonics, and a mass of 2 on the damped degree of freedom: the energy is force times
  velocity, whatever the mass): ``E = muN cd int v_rel^2 dt = pi muN cd omega sum_k k^2 (c_k^2
  + s_k^2)`` from the orbit's harmonics (Parseval);
* the tanh damper of ``examples/friction_damper.py`` written as a structure (its two modes,
  damping ``C = c M``): the work ``int muN tanh(v1/eps) v1 dt`` along the periodic orbit of
  solve_ivp (DOP853, rtol 1e-11, shooting; ``tests/drivers/_damper_reference.py``), and the
  energy balance of the forced orbit: the forcing's input ``pi F0 s_1(x1)`` equals the viscous
  loss ``c pi W sum_k k^2 |X_k|^2`` (both masses) plus the contact's dissipation.
"""
import numpy as np
import pytest
import sympy as sp

from frictionkit.modelspec import ModelSpec
from frictionkit.runtime import load_model
from frictionkit.runtime.drivers._forced import forced_start
from frictionkit.runtime.engine._newton import correct
from frictionkit.runtime.results._branch import Branch

from ..drivers._damper_reference import structure_damper
from .test_dissipation import _work_along_reference


def dashpot(vr, cd):
    """A viscous contact: ``mu = -cd vr`` (linear: the recast inlines it)."""
    return -cd * vr


def viscous_spec(sampled):
    m = ModelSpec("viscous_contact_sampled" if sampled else "viscous_contact", "forced 2-DOF, viscous contact",
                  sampled=sampled)
    c, k1, k2, kc = m.parameter("c", 0.02), m.parameter("k1", 1.0), m.parameter("k2", 1.0), m.parameter("kc", 0.5)
    F0, muN, cd = m.parameter("F0", 0.3), m.parameter("muN", 0.2), m.parameter("cd", 0.5)
    W = m.forcing(m.parameter("W", 0.8, positive=True))
    x1, v1 = m.second_order("x1", velocity="v1")
    x2, v2 = m.second_order("x2", velocity="v2")
    mu = m.friction("dashpot", dashpot, v1, cd=cd)
    m.ode(v1, -c * v1 - k1 * x1 - k2 * (x1 - x2) + muN * mu + F0 * sp.cos(W * m.t), mass=2)
    m.ode(v2, -c * v2 - k2 * (x2 - x1) - kc * x2 ** 3)
    return m


@pytest.mark.parametrize("sampled", [False, True])
def test_viscous_contact_against_parseval(sampled):
    model = load_model(viscous_spec(sampled), continuation="W", backend="numpy")      # no compiler run
    assert ("mu_dashpot" in model.variables) is False          # the recast inlined the law (or none)
    d, Z, _ = forced_start(model, 0.8, 15)
    E = Branch.from_solutions(d, Z[None], Z[None]).dissipation["dashpot"][0]
    U, omega, _ = d.split(Z)
    assert np.abs(U[1, 5:7]).max() > 1e-3 * np.abs(U[1, 1:3]).max()   # v1 has a third harmonic
    # v1's coefficients are those of the state v1 itself (row 1): int v1^2 dt = (pi / omega) sum |V_k|^2
    E_ref = 0.2 * 0.5 * np.pi / omega * np.sum(U[1, 1:] ** 2)
    assert E == pytest.approx(E_ref, rel=1e-11)


def test_structure_damper_against_time_integration_and_energy_balance():
    W, muN, c, F0 = 0.62, 0.05, 0.02, 0.1            # at the first resonance: the damper slips
    model = load_model(structure_damper(), continuation="W", backend="numpy")
    d, Z, _ = forced_start(model, W, 60)
    assert d.kind == "aft-condensed"
    E = Branch.from_solutions(d, Z[None], Z[None]).dissipation["damper"][0]
    E_ref, _, _ = _work_along_reference(W, muN)
    assert E == pytest.approx(E_ref, rel=1e-8)
    # the energy balance of the forced orbit, from the points' harmonics
    X1, X2 = (d.point_response(Z, p, n_t=0) for p in ("m1", "m2"))
    k = np.arange(1, d.H + 1)
    loss = sum(c * np.pi * W * np.sum(k ** 2 * (X[1::2] ** 2 + X[2::2] ** 2)) for X in (X1, X2))
    assert np.pi * F0 * X1[2] == pytest.approx(loss + E, rel=1e-10)
    # the uncondensed harmonic balance of the reduced system gives the same energy
    full, Zf = d.full_solution(Z)
    Zf = correct(full, Zf, np.eye(full.size)[-1], W, max_iter=20)[0]
    assert Branch.from_solutions(full, Zf[None], Zf[None]).dissipation["damper"][0] == pytest.approx(E, rel=1e-10)
