"""Multipliers of planar autonomous orbits by Liouville's formula (``liouville_multipliers``,
the default of AFT branches of two-state models) against two independent routes: the
variational equation integrated with solve_ivp (rtol 1e-12) from a shooting orbit, and the
Magnus monodromy of the same balanced orbit at a tight step tolerance."""
import numpy as np
import pytest

from frictionkit.modelspec import zoo
from frictionkit.runtime import load_model
from frictionkit.runtime.analysis import _floquet
from frictionkit.runtime.analysis._floquet import (adaptive_magnus_monodromy, floquet_from_orbit,
                                                  liouville_multipliers)
from frictionkit.runtime.analysis._stability import orbit_stability
from frictionkit.runtime.discretizations import samples_to_coefficients
from frictionkit.runtime.drivers._branches import equilibrium_branch, periodic_branch, periodic_start_from_hopf
from frictionkit.runtime.errors import InputError
from tests.models._orbits import belt_orbit


@pytest.fixture(scope="module")
def belt_branch():
    """Seed 000's belt (n = 10, FN = 5 N; the generated zoo model, whose periodic branches are
    AFT balances) from its first Hopf point up to Vb = 2.5: small cycles to stick-slip, H = 60."""
    model = load_model(zoo.belt(), continuation="Vb", n=10, FN=5.0, backend="numpy")
    eq = equilibrium_branch(model, 0.05, 12.0)
    disc, Z, d = periodic_start_from_hopf(model, eq.special_points("hopf")[0], 60)
    return periodic_branch(disc, Z, 0.0, 2.5, d)


@pytest.mark.parametrize("Vb", [0.5, 2.0])
def test_against_the_variational_equation_of_a_shooting_orbit(Vb):
    """The stable belt cycles of seed 003 (W1, W2), found by shooting with solve_ivp: the
    Liouville multiplier of their Fourier series (4096 samples) is the integrated monodromy's
    non-trivial eigenvalue to 1e-8 (measured 4.5e-10 at W1 and 2.5e-9 at W2: the shooting
    orbits' own tolerance, 1e-10 on the periodicity)."""
    orbit = belt_orbit(Vb)
    ref = floquet_from_orbit(orbit).nontrivial()
    assert ref.size == 1 and abs(ref[0].imag) < 1e-12 and 0 < ref[0].real < 1
    n_t = 4096
    coef = samples_to_coefficients(orbit.samples(n_t), n_t // 2 - 1)
    res = liouville_multipliers(orbit.model, Vb, coef, 2 * np.pi / orbit.T, n_t)
    assert res.method == "liouville" and res.stable
    assert abs(res.nontrivial()[0] - ref[0].real) < 1e-8


def test_along_a_branch_against_the_magnus_monodromy(belt_branch):
    """Every tenth point of the branch: the default multipliers (Liouville) against the
    determinant of the Magnus monodromy of the same balanced orbit at step tolerance 1e-12
    (the variational equation integrated along the orbit; its determinant is the non-trivial
    multiplier times the trivial one, which differs from 1 by the orbit's error), within the
    estimate the Liouville result carries plus 1e-12."""
    br = belt_branch
    disc = br.discretization
    checked = 0
    for i in range(1, len(br), 10):
        Z = br.solutions[i]
        res = orbit_stability(disc, Z, rtol=1e-3)
        assert res.method == "liouville" and 1.0 in res.multipliers.real and res.multipliers.size == 2
        info = disc.unpack(Z)
        M, how = adaptive_magnus_monodromy(disc.model, info["lam"], info["coefficients"], info["omega"],
                                           int(info["harmonics"]), rtol=1e-12, n_start=int(info["n_t"]))
        assert how["converged"]
        got = res.nontrivial()[0]
        assert abs(got - np.linalg.det(M)) <= res.trivial_multiplier_error + 1e-12, (i, got, np.linalg.det(M))
        assert res.trivial_multiplier_error < 1e-9
        checked += 1
    assert checked >= 5
    done = np.isfinite(br.max_multiplier)
    assert done.sum() > 10 and np.all(np.isfinite(br.stable[done]))
    assert br.stability_method == "liouville"


def test_doublings_stopped_at_the_limit_say_so_with_their_change(belt_branch, monkeypatch):
    """With one doubling allowed (``LIOUVILLE_MAX_GROWTH`` = 1) the stick-slip points stop
    before the rule converges: their method says "not converged" and their reported error, the
    last doubling's change, is the distance to the converged multiplier within 10 % (measured:
    at most 1.04 times the estimate, at 41 of the 95 points)."""
    br = belt_branch
    disc = br.discretization
    stopped = 0
    for i in range(len(br)):
        info = disc.unpack(br.solutions[i])
        args = (disc.model, info["lam"], info["coefficients"], info["omega"], int(info["n_t"]))
        converged = liouville_multipliers(*args)
        assert converged.method == "liouville"
        with monkeypatch.context() as m:
            m.setattr(_floquet, "LIOUVILLE_MAX_GROWTH", 1)
            capped = liouville_multipliers(*args)
        if capped.method == "liouville":
            continue
        assert capped.method == "liouville (not converged)"
        error = abs(capped.nontrivial()[0] - converged.nontrivial()[0])
        assert error <= 1.1 * capped.trivial_multiplier_error, (i, error, capped.trivial_multiplier_error)
        stopped += 1
    assert stopped >= 10


def test_only_for_planar_autonomous_models():
    """A larger model or a forced one is refused (the Magnus monodromy serves them)."""
    from frictionkit.runtime.model._interface import Model
    from frictionkit.runtime.model._load import load_model
    from tests.models import duffing_forced_handwritten
    from tests.models.state_law_specs import lugre
    model = load_model(lugre(), "vb", backend="numpy")
    with pytest.raises(InputError, match="2 states"):
        liouville_multipliers(model, 1.0, np.zeros((3, 5)), 1.0, 16)
    forced = Model(duffing_forced_handwritten, dict(beta=0.5, zeta=0.1, F=0.2))
    with pytest.raises(InputError, match="with forcing"):
        liouville_multipliers(forced, 0.8, np.zeros((2, 5)), 0.8, 16)
