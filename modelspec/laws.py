"""Library of friction laws, each a plain function of the relative velocity.

A friction law is any Python function ``law(vr, **params) -> sympy expression`` giving
the friction coefficient (dimensionless, sign convention of seed 000: ``mu(vr) < 0`` for
``vr > 0``, i.e. friction opposes the relative velocity).  Adding a law means writing one
such function; use it with :meth:`frictionkit.modelspec.ModelSpec.friction`.

Each law's docstring cites the seed equation it implements.
"""
from __future__ import annotations

import sympy as sp

__all__ = ["regularized", "feeny_moon", "vrande_arctan", "weakening_strengthening",
           "drill_string", "smooth_abs", "hyperbolic", "coulomb_tanh"]


def smooth_abs(v, delta):
    """Regularized modulus ``sqrt(v**2 + delta**2)`` (seed 000 Appendix A, eq. A.2)."""
    return sp.sqrt(v**2 + delta**2)


def regularized(vr, mus, mud, eps, n):
    """Regularized law mu_n of seed 000 eq. (2).

    ``mu_n(vr) = (-mud vr sqrt(vr**2 + eps/n**2) - 2 (alpha/n) vr) / (vr**2 + 1/n**2)``
    with ``alpha = sqrt(mus (mus - mud))`` (seed 000 eq. 1): odd, tends to ``mud`` as
    ``vr -> -inf``, maximum close to ``mus``; ``n`` sets the stiffness.
    """
    alpha = sp.sqrt(mus * (mus - mud))
    return (-mud * vr * sp.sqrt(vr**2 + eps / n**2) - 2 * alpha / n * vr) / (vr**2 + 1 / n**2)


def feeny_moon(vr, mus, mud, alpha, beta):
    """Feeny–Moon smooth law, seed 000 eq. (3), with the sign convention of this library.

    ``mu(vr) = -(mud + (mus - mud) sech(beta vr)) tanh(alpha vr)``.  Transcendental:
    recast by the differential rules of DESIGN §2.
    """
    return -(mud + (mus - mud) * sp.sech(beta * vr)) * sp.tanh(alpha * vr)


def vrande_arctan(vr, eps, gamma, delta):
    """Van de Vrande's arctan law, seed 004 eq. (4) (seed 000 eq. 4).

    ``mu(vr) = -(2/pi) atan(eps vr) / (1 + gamma |vr|)`` with ``|vr|`` regularized as
    ``sqrt(vr**2 + delta**2)`` so that the law is analytic.
    """
    return -(2 / sp.pi) * sp.atan(eps * vr) / (1 + gamma * smooth_abs(vr, delta))


def weakening_strengthening(vr, mus, mud, muv, v0, delta):
    """Velocity weakening–strengthening law, seed 002 eq. (3), as a signed coefficient.

    ``mu(vr) = -(mud + (mus - mud) exp(-|vr|/v0) + muv |vr|/v0) * vr/|vr|`` (seed 002
    eq. 2 multiplies by ``sign(vr)``), with ``|vr|`` regularized as ``sqrt(vr**2 + delta**2)``.
    """
    a = smooth_abs(vr, delta)
    return -(mud + (mus - mud) * sp.exp(-a / v0) + muv * a / v0) * vr / a


def drill_string(w, theta, kappa):
    """Smoothed drill-string torque law, seed 004 eq. (18), of the relative speed ``w = psi' - eta``.

    ``-theta w (w + 4 kappa)**3 / (27 kappa**4)`` for ``w > -4 kappa`` and 0 below: a
    ``Piecewise`` law, hence not analytic; it runs on the sampled path (DESIGN §5.4).
    """
    return sp.Piecewise((0, w <= -4 * kappa),
                        (-theta * w * (w + 4 * kappa)**3 / (27 * kappa**4), True))


def hyperbolic(vr, mus, mud, v0, delta):
    """Hyperbolic (rosin) law of bowed-string models, regularized.

    ``mu(vr) = -(mud + (mus - mud) v0 / (v0 + |vr|)) vr / |vr|``: the coefficient falls from
    ``mus`` at sticking to ``mud`` as the sliding speed grows, on the scale ``v0`` (the form
    used for the bow-string contact since Schelleng and Woodhouse's bowed-string models; not in
    the seeds), with ``|vr|`` regularized as ``sqrt(vr**2 + delta**2)`` so that the law is
    analytic.
    """
    a = smooth_abs(vr, delta)
    return -(mud + (mus - mud) * v0 / (v0 + a)) * vr / a


def coulomb_tanh(vr, eps):
    """Coulomb friction regularized by a hyperbolic tangent: ``mu(vr) = -tanh(vr / eps)``
    (the friction damper of structural-dynamics models: a unit coefficient, the normal load
    multiplies it; ``eps`` the velocity scale of the transition)."""
    return -sp.tanh(vr / eps)
