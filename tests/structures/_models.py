"""Small structural models for the tests of DESIGN §6, and an independent NumPy copy of
their modal ODE (for solve_ivp references)."""
import numpy as np
import sympy as sp

from frictionkit.modelspec import ModelSpec, Structure, laws

F1, L, RHO = 196.0, 0.33, 1.2e-3


def string_shapes(n_modes, beta=0.1):
    k = np.arange(1, n_modes + 1)
    return 2 * np.pi * F1 * k, np.sqrt(2 / (RHO * L)) * np.sin(k * np.pi * beta)


def string(n_modes, delta=0.05, zeta=0.003, name=None):
    """A bowed string of ``n_modes`` modes (examples/bowed_string.py, a smoother law)."""
    w, phi = string_shapes(n_modes)
    m = ModelSpec(name or f"string{n_modes}", "bowed string test model", time_unit="s")
    Vb = m.parameter("Vb", 0.3, unit="m/s")
    FN = m.parameter("FN", 0.02, unit="N")
    mus, mud, v0 = m.parameter("mus", 0.8), m.parameter("mud", 0.3), m.parameter("v0", 0.1)
    d = m.parameter("delta", delta)
    s = m.structure(Structure.modal(frequencies=w, damping=zeta, shapes={"bow": phi}))
    mu = m.friction("bow", laws.hyperbolic, s.velocity("bow") - Vb, mus=mus, mud=mud, v0=v0, delta=d)
    s.force("bow", FN * mu)
    return m


def string_law(v, Vb, FN=0.02, mus=0.8, mud=0.3, v0=0.1, delta=0.05):
    """The friction force of :func:`string` in NumPy (the law written out again)."""
    vr = v - Vb
    a = np.sqrt(vr * vr + delta * delta)
    return -FN * (mud + (mus - mud) * v0 / (v0 + a)) * vr / a


def string_rhs(n_modes, Vb, zeta=0.003, **law):
    """The modal ODE ``q'' + 2 zeta w q' + w^2 q = phi F(phi . q')`` of :func:`string`, in
    NumPy, independent of frictionkit's generated code; states ``(q, q')``."""
    w, phi = string_shapes(n_modes)

    def f(t, x):
        q, qd = x[:n_modes], x[n_modes:]
        F = string_law(phi @ qd, Vb, **law)
        return np.concatenate([qd, -w * w * q - 2 * zeta * w * qd + phi * F])
    return f, w, phi


def fold_string(n_modes=4):
    """A 4-mode string (w_k = 2 pi k, zeta = 0.01) with seed 000's regularized law at FN = 1: the
    branch from the first Hopf point of its fourth mode (Vb = 0.1692, omega = 25.12) has a fold
    of cycles near Vb = 0.3936 (H = 20).  (The third and second modes have Hopf points just
    below, at 0.1629 and 0.1665: :func:`fold_string_hopf` picks the fourth mode's.)"""
    k = np.arange(1, n_modes + 1)
    m = ModelSpec(f"foldstring{n_modes}", "string with a fold of cycles")
    Vb, FN = m.parameter("Vb", 0.1), m.parameter("FN", 1.0)
    s = m.structure(Structure.modal(frequencies=2 * np.pi * k, damping=0.01,
                                    shapes={"bow": np.sqrt(2) * np.sin(k * np.pi * 0.13)}))
    mu = m.friction("bow", laws.regularized, s.velocity("bow") - Vb, mus=0.4, mud=0.2, eps=1e-4, n=10)
    s.force("bow", FN * mu)
    return m


def fold_string_hopf(eq):
    """The first Hopf point of :func:`fold_string`'s fourth mode on the equilibrium branch ``eq``."""
    return min((h for h in eq.special_points("hopf") if h.omega > 3.5 * 2 * np.pi), key=lambda h: h.param)
