"""Equilibria of the original ODE, their eigenvalues and Hopf points (DESIGN §5.5)."""
from __future__ import annotations

from collections import OrderedDict

import numpy as np
import scipy

from ..discretizations._aft import AFTDiscretization
from ..discretizations._hbm import equilibrium_discretization
from ..engine._locate import hermite_chord, locate_on_interpolant
from ..engine._newton import correct, tangent_at
from ..errors import ConvergenceError, InputError


def find_equilibrium(model, lam, x_guess=None, discretization=None):
    """An equilibrium of the original ODE at ``lam``, as an ``H = 0`` unknown vector.

    Parameters
    ----------
    model : Model
    lam : float
        Value of the continuation parameter.
    x_guess : array_like (n,), optional
        Initial guess for the states (default zeros).
    discretization : {None, "hbm", "aft"}
        ``None``: the quadratic system (``H = 0`` HBM, states and auxiliaries) for recast
        models, the original ODE (``H = 0`` AFT, states only) for sampled models.

    Returns
    -------
    disc : HBMDiscretization or AFTDiscretization  (H = 0)
    Z : ndarray (N + 1,)
    """
    use_aft = _use_aft(model, discretization)
    if model.forced:
        raise InputError(
            f"model {model.name!r} is forced (by cos({model.forcing_frequency} t)): it has no equilibria, only "
            f"periodic responses. Compute its frequency response with `frictionkit frf {model.name} --start W0 "
            f"--stop W1` (frequency_response), or a periodic branch in another parameter with `frictionkit "
            "continue ... --from-simulation`")
    n = model.n
    x0 = np.zeros(n) if x_guess is None else np.asarray(x_guess, dtype=float)
    if x0.shape != (n,):
        raise InputError(f"x_guess must have {n} entries (states {', '.join(model.states)})")
    f = lambda x: np.asarray(model.rhs(0.0, x, lam), dtype=float)   # noqa: E731
    J = lambda x: np.asarray(model.jac(0.0, x, lam), dtype=float)   # noqa: E731
    disc = AFTDiscretization(model, 0) if use_aft else equilibrium_discretization(model)
    e = np.zeros(disc.size)
    e[-1] = 1.0

    def packed(x):
        """The ``H = 0`` unknowns of the states ``x`` (with their auxiliaries for a recast model)."""
        u = x if use_aft else np.asarray(model.aux(x, 0.0, lam), dtype=float)
        return disc.pack(np.asarray(u, dtype=float)[:, None], np.nan, lam)

    def accepted(x):
        """The residual relative to the size of the terms is at rounding level."""
        if not np.all(np.isfinite(x)):
            return False
        scale = np.abs(J(x)) @ np.abs(x) + 1e-300
        return bool(np.all(np.abs(f(x)) <= 1e-8 * np.maximum(scale, 1e-12 * scale.max())))

    # the runtime's Newton from the guess first: the common case, and no scipy.optimize import
    # (0.35 s of every command's CPU, issue 29); MINPACK's trust-region methods when it fails
    try:
        Z, _ = correct(disc, packed(x0), e, lam, what=f"equilibrium at {model.continuation} = {lam:g}")
        if accepted(np.asarray(disc.unpack(Z)["samples"](1))[:n, 0]):
            return disc, Z
    except (ConvergenceError, FloatingPointError, np.linalg.LinAlgError):
        pass
    import scipy.optimize
    best, msg = None, ""
    for method in ("hybr", "lm"):
        sol = scipy.optimize.root(f, x0, jac=J, method=method)
        if accepted(sol.x):
            best = sol
            break
        msg = sol.message
    if best is None:
        raise ConvergenceError(f"no equilibrium found at {model.continuation} = {lam:g} from "
                               f"x_guess = {x0.tolist()}: {msg}")
    Z, _ = correct(disc, packed(best.x), e, lam)
    return disc, Z


#: the last few dense eigenvalue sets, keyed on the model (held: no id reuse), the state and
#: the parameters: the Hopf search asks for the same points again (a bracket's ends are
#: samples of ``_hopf_brackets``, then ends of ``_locate_hopf``'s test and of ``_bracket_test``),
#: and with many states each costs O(n^3) (0.3 s at 512 states).  Room for every sample of one
#: step's search (at least ``HOPF_SAMPLES`` = 40 over the range, plus the halvings between close
#: crossings): 128 sets, 1 MB at 512 states
_EIG_CACHE: OrderedDict = OrderedDict()
_EIG_CACHE_SIZE = 128


