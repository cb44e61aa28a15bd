"""Scalar roots in a bracket, and the small interpolants the locators evaluate (DESIGN §6).

Why not ``scipy.optimize.brentq`` and ``scipy.interpolate``: importing ``scipy.optimize``
imports ``scipy.interpolate``, ``scipy.spatial`` and the linear-programming solvers with it,
about 0.35 s of CPU on the 2-core reference machine (``python -X importtime``; issue 29), more
than a third of what every ``frictionkit continue`` spends on imports, for a 40-line method.
The runtime's locators need nothing else from those packages.

:func:`bracketed_root` is Brent's method (R. P. Brent, *Algorithms for Minimization without
Derivatives*, Prentice-Hall 1973, ch. 4, the procedure ``zero``): inverse quadratic
interpolation or the secant through the last points, a bisection whenever the interpolated
step does not shrink the bracket fast enough, and a least step of the tolerance.  It keeps a
bracket ``[b, c]`` with ``f(b) f(c) <= 0`` and ``|f(b)| <= |f(c)|`` throughout, so it returns
a point within ``xtol + rtol |x|`` of a sign change of ``f`` after at most about the square
of the bisection count of evaluations.  ``tests/engine/test_roots.py`` compares it with
``scipy.optimize.brentq`` and with analytic roots.
"""
from __future__ import annotations

import numpy as np

from .errors import ConvergenceError

__all__ = ["bracketed_root", "CubicHermite", "lagrange_value"]

_EPS = np.finfo(float).eps


def bracketed_root(f, a: float, b: float, *, xtol: float = 2e-12, rtol: float = 4 * _EPS,
                   maxiter: int = 100) -> float:
    """A root of the scalar function ``f`` in ``[a, b]`` where ``f(a)`` and ``f(b)`` have
    opposite signs, by Brent's method (module notes).

    Parameters
    ----------
    f : callable
        ``f(x) -> float``.
    a, b : float
        The bracket's ends.
    xtol, rtol : float
        The root is within ``xtol + rtol * |x|`` of a sign change of ``f`` (the meaning of
        ``scipy.optimize.brentq``'s arguments of those names); ``rtol`` is at least
        ``4 * eps``.
    maxiter : int
        Evaluations of ``f`` after the two ends.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        ``f(a)`` and ``f(b)`` are not of opposite signs (or not finite).
    ConvergenceError
        No convergence within ``maxiter`` evaluations.
    """
    a, b = float(a), float(b)
    fa, fb = float(f(a)), float(f(b))
    if fa == 0.0:
        return a
    if fb == 0.0:
        return b
    if not (np.isfinite(fa) and np.isfinite(fb)) or (fa > 0) == (fb > 0):
        raise ValueError(f"f({a!r}) = {fa!r} and f({b!r}) = {fb!r} must have opposite signs")
    rtol = max(rtol, 4 * _EPS)
    c, fc = a, fa
    d = e = b - a
    for _ in range(maxiter):
        if (fb > 0) == (fc > 0):
            # the sign change is between a and b: restart the bracket from a
            c, fc = a, fa
            d = e = b - a
        if abs(fc) < abs(fb):
            # b is always the best estimate
            a, b, c = b, c, b
            fa, fb, fc = fb, fc, fb
        tol = 0.5 * (xtol + rtol * abs(b))
        m = 0.5 * (c - b)
        if abs(m) <= tol or fb == 0.0:
            return b
        if abs(e) < tol or abs(fa) <= abs(fb):
            d = e = m                                   # bisection
        else:
            s = fb / fa
            if a == c:                                  # secant
                p, q = 2.0 * m * s, 1.0 - s
            else:                                       # inverse quadratic interpolation
                q, r = fa / fc, fb / fc
                p = s * (2.0 * m * q * (q - r) - (b - a) * (r - 1.0))
                q = (q - 1.0) * (r - 1.0) * (s - 1.0)
            if p > 0:
                q = -q
            else:
                p = -p
            if 2.0 * p < min(3.0 * m * q - abs(tol * q), abs(e * q)):
                e, d = d, p / q                         # the interpolated step
            else:
                d = e = m                               # too slow: bisection
        a, fa = b, fb
        b += d if abs(d) > tol else (tol if m > 0 else -tol)
        fb = float(f(b))
        if not np.isfinite(fb):
            raise ConvergenceError(f"bracketed_root: f({b!r}) = {fb!r} inside the bracket")
    raise ConvergenceError(f"bracketed_root: no convergence in {maxiter} evaluations "
                           f"(bracket [{min(b, c)!r}, {max(b, c)!r}])")


class CubicHermite:
    """The cubic Hermite interpolant on ``[0, 1]`` of values ``Ya``, ``Yb`` and slopes ``Da``,
    ``Db`` (vectors): ``Y(s) = h00 Ya + h10 Da + h01 Yb + h11 Db`` with the Hermite basis
    ``h00 = (1 + 2s)(1 - s)^2``, ``h10 = s (1 - s)^2``, ``h01 = s^2 (3 - 2s)``,
    ``h11 = s^2 (s - 1)``.  Callable on a scalar (a vector) or on an array of ``s`` (rows)."""

    def __init__(self, Ya, Da, Yb, Db):
        self._Y = np.vstack([np.asarray(v, dtype=float) for v in (Ya, Da, Yb, Db)])

    def __call__(self, s):
        s = np.asarray(s, dtype=float)
        u = 1.0 - s
        H = np.stack([(1.0 + 2.0 * s) * u * u, s * u * u, s * s * (3.0 - 2.0 * s), s * s * (s - 1.0)], axis=-1)
        return H @ self._Y


def lagrange_value(x, Y, x0) -> np.ndarray:
    """Value at ``x0`` of the polynomial through the points ``(x[i], Y[i])`` (``Y[i]`` vectors,
    a few distinct ``x``), by the Lagrange formula ``sum_i Y[i] prod_(j != i) (x0 - x[j]) /
    (x[i] - x[j])``."""
    x = np.asarray(x, dtype=float)
    Y = np.asarray(Y, dtype=float)
    w = np.empty(len(x))
    for i in range(len(x)):
        others = np.delete(x, i)
        w[i] = np.prod((x0 - others) / (x[i] - others))
    return w @ Y
