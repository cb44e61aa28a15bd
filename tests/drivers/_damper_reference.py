"""Independent reference for the forced 2-DOF friction damper (issue 25): time integration.

A NumPy copy of ``examples/friction_damper.py``'s ODE (never the generated code), in the forcing
phase ``tau = W t`` (``dy/dtau = f(y, tau) / W``, one forcing period is ``tau`` in ``[0, 2 pi]``):

1. a transient of :data:`TRANSIENT` forcing periods with ``solve_ivp`` (DOP853, rtol 1e-11),
2. shooting: Newton on ``y(2 pi) - y(0) = 0`` with the monodromy from the variational
   equation integrated alongside (and the sensitivity to ``W``),
3. the first harmonic of ``x1`` from 512 samples of the periodic orbit (trapezoidal rule,
   spectrally accurate on a smooth periodic function): ``x1 ~ A cos(W t + phi)``,
4. ``dA/dW`` from the sensitivities (``dy0/dW = -(M - I)^-1 dphi/dW``), whose root
   (Brent) is a resonance peak.
"""
import numpy as np
import scipy.integrate
import scipy.optimize
import sympy as sp

from frictionkit.modelspec import ModelSpec, Structure

PARAMS = dict(c=0.02, k1=1.0, k2=1.0, F0=0.1, eps=0.05)
RTOL, ATOL = 1e-11, 1e-13
TRANSIENT = 40
SAMPLES = 512


def _f(y, tau, p):
    x1, v1, x2, v2 = y[:4]
    a1 = (-p["c"] * v1 - p["k1"] * x1 - p["k2"] * (x1 - x2) - p["muN"] * np.tanh(v1 / p["eps"])
          + p["F0"] * np.cos(tau))
    return np.array([v1, a1, v2, -p["c"] * v2 - p["k2"] * (x2 - x1)])


def _jac(y, p):
    sech2 = 1.0 / np.cosh(y[1] / p["eps"]) ** 2
    k1, k2, c = p["k1"], p["k2"], p["c"]
    return np.array([[0, 1, 0, 0], [-(k1 + k2), -c - p["muN"] * sech2 / p["eps"], k2, 0],
                     [0, 0, 0, 1], [k2, 0, -k2, -c]], dtype=float)


def _augmented(tau, z, W, p):
    """y, its monodromy Phi (4x4) and dy/dW (4), in tau."""
    y = z[:4]
    f = _f(y, tau, p)
    J = _jac(y, p) / W
    Phi = z[4:20].reshape(4, 4)
    dW = z[20:24]
    return np.concatenate([f / W, (J @ Phi).ravel(), J @ dW - f / W ** 2])


def _flow(y0, W, p, tau_eval=None, span=2 * np.pi):
    z0 = np.concatenate([y0, np.eye(4).ravel(), np.zeros(4)])
    sol = scipy.integrate.solve_ivp(_augmented, (0.0, span), z0, method="DOP853", rtol=RTOL, atol=ATOL,
                                    args=(W, p), t_eval=tau_eval)
    assert sol.success, sol.message
    return sol


def periodic_orbit(W, muN, y0=None, transient=TRANSIENT):
    """Initial state (at forcing phase 0) of the periodic response at ``W``, by shooting."""
    p = dict(PARAMS, muN=muN)
    y = np.zeros(4) if y0 is None else np.asarray(y0, dtype=float)
    if transient:
        sol = scipy.integrate.solve_ivp(lambda tau, y: _f(y, tau, p) / W, (0.0, 2 * np.pi * transient), y,
                                        method="DOP853", rtol=RTOL, atol=ATOL)
        y = sol.y[:, -1]
    for _ in range(30):
        z = _flow(y, W, p).y[:, -1]
        G = z[:4] - y
        dy = np.linalg.solve(z[4:20].reshape(4, 4) - np.eye(4), -G)
        y = y + dy
        if np.linalg.norm(dy) <= 1e-14 * max(1.0, np.linalg.norm(y)):
            return y
    raise RuntimeError(f"shooting did not converge at W = {W}")


def first_harmonic(W, muN, y0=None, transient=TRANSIENT, derivative=False):
    """``(A, phi, y0)`` of ``x1 ~ A cos(W t + phi)`` at ``W``; with ``derivative``, ``dA/dW`` too."""
    p = dict(PARAMS, muN=muN)
    y0 = periodic_orbit(W, muN, y0, transient)
    tau = 2 * np.pi * np.arange(SAMPLES) / SAMPLES
    sol = _flow(y0, W, p, tau_eval=tau)
    X = 2 * np.fft.rfft(sol.y[0])[1] / SAMPLES          # c1 - i s1
    A, phi = abs(X), np.angle(X)
    if not derivative:
        return A, phi, y0
    end = _flow(y0, W, p).y[:, -1]
    M, dphi = end[4:20].reshape(4, 4), end[20:24]
    dy0 = np.linalg.solve(M - np.eye(4), -dphi)
    dx1 = np.einsum("jt,j->t", sol.y[4:20].reshape(4, 4, -1)[0], dy0) + sol.y[20]
    dX = 2 * np.fft.rfft(dx1)[1] / SAMPLES
    return A, phi, y0, float((X.conjugate() * dX).real / A)


def resonance_peak(W_lo, W_hi, muN):
    """``(W*, A*)``: the root of ``dA/dW`` of ``x1``'s first harmonic in ``[W_lo, W_hi]``."""
    guess = {}

    def slope(W):
        A, _, y0, dA = first_harmonic(W, muN, guess.get("y0"), transient=0 if guess else TRANSIENT,
                                      derivative=True)
        guess["y0"] = y0
        return dA
    W = scipy.optimize.brentq(slope, W_lo, W_hi, xtol=1e-13, rtol=4 * np.finfo(float).eps)
    A, _, _ = first_harmonic(W, muN, guess["y0"], transient=0)
    return W, A


def _tanh_coulomb(vr, eps):
    return -sp.tanh(vr / eps)


def structure_damper():
    """``examples/friction_damper.py`` as a structure of modal data: unit masses, K = [[k1 + k2,
    -k2], [-k2, k2]], C = c M (modal ratios c / (2 w_j)), the damper and the forcing on point m1."""
    c, k1, k2 = 0.02, 1.0, 1.0
    m = ModelSpec("damper_structure", "the friction damper as a structure")
    F0, muN = m.parameter("F0", 0.1), m.parameter("muN", 0.05)
    eps = m.parameter("eps", 0.05, positive=True)
    W = m.forcing(m.parameter("W", 1.0, positive=True))
    w2, phi = np.linalg.eigh(np.array([[k1 + k2, -k2], [-k2, k2]]))          # M = I: mass-normalized
    w = np.sqrt(w2)
    s = m.structure(Structure.modal(frequencies=w, damping=c / (2 * w), shapes={"m1": phi[0], "m2": phi[1]}))
    mu = m.friction("damper", _tanh_coulomb, s.velocity("m1"), eps=eps)
    s.force("m1", muN * mu + F0 * sp.cos(W * m.t))
    return m
