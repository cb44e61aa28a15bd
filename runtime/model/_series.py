"""Power-series recurrences of the elementary functions of the differential recast.

A derivative-bilinear recast (DESIGN §2; Karkar, Cochelin & Vergez, JSV 2013) replaces
``r = f(w)`` by the differential identity ``r' = f'(w) w'`` written as a bilinear equation,
plus the *point condition* ``r(0) = f(w(0))``.  Along an ANM branch the point condition is
expanded in the path parameter ``a``: with ``w(a) = sum_k w_k a^k`` and
``y(a) = f(w(a)) = sum_k y_k a^k``, the order-``p`` coefficient splits into

    y_p = f'(w_0) w_p + rho_p(w_0, ..., w_{p-1})

where the linear part ``f'(w_0) w_p`` belongs to the (order-independent) tangent matrix and
the remainder ``rho_p`` enters the right-hand side of order ``p``.  The coefficients follow
from the classic recurrences obtained by matching powers of ``a`` in the ODE that ``y``
satisfies as a function of ``a`` (``p y_p = sum_k k (...)``; e.g. Griewank & Walther,
*Evaluating Derivatives*, 2nd ed., SIAM 2008, §13.2, Table 13.2):

=========  ============================  ==============================================
function   identity                      recurrence for ``y_p`` (``p >= 1``)
=========  ============================  ==============================================
exp        ``y' = y w'``                 ``p y_p = sum_{k=1}^p k w_k y_{p-k}``
tanh       ``y' = (1 - y^2) w'``         ``p y_p = sum_{k=1}^p k w_k h_{p-k}``, ``h = 1 - y^2``
atan       ``(1 + w^2) y' = w'``         ``p g_0 y_p = p w_p - sum_{k=1}^{p-1} k y_k g_{p-k}``, ``g = 1 + w^2``
sin, cos   ``s' = c w'``, ``c' = -s w'``  ``p s_p = sum k w_k c_{p-k}``, ``p c_p = -sum k w_k s_{p-k}``
log        ``w y' = w'``                 ``p w_0 y_p = p w_p - sum_{k=1}^{p-1} k y_k w_{p-k}``
=========  ============================  ==============================================
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError

__all__ = ["SERIES_FUNCTIONS", "taylor_coefficients", "taylor_remainder", "derivative_at"]

SERIES_FUNCTIONS = ("exp", "tanh", "atan", "sin", "cos", "log")

_F = {"exp": np.exp, "tanh": np.tanh, "atan": np.arctan, "sin": np.sin, "cos": np.cos, "log": np.log}


def _check(func):
    if func not in _F:
        raise InputError(f"point condition function {func!r} has no power-series recurrence; "
                         f"known: {', '.join(SERIES_FUNCTIONS)}")


def derivative_at(func: str, w0: float) -> float:
    """``f'(w0)`` of one of :data:`SERIES_FUNCTIONS`."""
    _check(func)
    if func == "exp":
        return float(np.exp(w0))
    if func == "tanh":
        return float(1.0 - np.tanh(w0) ** 2)
    if func == "atan":
        return float(1.0 / (1.0 + w0 * w0))
    if func == "sin":
        return float(np.cos(w0))
    if func == "cos":
        return float(-np.sin(w0))
    return float(1.0 / w0)


def _conv(a, b, p):
    """Coefficient ``p`` of the product of two series (``sum_{k=0}^p a_k b_{p-k}``)."""
    return float(np.dot(a[:p + 1], b[p::-1]))


def taylor_coefficients(func: str, w) -> np.ndarray:
    """Taylor coefficients ``y_0..y_{P}`` of ``f(w(a))`` from those of ``w`` (length P+1).

    Parameters
    ----------
    func : {"exp", "tanh", "atan", "sin", "cos", "log"}
    w : array_like (P+1,)
        Coefficients ``w_0..w_P`` of the argument.

    Returns
    -------
    ndarray (P+1,)
    """
    _check(func)
    w = np.asarray(w, dtype=float)
    P = len(w) - 1
    y = np.zeros(P + 1)
    y[0] = _F[func](w[0])
    if func in ("sin", "cos"):
        s, c = np.zeros(P + 1), np.zeros(P + 1)
        s[0], c[0] = np.sin(w[0]), np.cos(w[0])
        for p in range(1, P + 1):
            k = np.arange(1, p + 1)
            s[p] = np.dot(k * w[1:p + 1], c[p - 1::-1]) / p
            c[p] = -np.dot(k * w[1:p + 1], s[p - 1::-1]) / p
        return s if func == "sin" else c
    if func == "exp":
        for p in range(1, P + 1):
            k = np.arange(1, p + 1)
            y[p] = np.dot(k * w[1:p + 1], y[p - 1::-1]) / p
    elif func == "tanh":
        h = np.zeros(P + 1)
        h[0] = 1.0 - y[0] ** 2
        for p in range(1, P + 1):
            k = np.arange(1, p + 1)
            y[p] = np.dot(k * w[1:p + 1], h[p - 1::-1]) / p
            h[p] = -_conv(y, y, p)
    elif func == "atan":
        g = np.zeros(P + 1)
        g[0] = 1.0 + w[0] ** 2
        for p in range(1, P + 1):
            g[p] = _conv(w, w, p)
            k = np.arange(1, p)
            y[p] = (p * w[p] - np.dot(k * y[1:p], g[p - 1:0:-1])) / (p * g[0])
    else:  # log
        if w[0] <= 0:
            raise InputError(f"log of a non-positive argument ({w[0]:g}) in a point condition")
        for p in range(1, P + 1):
            k = np.arange(1, p)
            y[p] = (p * w[p] - np.dot(k * y[1:p], w[p - 1:0:-1])) / (p * w[0])
    return y


def taylor_remainder(func: str, w) -> float:
    """``rho_p = y_p - f'(w_0) w_p`` from ``w_0..w_{p-1}`` (``w`` of length ``p``).

    The order-``p`` coefficient of ``f(w(a))`` less its part linear in ``w_p``; it does not
    depend on ``w_p`` (see the module docstring).
    """
    w = np.append(np.asarray(w, dtype=float), 0.0)     # w_p = 0 leaves exactly rho_p
    return float(taylor_coefficients(func, w)[-1])