def eigenvalues(model, x, lam, vectors=False):
    """Eigenvalues (and right eigenvectors) of ``df/dx`` of the original ODE at ``x``.

    A structural model of ``STRUCTURAL_ALL_FROM`` states or more: every eigenvalue from the
    contacts' characteristic matrix (:func:`structural_eigenvalues`, ``O(n^2)``), the dense
    ``numpy.linalg.eigvals`` where that route does not converge or fails its check."""
    x = np.ascontiguousarray(x, dtype=float)
    if vectors:
        return np.linalg.eig(np.asarray(model.jac(0.0, x, lam), dtype=float))
    key = (id(model), x.tobytes(), np.ascontiguousarray(model.param_vector(lam)).tobytes())
    hit = _EIG_CACHE.get(key)
    if hit is None:
        ev = None
        if model.structure is not None and model.n >= STRUCTURAL_ALL_FROM:
            ev = structural_eigenvalues(model, x, lam)
        if ev is None:
            ev = np.linalg.eigvals(np.asarray(model.jac(0.0, x, lam), dtype=float))
        _EIG_CACHE[key] = (model, ev)          # the model held with it: its id is not reused
        while len(_EIG_CACHE) > _EIG_CACHE_SIZE:
            _EIG_CACHE.popitem(last=False)
    else:
        ev = hit[1]
    return ev.copy()


def _complex_scale(ev):
    return 1e-9 * max(1.0, float(np.max(np.abs(ev))))


def _hopf_test(model, n):
    def test(Z):
        ev = eigenvalues(model, Z[:n], Z[-1])
        cplx = ev[np.abs(ev.imag) > _complex_scale(ev)]
        if len(cplx) == 0:
            return np.nan
        return float(cplx[np.argmin(np.abs(cplx.real))].real)
    return test


#: from this many states on (``eigs`` needs k = 1 < n - 1), a Hopf point is located on the one
#: eigenvalue that crosses, tracked by shift-invert Arnoldi (a complex LU of ``J - i omega I``),
#: not on the complex eigenvalue nearest the axis, which can jump from one mode to another
#: inside a bracket (tests/analysis/test_hopf_close_pairs.py).  It is cheaper too: 1.5 ms for
#: the LU against 22 ms for the dense eigenvalues at 128 states (cProfile of the 64-mode
#: string's equilibria)
TRACK_FROM = 4


def _tracking_hopf_test(model, n, eigenvalue):
    """Real part of the eigenvalue of ``df/dx`` nearest ``i |Im eigenvalue|``: the crossing
    pair followed through a bracket whose ends carry it, by ``scipy.sparse.linalg.eigs`` in
    shift-invert mode (``k = 1``).  ``nan`` where Arnoldi does not converge."""
    sigma = 1j * abs(complex(eigenvalue).imag)
    rng = np.random.default_rng(0)          # a fixed start: the same value at the same point
    v0 = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    structural = model.structure is not None

    def test(Z):
        if structural:         # O(modes) per Newton step on the contacts' characteristic matrix
            s = structural_eigenvalue(model, Z[:n], Z[-1], complex(eigenvalue.real, abs(eigenvalue.imag)))
            if s is not None:
                return float(s.real)
        J = np.asarray(model.jac(0.0, np.asarray(Z[:n], dtype=float), Z[-1]), dtype=complex)
        import scipy.sparse.linalg   # here: a model of a few states never imports scipy.sparse
        try:
            w = scipy.sparse.linalg.eigs(J, k=1, sigma=sigma, v0=v0, return_eigenvectors=False, tol=1e-14)
        except scipy.sparse.linalg.ArpackError:
            return np.nan
        return float(w[0].real)
    return test


