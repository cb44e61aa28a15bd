"""Hill's method: Floquet exponents from harmonic-balance coefficients (Lazarus & Thomas 2010; DESIGN §5.5)."""
from __future__ import annotations

import numpy as np

from ..discretizations._hbm import coefficients_at
from ..errors import ConvergenceError, InputError
from ..model._interface import Model
from ._floquet import FloquetResult, _result


# ---------------------------------------------------------------------------------------
# 3. Hill's method
# ---------------------------------------------------------------------------------------
def hbm_states_on_grid(coefficients, n: int, harmonics: int, n_t: int) -> np.ndarray:
    """Original states on ``n_t`` uniform points of one period from HBM coefficients.

    ``coefficients[i*(2H+1) + k]``: variable ``i``, k = 0 mean, 2j-1 cos(j w t), 2j sin(j w t)
    (layout of ``discretizations/_base.py``); only the first ``n`` variables are read.
    """
    H = int(harmonics)
    c = np.asarray(coefficients, dtype=float)[: n * (2 * H + 1)].reshape(n, 2 * H + 1)
    return coefficients_at(c, 2 * np.pi * np.arange(n_t) / n_t)


def hbm_coefficients_from_samples(samples, harmonics: int) -> np.ndarray:
    """HBM coefficients (layout of ``discretizations/_base.py``) of uniformly sampled periodic signals.

    Parameters
    ----------
    samples : ndarray, shape (n, n_t)
        One period, endpoint excluded, ``n_t >= 2 H + 1``.
    harmonics : int

    Returns
    -------
    ndarray, shape (n * (2H+1),)
    """
    x = np.atleast_2d(np.asarray(samples, dtype=float))
    n, n_t = x.shape
    H = int(harmonics)
    if n_t < 2 * H + 1:
        raise InputError(f"{n_t} samples cannot resolve harmonics={H}: need at least 2H+1 = {2 * H + 1}")
    X = np.fft.rfft(x, axis=1) / n_t
    out = np.zeros((n, 2 * H + 1))
    out[:, 0] = X[:, 0].real
    out[:, 1::2] = 2 * X[:, 1: H + 1].real
    out[:, 2::2] = -2 * X[:, 1: H + 1].imag
    return out.ravel()


def hill_matrix(model: Model, lam: float, coefficients, omega: float, harmonics: int, *,
                n_time: int | None = None) -> np.ndarray:
    """Hill matrix ``Jhat_(k-m) - i k omega delta_km`` (complex, size n(2H+1)).

    ``J(x(t))`` of the original ODE is sampled on ``n_time`` points (default
    ``max(8H, 64)``, so that its harmonics up to ``2H`` are computed with little aliasing) and
    its Fourier coefficients by FFT.  Unknown ordering: harmonic-major, ``c[(k+H)*n + i]``.
    """
    n, H = model.n, int(harmonics)
    if H < 1:
        raise InputError(f"harmonics={harmonics} must be >= 1 for Hill's method")
    if not omega > 0:
        raise InputError(f"omega={omega} must be positive")
    n_time = int(n_time or max(8 * H, 64))
    if n_time < 4 * H + 1:
        raise InputError(f"n_time={n_time} must be at least 4H+1 = {4 * H + 1}")
    x = hbm_states_on_grid(coefficients, n, H, n_time)
    t = 2 * np.pi / omega * np.arange(n_time) / n_time
    Jt = np.asarray(model.jac(t, x, lam), dtype=float)          # (n, n, n_time)
    Jhat = np.fft.fft(Jt, axis=2) / n_time                        # Jhat[..., l] for l mod n_time
    K = 2 * H + 1
    # block (a, b) (row harmonic k = a - H, column harmonic m = b - H) is Jhat_(k-m)
    lag = (np.arange(K)[:, None] - np.arange(K)[None, :]) % n_time
    hill = Jhat[:, :, lag].transpose(2, 0, 3, 1).reshape(K * n, K * n)
    hill -= np.diag(np.repeat(1j * omega * np.arange(-H, H + 1), n))
    return hill


