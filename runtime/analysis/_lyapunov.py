"""Criticality of a Hopf point: the first Lyapunov coefficient (Kuznetsov, 3rd ed., eq. 3.20, §8.7.2)."""
from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import numpy as np

from ..errors import InputError
from ..model._interface import Model
from ..results._result import Result

__all__ = ["LyapunovResult", "first_lyapunov"]


@dataclass
class LyapunovResult(Result):
    """First Lyapunov coefficient at a Hopf point (:func:`first_lyapunov`).

    Attributes
    ----------
    l1 : float
        The coefficient: < 0 supercritical, > 0 subcritical.
    omega0 : float
        Angular frequency ``w0`` of the critical pair ``+-i w0``.
    re_lambda : float
        Real part of the pair used (close to 0 at a Hopf point: the caller's check).
    q, p : ndarray (n,) complex
        Right and adjoint eigenvectors, ``<q, q> = 1``, ``<p, q> = 1``.
    criticality : str
        ``"supercritical"`` or ``"subcritical"``.
    success, status, message :
        The result convention (``status = "computed"``).  ``res["l1"]`` reads like the
        former dict result.
    """

    l1: float
    omega0: float
    re_lambda: float
    q: np.ndarray
    p: np.ndarray
    criticality: str


# ---------------------------------------------------------------------------------------
# first Lyapunov coefficient
# ---------------------------------------------------------------------------------------
def _multilinear(real_form, *args):
    """Evaluate a real multilinear form on complex arguments by expanding real/imag parts."""
    parts = [(np.real(a), np.imag(a)) for a in args]
    out = np.zeros(np.shape(args[0]), dtype=complex)
    for choice in product((0, 1), repeat=len(args)):
        if any(not np.any(parts[k][c]) for k, c in enumerate(choice)):
            continue          # a zero argument: the term vanishes
        vecs = [parts[k][c] for k, c in enumerate(choice)]
        out = out + (1j ** sum(choice)) * real_form(*vecs)
    return out


def first_lyapunov(model: Model, lam: float, x_eq, *, t: float = 0.0, step: float | None = None) -> LyapunovResult:
    """First Lyapunov coefficient at a Hopf point of an equilibrium of the original ODE.

    Kuznetsov's formula (Elements of applied bifurcation theory, eq. (3.20)):

        l1 = Re[ <p, C(q,q,qb)> - 2 <p, B(q, A^-1 B(q,qb))> + <p, B(qb, (2 i w0 - A)^-1 B(q,q))> ] / (2 w0)

    with ``A = df/dx`` at the equilibrium, ``A q = i w0 q``, ``A^T p = -i w0 p``,
    ``<q, q> = 1``, ``<p, q> = 1`` (``<a, b> = conj(a) . b``).  ``B(u, v)`` and
    ``C(u, v, w)`` (second and third derivatives of ``f``) come from central differences of
    ``model.jac`` along ``u`` (and ``v``) with step ``h = eps**(1/4) * scale`` (default scale
    ``max(1, |x_eq|)``; relative error about 1e-8).

    ``l1 < 0``: supercritical (a stable cycle is born); ``l1 > 0``: subcritical.  The value
    depends on the normalisation of ``q``; its sign does not.  The pair of eigenvalues closest
    to the imaginary axis (with non-zero imaginary part) is used; its real part is returned
    as ``re_lambda`` so the caller can check it is a Hopf point.

    Parameters
    ----------
    model : Model
    lam : float
        Parameter value at the Hopf point.
    x_eq : array_like, shape (n,)
        The equilibrium.
    t : float
        Time at which an (autonomous) ``jac`` is evaluated.
    step : float, optional
        Finite-difference step (absolute, along unit vectors).

    Returns
    -------
    LyapunovResult
        ``l1``, ``omega0``, ``re_lambda``, ``q``, ``p``, ``criticality``
        ("supercritical" / "subcritical"), ``success``, ``status``, ``message``.
    """
    if model.forced:
        raise InputError("first_lyapunov needs an autonomous model (an equilibrium of x' = f(x))")
    x_eq = np.asarray(x_eq, dtype=float).ravel()
    n = model.n
    if x_eq.shape != (n,):
        raise InputError(f"x_eq must have the {n} states {model.states}, got shape {x_eq.shape}")
    A = np.asarray(model.jac(t, x_eq, lam), dtype=float)
    lam_c, q, pvec = _critical_pair(A, lam)
    w0 = lam_c.imag
    scale = max(1.0, float(np.max(np.abs(x_eq))))
    h = step or np.finfo(float).eps ** 0.25 * scale
    B, C = _forms(lambda d: np.asarray(model.jac(t, x_eq + d, lam), dtype=float), h)
    qb = np.conj(q)
    b_qqb = B(q, qb)
    b_qq = B(q, q)
    term1 = np.vdot(pvec, C(q, q, qb))
    term2 = -2 * np.vdot(pvec, B(q, np.linalg.solve(A, b_qqb)))
    term3 = np.vdot(pvec, B(qb, np.linalg.solve(2j * w0 * np.eye(n) - A, b_qq)))
    l1 = float(np.real(term1 + term2 + term3) / (2 * w0))
    crit = "supercritical" if l1 < 0 else "subcritical"
    return LyapunovResult(l1=l1, omega0=float(w0), re_lambda=float(lam_c.real), q=q, p=pvec, criticality=crit,
                          message=f"{crit} Hopf point (l1 = {l1:.6g})")


def _critical_pair(A, lam):
    """The eigenvalue ``i w0`` nearest the imaginary axis (``w0 > 0``), ``q`` and ``p``.

    ``A q = i w0 q`` with ``<q, q> = 1`` and ``A^T p = -i w0 p`` with ``<p, q> = 1``.
    """
    ev, V = np.linalg.eig(A)
    cand = np.flatnonzero(ev.imag > 0)
    if cand.size == 0:
        raise InputError(f"no complex eigenvalue pair of df/dx at lam={lam}: not a Hopf point")
    k = cand[np.argmin(np.abs(ev[cand].real))]
    q = V[:, k] / np.linalg.norm(V[:, k])
    evT, W = np.linalg.eig(A.T)
    kT = np.argmin(np.abs(evT - np.conj(ev[k])))
    pvec = W[:, kT]
    pvec = pvec / np.conj(np.vdot(pvec, q))        # <p, q> = conj(p) . q = 1
    return ev[k], q, pvec


def _forms(jac_at, h):
    """Complex multilinear forms ``B(u, v)``, ``C(u, v, w)`` from central differences of
    ``jac_at(d) = df/dx (x_eq + d)`` with step ``h``."""
    def B_real(u, v):
        return (jac_at(h * u) - jac_at(-h * u)) @ v / (2 * h)

    def C_real(u, v, w):
        return (jac_at(h * u + h * v) - jac_at(h * u - h * v) - jac_at(-h * u + h * v)
                + jac_at(-h * u - h * v)) @ w / (4 * h * h)

    def B(u, v):
        return _multilinear(B_real, u, v)

    def C(u, v, w):
        return _multilinear(C_real, u, v, w)

    return B, C
