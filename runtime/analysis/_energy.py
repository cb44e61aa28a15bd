"""Stability bounds of steady sliding for a friction law (seed 002 §2.2 and §3).

Model: the dimensionless belt oscillator of seed 002 eq. (5), ``x'' + 2 xi x' + x = F(v_rel)``
with ``v_rel = x' - v_d`` and ``F`` the signed friction force (friction coefficient times
the sign convention of the law: ``F > 0`` when ``v_rel < 0``).

* Lower bound ``v_lw`` (seed 002 eq. 9): steady sliding at ``v_rel = -v_d`` loses stability
  where the total damping ``2 xi - F'(-v_d)`` vanishes, i.e. ``beta = -mu'(v_d) / (2 xi) = 1``.
  For the law of eq. (3): ``v_lw = v0 ln((mu_st - mu_d) / (2 xi v0 + mu_v))``.
* Energy criterion (seed 002 eqs. 10-15): on the harmonic sliding orbit ``x = A cos(theta)``,
  ``x' = -A omega sin(theta)``, the energy fed by friction per cycle is
  ``W_f = -A int_0^{2 pi} F(-A omega sin(theta) - v_d) sin(theta) d theta`` and the viscous loss
  is ``E_v = 2 pi xi omega A**2``; large-amplitude perturbations decay while
  ``W_f / E_v < 1``.  For the law of eq. (3) the integral is the modified Bessel function
  ``I_1`` (eq. 15).  The upper bound ``v_up`` imposes ``W_f / E_v = 1`` at ``A omega = v_d``
  (the orbit just touches sticking).  ``omega`` defaults to ``sqrt(1 - xi**2)`` as in the seed.

Defaults reproduce the paper: without ``law`` or ``model`` the law is seed 002 eq. (3), exact
(no smoothing of ``|v|``), with the parameters of eq. (16) (``mu_d = 0.5``, ``mu_st = 1``,
``mu_v = 0``, ``v0 = 0.5``) and ``xi = 0.05`` (§3), so ``v_up()`` is the paper's 1.8414.  A model
whose law smooths ``|v|`` (the zoo's ``weakstrong``, ``delta``) is accurate only with a small
``delta`` (1e-7): ``v_up`` evaluates the law where the orbit touches sticking, ``v_rel = 0``.
"""
from __future__ import annotations

import numpy as np
import scipy

from .._roots import bracketed_root
from ..errors import ConvergenceError, InputError

__all__ = ["energy_ratio", "energy_ratio_exponential", "exponential_law", "v_lw_exponential", "v_lw", "v_up"]

#: seed 002 eq. (16) and §3: the defaults of every function here
SEED002 = dict(xi=0.05, mud=0.5, mus=1.0, muv=0.0, v0=0.5)


def exponential_law(mud=SEED002["mud"], mus=SEED002["mus"], muv=SEED002["muv"], v0=SEED002["v0"]):
    """Signed friction force of seed 002 eq. (3), exact:
    ``F(v) = -sign(v) (mu_d + (mu_st - mu_d) exp(-|v| / v0) + mu_v |v| / v0)``."""
    def F(v):
        v = np.asarray(v, dtype=float)
        a = np.abs(v)
        return -np.sign(v) * (mud + (mus - mud) * np.exp(-a / v0) + muv * a / v0)
    return F


def _law(law, model, contact):
    if law is not None:
        return law
    if model is None:
        return exponential_law()
    p = model.param_vector()
    k = model.contacts.index(contact) if contact is not None else 0

    def F(v):
        v = np.atleast_1d(np.asarray(v, dtype=float))
        vr = np.zeros((len(model.contacts),) + v.shape)
        vr[k] = v
        return model.contact_law(vr, p)[k]
    return F