def structural_eigenvalue(model, x, lam, start, max_iter: int = 60):
    """The eigenvalue of ``df/dx`` of a structural model (DESIGN §6) nearest ``start``, by
    Newton's method on the contacts' characteristic matrix; None where it does not converge.

    With the structure ``x' = A x + B F``, ``w = C x`` (poles ``lambda_j``, residues ``R_j``:
    ``StructuralSystem``) and the port model linearised at the equilibrium (``F = Kw w + Kz z``,
    ``z' = Hw w + Hz z``), an eigenvector of the whole Jacobian has ``z = (s - Hz)^-1 Hw w`` and
    ``x = (s - A)^-1 B F``, hence ``w = G(s) Keff(s) w``: ``s`` is an eigenvalue where

        T(s) = I - G(s) Keff(s),  G(s) = sum_j R_j / (s - lambda_j),  Keff(s) = Kw + Kz (s - Hz)^-1 Hw,

    is singular (the Schur complement of ``s I - J`` on the inputs; poles of the structure that
    the inputs do not see are eigenvalues too, but never cross: the structure is damped).
    Newton's method runs on ``g(s) = (s - lambda_near) det T(s)``, ``lambda_near`` the pole nearest
    ``start`` (a lightly damped mode next to the crossing eigenvalue: without that factor the
    pole of ``T`` there makes Newton's basin a fraction of their distance); its step is
    ``-1 / (tr(T^-1 T') + 1 / (s - lambda_near))`` and costs one pass over the poles
    (``n_in x n_F`` per pole), against ``O(n^3)`` for the dense eigenvalues or a shift-invert LU.

    Returns
    -------
    complex or None
        Converged to ``1e-13`` relative (``|step| <= 1e-13 max(1, |s|)``).
    """
    p = model.param_vector(lam)
    st = model.structure                # the continuation parameter never enters the structure
    Jp = np.asarray(st.port.jac(0.0, st.port_states(np.asarray(x, dtype=float)), p), dtype=float)
    rF, rz, ni, nz = st.rows_F, st.rows_z, st.n_in, st.n_z
    Kw, Kz, Hw, Hz = Jp[rF, :ni], Jp[rF, rz], Jp[rz, :ni], Jp[rz, rz]
    lam_j, R = st.poles, st.residues                               # (n_lin,), (n_lin, n_in, n_F)
    eye_i, eye_z = np.eye(ni), np.eye(nz)
    s = complex(start)
    near = lam_j[np.argmin(np.abs(lam_j - s))]
    for _ in range(max_iter):
        if not np.isfinite(s) or np.any(s == lam_j):
            return None
        d = 1.0 / (s - lam_j)
        G = np.tensordot(d, R, axes=1)
        dG = -np.tensordot(d * d, R, axes=1)
        if nz:
            Rz = np.linalg.solve(s * eye_z - Hz, Hw)               # (s - Hz)^-1 Hw
            K = Kw + Kz @ Rz
            dK = -Kz @ np.linalg.solve(s * eye_z - Hz, Rz)
        else:
            K, dK = Kw, np.zeros_like(Kw)
        T = eye_i - G @ K
        dT = -(dG @ K + G @ dK)
        if s == near:
            return None
        try:
            trace = np.trace(np.linalg.solve(T, dT)) + 1.0 / (s - near)
        except np.linalg.LinAlgError:
            return s                                               # exactly singular: a root
        if not np.isfinite(trace) or abs(trace) < 1e-300:
            return None
        step = 1.0 / trace
        s = s - step
        if abs(step) <= 1e-13 * max(1.0, abs(s)):
            return s
    return None


#: every eigenvalue of a structural model's Jacobian by :func:`structural_eigenvalues` from this
#: many states on (bowed string, one core: 8 ms against 12 ms for numpy.linalg.eigvals at 128
#: states, 70 ms against 500 ms at 512)
STRUCTURAL_ALL_FROM = 128


