"""Peer benchmark for structures (issue 24, "Against the peers"): the same model in frictionkit
and in a peer, measured in the same run.

1. **pyHarm-os: the forced frequency response of a beam with a contact at mid-span.**  The
   cantilever of ``examples/fe_beam_damper.py`` with ``BEAM_ELEMENTS`` Euler-Bernoulli elements
   (16 degrees of freedom, first bending mode 52.50 rad/s), Rayleigh damping (ratio 0.005 at the
   first two modes), the tip forced with ``F0 cos(W t)``, ``W`` in ``W_RANGE`` (around the first
   resonance); two contacts at mid-span, to the ground (``CASES``):

   - ``friction``: the regularized Coulomb law of :func:`frictionkit.modelspec.laws.coulomb_tanh`,
     ``f = -FN tanh(v_mid / eps)``, in both codes.  pyHarm ships no element with that law: its
     friction elements are the Jenkins element (an elastic spring in series with an exact Coulomb
     slider, whose force depends on the displacement history) and the DLFT contacts (exact
     Coulomb by dynamic Lagrangian multipliers); neither is a function of the instantaneous
     velocity, and frictionkit's harmonic balance takes laws analytic in their inputs, so no
     friction law is common to the two as shipped.  The law is written for pyHarm through its
     element interface (``NodeToNodeElement``: the AFT residual and its exact Jacobian, checked
     against differences in ``friction_element_jacobian_check``; registered with
     ``pyHarm_plugin``), the way pyHarm's friction tutorial builds a smooth Coulomb element.
   - ``cubic_spring``: pyHarm's own ``CubicSpring`` element, ``f = -k3 u_mid^3``, declared in
     frictionkit as ``s.force("mid", -k3 * s.displacement("mid")**3)``.

   pyHarm gets the structure as its substructure of matrices ``M, C = a M + b K, K`` and the
   forcing as its ``CosinusForcing`` element; frictionkit gets the same matrices through
   ``Structure.from_matrices`` (``rayleigh=(a, b)``; all modes but two kept, and the static
   correction at the two loaded points restores those two exactly: ``structure_check`` compares
   the dynamic compliance with a dense solve of the matrices) and continues the frequency
   response by the condensed harmonic balance (ANM; a Newton correction at the start frequency,
   then ``periodic_branch``, as in ``tests/structures/test_forced_structure.py``).

   *Accuracy.*  The quantity is the resonance peak of ``A(W)``, the first-harmonic amplitude of
   the tip deflection: its frequency and amplitude, taken from each code's computed points by the
   same rule (a cubic spline of ``A(W)`` through the points, maximised between the neighbours of
   the largest).  The reference is frictionkit at ``H_REF`` harmonics with the peak refined by
   Newton solutions at fixed ``W`` (Brent's method on ``A``), checked by time integration of the
   finite-element equations (``solve_ivp`` DOP853, rtol 1e-11) over one period from the reference
   orbit; the same refinement at each H of ``HARMONICS`` gives the peak's truncation error, which
   is the same in both codes (they balance the same equations with the same harmonics and time
   samples).  For each accuracy target of ``TARGETS`` (the relative errors of the peak's frequency
   and amplitude both below it) both codes take the fewest harmonics whose truncation error is
   below half the target; then frictionkit takes the cheapest ``points_per_step`` (the ANM's dense
   output, free points on each step's series) and pyHarm the largest arclength step ``ds`` (0.4
   halved until the peak meets the target; its points are what resolves the peak) whose peak
   meets the target.  pyHarm runs its Newton-Raphson solver without its bifurcation test (its
   fastest configuration for a response without turning points: with the default ``scipyroot``
   solver the response took 1.3x as long, the test adds 15 %; friction case, H = 5, ds = 0.1).
   The chosen settings are timed over ``ROUNDS`` alternating rounds.  Each timing covers the
   whole frequency response from the model: frictionkit's ``load_model`` (warm build cache), the
   start and the branch, pyHarm's ``Maestro`` (system assembly) and ``operate``, and in both the
   tip amplitudes and the peak.  pyHarm's numba kernels are compiled and loaded in the process
   before the timings (one run first); frictionkit's port module is in its build cache.

2. **AUTO-07p (through bifpy): the bowed string with N = 16 and 32 modes.**  The string of
   ``examples/bowed_string.py`` with FN = 0.02 N and delta = 0.05 m/s (the README's bowed string,
   ``tests/structures/_models.py: string``): equilibria for the bow speed from 0.6 down to
   0.05 m/s, then the periodic branch from the first Hopf point.  frictionkit: the whole
   ``frictionkit continue examples/bowed_string.py --param Vb --start 0.6 --stop 0.05 --set
   FN=0.02 delta=0.05 --from-hopf 1 -H 48`` process (``FK_BOWED_MODES=N``; default method and
   engine, stability on), with a warm and with a cold build cache (codegen included; a cold
   cache is a model's first load, which runs the contact port on its NumPy kernels and leaves
   the build to the second load, ``generate_module(..., defer=True)``; the warm cache is filled
   by two runs, so that its rounds run the compiled port).  AUTO integrates every mode: the 2N first-order modal equations, written as a bifpy
   model (``func`` with a loop over the modes, the same hyperbolic law; checked against
   frictionkit's ``model.rhs``), transpiled to Fortran and compiled by bifpy's native path (as
   ``bench_auto.py`` runs AUTO; its equilibrium and orbit settings), then AUTO's equilibria
   (IPS = 1, DSMAX = 0.002: with a larger step AUTO misses Hopf points where several pairs of
   eigenvalues cross close together) and the periodic orbits from the same Hopf point (IPS = 2,
   NTST = ``AUTO_NTST``, NCOL = 4, Floquet multipliers, stopped at the first branch point, where
   the orbits shrink onto the equilibrium again).  AUTO's Jacobians are its finite differences
   (JAC = 0): with bifpy's exact ``AUTO_JACOBIAN`` the whole job took 3.5x as long at N = 16
   (the symbolic Jacobian's compilation; measured with the example's default law parameters).  The whole AUTO process is timed (Python, bifpy, the
   transpiling, gfortran and AUTO).  Agreement: the Hopf point, and the period and the bow
   velocity's peak-to-peak on the orbit at ``VB_PROBE`` (AUTO's user label UZR there; in
   frictionkit, the same branch by the Python equivalent of the command, corrected at that bow
   speed).

Peers are for this benchmark only (``pip install pyHarm-os 'bifpy>=0.3'``, or the ``bench``
extra, and gfortran); a missing peer is reported as ``{"available": false, "reason": ...}``
and the frictionkit half still runs.  CPU times count the process and its children
(``getrusage``, microseconds); the machine is shared, the codes alternate, medians are quoted.

Run: ``python benchmarks/run.py structure_peers`` (writes
``benchmarks/results/structure_peers.json``; about 25 min).  One case again:
``FK_PEERS_PARTS=string FK_STRING_MODES=16 python benchmarks/run.py structure_peers``; what is
not rerun is kept from the last file and marked ``"rerun": false``.
"""
import importlib.metadata
import importlib.util
import json
import logging
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.bench_auto import EQ_SETTINGS, PO_SETTINGS, _auto_total_time, _clock, _since  # noqa: E402