def _real_form(hill, n, H):
    """Similar real matrix of the complex Hill matrix (basis mean, cos, sin per harmonic).

    With complex coefficients ``c_0 = r_0``, ``c_(+-k) = (a_k -+ i b_k) / 2`` the similarity
    ``P^-1 hill P`` is real for a real ``J(t)``; its eigenvalues are the same and a real
    eigensolver is several times cheaper.
    """
    def idx(k):                                 # rows/cols of complex harmonic k
        return slice((k + H) * n, (k + H + 1) * n)

    K = 2 * H + 1
    X = np.empty_like(hill)                     # hill @ P
    X[:, 0:n] = hill[:, idx(0)]
    for k in range(1, H + 1):
        cp, cm = hill[:, idx(k)], hill[:, idx(-k)]
        X[:, (2 * k - 1) * n:(2 * k) * n] = (cp + cm) / 2
        X[:, (2 * k) * n:(2 * k + 1) * n] = 1j * (cm - cp) / 2
    Y = np.empty((K * n, K * n), dtype=complex)  # P^-1 @ X
    Y[0:n] = X[idx(0)]
    for k in range(1, H + 1):
        rp, rm = X[idx(k)], X[idx(-k)]
        Y[(2 * k - 1) * n:(2 * k) * n] = rp + rm
        Y[(2 * k) * n:(2 * k + 1) * n] = 1j * (rp - rm)
    return Y.real


def select_exponents(s, n: int, omega: float, *, rtol: float = 1e-8):
    """The ``n`` Floquet exponents kept from a Hill spectrum: smallest ``|Im s|`` first.

    A negative real multiplier ``-exp(a T)`` appears in the real Hill matrix as the
    conjugate pair ``a +- i omega/2``, two members of *one* family (they differ by
    ``i omega``); only one of them is kept, so that the next family (e.g. the second
    negative multiplier after a period doubling) is not pushed out.  A genuine complex pair
    of multipliers has ``|Im s| < omega/2`` and keeps both members.
    """
    s = np.asarray(s)
    order = np.argsort(np.abs(s.imag), kind="stable")
    chosen = []
    for k in order:
        if len(chosen) == n:
            break
        sk = s[k]
        half = abs(abs(sk.imag) - omega / 2) <= rtol * omega
        if half and any(abs(sk - np.conj(s[j])) <= rtol * max(omega, abs(sk)) for j in chosen):
            continue
        chosen.append(k)
    return s[np.array(chosen, dtype=int)]


def hill_multipliers(model: Model, lam: float, coefficients, omega: float, harmonics: int, *,
                     n_time: int | None = None, tol: float = 1e-6) -> FloquetResult:
    """Floquet multipliers of an HBM orbit by Hill's method (module docstring, route 3).

    Parameters
    ----------
    model : Model
        Only ``model.jac`` (the original ODE's Jacobian) is used: no auxiliary variables.
    lam : float
    coefficients : array_like
        HBM coefficients in the layout of ``discretizations/_base.py``; the first ``n`` variables
        (the original states) are read, so the whole HBM unknown vector may be passed.
    omega : float
        Angular frequency of the orbit.
    harmonics : int
        ``H`` of the coefficients (the Hill matrix uses the same truncation).
    n_time : int, optional
        Samples of ``J(x(t))`` for its Fourier coefficients (default ``max(8H, 64)``).
    tol : float
        Margin of the ``stable`` flag.

    Returns
    -------
    FloquetResult
        ``exponents`` are the kept Floquet exponents ``s``; ``multipliers = exp(2 pi s / omega)``.

    Notes
    -----
    The two members ``a +- i omega/2`` of one family (a negative real multiplier, e.g.
    beyond a period doubling) are counted once (:func:`select_exponents`).
    """
    hill = _real_form(hill_matrix(model, lam, coefficients, omega, harmonics, n_time=n_time), model.n,
                      int(harmonics))
    s = select_exponents(np.linalg.eigvals(hill), model.n, omega)
    T = 2 * np.pi / omega
    return _result(np.exp(T * s), not model.forced, "hill", tol, exponents=s)