def structural_eigenvalues(model, x, lam, max_iter: int = 200):
    """Every eigenvalue of ``df/dx`` of a structural model (DESIGN §6) at ``x``, as the roots of
    its characteristic polynomial by the Ehrlich-Aberth simultaneous iteration; None where it
    does not converge or its check fails.

    With the notation of :func:`structural_eigenvalue` (poles ``lambda_j`` of the structure,
    the own states' block ``Hz`` with eigenvalues ``eta_k``), the Schur complement on the inputs
    gives ``det(s I - J) = prod_j (s - lambda_j) det(s I - Hz) det T(s)``, hence

        p'(s) / p(s) = sum_j 1 / (s - beta_j) + tr(T(s)^-1 T'(s)),    beta = (lambda_j, eta_k),

    at ``O(n n_in n_F)`` per point.  The ``n`` roots are iterated together from the points
    ``beta`` (each root starts next to its own ``beta_i``, the eigenvalue of the uncoupled
    structure or own states it continues): the Aberth correction (Aberth, Math. Comp. 27, 1973;
    Bini, Numer. Algorithms 13, 1996) of root ``i`` is ``1 / (p'/p(s_i) - sum_(k != i) 1 / (s_i -
    s_k))``, cubically convergent for simple roots.  The roots are kept as offsets ``delta_i =
    s_i - beta_i``, and ``1 / (s_i - beta_j) - 1 / (s_i - s_j) = -delta_j / ((s_i - beta_j)(s_i -
    s_j))`` is summed in that form, so that a mode the contacts hardly see (its root within
    rounding of its pole) keeps its full accuracy.  ``O(n^2)`` per sweep, against ``O(n^3)``
    for the dense eigenvalues.

    Check: every root's last correction below ``1e-14 |s|`` (then it is left as it is), and
    ``sum s_i = tr J`` to ``1e-10 sum |s_i|`` (a root found twice would leave one missing).

    Returns
    -------
    ndarray (n,) complex or None
    """
    st = model.structure
    p = model.param_vector(lam)
    x = np.asarray(x, dtype=float)
    Jp = np.asarray(st.port.jac(0.0, st.port_states(x), p), dtype=float)
    rF, rz, ni, nz = st.rows_F, st.rows_z, st.n_in, st.n_z
    Kw, Kz, Hw, Hz = Jp[rF, :ni], Jp[rF, rz], Jp[rz, :ni], Jp[rz, rz]
    poles = st.poles
    m2 = poles.size
    R = st.residues.reshape(m2, -1)                                # (n_lin, n_in n_F)
    eta = np.linalg.eigvals(Hz) if nz else np.zeros(0, dtype=complex)
    beta = np.concatenate([poles, eta])
    n = beta.size
    if n != model.n:
        return None
    # start from each beta moved by its first-order shift tr(Kw R_j) (the eigenvalue perturbation
    # of a pole by the contacts), off it where that is 0; the own states' points slightly off
    scale = np.maximum(1.0, np.abs(beta))
    delta = np.concatenate([np.einsum("jif,fi->j", st.residues, Kw), np.zeros(nz, dtype=complex)])
    nudge = 1e-6 * scale * np.exp(2j * np.pi * (np.arange(n) + 0.25) / n)
    delta = np.where(np.abs(delta) > 1e-6 * scale, delta, nudge)
    eye_i, eye_z = np.eye(ni), np.eye(nz)
    bb = beta[:, None] - beta[None, :]                             # beta_i - beta_j
    bp = beta[:, None] - poles[None, :]                            # beta_i - lambda_j
    be = beta[:, None] - eta[None, :]                              # beta_i - eta_k
    act = np.arange(n)       # the roots still moving (O(active x n) per sweep); each left as it is
    #                          after a correction below 1e-14 |s| (cubic convergence: the next
    #                          one would be below rounding)
    for _ in range(max_iter):
        if not act.size:
            break
        da = delta[act]
        s = beta[act] + da
        # a root on its point to the last bit (a mode the contacts do not see) is that point
        exact = da == 0
        dp = bp[act] + np.where(exact, 1.0, da)[:, None]           # s_i - lambda_j (diag exact)
        d = 1.0 / dp
        G = (d @ R).reshape(act.size, ni, -1)
        dG = -((d * d) @ R).reshape(act.size, ni, -1)
        if nz:
            Mz = s[:, None, None] * eye_z - Hz
            Rz = np.linalg.solve(Mz, np.broadcast_to(Hw, (act.size,) + Hw.shape))
            K = Kw + Kz @ Rz
            dK = -Kz @ np.linalg.solve(Mz, Rz)
        else:
            K, dK = np.broadcast_to(Kw, (act.size,) + Kw.shape), 0.0
        T = eye_i - G @ K
        dT = -(dG @ K + (G @ dK if nz else 0.0))
        if ni == 1:                           # (T exactly 0 at a root: g infinite, no correction)
            with np.errstate(divide="ignore", invalid="ignore"):
                g = np.where(T[:, 0, 0] == 0, np.inf, dT[:, 0, 0] / T[:, 0, 0])
        else:
            g = None
        try:
            g = np.trace(np.linalg.solve(T, dT), axis1=1, axis2=2) if g is None else g
        except np.linalg.LinAlgError:         # T exactly singular at a root: no correction there
            g = np.empty(act.size, dtype=complex)
            for i in range(act.size):
                try:
                    g[i] = np.trace(np.linalg.solve(T[i], dT[i]))
                except np.linalg.LinAlgError:
                    g[i] = np.inf
        # p'/p(s_i) - sum_(k != i) 1 / (s_i - s_k); the root's own point's term is 1/delta_i to
        # the last bit (``dp``, ``de``: the differences from the points plus the offsets)
        sa = (bb[act] + da[:, None]) - delta[None, :]              # s_i - s_k
        sa[np.arange(act.size), act] = np.inf
        with np.errstate(divide="ignore", invalid="ignore"):
            pp = d.sum(axis=1) + g
            if nz:
                pp = pp + (1.0 / (be[act] + np.where(exact, 1.0, da)[:, None])).sum(axis=1)
            corr = np.where(exact, 0.0, 1.0 / (pp - (1.0 / sa).sum(axis=1)))
        if not np.all(np.isfinite(corr)):
            return None
        delta[act] = da - corr
        small = np.abs(corr) <= 1e-14 * np.maximum(1.0, np.abs(beta[act] + delta[act]))
        act = act[~small]
    else:
        return None
    ev = beta + delta
    trace = np.trace(np.asarray(model.jac(0.0, x, lam), dtype=float))
    if not abs(ev.sum() - trace) <= 1e-10 * np.abs(ev).sum():
        return None
    return ev