ROUNDS = 5                          # part 1: frictionkit, pyHarm, frictionkit, ...: medians
AUTO_ROUNDS = 3                     # part 2 (AUTO takes minutes at N = 32)

# -- part 1: the beam ----------------------------------------------------------------------------
BEAM_ELEMENTS = 8                   # 16 degrees of freedom
ZETA = 0.005                        # Rayleigh damping: this ratio at the first two modes
# the contact at mid-span: the friction damper (F0 tip force [N], FN normal load [N], eps the law's
# velocity scale [m/s]), or pyHarm's own cubic spring to the ground (k3 [N/m^3]; peak shifted by
# 0.3 rad/s, no turning point)
CASES = {"friction": dict(F0=1.0, FN=0.5, eps=0.1), "cubic_spring": dict(F0=0.05, k3=5e8)}
W_RANGE = (40.0, 65.0)              # forcing frequency [rad/s]; first bending mode 52.50
H_REF = 30                          # the reference's harmonics (truncation_error["20"]: the change from H = 20)
TARGETS = (1e-4, 1e-6)              # relative error of the peak's frequency and amplitude
HARMONICS = (1, 3, 5, 8, 10)        # the harmonics tried
FK_POINTS_PER_STEP = (1, 2, 4, 8, 16)
PH_STEPS = tuple(0.4 / 2 ** k for k in range(8))   # pyHarm's ds: 0.4 halved down to 0.003125

# -- part 2: the bowed string --------------------------------------------------------------------
STRING_MODES = (16, 32)
# a partial rerun (the whole bench takes about 25 min, AUTO-07p at N = 32 most of it):
# FK_PEERS_PARTS=string FK_STRING_MODES=16 reruns that case only; the parts and cases not rerun
# are kept from the last results file, each marked ``"rerun": false``
PARTS = tuple(p for p in os.environ.get("FK_PEERS_PARTS", "beam,string").split(",") if p)
if os.environ.get("FK_STRING_MODES"):
    STRING_MODES = tuple(int(n) for n in os.environ["FK_STRING_MODES"].split(","))
STRING_SET = dict(FN=0.02, delta=0.05)
VB_START, VB_STOP, VB_PROBE = 0.6, 0.05, 0.19
STRING_HARMONICS = 48
AUTO_NTST = 50


def _median(values):
    values = [v for v in values if v is not None]
    return float(statistics.median(values)) if values else None


