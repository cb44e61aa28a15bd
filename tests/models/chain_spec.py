"""A chain of masses of any length, for the codegen scaling benchmark and its tests (issue 28).

``n_masses`` equal masses ``m`` in a line, the first tied to a wall, each link a linear spring
``k``, a cubic spring ``k3`` and a damper ``c`` between neighbours; the first mass rubs on a belt
moving at ``Vb`` under the normal load ``FN`` with a friction law of ``modelspec.laws``
(hyperbolic by default).  With positions ``x_i`` and velocities ``v_i`` (``x_0 = v_0 = 0``, the
wall; the last mass free):

    m v_i' = g_i - g_{i+1} + [i = 1] FN mu(v_1 - Vb),
    g_i = k d_i + k3 d_i^3 + c (v_i - v_{i-1}),   d_i = x_i - x_{i-1}   (g_{n+1} = 0),

``2 n`` states.  The cubic spring of every link makes every equation nonlinear, so the model is
never recognised as linear but for its contact (``codegen/structure.py``): it takes the general
symbolic recast, the path whose cost grows with the number of states.

:func:`chain` declares it as a user would; :func:`rhs` and :func:`jacobian` are an independent
NumPy copy of the ODE and its exact Jacobian, written by hand from the formulas above (for the
generated code's reference).
"""
import numpy as np
import sympy as sp

from frictionkit.modelspec import ModelSpec, laws

DEFAULTS = dict(m=1.0, k=1.0, k3=0.5, c=0.02, FN=1.0, Vb=0.3, mus=0.6, mud=0.3, v0=0.2, delta=1e-2, eps=0.05)
LAWS = ("hyperbolic", "coulomb_tanh")


def chain(n_masses: int, law: str = "hyperbolic", name: str | None = None) -> ModelSpec:
    """The chain of ``n_masses`` masses (``2 n_masses`` states), continuation parameter ``Vb``."""
    if law not in LAWS:
        raise ValueError(f"law {law!r}: choose one of {LAWS}")
    spec = ModelSpec(name or f"chain{2 * n_masses}", f"chain of {n_masses} masses with cubic links on a belt")
    names = ("m", "k", "k3", "c", "FN", "Vb") + (("mus", "mud", "v0", "delta") if law == "hyperbolic" else ("eps",))
    p = {key: spec.parameter(key, DEFAULTS[key], positive=key in ("m", "delta", "eps", "v0")) for key in names}
    xs, vs = [], []
    for i in range(1, n_masses + 1):
        x, v = spec.second_order(f"x{i}", velocity=f"v{i}")
        xs.append(x)
        vs.append(v)
    zero = sp.Integer(0)

    def link(i):        # force of link i (between mass i - 1 and mass i), i = 1..n
        d = xs[i - 1] - (xs[i - 2] if i > 1 else zero)
        dv = vs[i - 1] - (vs[i - 2] if i > 1 else zero)
        return p["k"] * d + p["k3"] * d ** 3 + p["c"] * dv

    if law == "hyperbolic":
        mu = spec.friction("belt", laws.hyperbolic, vs[0] - p["Vb"], mus=p["mus"], mud=p["mud"], v0=p["v0"],
                           delta=p["delta"])
    else:
        mu = spec.friction("belt", laws.coulomb_tanh, vs[0] - p["Vb"], eps=p["eps"])
    for i in range(1, n_masses + 1):
        force = -link(i) + (link(i + 1) if i < n_masses else zero)
        if i == 1:
            force = force + p["FN"] * mu
        spec.ode(vs[i - 1], force, mass=p["m"])
    return spec


def _mu(vr, p, law):
    """The friction coefficient and its derivative in ``vr`` (modelspec.laws, by hand)."""
    if law == "coulomb_tanh":
        t = np.tanh(vr / p["eps"])
        return -t, -(1 - t * t) / p["eps"]
    a = np.sqrt(vr * vr + p["delta"] ** 2)
    da = vr / a
    g = p["mud"] + (p["mus"] - p["mud"]) * p["v0"] / (p["v0"] + a)
    dg = -(p["mus"] - p["mud"]) * p["v0"] / (p["v0"] + a) ** 2 * da
    s = vr / a
    ds = (a - vr * da) / (a * a)
    return -g * s, -(dg * s + g * ds)


def rhs(x, n_masses, law="hyperbolic", **values):
    """``f(x)`` of the chain, states ordered ``x1, v1, x2, v2, ...`` (as declared)."""
    p = {**DEFAULTS, **values}
    pos, vel = np.asarray(x[0::2], float), np.asarray(x[1::2], float)
    d = np.diff(np.concatenate([[0.0], pos]))
    dv = np.diff(np.concatenate([[0.0], vel]))
    g = np.concatenate([p["k"] * d + p["k3"] * d ** 3 + p["c"] * dv, [0.0]])
    acc = (-g[:-1] + g[1:]) / p["m"]
    acc[0] += p["FN"] * _mu(vel[0] - p["Vb"], p, law)[0] / p["m"]
    out = np.empty(2 * n_masses)
    out[0::2], out[1::2] = vel, acc
    return out


def jacobian(x, n_masses, law="hyperbolic", **values):
    """Exact ``df/dx`` of :func:`rhs` (tridiagonal blocks), written by hand."""
    p = {**DEFAULTS, **values}
    pos = np.asarray(x[0::2], float)
    d = np.diff(np.concatenate([[0.0], pos]))
    kd = (p["k"] + 3 * p["k3"] * d ** 2) / p["m"]       # d g_i / d d_i, per unit mass
    cd = p["c"] / p["m"]
    J = np.zeros((2 * n_masses, 2 * n_masses))
    for i in range(n_masses):
        J[2 * i, 2 * i + 1] = 1.0
        # -g_i: d_i = x_i - x_{i-1}
        J[2 * i + 1, 2 * i] -= kd[i]
        J[2 * i + 1, 2 * i + 1] -= cd
        if i > 0:
            J[2 * i + 1, 2 * i - 2] += kd[i]
            J[2 * i + 1, 2 * i - 1] += cd
        # +g_{i+1}: d_{i+1} = x_{i+1} - x_i
        if i + 1 < n_masses:
            J[2 * i + 1, 2 * i + 2] += kd[i + 1]
            J[2 * i + 1, 2 * i] -= kd[i + 1]
            J[2 * i + 1, 2 * i + 3] += cd
            J[2 * i + 1, 2 * i + 1] -= cd
    J[1, 1] += p["FN"] * _mu(x[1] - p["Vb"], p, law)[1] / p["m"]
    return J