def hopf_eigenpair(model, x, lam):
    """The eigenvalue of ``df/dx`` at ``x`` nearest the imaginary axis with a positive imaginary
    part, and its right eigenvector (unit norm, largest component real): the pair of a located
    Hopf point.

    A structural model of ``STRUCTURAL_ALL_FROM`` states or more: the eigenvalues by
    :func:`eigenvalues` and the eigenvector from the contacts' characteristic matrix, ``O(n)``
    (:func:`structural_eigenvector`), where its residual ``|J v - s v|`` is at rounding level;
    otherwise (and as the fallback) ``numpy.linalg.eig``.
    """
    pick = lambda w: int(np.argmin(np.abs(w.real) + (w.imag <= 0) * 1e300))     # noqa: E731
    if model.structure is not None and model.n >= STRUCTURAL_ALL_FROM:
        w = eigenvalues(model, x, lam)
        mu = complex(w[pick(w)])
        v = structural_eigenvector(model, x, lam, mu)
        J = np.asarray(model.jac(0.0, np.asarray(x, dtype=float), lam), dtype=float)
        if v is not None and np.linalg.norm(J @ v - mu * v) <= 1e-10 * max(1.0, np.abs(J).sum(axis=1).max()):
            return mu, v
    w, V = eigenvalues(model, x, lam, vectors=True)
    k = pick(w)
    return complex(w[k]), V[:, k]


def structural_eigenvector(model, x, lam, s):
    """Right eigenvector of ``df/dx`` of a structural model for its eigenvalue ``s`` (unit norm,
    largest component real), or None: the null vector ``w`` of the contacts' characteristic
    matrix ``T(s)`` (:func:`structural_eigenvalue`) gives the forces ``F = Keff(s) w``, the
    modes ``xi_j = (V^-1 B F)_j / (s - lambda_j)``, the states ``x = V xi`` and the own states
    ``z = (s - Hz)^-1 Hw w``."""
    st = model.structure
    p = model.param_vector(lam)
    Jp = np.asarray(st.port.jac(0.0, st.port_states(np.asarray(x, dtype=float)), p), dtype=float)
    rF, rz, ni, nz = st.rows_F, st.rows_z, st.n_in, st.n_z
    Kw, Kz, Hw, Hz = Jp[rF, :ni], Jp[rF, rz], Jp[rz, :ni], Jp[rz, rz]
    if np.any(s == st.poles):
        return None
    d = 1.0 / (s - st.poles)
    G = np.tensordot(d, st.residues, axes=1)
    K = Kw + (Kz @ np.linalg.solve(s * np.eye(nz) - Hz, Hw) if nz else 0.0)
    w_in = np.linalg.svd(np.eye(ni) - G @ K)[2][-1].conj()
    _, Bm = st.modal_coordinates()
    v = np.empty(model.n, dtype=complex)
    v[:st.n_lin] = st.to_states(d * (Bm @ (K @ w_in)))
    if nz:
        v[st.n_lin:] = np.linalg.solve(s * np.eye(nz) - Hz, Hw @ w_in)
    norm = np.linalg.norm(v)
    if not np.isfinite(norm) or norm == 0:
        return None
    k = int(np.argmax(np.abs(v)))
    return v * (abs(v[k]) / v[k]) / norm


