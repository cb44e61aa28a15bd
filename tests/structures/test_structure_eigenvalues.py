"""Eigenvalues of structural equilibria from the contacts' characteristic matrix (DESIGN §6)
against the dense eigenvalues of the whole reduced Jacobian (``numpy.linalg.eigvals``), and
the Hopf points located with them against the dense eigenvalues there."""
import numpy as np
import pytest
import sympy as sp

from frictionkit.modelspec import ModelSpec, Structure
from frictionkit.runtime import equilibrium_branch, find_equilibrium, load_model
from frictionkit.runtime.analysis._equilibria import (eigenvalues, structural_eigenvalue, structural_eigenvalues,
                                                      structural_eigenvector)
from frictionkit.runtime.discretizations._condensed import CondensedAFTDiscretization

from ._models import string, string_shapes


def _bristle_string(n_modes=8):
    """A string whose contact has an own state (a bristle deflection z, LuGre-like): the
    characteristic matrix has the own states' term ``Kz (s - Hz)^-1 Hw``."""
    w, phi = string_shapes(n_modes)
    m = ModelSpec(f"bristlestring{n_modes}", "string with a bristle contact", time_unit="s")
    Vb, FN = m.parameter("Vb", 0.3), m.parameter("FN", 0.02)
    s = m.structure(Structure.modal(frequencies=w, damping=0.003, shapes={"bow": phi}))
    z = m.state("z")
    vr = s.velocity("bow") - Vb
    g = 0.3 + 0.5 / (1 + (vr / 0.1) ** 2)
    m.ode(z, vr - 1e4 * sp.sqrt(vr ** 2 + 1e-4) * z / g)
    s.force("bow", -FN * (1e4 * z + 10 * vr))
    return m


@pytest.mark.parametrize("make, lam", [(lambda: string(16), 0.3), (_bristle_string, 0.2)])
def test_structural_eigenvalues_match_the_dense_eigenvalues(make, lam):
    model = load_model(make(), continuation="Vb")
    _, Z = find_equilibrium(model, lam)
    n = model.n
    ev = np.linalg.eigvals(np.asarray(model.jac(0.0, Z[:n], Z[-1]), dtype=float))
    upper = ev[ev.imag > 0]
    assert upper.size >= 8
    for mu in upper:
        s = structural_eigenvalue(model, Z[:n], Z[-1], mu * (1 + 1e-6))
        assert s is not None
        assert abs(s - mu) <= 1e-11 * abs(mu)


@pytest.mark.parametrize("make, lams", [(lambda: string(64), (0.6, 0.2, 0.05)), (_bristle_string, (0.3, 0.1))])
def test_all_structural_eigenvalues_are_the_dense_ones(make, lams):
    """Every eigenvalue at once (Aberth's iteration on the characteristic polynomial through the
    contacts' characteristic matrix) against the dense eigenvalues of the whole Jacobian, at
    equilibria with 0 to many unstable pairs; the bristle string has an own state."""
    model = load_model(make(), continuation="Vb")
    n = model.n
    unstable = set()
    for lam in lams:
        _, Z = find_equilibrium(model, lam)
        ev = np.linalg.eigvals(np.asarray(model.jac(0.0, Z[:n], Z[-1]), dtype=float))
        es = structural_eigenvalues(model, Z[:n], Z[-1])
        assert es is not None and es.size == n
        d = np.abs(ev[:, None] - es[None, :])
        assert np.all(d.min(axis=1) <= 1e-11 * np.maximum(1.0, np.abs(ev)))
        assert np.all(d.min(axis=0) <= 1e-11 * np.maximum(1.0, np.abs(es)))
        assert np.sum(es.real > 0) == np.sum(ev.real > 0)
        unstable.add(int(np.sum(ev.real > 0)))
        # the eigenvectors of the pairs nearest the axis against numpy's (same line in C^n), of
        # the modes the contact moves (a mode with a node at the bow keeps its pole, unseen)
        J = np.asarray(model.jac(0.0, Z[:n], Z[-1]), dtype=float)
        w, V = np.linalg.eig(J)
        seen = np.abs(w[:, None] - model.structure.poles[None, :]).min(axis=1) > 1e-6 * np.abs(w)
        for k in np.argsort(np.abs(w.real) + ((w.imag <= 0) | ~seen) * 1e300)[:3]:
            v = structural_eigenvector(model, Z[:n], Z[-1], w[k])
            assert abs(np.linalg.norm(v) - 1) <= 1e-12
            assert abs(abs(np.vdot(v, V[:, k])) - 1) <= 1e-9
    assert len(unstable) >= 2 if n > 20 else True


def test_hopf_points_are_where_the_dense_eigenvalues_cross():
    """16 modes: every Hopf point located (tracked by the characteristic matrix) has a pair of
    dense eigenvalues on the imaginary axis, at its frequency."""
    model = load_model(string(16, delta=2e-3, name="string16sharp"), continuation="Vb")
    eq = equilibrium_branch(model, 0.6, 0.05)
    hopf = eq.special_points("hopf")
    assert len(hopf) >= 2
    n = model.n
    for h in hopf:
        ev = eigenvalues(model, h.solution[:n], h.param)
        mu = ev[np.argmin(np.abs(ev - 1j * h.omega))]
        assert abs(mu.real) <= 1e-8 * abs(mu)
        assert abs(mu.imag - h.omega) <= 1e-8 * h.omega


@pytest.mark.parametrize("make, n_modes", [(string, 4), (string, 16), (string, 64), (_bristle_string, 8)])
def test_closed_form_monodromy_is_the_step_by_step_one(make, n_modes):
    """The monodromy summed in closed form (one block-triangular solve) against the same
    integrator stepped one step at a time, on an orbit of small random harmonics about the equilibrium (both are the
    discrete variational map of whatever orbit ``Z`` describes): the matrices to rounding, the
    multipliers near the unit circle to 1e-8 relative.  The bristle string has an own state."""
    model = load_model(make(n_modes), continuation="Vb")
    disc = CondensedAFTDiscretization(model, 12)
    _, Ze = find_equilibrium(model, 0.25)
    rng = np.random.default_rng(1)
    U = 1e-3 * rng.standard_normal((disc.nv, disc.nh)) / (1 + np.arange(disc.nh))
    U[:, 0] = model.structure.port_states(Ze[:model.n])[:disc.nv]     # about the equilibrium
    Z = disc.pack(U, 2 * np.pi * 196.0 * 3.1, 0.25)
    a, b = disc.monodromy(Z, method="steps"), disc.monodromy(Z, method="closed")
    assert np.max(np.abs(a - b)) <= 1e-12 * np.max(np.abs(a))
    c = disc.monodromy(Z, method="chunks")       # (the same steps, CHUNK at a time)
    assert np.max(np.abs(a - c)) <= 1e-12 * np.max(np.abs(a))
    mu_a, mu_b = np.linalg.eigvals(a), np.linalg.eigvals(b)
    for mu in mu_a[np.abs(mu_a) > 0.9]:
        assert np.min(np.abs(mu_b - mu)) <= 1e-8 * abs(mu)
