"""Structures (issue 24, DESIGN §6): cost against the structure's size.

* The bowed string of ``examples/bowed_string.py`` with N = 4, 16, 64, 256 modes, H = 48: the
  equilibria and Hopf points, then the periodic branch from the highest Hopf point (bow speed
  from 0.6 down to 0.05 m/s, FN = 0.02 N) by the condensed harmonic balance (ANM), without and
  with stability; CPU of each phase, steps, factorizations, unknowns, and the process's maximum
  resident memory; the monodromy of the branch's middle orbit stepped and in closed form, and
  its eigenvalues; the monodromy by chunks of steps (the default from 64 states on), and the
  leading multipliers by ARPACK on the monodromy applied to vectors (``MonodromyOperator``).
* Why the branch's step count is not flat in N (the cost per step is): the same branches with
  a wider regularization of the law (``delta`` = 1e-2 m/s instead of 2e-3, N = 4, 16, 64,
  without stability).  The condensed unknowns are the same 2H + 3 at every N; the steps are
  set by the branch itself: the orbit's relative velocity comes within ``delta`` of sticking,
  where the series' radius is that of the law's complex singularity, and the richer bow-point
  waveform of more modes does so more often (a Newton predictor-corrector, with its own step
  control, takes 170 and 471 steps at N = 4 and 16).
* The same string written mode by mode in sympy (recognised as linear but for its contact,
  ``codegen/structure.py``), N = 4, 32, 128: the whole ``frictionkit continue`` process from a
  cold cache (codegen, build, equilibria, the branch from the first Hopf point, defaults).
* The clamped beam of ``examples/fe_beam_damper.py`` with 5000 elements (10^4 degrees of
  freedom): CPU of the reduction (modes below 15000 rad/s plus the static correction at the two
  loaded points), and the CPU per step of its frequency response (ANM, forcing frequency 30 to
  80 rad/s) against the same damper on a structure of its first ten modes given as modal data.

Each case runs in a process of its own (its own maximum RSS), rounds alternate between the
cases, and the medians of ``ROUNDS`` rounds are reported (3; the environment variable
``FK_BENCH_ROUNDS`` sets another count, recorded as ``rounds``).  The cache is warm (one run before
the rounds): codegen and the compiled port module are not in these figures (see bench_codegen).
"""
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROUNDS = int(os.environ.get("FK_BENCH_ROUNDS", 3))
MODES = (4, 16, 64, 256)
WIDE_DELTA = 1e-2
WIDE_DELTA_MODES = (4, 16, 64)
SYMBOLIC_MODES = (4, 32, 128)