# ---------------------------------------------------------------------------------------
# Hill's method on the HBM Jacobian of the quadratic system (consistent with the branch)
# ---------------------------------------------------------------------------------------
def hill_multipliers_hbm(disc, Z, *, tol: float = 1e-6) -> FloquetResult:
    """Floquet multipliers from the HBM Jacobian of the quadratic (recast) system.

    With ``u = exp(s t) p(theta)`` the linearised quadratic system ``mass u' = f(u)`` becomes,
    on the harmonics kept by the HBM, ``J_U p = s E p`` where ``J_U`` is the coefficient
    block of the HBM Jacobian (``dR/dU`` including ``-omega mass D``) and
    ``E = diag(mass) (x) I_(2H+1)`` (Lazarus & Thomas, C. R. Mécanique 338, 2010, on the
    HBM Jacobian).  The algebraic rows (auxiliary variables, ``mass = 0``) are condensed
    out, ``S = E_dd^-1 (J_dd - J_da J_aa^-1 J_ad)``, and of the ``n_d (2H+1)`` eigenvalues
    of ``S`` the ``n_d`` with the smallest ``|Im s|`` are kept (:func:`select_exponents`), as
    in :func:`hill_multipliers`.

    Because it linearises the very system whose branch is continued, the trivial
    multiplier is 1 to rounding (the shift ``D U`` is an exact null vector of ``J_U``) and
    a fold of the HBM branch is exactly where a second multiplier passes +1; the
    original-ODE route :func:`hill_multipliers` is the independent check (its distance of
    the trivial multiplier from 1 measures the truncation error).

    Parameters
    ----------
    disc : HBMDiscretization
        Without derivative-bilinear rows (their ``A u'`` would add to ``E``).
    Z : ndarray
        A converged HBM solution.
    tol : float
        Margin of the ``stable`` flag.

    Returns
    -------
    FloquetResult
        ``method = "hill-hbm"``; multipliers of the differential variables.
    """
    import scipy.sparse

    if disc.kind != "hbm":
        raise InputError("hill_multipliers_hbm needs an HBM discretization with harmonics >= 1")
    kinds = tuple(disc.model.kinds)
    if "derivative_bilinear" in kinds:
        raise InputError(f"model {disc.model.name!r} has derivative-bilinear rows: use hill_multipliers "
                         "(original ODE) instead")
    U, omega, _ = disc.split(Z)
    J = disc.jacobian(Z)
    J = J.toarray() if scipy.sparse.issparse(J) else np.asarray(J, dtype=float)
    nh = disc.nh
    Ju = J[:disc.n_coef, :disc.n_coef]
    mass = np.asarray(disc.mass, dtype=float)
    dif = np.flatnonzero(mass != 0)
    alg = np.flatnonzero(mass == 0)
    d = (dif[:, None] * nh + np.arange(nh)[None, :]).ravel()
    a = (alg[:, None] * nh + np.arange(nh)[None, :]).ravel()
    S = Ju[np.ix_(d, d)]
    if a.size:
        try:
            S = S - Ju[np.ix_(d, a)] @ np.linalg.solve(Ju[np.ix_(a, a)], Ju[np.ix_(a, d)])
        except np.linalg.LinAlgError as exc:
            raise ConvergenceError("hill_multipliers_hbm: the algebraic block of the HBM Jacobian is "
                                   "singular") from exc
    S = S / np.repeat(mass[dif], nh)[:, None]
    s = select_exponents(np.linalg.eigvals(S), dif.size, omega)
    T = 2 * np.pi / omega
    return _result(np.exp(T * s), disc.autonomous, "hill-hbm", tol, exponents=s)
