"""Seed 004 Table 4: error e (eq. 19) of the smoothed drill-string cycles at eta = 4 by the default path.

The drill model (seed 004 eqs. 16-18, zoo model ``drill``) has a piecewise (sampled) torque
law, so the default path is the AFT harmonic balance of the states continued by the
pseudo-arclength Newton engine (DESIGN §5.4: no recast, no ANM).  Each branch starts from the
settled simulation of the smoothed model at eta = 3.9 (four exact periods from the exact
cycle's start) and is continued up to eta = 4.  The smoothed cycle there, sampled from the
maximum of psi, is compared with the exact stick-slip cycle of eqs. (16)-(17) (event-driven
integration, checked against its closed-form period) and meets Table 4's two digits.
Measured e: kappa = 1: H = 50: 0.3082119, 100: 0.3082113, 200: 0.3082113; kappa = 0.1:
H = 100: 0.092824, 200: 0.092812, 400: 0.092812.
"""
from __future__ import annotations

import pytest

from examples.seeds.seed004_cycles import aft_from_max, drill_exact_cycle, drill_exact_period, settled_cycle
from frictionkit.runtime import load_model, periodic_branch, periodic_start_from_orbit
from frictionkit.runtime.nonsmooth import orbit_error

ETA, N = 4.0, 200
# seed 004 Table 4 (eta = 4, N = 200): kappa -> (e, harmonics used here)
PAPER = {1.0: (3.1e-1, 100), 1e-1: (9.3e-2, 200)}


@pytest.fixture(scope="module")
def exact():
    P, psi, dpsi = drill_exact_cycle(ETA, N)
    assert P == pytest.approx(drill_exact_period(ETA), rel=1e-10)
    return P, psi, dpsi


@pytest.mark.parametrize("kappa", list(PAPER))
def test_table4_by_the_default_path(exact, kappa):
    e_paper, H = PAPER[kappa]
    eta0 = 3.9
    m = load_model("drill", continuation="eta", kappa=kappa)
    P0, psi0, dpsi0 = drill_exact_cycle(eta0, N)
    T, T_prev, sample = settled_cycle(m, eta0, [psi0[0], dpsi0[0]], 4 * P0)
    assert abs(T / T_prev - 1) < 1e-7                  # the simulation has settled
    disc, Z = periodic_start_from_orbit(m, eta0, sample(8 * H + 8), T, H)
    br = periodic_branch(disc, Z, eta0, ETA, 1.0)
    assert disc.kind == "aft" and br.provenance["method"] == "newton"
    assert br.status == "range" and br.success and br.param[-1] == pytest.approx(ETA, rel=1e-14)
    P, psi, dpsi = exact
    Pa, X, V = aft_from_max(disc, br.solutions[-1], N)
    e = orbit_error(X, V, Pa, psi, dpsi, P)
    assert float(f"{e:.1e}") == e_paper, (kappa, e)