# ================================================================================================
# part 1: pyHarm-os, a forced beam with a contact at mid-span
# ================================================================================================
def beam_data():
    """The beam's dense matrices, Rayleigh coefficients and loaded degrees of freedom."""
    import scipy.linalg
    from examples.fe_beam_damper import beam_matrices
    M, K = (a.toarray() for a in beam_matrices(BEAM_ELEMENTS))
    w = np.sqrt(scipy.linalg.eigh(K, M, eigvals_only=True))
    a = 2 * ZETA * w[0] * w[1] / (w[0] + w[1])        # zeta(w) = a / (2 w) + b w / 2 = ZETA at w1, w2
    b = 2 * ZETA / (w[0] + w[1])
    n = M.shape[0]
    return dict(M=M, K=K, C=a * M + b * K, rayleigh=(float(a), float(b)), frequencies=w,
                mid=2 * (BEAM_ELEMENTS // 2 - 1), tip=n - 2, n_dof=n)


def beam_spec(data, case):
    """The frictionkit model of ``case``: the same matrices, the same contact law and forcing."""
    import sympy as sp
    from frictionkit.modelspec import ModelSpec, Structure, laws
    c = CASES[case]
    structure = Structure.from_matrices(data["M"], data["K"], points={"mid": data["mid"], "tip": data["tip"]},
                                        rayleigh=data["rayleigh"], modes=data["n_dof"] - 2, displacement_unit="m")
    m = ModelSpec(f"beam_peers_{case}_{BEAM_ELEMENTS}", f"cantilever, {case} at mid-span, tip forcing", time_unit="s")
    W = m.forcing(m.parameter("W", W_RANGE[0], unit="rad/s"))
    F0 = m.parameter("F0", c["F0"], unit="N")
    s = m.structure(structure)
    if case == "friction":
        FN, eps = m.parameter("FN", c["FN"], unit="N"), m.parameter("eps", c["eps"], unit="m/s")
        s.force("mid", FN * m.friction("damper", laws.coulomb_tanh, s.velocity("mid"), eps=eps))
    else:
        s.force("mid", -m.parameter("k3", c["k3"], unit="N/m^3") * s.displacement("mid") ** 3)
    s.force("tip", F0 * sp.cos(W * m.t))
    return m


def contact_force(case, x_mid, v_mid):
    """The contact's force on the structure at mid-span, in NumPy (for time integration)."""
    c = CASES[case]
    return -c["FN"] * np.tanh(v_mid / c["eps"]) if case == "friction" else -c["k3"] * x_mid ** 3


def structure_check(model, data):
    """Largest relative difference between frictionkit's tip/mid dynamic compliance (the reduced
    structure: modes plus static correction) and a dense solve of ``K - W^2 M + i W C`` at a few
    frequencies, harmonics 1 to 10 of the range's ends."""
    st = model.structure
    pts = list(st.basis.points)
    rows = [data[p] for p in pts]
    err = 0.0
    for W in np.concatenate([np.linspace(*W_RANGE, 5), 10 * W_RANGE[1] * np.arange(1, 3)]):
        D = data["K"] - W * W * data["M"] + 1j * W * data["C"]
        G_dense = np.linalg.solve(D, np.eye(data["n_dof"])[:, rows])[rows]
        b = st.basis
        phi = b.shapes                                       # (points, modes), mass-normalised
        G_modal = (phi / (b.frequencies ** 2 - W * W + 2j * b.damping * b.frequencies * W)) @ phi.T
        err = max(err, float(np.max(np.abs(G_modal - G_dense)) / np.max(np.abs(G_dense))))
    return err


def peak_of(W, A):
    """The resonance peak ``(W, A)`` of computed points: a cubic spline of ``A(W)`` through them
    (``W`` increasing along a response without turning points; otherwise against the chord
    length, ``W`` and ``A`` scaled by their spread over the five points around the largest),
    maximised between the neighbours of the largest point; None if that point is an end."""
    import scipy.interpolate
    import scipy.optimize
    W, A = np.asarray(W, dtype=float), np.asarray(A, dtype=float)
    i = int(np.argmax(A))
    if i == 0 or i == len(A) - 1:
        return None
    if np.all(np.diff(W) > 0):
        s = W
    else:
        near = slice(max(i - 2, 0), i + 3)
        s = np.concatenate([[0.0], np.cumsum(np.hypot(np.diff(W) / np.ptp(W[near]), np.diff(A) / np.ptp(A[near])))])
    sW, sA = scipy.interpolate.CubicSpline(s, W), scipy.interpolate.CubicSpline(s, A)
    r = scipy.optimize.minimize_scalar(lambda x: -sA(x), bounds=(s[i - 1], s[i + 1]), method="bounded",
                                       options=dict(xatol=1e-13 * abs(s[i])))
    return float(sW(r.x)), float(sA(r.x))


def _peak_errors(peak, ref):
    if peak is None:
        return None, None
    return abs(peak[0] - ref[0]) / ref[0], abs(peak[1] - ref[1]) / ref[1]


# -- frictionkit ------------------------------------------------------------------------------
def _fk_start(model, H):
    """Discretization and the Newton-corrected forced orbit at the start frequency."""
    from frictionkit.runtime.discretizations._condensed import CondensedAFTDiscretization
    from frictionkit.runtime.engine._newton import correct
    disc = CondensedAFTDiscretization(model, H)
    Z = disc.pack(np.zeros((disc.nv, disc.nh)), np.nan, W_RANGE[0])
    e = np.zeros(disc.size)
    e[-1] = 1.0
    Z, _ = correct(disc, Z, e, W_RANGE[0], max_iter=60)
    return disc, Z, e


def _tip_amplitude(disc, Z):
    c = disc.point_response(Z, "tip", n_t=0)
    return float(np.hypot(c[1], c[2]))


def frictionkit_frf(spec, harmonics, points_per_step):
    """The whole frequency response in frictionkit, timed from the model: ``load_model`` (warm
    cache), the start, the branch (ANM, no stability), the tip amplitudes and the peak."""
    from frictionkit.runtime import load_model, periodic_branch
    t0 = _clock()
    model = load_model(spec, continuation="W")
    load = _since(t0)["cpu_s"]
    disc, Z, _ = _fk_start(model, harmonics)
    br = periodic_branch(disc, Z, *W_RANGE, 1.0, options=dict(stability=False, points_per_step=points_per_step))
    A = [_tip_amplitude(disc, Zp) for Zp in br.solutions]
    peak = peak_of(br.param, A)
    out = _since(t0)
    out.update(load_model_cpu_s=load, harmonics=harmonics, points_per_step=points_per_step, n_t=int(disc.n_t),
               unknowns=int(disc.size),
               steps=int(br.counters["steps"]), points=len(br), factorizations=int(br.counters["factorizations"]),
               success=bool(br.success), status=br.status, end=float(br.param[-1]), peak=peak)
    return out


def refined_peak(model, harmonics):
    """The exact peak of the harmonic balance at ``harmonics``: the largest point of its branch
    refined by Brent's method on ``A(W)``, each ``A`` from a Newton solution at fixed ``W``.
    Returns ``(W, A)``, the discretization and the orbit there."""
    import scipy.optimize
    from frictionkit.runtime import periodic_branch
    from frictionkit.runtime.engine._newton import correct
    disc, Z, e = _fk_start(model, harmonics)
    br = periodic_branch(disc, Z, *W_RANGE, 1.0, options=dict(stability=False, points_per_step=4))
    A = np.array([_tip_amplitude(disc, Zp) for Zp in br.solutions])
    i = int(np.argmax(A))

    def solve_at(W):
        Zs = br.solutions[int(np.argmin(np.abs(br.param - W)))].copy()
        Zs[-1] = W
        return correct(disc, Zs, e, W, max_iter=60, xtol=1e-13)[0]

    r = scipy.optimize.minimize_scalar(lambda W: -_tip_amplitude(disc, solve_at(W)),
                                       bracket=(br.param[i - 1], br.param[i], br.param[i + 1]), tol=1e-12)
    return (float(r.x), float(-r.fun)), disc, solve_at(float(r.x))


def reference_peak(spec, data, case):
    """The converged peak (frictionkit at ``H_REF``, :func:`refined_peak`), checked by time
    integration of the finite-element equations over one period from that orbit; and the
    truncation error of the peak at each H of ``HARMONICS`` (both codes balance the same
    equations: their peaks at a given H differ only by how finely their points resolve it)."""
    from frictionkit.runtime import load_model
    model = load_model(spec, continuation="W")
    peak, disc, Z = refined_peak(model, H_REF)
    out = dict(harmonics=H_REF, W=peak[0], A=peak[1], time_integration=time_integration_check(disc, Z, data, case))
    out["truncation_error"] = {}
    for H in HARMONICS + (20,):
        eW, eA = _peak_errors(refined_peak(model, H)[0], peak)
        out["truncation_error"][str(H)] = dict(W=eW, A=eA)
    return out


def time_integration_check(disc, Z, data, case):
    """The reference orbit against the finite-element equations ``M x'' + C x' + K x =
    F0 cos(W t) e_tip + f_mid e_mid`` (``f_mid`` of :func:`contact_force`), over one forcing period
    (``solve_ivp`` DOP853, rtol 1e-11) from the orbit's state at t = 0 (every degree of freedom
    recovered from the condensed orbit): the tip deflection's return after one period and its
    first-harmonic amplitude (trapezoidal rule on 4096 samples) against the harmonic balance's,
    relative to that amplitude.  (The slopes' velocities return to some 1e-6 only: the
    harmonics above ``H_REF`` of the damper's force, which the balance leaves out, drive the
    fourth mode near 34.5 W; the tip's first harmonic does not feel them.)"""
    import scipy.integrate
    n, W = data["n_dof"], float(Z[-1])
    x0 = np.array([disc.point_response(Z, k, n_t=0) for k in range(n)])
    v0 = np.array([disc.point_response(Z, k, "velocity", n_t=0) for k in range(n)])
    y0 = np.concatenate([x0[:, 0] + x0[:, 1::2].sum(axis=1), v0[:, 0] + v0[:, 1::2].sum(axis=1)])
    Minv = np.linalg.inv(data["M"])
    K, C, mid, tip = data["K"], data["C"], data["mid"], data["tip"]

    def f(t, y):
        x, v = y[:n], y[n:]
        force = -C @ v - K @ x
        force[mid] += contact_force(case, x[mid], v[mid])
        force[tip] += CASES[case]["F0"] * np.cos(W * t)
        return np.concatenate([v, Minv @ force])

    T = 2 * np.pi / W
    sol = scipy.integrate.solve_ivp(f, (0.0, T), y0, method="DOP853", rtol=1e-11, atol=1e-15, dense_output=True)
    t = T * np.arange(4096) / 4096
    x_tip = sol.sol(t)[tip]
    A_ode = float(np.hypot(2 * np.mean(x_tip * np.cos(W * t)), 2 * np.mean(x_tip * np.sin(W * t))))
    A_hb = _tip_amplitude(disc, Z)
    return dict(method="solve_ivp DOP853, rtol 1e-11, one period from the orbit's state",
                tip_periodicity_defect=float(abs(sol.y[tip, -1] - y0[tip]) / A_hb),
                tip_amplitude_rel_diff=abs(A_ode - A_hb) / A_hb, steps=int(sol.t.size - 1))


# -- pyHarm -----------------------------------------------------------------------------------
def pyharm_peer():
    """``(Maestro, element class, info)``; ``Maestro`` is None (and ``info`` says why) when
    pyHarm cannot run."""
    try:
        from pyHarm.BaseUtilFuncs import pyHarm_plugin
        from pyHarm.Maestro import Maestro
        version = importlib.metadata.version("pyHarm-os")
        element = _tanh_friction_element()
        pyHarm_plugin(element)
    except Exception as exc:          # ImportError, or a broken install (numba, jax)
        return None, None, {"available": False, "reason": f"pyHarm not importable ({type(exc).__name__}: {exc}); "
                                                          "pip install pyHarm-os"}
    return Maestro, element, {"available": True, "pyharm_version": version}


def _tanh_friction_element():
    """The regularized Coulomb law as a pyHarm element (its element interface: residual and
    exact Jacobian of the AFT), for a relative displacement ``u`` between the connected
    degrees of freedom (a node and the ground here): the residual's internal force
    ``N0 tanh(u' / eps)``, harmonics ``[a0, a1, b1, a2, ...]`` per pyHarm's convention, ``u'`` from
    pyHarm's derivative operator ``om * nabla``, ``nti`` samples through its DFT matrices."""
    from pyHarm.Elements.NodeToNodeElements.NodeToNodeElement import NodeToNodeElement

    class TanhFriction(NodeToNodeElement):
        factory_keyword = "TanhFrictionBench"

        def __post_init__(self):
            self.N0, self.eps = float(self.data["N0"]), float(self.data["eps"])

        def __flag_update__(self):
            self.flag_nonlinear = True
            self.flag_AFT = True

        def adim(self, lc, wc):
            raise NotImplementedError("TanhFrictionBench: run pyHarm without adimensionalisation")

        def _relative(self):
            return self.Pdir[0] @ (self.Pslave - self.Pmaster)      # harmonics of u from the element's dofs

        def evalResidual(self, xg, om):
            P = self._relative()
            v = (om * self.nabla @ (P @ xg[self.indices])) @ self.D["ft"]
            self.R = P.T @ ((self.N0 * np.tanh(v / self.eps)) @ self.D["tf"])
            return self.R

        def evalJacobian(self, xg, om):
            P = self._relative()
            du = self.nabla @ (P @ xg[self.indices])                # harmonics of u' / om
            v = om * du @ self.D["ft"]
            slope = self.N0 / self.eps / np.cosh(v / self.eps) ** 2  # d force / d v at the samples
            dv = om * (self.D["ft"].T @ self.nabla)                 # d v(t_i) / d harmonics of u
            self.J = P.T @ (self.D["tf"].T @ (slope[:, None] * dv)) @ P
            self.dJdom = (P.T @ ((slope * (du @ self.D["ft"])) @ self.D["tf"]))[:, None]
            return self.J, self.dJdom

    return TanhFriction


def pyharm_input(data, case, harmonics, ds, n_t):
    """pyHarm's input dictionary: the beam as a substructure of matrices (two dofs a node:
    deflection, slope), the contact (the damper, or pyHarm's ``CubicSpring``) and the forcing on
    the deflection (direction 0) of the mid-span and tip nodes, to the ground; the frequency
    response over ``W_RANGE``."""
    n_nodes = data["n_dof"] // 2
    c = CASES[case]
    contact = (dict(type="TanhFrictionBench", N0=c["FN"], eps=c["eps"]) if case == "friction"
               else dict(type="CubicSpring", k=c["k3"]))
    return {
        "system": {"type": "Base", "nh": harmonics, "nti": n_t},
        "substructures": {"beam": {"matrix": {"M": data["M"], "K": data["K"], "C": data["C"]}, "ndofs": 2}},
        "connectors": {
            "contact": dict(contact, connect={"beam": [data["mid"] // 2]}, dirs=[0]),
            "load": {"type": "CosinusForcing", "connect": {"beam": [n_nodes - 1]}, "dirs": [0], "amp": c["F0"]},
        },
        "analysis": {"frf": {"study": "frf", "puls_inf": W_RANGE[0], "puls_sup": W_RANGE[1],
                             "ds0": ds, "ds_max": ds, "ds_min": 1e-6, "solver": "NewtonRaphson",
                             "verbose": False, "predictor_options": {"verbose": False, "bifurcation_detect": False}}},
    }


def pyharm_frf(Maestro, data, case, harmonics, ds):
    """The whole frequency response in pyHarm, timed from the input: ``Maestro`` (assembly),
    ``operate``, the tip amplitudes and the peak.  ``nti`` = frictionkit's sample count at the
    same H (128 up to H = 30, pyHarm's default too)."""
    from frictionkit.runtime.discretizations import default_n_t
    n_t = default_n_t(harmonics, True)
    inp = pyharm_input(data, case, harmonics, ds, n_t)
    logging.disable(logging.CRITICAL)      # pyHarm logs every step at INFO
    try:
        t0 = _clock()
        mae = Maestro(inp)
        assembly = _since(t0)["cpu_s"]
        mae.operate()
        sols = [s for s in mae.nls["frf"].SolList if s.flag_accepted]
        edf = mae.system.expl_dofs
        tip = edf[(edf["sub"] == "beam") & (edf["node_num"] == data["n_dof"] // 2 - 1) & (edf["dof_num"] == 0)
                  & (edf["harm"] == 1)].index
        W = np.array([s.x[-1] for s in sols])
        A = np.array([np.linalg.norm(s.x[tip]) for s in sols])
        peak = peak_of(W, A)
        out = _since(t0)
    finally:
        logging.disable(logging.NOTSET)
    out.update(assembly_cpu_s=assembly, harmonics=harmonics, ds=ds, n_t=n_t, unknowns=int(mae.system.ndofs_solve) + 1,
               points=len(sols), rejected=len(mae.nls["frf"].SolList) - len(sols),
               end=float(W[-1]), peak=peak)
    return out


def pyharm_jacobian_check(Maestro, element, data):
    """The element's Jacobian against central differences of its residual at a random state
    (relative difference): the exact Jacobian given to pyHarm is right."""
    rng = np.random.default_rng(1)
    logging.disable(logging.CRITICAL)
    try:
        mae = Maestro(pyharm_input(data, "friction", 5, 0.1, 128))
    finally:
        logging.disable(logging.NOTSET)
    el = next(e for e in mae.system.LE if isinstance(e, element))
    x = 0.01 * rng.standard_normal(mae.system.ndofs + 1)
    om = 50.0
    J, dJdom = el.evalJacobian(x, om)
    h = 1e-7
    Jfd = np.zeros_like(J)
    for k, i in enumerate(el.indices):
        xp, xm = x.copy(), x.copy()
        xp[i] += h
        xm[i] -= h
        Jfd[:, k] = (el.evalResidual(xp, om) - el.evalResidual(xm, om)) / (2 * h)
    dom = (el.evalResidual(x, om + 1e-5) - el.evalResidual(x, om - 1e-5)) / 2e-5
    return dict(dx=float(np.max(np.abs(J - Jfd)) / np.max(np.abs(J))),
                domega=float(np.max(np.abs(dJdom[:, 0] - dom)) / np.max(np.abs(dom))))


def _cheapest(scan, ref, target):
    """The scan entry of least CPU whose peak meets ``target`` in frequency and amplitude."""
    ok = [r for r in scan if r["peak"] is not None and max(_peak_errors(r["peak"], ref)) <= target]
    return min(ok, key=lambda r: r["cpu_s"]) if ok else None


def beam_case(case, data, Maestro):
    """One contact of part 1: the reference, each code's accuracy grid, then the cheapest setting
    of each per target timed over alternating rounds."""
    from frictionkit.runtime import load_model
    spec = beam_spec(data, case)
    # builds the compiled port now (a first load would defer it to the second), cached for the rounds
    model = load_model(spec, continuation="W", backend="cython")
    out = dict(parameters=CASES[case],
               structure_check=dict(compliance_rel_diff=structure_check(model, data),
                                    retained=model.structure.basis.info.get("retained"),
                                    static=model.structure.basis.info.get("static")))
    ref = reference_peak(spec, data, case)
    out["reference"] = ref
    ref_peak = (ref["W"], ref["A"])
    if Maestro is not None:
        pyharm_frf(Maestro, data, case, 3, 0.4)           # numba kernels compiled/loaded in this process

    def with_errors(r):
        eW, eA = _peak_errors(r["peak"], ref_peak)
        return dict(r, peak_rel_err=dict(W=eW, A=eA))

    fk_scan = [with_errors(frictionkit_frf(spec, H, p)) for H in HARMONICS for p in FK_POINTS_PER_STEP]
    out["frictionkit_scan"] = fk_scan
    # both codes balance the same equations: at each target both take the fewest harmonics whose
    # truncation error is below half the target, then frictionkit the cheapest points_per_step
    # and pyHarm the largest ds (halved from 0.4) whose peak meets the target
    trunc = ref["truncation_error"]
    chosen = {t: next((H for H in HARMONICS if max(trunc[str(H)].values()) <= t / 2), None) for t in TARGETS}
    ph_scan = {}
    if Maestro is not None:
        for target in TARGETS:
            H = chosen[target]
            for ds in PH_STEPS if H is not None else ():
                if (H, ds) not in ph_scan:
                    try:
                        ph_scan[H, ds] = with_errors(pyharm_frf(Maestro, data, case, H, ds))
                    except Exception as exc:      # a failed setting is recorded, not fatal
                        ph_scan[H, ds] = dict(harmonics=H, ds=ds, failed=f"{type(exc).__name__}: {exc}",
                                              peak=None, cpu_s=None)
                        break
                r = ph_scan[H, ds]
                if r["peak"] is not None and max(r["peak_rel_err"].values()) <= target:
                    break
        out["pyharm_scan"] = list(ph_scan.values())
    out["targets"] = {}
    for target in TARGETS:
        H = chosen[target]
        fk_best = _cheapest([r for r in fk_scan if r["harmonics"] == H], ref_peak, target)
        ph_best = _cheapest([r for r in ph_scan.values() if r.get("cpu_s") is not None and r["harmonics"] == H],
                            ref_peak, target)
        row = dict(harmonics=H,
                   frictionkit_setting=None if fk_best is None else dict(points_per_step=fk_best["points_per_step"]),
                   pyharm_setting=None if ph_best is None else dict(ds=ph_best["ds"]))
        if H is None:
            row["reason"] = f"no H of {HARMONICS} has a truncation error below {target / 2:g}"
        elif Maestro is not None and ph_best is None:
            row["pyharm_reason"] = f"no ds down to {PH_STEPS[-1]} reaches {target:g} at H = {H}: see pyharm_scan"
        fk_runs, ph_runs = [], []
        for _ in range(ROUNDS):                            # alternate the codes: the machine is shared
            if fk_best is not None:
                fk_runs.append(with_errors(frictionkit_frf(spec, fk_best["harmonics"], fk_best["points_per_step"])))
            if ph_best is not None:
                ph_runs.append(with_errors(pyharm_frf(Maestro, data, case, ph_best["harmonics"], ph_best["ds"])))
        for name, runs in (("frictionkit", fk_runs), ("pyharm", ph_runs)):
            if runs:
                row[name] = dict(cpu_s=_median([r["cpu_s"] for r in runs]), wall_s=_median([r["wall_s"] for r in runs]),
                                 per_round_cpu_s=[r["cpu_s"] for r in runs],
                                 **{k: runs[0][k] for k in runs[0] if k not in ("cpu_s", "wall_s")})
        if fk_runs and ph_runs:
            row["cpu_ratio_pyharm_to_frictionkit"] = row["pyharm"]["cpu_s"] / row["frictionkit"]["cpu_s"]
        out["targets"][f"{target:g}"] = row
    return out


def beam_comparison():
    """Part 1: the beam, then each contact of ``CASES``."""
    data = beam_data()
    Maestro, element, info = pyharm_peer()
    out = dict(model=dict(description=f"cantilever of examples/fe_beam_damper.py, {BEAM_ELEMENTS} elements "
                                      f"({data['n_dof']} dofs), Rayleigh damping {ZETA} at modes 1-2, "
                                      "a contact at mid-span to the ground, tip force F0 cos(W t)",
                          W_range=list(W_RANGE), rayleigh=list(data["rayleigh"]),
                          first_frequencies=data["frequencies"][:3].tolist()),
               pyharm=info, cases={})
    if Maestro is not None:
        out["pyharm"]["friction_element_jacobian_check"] = pyharm_jacobian_check(Maestro, element, data)
    for case in CASES:
        out["cases"][case] = beam_case(case, data, Maestro)
    return out


# ================================================================================================
# part 2: AUTO-07p (bifpy), the bowed string with N modes
# ================================================================================================
def string_model(n_modes):
    """frictionkit's loaded bowed string (examples/bowed_string.py with ``STRING_SET``) and its
    parameter values."""
    from examples.bowed_string import model
    from frictionkit.runtime import load_model
    spec = model(n_modes)
    values = {name: float(p.default) for name, p in spec.parameters.items()}
    values.update(STRING_SET)
    return load_model(spec, continuation="Vb", **STRING_SET), values


def auto_string_source(model, p):
    """The bifpy module of the string's 2N modal equations, printed from frictionkit's loaded
    model (its modal frequencies, damping ratios and bow-point shapes, and the law's parameter
    values): ``q_j' = p_j``, ``p_j' = -w_j^2 q_j - 2 zeta_j w_j p_j + phi_j FN mu(v_bow - Vb)`` with
    the hyperbolic law of :func:`frictionkit.modelspec.laws.hyperbolic` (parameter values ``p``); states ``(q_1..q_N,
    p_1..p_N)`` as frictionkit's, PAR(1) = Vb; the start is steady sliding at ``VB_START``."""
    b = model.structure.basis
    w, zeta, phi = b.frequencies, b.damping, b.shapes[list(b.points).index("bow")]
    n = w.size
    a = np.hypot(VB_START, p["delta"])
    mu = (p["mud"] + (p["mus"] - p["mud"]) * p["v0"] / (p["v0"] + a)) * VB_START / a   # mu(-Vb) > 0
    x0 = np.concatenate([phi * p["FN"] * mu / w ** 2, np.zeros(n)])
    return f'''"""The bowed string with {n} modes for AUTO-07p (bifpy), printed by
benchmarks/bench_structure_peers.py from frictionkit's model.  States (q_1..q_{n}, p_1..p_{n}),
PAR(1) = Vb."""
import numpy

N = {n}
PHI = {phi.tolist()!r}
W2 = {(w * w).tolist()!r}
C = {(2 * zeta * w).tolist()!r}
FN, MUS, MUD, V0, DELTA = {p["FN"]!r}, {p["mus"]!r}, {p["mud"]!r}, {p["v0"]!r}, {p["delta"]!r}
X0 = {x0.tolist()!r}


def func(state, parameters):
    vr = sum(PHI[j] * state[N + j] for j in range(N)) - parameters[0]
    a = numpy.sqrt(vr * vr + DELTA * DELTA)
    force = -FN * (MUD + (MUS - MUD) * V0 / (V0 + a)) * vr / a
    return ([state[N + j] for j in range(N)]
            + [-W2[j] * state[j] - C[j] * state[N + j] + PHI[j] * force for j in range(N)])


def stpnt(state, parameters, t):
    for i in range(2 * N):
        state[i] = X0[i]
    parameters[0] = {VB_START!r}
'''


def _import_path(path):
    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def auto_module_check(mod, model, n_samples=100, seed=0):
    """Largest relative difference of the module's ``func`` from frictionkit's ``model.rhs`` on
    random states and bow speeds, and the start's residual (steady sliding)."""
    rng = np.random.default_rng(seed)
    err = 0.0
    for _ in range(n_samples):
        x = rng.standard_normal(model.n) * np.r_[np.full(model.n // 2, 1e-6), np.full(model.n // 2, 0.05)]
        vb = rng.uniform(VB_STOP, VB_START)
        ref = np.asarray(model.rhs(0.0, x, vb), dtype=float)
        err = max(err, float(np.max(np.abs(np.asarray(mod.func(x, [vb]), dtype=float) - ref)) / np.max(np.abs(ref))))
    start = np.asarray(model.rhs(0.0, np.asarray(mod.X0), VB_START), dtype=float)
    return dict(func_rel_err=err, start_residual=float(np.max(np.abs(start))))


def auto_job(module_path):
    """One whole AUTO job (run in a process of its own): import the model, equilibria from
    ``VB_START`` to ``VB_STOP`` (Hopf points), then the periodic orbits from the first Hopf
    point, both transpiled and compiled by bifpy's native path; returns what was found."""
    from bifpy import auto
    from bifpy.results import PointType
    mod = _import_path(module_path)
    ndim = 2 * mod.N
    out = {}
    eq_settings = dict(EQ_SETTINGS, ips=auto.IPS_EQUILIBRIUM, ndim=ndim, jac=0, ds=-0.01, dsmax=0.002, nmx=2000,
                       rl0=VB_STOP, rl1=VB_START)
    t0 = _clock()
    eq = auto.run(mod.func, mod.stpnt, eq_settings, icu=[1], keep_output=True, transpile=True)
    pts = [p for b in eq.branches for p in b.points]
    hopf = [p for p in pts if p.point_type == PointType.HOPF_BIFURCATION]
    out["equilibria"] = dict(**_since(t0), auto_reported_s=_auto_total_time(eq), points=len(pts),
                             hopf=[float(h.parameters[0]) for h in hopf])
    shutil.rmtree(eq.output_directory, ignore_errors=True)
    if not hopf:
        return dict(out, failed="AUTO found no Hopf point on the equilibria")
    po_settings = dict(PO_SETTINGS, ips=auto.IPS_PERIODIC_ORBIT, ndim=ndim, jac=0, ntst=AUTO_NTST,
                       rl0=VB_STOP, rl1=VB_START)
    t0 = _clock()
    po = auto.restart(mod.func, po_settings, restart_point=hopf[0], icu=[1, auto.PERIOD_INDEX],
                      isw=auto.ISW_HOPF_TO_PERIODIC_ORBIT, source_ips=auto.IPS_EQUILIBRIUM, keep_output=True,
                      transpile=True, stop=["BP1"], uzr={1: [VB_PROBE]})
    pts = [p for b in po.branches for p in b.points]
    special = [[p.point_type.name, float(p.parameters[0]), float(p.parameters[1])] for p in pts
               if p.point_type not in (PointType.REGULAR,)]
    probe = [p for p in pts if p.point_type.name.startswith("USER")]
    out["periodic"] = dict(**_since(t0), auto_reported_s=_auto_total_time(po), ntst=AUTO_NTST, ncol=PO_SETTINGS["ncol"],
                           points=int(pts[-1].point_number), special=special,
                           end=dict(type=pts[-1].point_type.name, param=float(pts[-1].parameters[0])),
                           start_hopf=float(hopf[0].parameters[0]))
    if probe and probe[0].periodic_orbit is not None:
        orbit = np.asarray(probe[0].periodic_orbit.state)
        v_bow = orbit[:, mod.N:] @ np.asarray(mod.PHI)
        out["periodic"]["probe"] = dict(param=float(probe[0].parameters[0]), period=float(probe[0].parameters[1]),
                                        v_bow_ptp=float(v_bow.max() - v_bow.min()), mesh_points=int(orbit.shape[0]))
    shutil.rmtree(po.output_directory, ignore_errors=True)
    return out


def _child_cpu(cmd, env, timeout=7200):
    """Run ``cmd``; its CPU time (user + system, its children included) and wall time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return r, dict(cpu_s=cpu, wall_s=wall)


def _env(**extra):
    return dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MPLBACKEND="Agg",
                PYTHONPATH=str(ROOT), **extra)


def auto_round(module_path):
    r, times = _child_cpu([sys.executable, __file__, "--auto-job", str(module_path)], _env())
    if r.returncode:
        last = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit status {r.returncode}"
        return dict(times, failed=f"AUTO job failed: {last}")
    return dict(times, **json.loads(r.stdout.strip().splitlines()[-1]))


def frictionkit_cli_round(n_modes, cache, out_path):
    """The whole ``frictionkit continue`` process for the string (CPU with its children)."""
    cmd = [str(Path(sys.executable).with_name("frictionkit")), "continue", str(ROOT / "examples" / "bowed_string.py"),
           "--param", "Vb", "--start", str(VB_START), "--stop", str(VB_STOP),
           "--set", *[f"{k}={v}" for k, v in STRING_SET.items()],
           "--from-hopf", "1", "-H", str(STRING_HARMONICS), "-q", "--out", str(out_path)]
    r, times = _child_cpu(cmd, _env(FK_BOWED_MODES=str(n_modes), FRICTIONKIT_CACHE=str(cache)))
    if r.returncode:
        return dict(times, failed=f"frictionkit continue failed: {r.stderr.strip()[-500:]}")
    return times


def cli_branch_summary(path):
    """What the command computed, read back from its output file."""
    from frictionkit.runtime.results._branch import load_run
    eq, po = load_run(path)[:2]
    return dict(hopf=[float(s.param) for s in eq.special_points("hopf")],
                periodic=dict(points=len(po), steps=po.counters.get("steps"), harmonics=po.harmonics, status=po.status,
                              start=float(po.param[0]), end=float(po.param[-1]),
                              special=[[s.kind, float(s.param)] for s in po.special_points()]))


def frictionkit_probe(model):
    """The command's computation by the Python API (same defaults), and the orbit at
    ``VB_PROBE`` corrected by Newton at that bow speed: period and bow velocity's peak-to-peak."""
    from frictionkit.runtime import equilibrium_branch, periodic_branch, periodic_start_from_hopf
    from frictionkit.runtime.engine._newton import correct
    eq = equilibrium_branch(model, VB_START, VB_STOP)
    hopf = eq.special_points("hopf")[0]
    disc, Z, d = periodic_start_from_hopf(model, hopf, harmonics=STRING_HARMONICS)
    br = periodic_branch(disc, Z, VB_STOP, VB_START, d)
    Zs = br.solutions[int(np.argmin(np.abs(br.param - VB_PROBE)))].copy()
    e = np.zeros(disc.size)
    e[-1] = 1.0
    Zs[-1] = VB_PROBE
    Zc, _ = correct(disc, Zs, e, VB_PROBE, xtol=1e-13)
    u = disc.unpack(Zc)
    v_bow = u["samples"](4096)[0]
    return dict(start_hopf=float(hopf.param), end=float(br.param[-1]), status=br.status,
                probe=dict(param=VB_PROBE, period=float(2 * np.pi / u["omega"]),
                           v_bow_ptp=float(v_bow.max() - v_bow.min())))


def auto_peer():
    """bifpy and gfortran, as ``bench_auto.auto_peer`` finds them: ``(ok, info)``."""
    from benchmarks.bench_auto import auto_peer as find
    auto, info = find()
    if auto is not None and not info.get("native_path"):
        return False, dict(info, available=False, reason="gfortran not on PATH: AUTO's native path (transpiled "
                                                          "model) is what is compared; apt-get install gfortran")
    return auto is not None, info


def string_comparison():
    """Part 2: for each N, the frictionkit command (warm and cold cache) and the AUTO job in
    alternating rounds, then the agreement."""
    ok, info = auto_peer()
    out = dict(auto07p=info, command=("frictionkit continue examples/bowed_string.py --param Vb --start "
                                      f"{VB_START} --stop {VB_STOP} --set "
                                      + " ".join(f"{k}={v}" for k, v in STRING_SET.items())
                                      + f" --from-hopf 1 -H {STRING_HARMONICS}  (FK_BOWED_MODES=N)"),
               cases={})
    tmp = Path(tempfile.mkdtemp(prefix="frictionkit-peers-"))
    try:
        for n in STRING_MODES:
            model, values = string_model(n)
            case = dict(states=int(model.n))
            warm = tmp / "warm-cache"
            first = frictionkit_cli_round(n, warm, tmp / f"string{n}.h5")      # fills the warm cache:
            case["frictionkit_first_run"] = first
            # the first load runs the NumPy port, the second builds the compiled one
            case["frictionkit_second_run"] = frictionkit_cli_round(n, warm, tmp / f"string{n}.h5")
            case["frictionkit_command_result"] = (cli_branch_summary(tmp / f"string{n}.h5")
                                                  if "failed" not in first else None)
            module_path = None
            if ok:
                module_path = tmp / f"string{n}_auto.py"
                module_path.write_text(auto_string_source(model, values))
                case["auto_model_check"] = auto_module_check(_import_path(module_path), model)
            fk_warm, fk_cold, au = [], [], []
            for k in range(AUTO_ROUNDS):                 # alternate the codes: the machine is shared
                fk_warm.append(frictionkit_cli_round(n, warm, tmp / f"string{n}.h5"))
                if module_path is not None:
                    au.append(auto_round(module_path))
                fk_cold.append(frictionkit_cli_round(n, tmp / f"cold-{n}-{k}", tmp / f"string{n}.h5"))
                shutil.rmtree(tmp / f"cold-{n}-{k}", ignore_errors=True)
            case["frictionkit_warm"] = dict(cpu_s=_median([r["cpu_s"] for r in fk_warm if "failed" not in r]),
                                            per_round_cpu_s=[r["cpu_s"] for r in fk_warm],
                                            failed=[r["failed"] for r in fk_warm if "failed" in r])
            case["frictionkit_cold"] = dict(cpu_s=_median([r["cpu_s"] for r in fk_cold if "failed" not in r]),
                                            per_round_cpu_s=[r["cpu_s"] for r in fk_cold],
                                            failed=[r["failed"] for r in fk_cold if "failed" in r])
            case["frictionkit_python"] = frictionkit_probe(model)
            if au:
                good = [r for r in au if "failed" not in r]
                case["auto07p"] = dict(cpu_s=_median([r["cpu_s"] for r in good]),
                                       wall_s=_median([r["wall_s"] for r in good]),
                                       per_round_cpu_s=[r["cpu_s"] for r in au],
                                       solver_alone_s=_median([r["equilibria"]["auto_reported_s"]
                                                               + r["periodic"]["auto_reported_s"] for r in good
                                                               if "periodic" in r]),
                                       failed=[r["failed"] for r in au if "failed" in r],
                                       first_round={k: v for k, v in (good or au)[0].items()
                                                    if k not in ("cpu_s", "wall_s")})
                if good and case["frictionkit_warm"]["cpu_s"]:
                    a = case["auto07p"]["cpu_s"]
                    case["cpu_ratio_auto_to_frictionkit_warm"] = a / case["frictionkit_warm"]["cpu_s"]
                    case["cpu_ratio_auto_to_frictionkit_cold"] = a / case["frictionkit_cold"]["cpu_s"]
                    case["agreement"] = _agreement(case["frictionkit_python"], good[0])
            out["cases"][str(n)] = case
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _agreement(fk, au):
    """Relative differences of the common quantities: the Hopf point the branch starts from,
    and the period and bow velocity's peak-to-peak at ``VB_PROBE``."""
    out = dict(start_hopf=dict(frictionkit=fk["start_hopf"], auto=au["periodic"]["start_hopf"],
                               rel_diff=abs(fk["start_hopf"] - au["periodic"]["start_hopf"]) / fk["start_hopf"]))
    if "probe" in au["periodic"]:
        for q in ("period", "v_bow_ptp"):
            a, f = au["periodic"]["probe"][q], fk["probe"][q]
            out[q] = dict(frictionkit=f, auto=a, rel_diff=abs(a - f) / abs(f))
    out["end"] = dict(frictionkit=fk["end"], frictionkit_status=fk["status"], auto=au["periodic"]["end"])
    return out


# ================================================================================================
def targets(beam, string):
    """Issue 24's targets, each ``[value, limit, met]``: pyHarm / frictionkit CPU at equal peak
    accuracy >= 3 (each accuracy target), AUTO / frictionkit whole process >= 10 (each N; warm
    cache, and cold reported too)."""
    rows = {}
    for case, res in (beam or {}).get("cases", {}).items():
        for t, row in res.get("targets", {}).items():
            rows[f"pyharm_{case}_cpu_ratio_at_{t}"] = row.get("cpu_ratio_pyharm_to_frictionkit")
    for n, case in (string or {}).get("cases", {}).items():
        rows[f"auto_cpu_ratio_N{n}_warm"] = case.get("cpu_ratio_auto_to_frictionkit_warm")
        rows[f"auto_cpu_ratio_N{n}_cold"] = case.get("cpu_ratio_auto_to_frictionkit_cold")
    limit = {k: (3.0 if k.startswith("pyharm") else 10.0) for k in rows}
    return {k: [v, limit[k], v is not None and v >= limit[k]] for k, v in rows.items()}


def main() -> dict:
    from benchmarks.bench_auto import _one_blas_thread
    _one_blas_thread()
    previous = {}
    path = Path(__file__).resolve().parent / "results" / "structure_peers.json"
    if path.is_file() and (set(PARTS) != {"beam", "string"} or set(STRING_MODES) != {16, 32}):
        previous = json.loads(path.read_text())
    beam = beam_comparison() if "beam" in PARTS else dict(previous.get("beam", {}), rerun=False)
    string = string_comparison() if "string" in PARTS else dict(previous.get("string", {}), rerun=False)
    if "string" in PARTS:
        for n, case in previous.get("string", {}).get("cases", {}).items():
            if n not in string["cases"]:
                string["cases"][n] = dict(case, rerun=False)
    return dict(rounds=dict(beam=ROUNDS, string=AUTO_ROUNDS), beam=beam, string=string,
                targets=targets(beam, string))


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--auto-job":
        print(json.dumps(auto_job(sys.argv[2])))
    else:
        res = main()
        text = json.dumps(res, indent=2, default=str)
        print(text)
        out_dir = Path(__file__).resolve().parent / "results"
        out_dir.mkdir(exist_ok=True)
        fd, tmp_path = tempfile.mkstemp(dir=out_dir, suffix=".json")
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp_path, out_dir / "structure_peers.json")