def energy_ratio(A, v_d, xi, law=None, model=None, contact=None, omega=None, points=512):
    """``W_f / E_v`` of seed 002 eq. (14) for any friction law, by quadrature.

    Parameters
    ----------
    A : float
        Amplitude of the harmonic sliding orbit (dimensionless).
    v_d : float
        Driving (belt) velocity.
    xi : float
        Damping ratio.
    law : callable, optional
        Signed friction force ``F(v_rel)`` (vectorised).  Or give ``model`` (a runtime
        :class:`~frictionkit.runtime.Model`) whose contact law is used with its parameters.
    omega : float, optional
        Angular frequency of the orbit; default ``sqrt(1 - xi**2)`` (seed 002 after eq. 15).
    points : int
        Gauss–Legendre points on each half period (the integrand is smooth while
        ``A omega < v_d``).
    """
    if A <= 0:
        raise InputError(f"amplitude A = {A} must be positive")
    F = _law(law, model, contact)
    omega = np.sqrt(1 - xi**2) if omega is None else omega
    x, w = np.polynomial.legendre.leggauss(points)
    theta = np.concatenate([np.pi / 2 * (x + 1), np.pi / 2 * (x + 1) + np.pi])
    weights = np.concatenate([w, w]) * np.pi / 2
    integrand = F(-A * omega * np.sin(theta) - v_d) * np.sin(theta)
    W_f = -A * np.dot(weights, integrand)
    return W_f / (2 * np.pi * xi * omega * A**2)


def energy_ratio_exponential(A, v_d, xi, mud, mus, muv, v0, omega=None):
    """Closed form of :func:`energy_ratio` for the law of seed 002 eq. (3): eq. (15)."""
    omega = np.sqrt(1 - xi**2) if omega is None else omega
    return ((mus - mud) * np.exp(-v_d / v0) * scipy.special.i1(A * omega / v0) / (xi * omega * A)
            - muv / (2 * xi * v0))


def v_lw_exponential(xi=SEED002["xi"], mud=SEED002["mud"], mus=SEED002["mus"], muv=SEED002["muv"],
                     v0=SEED002["v0"]):
    """Seed 002 formula after eq. (9): ``v_lw = v0 ln((mu_st - mu_d) / (2 xi v0 + mu_v))`` (0 if negative)."""
    if muv <= -2 * xi * v0:
        raise InputError(f"mu_v = {muv} <= -2 xi v0: the total damping is negative (seed 002 §2.2)")
    return max(0.0, v0 * np.log((mus - mud) / (2 * xi * v0 + muv)))


def v_lw(law, xi, bracket):
    """Lower bound: root of ``2 xi - F'(-v_d) = 0`` (seed 002 eq. 9) for any law, in ``bracket``.

    ``F'`` by a complex-step-free central difference (the law is smooth away from 0).
    """
    def damping(v):
        h = 1e-6 * max(1.0, abs(v))
        return 2 * xi - (law(np.array([-v + h]))[0] - law(np.array([-v - h]))[0]) / (2 * h)
    a, b = bracket
    if damping(a) * damping(b) > 0:
        raise ConvergenceError(f"no sign change of the damping in [{a}, {b}]: widen the bracket")
    return bracketed_root(damping, a, b, xtol=1e-14, rtol=1e-13)


def v_up(xi=SEED002["xi"], bracket=(0.05, 10.0), law=None, model=None, contact=None, omega=None):
    """Upper bound ``v_up``: ``W_f / E_v = 1`` with ``A omega = v_d`` (seed 002 §3), by Brent's method.

    Without ``law`` or ``model``: seed 002's exact law and parameters (``v_up() = 1.8414``).
    """
    omega = np.sqrt(1 - xi**2) if omega is None else omega
    F = _law(law, model, contact)

    def g(v):
        # the orbit touches sticking: A omega = v_d; keep just below to stay on the smooth side
        return energy_ratio(v / omega * (1 - 1e-12), v, xi, law=F, omega=omega) - 1.0
    a, b = bracket
    if g(a) * g(b) > 0:
        hint = ("; a model's |v| smoothing (e.g. weakstrong's delta) distorts the law where the orbit "
                "touches sticking: load it with delta=1e-7, or give no model (seed 002's exact law)"
                if model is not None else "")
        raise ConvergenceError(f"W_f/E_v - 1 has no sign change in [{a}, {b}]: widen the bracket{hint}")
    return bracketed_root(g, a, b, xtol=1e-13, rtol=1e-12)