def _bow(n_modes, delta=None):
    import numpy as np
    sys.path.insert(0, str(ROOT))
    from examples.bowed_string import model
    from frictionkit.runtime import equilibrium_branch, load_model, periodic_branch, periodic_start_from_hopf
    out = {}
    t = time.process_time()
    m = load_model(model(n_modes), continuation="Vb", FN=0.02, **({} if delta is None else {"delta": delta}))
    out["load_s"] = time.process_time() - t
    t = time.process_time()
    eq = equilibrium_branch(m, 0.6, 0.05)
    out["equilibria_s"] = time.process_time() - t
    hopf = max(eq.special_points("hopf"), key=lambda h: h.param)
    t = time.process_time()
    disc, Z, d = periodic_start_from_hopf(m, hopf, harmonics=48)
    out["start_s"] = time.process_time() - t
    out["unknowns"] = int(disc.size)
    for stab in ((False,) if delta is not None else (False, True)):
        t = time.process_time()
        br = periodic_branch(disc, Z, 0.05, 0.6, d, options=dict(stability=stab))
        key = "with_stability" if stab else "without_stability"
        out[f"branch_{key}_s"] = time.process_time() - t
        out[f"steps_{key}"] = int(br.counters["steps"])
        out[f"factorizations_{key}"] = int(br.counters["factorizations"])
    out["hopf_omega"] = float(hopf.omega)
    out["branch_status"] = br.status
    if delta is not None:
        return out
    # one orbit's monodromy (the middle of the branch): the integrator stepped one step at a
    # time against its closed form (the default from 256 states), and the eigenvalues
    Zm = br.solutions[len(br.solutions) // 2]
    for method in ("steps", "closed", "chunks"):
        t = time.process_time()
        M = disc.monodromy(Zm, method=method)
        out[f"monodromy_{method}_s"] = time.process_time() - t
    t = time.process_time()
    np.linalg.eigvals(M)
    out["monodromy_eigenvalues_s"] = time.process_time() - t
    t = time.process_time()
    disc.multipliers_of(M)                 # the leading ones only, from 256 states on
    out["monodromy_multipliers_s"] = time.process_time() - t
    # the leading multipliers of the monodromy applied to vectors (never formed; the default
    # from MIN_STATES_OPERATOR states on): the operator's setup and ARPACK on its products
    from frictionkit.runtime.discretizations._structured_monodromy import MonodromyOperator, leading_multipliers
    t = time.process_time()
    leading_multipliers(MonodromyOperator(disc, Zm))
    out["monodromy_operator_multipliers_s"] = time.process_time() - t
    return out


def _beam(modal_copy):
    import numpy as np
    import sympy as sp
    sys.path.insert(0, str(ROOT))
    from examples.fe_beam_damper import model
    from frictionkit.modelspec import ModelSpec, Structure, laws
    from frictionkit.runtime import load_model, periodic_branch
    from frictionkit.runtime.discretizations._condensed import CondensedAFTDiscretization
    from frictionkit.runtime.engine._newton import correct
    out = {}
    t = time.process_time()
    beam = load_model(model(5000, cutoff=15000.0), continuation="W", eps=0.01)
    out["load_and_reduce_s"] = time.process_time() - t
    out["reduction_s"] = beam.structure.basis.info["seconds"]
    out["reduction"] = {k: v for k, v in beam.structure.basis.info.items() if k != "seconds"}
    if modal_copy:        # the same damper on the first ten modes, given as modal data
        b = beam.structure.basis
        m = ModelSpec("beam_modal10", "the beam's first ten modes, modal data", time_unit="s")
        W = m.forcing(m.parameter("W", 40.0))
        F0, FN, eps = m.parameter("F0", 1.0), m.parameter("FN", 0.5), m.parameter("eps", 0.01)
        pts = list(b.points)
        s = m.structure(Structure.modal(b.frequencies[:10], b.damping[:10],
                                        {p: b.shapes[pts.index(p), :10] for p in pts}))
        s.force("mid", FN * m.friction("damper", laws.coulomb_tanh, s.velocity("mid"), eps=eps))
        s.force("tip", F0 * sp.cos(W * m.t))
        beam = load_model(m, continuation="W")
    disc = CondensedAFTDiscretization(beam, 20)
    Z = disc.pack(np.zeros((disc.nv, disc.nh)), np.nan, 30.0)
    e = np.zeros(disc.size)
    e[-1] = 1.0
    Z, _ = correct(disc, Z, e, 30.0, max_iter=60)
    t = time.process_time()
    br = periodic_branch(disc, Z, 30.0, 80.0, 1.0, options=dict(stability=False))
    out["branch_s"] = time.process_time() - t
    out["steps"] = int(br.counters["steps"])
    out["factorizations"] = int(br.counters["factorizations"])
    out["per_step_ms"] = 1e3 * out["branch_s"] / max(1, out["steps"])
    out["modes"] = int(beam.structure.m)
    return out


SYMBOLIC = """
import numpy as np
import sympy as sp
from frictionkit.modelspec import ModelSpec, laws

def model(n_modes={n}):
    k = np.arange(1, n_modes + 1)
    phi = np.sqrt(2 / (1.2e-3 * 0.33)) * np.sin(0.1 * np.pi * k)
    m = ModelSpec("symbolic_string_{n}", "bowed string written mode by mode", time_unit="s")
    Vb, FN = m.parameter("Vb", 0.3, unit="m/s"), m.parameter("FN", 0.02, unit="N")
    zeta, f1 = m.parameter("zeta", 0.003), m.parameter("f1", 196.0, unit="Hz")
    q, p = zip(*[m.second_order(f"q{{j}}", velocity=f"p{{j}}") for j in k])
    mu = m.friction("bow", laws.hyperbolic, sum(float(phi[j]) * p[j] for j in range(n_modes)) - Vb,
                    mus=0.8, mud=0.3, v0=0.1, delta=0.05)
    for j in range(n_modes):
        w = 2 * sp.pi * f1 * int(k[j])
        m.ode(p[j], -w**2 * q[j] - 2 * zeta * w * p[j] + float(phi[j]) * FN * mu)
    return m
"""


def _symbolic(n_modes):
    """The whole process from a cold cache: ``frictionkit continue`` of the symbolic string
    (codegen, build, equilibria, the branch from the first Hopf point, default options);
    CPU of the process and its children, and its maximum RSS."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"symbolic_string_{n_modes}.py"
        path.write_text(SYMBOLIC.format(n=n_modes))
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", FRICTIONKIT_CACHE=str(Path(tmp) / "cache"))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        r = subprocess.run([str(Path(sys.executable).with_name("frictionkit")), "continue", str(path), "--param", "Vb",
                            "--start", "0.6", "--stop", "0.05", "--from-hopf", "1", "-H", "48", "-q",
                            "--out", str(Path(tmp) / "out.h5")], capture_output=True, text=True, env=env)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if r.returncode:
            raise RuntimeError(r.stderr[-2000:])
    return {"cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "max_rss_mb": after.ru_maxrss / 1024}


def _case(name, arg):
    if name == "symbolic":
        return _symbolic(int(arg))
    res = (_bow(int(arg)) if name == "bow" else _bow(int(arg), WIDE_DELTA) if name == "bow_wide_delta"
           else _beam(arg == "modal"))
    res["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return res


def _run(name, arg):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, __file__, "--case", name, str(arg)], capture_output=True, text=True,
                       env=env, timeout=3600)
    if r.returncode:
        raise RuntimeError(f"case {name} {arg} failed:\n{r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    cases = [("bow", n) for n in MODES] + [("bow_wide_delta", n) for n in WIDE_DELTA_MODES] + \
        [("beam", "fe"), ("beam", "modal")] + [("symbolic", n) for n in SYMBOLIC_MODES]
    for c in cases:                      # warm the caches (codegen, builds): twice, since a
        if c[0] != "symbolic":           # structure's port is compiled at its second load (the
            _run(*c)                     # symbolic cases start from a cold cache each time)
            _run(*c)
    rounds = {c: [] for c in cases}
    for _ in range(ROUNDS):
        for c in cases:                  # alternate the cases within each round
            rounds[c].append(_run(*c))
    out = {"rounds": ROUNDS}
    for c, rs in rounds.items():
        med = {k: statistics.median(r[k] for r in rs) if isinstance(rs[0][k], (int, float)) else rs[0][k]
               for k in rs[0]}
        out[f"{c[0]}_{c[1]}"] = med
    base = out["bow_4"]
    out["branch_ratio_to_4_modes_without_stability"] = {
        n: out[f"bow_{n}"]["branch_without_stability_s"] / base["branch_without_stability_s"] for n in MODES}
    out["per_step_ratio_to_4_modes_without_stability"] = {
        n: (out[f"bow_{n}"]["branch_without_stability_s"] / out[f"bow_{n}"]["steps_without_stability"])
        / (base["branch_without_stability_s"] / base["steps_without_stability"]) for n in MODES}
    out["steps_without_stability"] = {n: out[f"bow_{n}"]["steps_without_stability"] for n in MODES}
    out["branch_ratio_to_4_modes_with_stability"] = {
        n: out[f"bow_{n}"]["branch_with_stability_s"] / base["branch_with_stability_s"] for n in MODES}
    wide = out[f"bow_wide_delta_{WIDE_DELTA_MODES[0]}"]
    out["wide_delta_steps"] = {n: out[f"bow_wide_delta_{n}"]["steps_without_stability"] for n in WIDE_DELTA_MODES}
    out["wide_delta_branch_ratio_to_4_modes"] = {
        n: out[f"bow_wide_delta_{n}"]["branch_without_stability_s"] / wide["branch_without_stability_s"]
        for n in WIDE_DELTA_MODES}
    out["beam_per_step_ratio_fe_to_10_modes"] = out["beam_fe"]["per_step_ms"] / out["beam_modal"]["per_step_ms"]
    out["symbolic_whole_process_ratio_to_4_modes"] = {
        n: out[f"symbolic_{n}"]["cpu_s"] / out["symbolic_4"]["cpu_s"] for n in SYMBOLIC_MODES}
    return out


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--case":
        print(json.dumps(_case(sys.argv[2], sys.argv[3])))
    else:
        print(json.dumps(main(), indent=2))