def _crossing_eigenvalues(ev_a, ev_b):
    """The eigenvalues of ``ev_a`` (positive imaginary part) whose nearest eigenvalue in
    ``ev_b`` lies on the other side of the imaginary axis, nearest the axis first, each with
    that partner: ``[(mu, nu), ...]`` (nearest-neighbour matching: the samples are close
    enough that an eigenvalue moves less than half its distance to the others between
    them)."""
    out = []
    for mu in ev_a[ev_a.imag > _complex_scale(ev_a)]:
        nu = ev_b[np.argmin(np.abs(ev_b - mu))]
        if (mu.real > 0) != (nu.real > 0):
            out.append((mu, nu))
    return sorted(out, key=lambda p: abs(p[0].real))


def _crossings(ev_a, ev_b):
    """How many complex pairs cross the imaginary axis between two samples, even where the
    numbers of unstable eigenvalues are equal (a pair that stabilizes while another one
    destabilizes: two Hopf points closer than the samples): the larger of the counts matched
    from either side."""
    return max(len(_crossing_eigenvalues(ev_a, ev_b)), len(_crossing_eigenvalues(ev_b, ev_a)))


def _unstable(ev):
    return int(np.sum(ev.real > 0))


def _unstable_count(model, Z):
    """Number of eigenvalues of ``df/dx`` with a positive real part at the equilibrium ``Z``."""
    n = model.n
    return _unstable(eigenvalues(model, Z[:n], Z[-1]))


#: how many times an interval whose two ends have as many unstable eigenvalues, but in which an
#: eigenvalue crosses, is halved to separate its two crossings
SEPARATE_DEPTH = 8


def _hopf_brackets(model, Za, ta, Zb, tb, ev_a, ev_b, spacing):
    """Where eigenvalues cross the imaginary axis between two consecutive equilibria.

    The eigenvalues are sampled on the cubic Hermite interpolant of the branch between them
    (tangents ``ta``, ``tb``; no factorization) at most ``spacing`` apart in ``lam``, so that
    the detection does not depend on the continuation's step: a pair of Hopf points inside
    one long ANM step shows as two changes.  ``ev_a``, ``ev_b``: the eigenvalues at the two
    points.  Two crossings between two samples that leave the number of unstable eigenvalues
    unchanged (one pair stabilizes, another destabilizes) are seen by matching the
    eigenvalues of the two samples (:func:`_crossings`) and separated by halving the interval
    (at most ``SEPARATE_DEPTH`` times).

    Returns
    -------
    list of (float, float)
        Sub-intervals ``(sa, sb)`` of the interpolant's ``[0, 1]`` whose ends differ in the
        number of unstable eigenvalues.
    """
    n = model.n
    herm = hermite_chord(Za, ta, Zb, tb)

    def at(s):
        Z = herm(s)
        return eigenvalues(model, Z[:n], Z[-1])

    def separate(sa, ea, sb, eb, depth):
        changed = _unstable(ea) != _unstable(eb)
        crossings = _crossings(ea, eb)
        if crossings <= 1 or depth == 0:
            return [(sa, sb)] if changed else []
        sm = 0.5 * (sa + sb)
        em = at(sm)
        return separate(sa, ea, sm, em, depth - 1) + separate(sm, em, sb, eb, depth - 1)

    k = int(np.ceil(abs(Zb[-1] - Za[-1]) / spacing)) if spacing > 0 else 1
    k = max(k, 1)
    s = np.linspace(0.0, 1.0, k + 1)
    evs = [np.asarray(ev_a)] + [at(si) for si in s[1:-1]] + [np.asarray(ev_b)]
    out = []
    for j in range(k):
        out += separate(s[j], evs[j], s[j + 1], evs[j + 1], SEPARATE_DEPTH)
    return out


