"""Independent shooting reference for the LuGre belt of issue 26 (no frictionkit code).

The ODE is the NumPy copy ``tests/models/state_law_specs.rhs``; its Jacobian below is written
by hand.  A periodic orbit is the root of ``(y(T) - y0, v0) = 0`` in ``(y0, T)`` (phase
condition ``v(0) = 0``: every orbit of the belt passes through zero velocity), solved by
Newton's method with the exact derivatives ``[M - I, f(y(T)); e_v, 0]`` from the variational
equation ``Phi' = J(y(t)) Phi``, integrated with the orbit by ``solve_ivp`` (DOP853,
rtol 1e-12).  The monodromy ``M = Phi(T)`` gives the Floquet multipliers; a period doubling is
the root in ``vb`` of ``min Re(mu) + 1`` (Brent's method, each value a converged orbit).
"""
import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

from tests.models.state_law_specs import DEFAULTS, rhs

P = {k: v for k, v in DEFAULTS.items() if k != "vb"}


def jac(y, vb, zeta=0.02, s0=200.0, s1=2.83, s2=0.01, mc=0.3, ms=0.5, vs=0.3, delta=1e-3):
    """``d rhs / d (x, v, z)`` by hand."""
    x, v, z = y
    vr = v - vb
    e = np.exp(-(vr / vs) ** 2)
    g = mc + (ms - mc) * e
    dg = (ms - mc) * e * (-2 * vr / vs ** 2)
    r = np.sqrt(vr ** 2 + delta ** 2)
    dzv = 1 - s0 * z * (vr / r / g - r * dg / g ** 2)
    dzz = -s0 * r / g
    return np.array([[0.0, 1.0, 0.0],
                     [-1.0, -2 * zeta - s1 * dzv - s2, -s0 - s1 * dzz],
                     [0.0, dzv, dzz]])


def _flow(y0, T, vb, rtol=1e-12, atol=1e-13):
    def fun(t, w):
        y, Phi = w[:3], w[3:].reshape(3, 3)
        return np.concatenate([rhs(t, y, vb, **P), (jac(y, vb, **P) @ Phi).ravel()])

    w0 = np.concatenate([y0, np.eye(3).ravel()])
    sol = solve_ivp(fun, (0.0, T), w0, method="DOP853", rtol=rtol, atol=atol)
    if not sol.success:
        raise RuntimeError(sol.message)
    return sol.y[:3, -1], sol.y[3:, -1].reshape(3, 3)


def periodic_orbit(vb, y0, T, *, tol=1e-11, max_iter=30):
    """``(y0, T, M)``: the orbit through ``v = 0`` nearest the guess, and its monodromy."""
    y0 = np.array(y0, dtype=float)
    T = float(T)
    for _ in range(max_iter):
        yT, M = _flow(y0, T, vb)
        r = np.concatenate([yT - y0, [y0[1]]])
        A = np.zeros((4, 4))
        A[:3, :3] = M - np.eye(3)
        A[:3, 3] = rhs(0.0, yT, vb, **P)
        A[3, 1] = 1.0
        d = np.linalg.solve(A, -r)
        y0, T = y0 + d[:3], T + d[3]
        if np.max(np.abs(d)) < tol * max(1.0, np.max(np.abs(y0))):
            yT, M = _flow(y0, T, vb)
            return y0, T, M
    raise RuntimeError(f"shooting did not converge at vb = {vb}")


def multipliers(M):
    """Eigenvalues of ``M`` sorted by decreasing modulus."""
    mu = np.linalg.eigvals(M)
    return mu[np.argsort(-np.abs(mu))]


def nontrivial(M):
    """The multipliers without the one nearest 1."""
    mu = multipliers(M)
    return np.delete(mu, np.argmin(np.abs(mu - 1)))


def period_doubling(vb_a, vb_b, y0, T, *, xtol=1e-10):
    """``vb`` in ``[vb_a, vb_b]`` where a multiplier passes -1, continuing the orbit from the
    guess ``(y0, T)`` (an orbit near ``vb_a``)."""
    state = dict(y0=np.array(y0, float), T=float(T))

    def g(vb):
        y, T, M = periodic_orbit(vb, state["y0"], state["T"])
        state.update(y0=y, T=T)
        return float(np.min(nontrivial(M).real) + 1)

    return brentq(g, vb_a, vb_b, xtol=xtol)


def peak_to_peak(vb, y0, T, n=20001):
    """Peak-to-peak of ``x`` over the orbit ``(y0, T)`` (from :func:`periodic_orbit`): the
    DOP853 dense output (rtol 1e-12) on ``n`` times of the period ``[T/4, 5T/4]`` (the start
    ``v = 0`` is an extreme: away from the ends), each extreme then refined by bisection on the
    sign of ``v = x'`` between its neighbours."""
    sol = solve_ivp(lambda t, y: rhs(t, y, vb, **P), (0.0, 1.5 * T), np.asarray(y0, dtype=float), method="DOP853",
                    rtol=1e-12, atol=1e-13, dense_output=True)
    t = np.linspace(0.25 * T, 1.25 * T, n)
    x = sol.sol(t)[0]
    out = []
    for i in (int(np.argmax(x)), int(np.argmin(x))):
        a, b = t[max(i - 1, 0)], t[min(i + 1, n - 1)]
        va = sol.sol(a)[1]
        for _ in range(60):
            m = 0.5 * (a + b)
            if np.sign(sol.sol(m)[1]) == np.sign(va):
                a = m
            else:
                b = m
        out.append(float(sol.sol(0.5 * (a + b))[0]))
    return out[0] - out[1]