def _locate_hopf(disc, model, Za, Zb, test, counters, tangents=None, depth=40, bracket=(0.0, 1.0)):
    """Hopf point between two equilibria whose numbers of unstable eigenvalues differ
    (between the interpolant's ``bracket``, by default the two points themselves).

    The search runs on the cubic Hermite interpolant of the branch between the two points
    (tangents ``tangents``, or computed), which costs no factorization: when the crossing
    pair is not complex at both ends (e.g. a pair that becomes real and unstable right after
    crossing, as for steep smoothed friction laws), the interval is bisected on the
    interpolant, keeping the half where the number of unstable eigenvalues changes, until
    both ends carry the complex pair.  The root of the pair's real part is then found on
    the interpolant and refined on a few Newton-corrected points
    (:func:`~frictionkit.runtime.engine._locate.locate_on_interpolant`).  From
    ``TRACK_FROM`` states on, the real part is that of the crossing eigenvalue alone, tracked
    by shift-invert (:func:`_tracking_hopf_test`), where it agrees with ``test`` at both ends
    of the bracket.  A real crossing (a fold or branch point) ends with ``ConvergenceError``.
    """
    if tangents is None:
        chord = Zb - Za
        tangents = [tangent_at(disc, Z, chord, counters) for Z in (Za, Zb)]
    herm = hermite_chord(Za, tangents[0], Zb, tangents[1])

    def count(s):
        return _unstable_count(model, herm(s))

    sa, sb = (float(b) for b in bracket)
    n_a = count(sa)
    for _ in range(depth):
        ta, tb = test(herm(sa)), test(herm(sb))
        if np.isfinite(ta) and np.isfinite(tb) and ta * tb <= 0:
            return locate_on_interpolant(disc, Za, tangents[0], Zb, tangents[1],
                                         _bracket_test(model, herm, sa, sb, test, ta, tb), counters,
                                         bracket=(sa, sb))
        sm = 0.5 * (sa + sb)
        if count(sm) != n_a:
            sb = sm
        else:
            sa = sm
    raise ConvergenceError("no Hopf crossing between the two equilibria (a real eigenvalue crosses)")


def _bracket_test(model, herm, sa, sb, test, ta, tb):
    """The test function for one bracket: ``test`` (the real part of the complex eigenvalue
    nearest the imaginary axis, from all the eigenvalues) for small models.  From
    ``TRACK_FROM`` states on, where one pair crosses in the bracket, the real part of that
    pair alone, tracked by shift-invert from the bracket's end ``sa``, once it is checked to be
    the same eigenvalue at both ends (to rounding): with many modes, the complex eigenvalue
    nearest the axis changes from one pair to another inside a bracket, and ``test`` is not
    continuous there."""
    n = model.n
    if n < TRACK_FROM:
        return test
    Za, Zb = herm(sa), herm(sb)
    pairs = _crossing_eigenvalues(eigenvalues(model, Za[:n], Za[-1]), eigenvalues(model, Zb[:n], Zb[-1]))
    if len(pairs) != 1:
        return test
    mu, nu = pairs[0]
    tracked = _tracking_hopf_test(model, n, mu)
    ends = []
    for Z, e in ((Za, mu), (Zb, nu)):
        g = tracked(Z)
        if not np.isfinite(g) or abs(g - e.real) > 1e-9 * max(1.0, abs(mu)):
            return test
        ends.append(g)
    # a root at an end (a bracket halved onto the Hopf point) leaves that end's sign to
    # rounding: ``test``'s values there are the ones the bracket was checked with
    return tracked if ends[0] * ends[1] <= 0 else test


def _use_aft(model, discretization):
    """True when the AFT of the states applies: ``discretization="aft"``, sampled models, and
    by default (``None``) every model with the pointwise Taylor kernels (DESIGN §5.0).
    Structural models (DESIGN §6) always take it: their equilibria are the AFT's with
    ``H = 0`` on the reduced system's states, their orbits the condensed AFT's
    (``"aft-condensed"``, an AFT too)."""
    if discretization not in (None, "hbm", "aft", "aft-condensed"):
        raise InputError(f"discretization={discretization!r}: choose 'hbm' (quadratic recast) or 'aft' "
                         "(alternating frequency-time on the original ODE)")
    if model.structure is not None:
        if discretization == "hbm":
            raise InputError(f"model {model.name!r} is a structure with contacts: it has no quadratic recast of "
                             "the whole system, so the recast HBM does not apply; use the AFT (the default)")
        return True
    if model.sampled and discretization == "hbm":
        raise InputError(f"model {model.name!r} has a non-analytic friction law (no quadratic recast): "
                         "the recast HBM does not apply; use discretization='aft' (DESIGN §5.4)")
    if discretization is None:
        # the default is the pointwise path (DESIGN §5.0) wherever the module has its Taylor
        # kernels; hand-written modules without them keep the recast HBM
        return model.sampled or model.has_taylor
    return model.sampled or discretization == "aft"
