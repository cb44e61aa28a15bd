"""Peer benchmark (issue 3): the n = 10 belt branch by AUTO-07p (through ``bifpy``) and by
frictionkit, side by side in the same run: wall time, number of points, fold location.

The branch: seed 000 §4.2 (belt oscillator, eqs. 5-6, regularized law mu_n of eq. 2, n = 10,
F_N = 5 N), continued in the belt speed ``Vb`` from the first Hopf point B1 (Vb ~ 0.1417)
through the fold of cycles B2 (Vb ~ 10.2875) back to the second Hopf point B3 (Vb ~ 3.6556).

AUTO-07p side.  The model is written at run time, into a temporary directory, as the Python
module bifpy needs (``func``, ``stpnt`` and the exact Jacobians ``jac_equilibrium`` /
``jac_periodic``), printed by sympy from the very expressions of
``frictionkit.modelspec.zoo.belt`` (nothing typed by hand); before use it is checked against the
generated frictionkit model (``model.rhs`` / ``model.jac``).  Then AUTO's usual two runs:

1. equilibria, IPS = 1, ICP = [Vb], from the sliding equilibrium at Vb = 0.05 to 12: Hopf
   points (HB);
2. periodic orbits, IPS = 2, ISW = 1, restarted from the first HB label, ICP = [Vb, PAR(11)
   = period], NCOL = 4, NTST = 50, 100, 200 (fold convergence), stopped where the orbits
   shrink onto the equilibrium at B3, which AUTO marks either as a branch point (BP, located
   near B3) or as a second limit point (LP, the turn in Vb through zero amplitude, at B3):
   STOP = BP1, LP2.  The first LP is the fold B2.

Both runs use bifpy's native path (``transpile=True``: bifpy prints the module to Fortran,
gfortran compiles and links it against AUTO-07p, the executable runs); the reported wall time
includes that code generation and compilation (``auto_reported_s`` is AUTO's own "Total Time"
of the solver alone).  One extra periodic run at NTST = 100 goes through bifpy's interpreted
path (Python callbacks through ctypes), for reference.

frictionkit side: ``load_model`` (generated module), ``equilibrium_branch`` (Hopf points),
``periodic_start_from_hopf`` with H = 40 and the ANM ``periodic_branch`` (the ``frictionkit
demo`` branch), once with the default stability analysis (AUTO computes Floquet multipliers
too, ISP = 2) and once with ``stability=False``; then the fold refined with
``locate_fold_near`` at H = 60 and 100 (as ``bench_runtime.bench_fold`` does).  Wall times
compared: equilibria + periodic branch, each tool; the ratio is frictionkit over AUTO (native,
NTST = 100).  CPU time counts finished child processes too (gfortran, the AUTO executable,
bifpy's worker), so it is the steadier number on a loaded machine.  One run on one (shared)
machine: compare ratios, not absolute times.

If bifpy (or gfortran for the native path) is missing or AUTO fails, the ``auto07p`` entry says
so (``{"available": False, "reason": ...}``) and the frictionkit half still runs.  The peer is
installed by ``make bench-peers`` (benchmarks only, never a runtime dependency).

Run standalone: ``python benchmarks/bench_auto.py`` writes ``benchmarks/results/auto.json``.
"""
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

N_REG, FN = 10, 5.0                 # seed 000 §4.2: n = 10, F_N = 5 N
VB_START, VB_STOP = 0.05, 12.0      # equilibrium range (both Hopf points inside)
NTSTS = (50, 100, 200)              # AUTO mesh intervals (fold convergence)
NCOL = 4
HARMONICS = 40                      # frictionkit branch (the demo)
FOLD_HARMONICS = (60, 100)          # frictionkit fold refinement


def _clock():
    """(wall, cpu) now; cpu counts this process and its finished children (gfortran, the AUTO
    executable, bifpy's worker process), so it is robust to other load on a shared machine."""
    t = os.times()
    return time.perf_counter(), t.user + t.system + t.children_user + t.children_system


def _since(start):
    wall, cpu = _clock()
    return dict(wall_s=wall - start[0], cpu_s=cpu - start[1])


def _one_blas_thread():
    """Limit OpenBLAS to one thread (shared 2-core machines): bench_runtime's helper."""
    from benchmarks.bench_runtime import _one_blas_thread as one
    one()


# --------------------------------------------------------------------------------------------
# the model in the form bifpy needs, generated from the frictionkit ModelSpec
# --------------------------------------------------------------------------------------------
def auto_model_source(n=N_REG, FN=FN, vb0=VB_START):
    """Source of the bifpy model module of the belt oscillator, printed from the ModelSpec.

    Seed 000 eqs. (5)-(6) with the regularized law mu_n of eq. (2) (``modelspec.zoo.belt``,
    ``modelspec.laws.regularized``): state (y, v), PAR(1) = Vb, every other parameter a
    module constant (defaults of seed 000 Appendix B, with ``n`` and ``FN`` given).  The
    Jacobians are sympy derivatives of the same expressions; the starting point is the
    sliding equilibrium at ``vb0`` (v = 0, the second equation is linear in y).

    Returns
    -------
    str
        Python source defining ``func``, ``jac_equilibrium`` (ICP = [1]), ``jac_periodic``
        (ICP = [1, 11]; the period column is zero, AUTO scales time itself) and ``stpnt``.
    """
    import sympy as sp
    from sympy.printing.numpy import NumPyPrinter
    from frictionkit.modelspec import zoo

    spec = zoo.belt()
    spec.validate("Vb")
    values = {name: float(p.default) for name, p in spec.parameters.items()}
    values.update(n=float(n), FN=float(FN))
    if set(values) & {"numpy", "state", "parameters", "t", "Vb_"}:
        raise ValueError("belt parameter names clash with the generated module's names")
    vb = spec.parameters["Vb"].symbol
    states = list(spec.states)
    f = [spec.expand_definitions(spec.odes[s]) / spec.masses.get(s, 1) for s in states]
    dfdx = sp.Matrix(f).jacobian(states)
    dfdvb = [sp.diff(e, vb) for e in f]
    pr = NumPyPrinter({"fully_qualified_modules": True})
    numeric = {p.symbol: values[name] for name, p in spec.parameters.items() if name != "Vb"}
    # sliding equilibrium at vb0: v = 0, y from the (linear in y) second equation
    f_eq = [e.xreplace(numeric).subs({states[1]: 0, vb: vb0}) for e in f]
    y0 = sp.solve(f_eq[1], states[0])
    if len(y0) != 1 or f_eq[0] != 0:
        raise ValueError("unexpected belt model: no unique sliding equilibrium with v = 0")
    head = ["    " + f"{s.name} = state[{i}]" for i, s in enumerate(states)] + ["    Vb = parameters[0]"]
    row = lambda exprs: "[" + ", ".join(pr.doprint(e) for e in exprs) + "]"   # noqa: E731
    mat = lambda M: "[" + ", ".join(row(M.row(i)) for i in range(M.rows)) + "]"   # noqa: E731
    lines = ['"""Belt oscillator (seed 000 eqs. 5-6, regularized law eq. 2) as a bifpy model.',
             "",
             "Generated at run time by benchmarks/bench_auto.py from frictionkit.modelspec.zoo.belt",
             f"(n = {n:g}, FN = {FN:g}); state (y, v), PAR(1) = Vb, PAR(11) = period.",
             '"""', "import numpy", ""]
    lines += [f"{name} = {value!r}" for name, value in values.items() if name != "Vb"]
    lines += ["", "", "def func(state, parameters):", *head, f"    return {row(f)}", "", "",
              "def jac_equilibrium(state, parameters):", *head,
              f"    return {mat(dfdx)}, [{', '.join('[' + pr.doprint(e) + ']' for e in dfdvb)}]", "", "",
              "def jac_periodic(state, parameters):", *head,
              f"    return {mat(dfdx)}, [{', '.join('[' + pr.doprint(e) + ', 0.0]' for e in dfdvb)}]", "", "",
              "def stpnt(state, parameters, t):",
              f"    state[0] = {float(y0[0])!r}", "    state[1] = 0.0", f"    parameters[0] = {float(vb0)!r}", ""]
    return "\n".join(lines)


def write_auto_model(directory, **kw):
    """Write :func:`auto_model_source` to ``directory/belt_auto.py`` and import it."""
    path = Path(directory) / "belt_auto.py"
    path.write_text(auto_model_source(**kw))
    spec = importlib.util.spec_from_file_location("belt_auto", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check_against_model(mod, model, n_samples=200, seed=0):
    """Largest relative differences of ``func`` / ``jac_equilibrium`` against the generated
    frictionkit model on random states and belt speeds: ``func`` and df/dx against
    ``model.rhs`` and ``model.jac``, df/dVb against a central difference of ``model.rhs``."""
    rng = np.random.default_rng(seed)
    err_f = err_j = err_p = 0.0
    for _ in range(n_samples):
        x = np.array([rng.uniform(-1e-2, 1e-2), rng.uniform(-12.0, 12.0)])
        lam = rng.uniform(0.05, 12.0)
        par = np.zeros(36)
        par[0] = lam
        f_ref = np.asarray(model.rhs(0.0, x, lam), dtype=float)
        J_ref = np.asarray(model.jac(0.0, x, lam), dtype=float)
        f = np.asarray(mod.func(x, par), dtype=float)
        J, dp = (np.asarray(a, dtype=float) for a in mod.jac_equilibrium(x, par))
        h = 1e-6 * lam
        dp_ref = (np.asarray(model.rhs(0.0, x, lam + h)) - np.asarray(model.rhs(0.0, x, lam - h))) / (2 * h)
        err_f = max(err_f, float(np.max(np.abs(f - f_ref)) / np.max(np.abs(f_ref))))
        err_j = max(err_j, float(np.max(np.abs(J - J_ref)) / np.max(np.abs(J_ref))))
        err_p = max(err_p, float(np.max(np.abs(dp[:, 0] - dp_ref)) / np.max(np.abs(dp_ref))))
    return err_f, err_j, err_p


# --------------------------------------------------------------------------------------------
# AUTO-07p through bifpy
# --------------------------------------------------------------------------------------------
EQ_SETTINGS = dict(ndim=2, jac=1, nmx=200, npr=0, ds=0.01, dsmin=1e-5, dsmax=0.2,
                   rl0=0.0, rl1=VB_STOP, ilp=1, isp=1, epsl=1e-8, epsu=1e-8, epss=1e-7)
PO_SETTINGS = dict(ndim=2, jac=1, nmx=600, npr=0, ncol=NCOL, ds=0.01, dsmin=1e-5, dsmax=0.5,
                   rl0=0.0, rl1=30.0, ilp=1, isp=2, epsl=1e-8, epsu=1e-8, epss=1e-6)


def _auto_total_time(result):
    """AUTO's own "Total Time" (seconds) from the kept stdout.txt, or None."""
    if result.output_directory is None:
        return None
    path = Path(result.output_directory) / "stdout.txt"
    m = re.findall(r"Total Time\s+([0-9.Ee+-]+)", path.read_text()) if path.exists() else []
    return float(m[-1]) if m else None


def _discard(result):
    if result.output_directory is not None:
        shutil.rmtree(result.output_directory, ignore_errors=True)


def _auto_equilibria(auto, mod, native):
    from bifpy.results import PointType
    settings = dict(EQ_SETTINGS, ips=auto.IPS_EQUILIBRIUM)
    kw = dict(transpile=True) if native else {}
    t0 = _clock()
    res = auto.run(mod.func, mod.stpnt, settings, icu=[1], jac=mod.jac_equilibrium, keep_output=True, **kw)
    times = _since(t0)
    pts = [p for b in res.branches for p in b.points]
    hopf = [p for p in pts if p.point_type == PointType.HOPF_BIFURCATION]
    out = dict(**times, auto_reported_s=_auto_total_time(res), points=len(pts),
               hopf=[float(p.parameters[0]) for p in hopf])
    _discard(res)
    return out, hopf


def _auto_periodic(auto, mod, hopf, ntst, native):
    from bifpy.results import PointType
    settings = dict(PO_SETTINGS, ips=auto.IPS_PERIODIC_ORBIT, ntst=ntst)
    kw = dict(transpile=True) if native else {}
    t0 = _clock()
    res = auto.restart(mod.func, settings, restart_point=hopf, icu=[1, auto.PERIOD_INDEX],
                       isw=auto.ISW_HOPF_TO_PERIODIC_ORBIT, source_ips=auto.IPS_EQUILIBRIUM,
                       jac=mod.jac_periodic, stop=["BP1", "LP2"], keep_output=True, **kw)
    times = _since(t0)
    pts = [p for b in res.branches for p in b.points]
    i_folds = [i for i, p in enumerate(pts) if p.point_type == PointType.FOLD]
    last = pts[-1]
    out = dict(ntst=ntst, ncol=NCOL, **times, auto_reported_s=_auto_total_time(res),
               points=int(last.point_number),
               folds=[float(pts[i].parameters[0]) for i in i_folds],
               fold_period=[float(pts[i].periodic_orbit.period) for i in i_folds],
               stability_around_fold=[[pts[i - 1].stability.name, pts[i + 1].stability.name]
                                      for i in i_folds if 0 < i < len(pts) - 1],
               end=dict(type=last.point_type.name, Vb=float(last.parameters[0])))
    _discard(res)
    return out


def bench_auto07p(model):
    """AUTO-07p runs; ``{"available": False, "reason": ...}`` when the peer cannot run."""
    try:
        from bifpy import auto
        version = importlib.metadata.version("bifpy")
    except Exception as exc:          # ImportError, or a broken install (missing libbifpy.so)
        return {"available": False, "reason": f"bifpy not importable ({type(exc).__name__}: {exc}); "
                                              f"run `make bench-peers`"}
    native = shutil.which("gfortran") is not None
    out = {"available": True, "bifpy_version": version, "native_path": native}
    if native:
        run = subprocess.run(["gfortran", "--version"], capture_output=True, text=True)
        out["gfortran"] = (run.stdout.splitlines() or [""])[0]
    tmp = tempfile.mkdtemp(prefix="frictionkit-auto-")
    try:
        mod = write_auto_model(tmp)
        err_f, err_j, err_p = check_against_model(mod, model)
        out["model_check"] = dict(func_rel_err=err_f, jac_rel_err=err_j, dfdvb_vs_central_difference=err_p)
        if max(err_f, err_j) > 1e-12 or err_p > 1e-5:
            return {"available": False, "reason": f"generated AUTO model disagrees with model.rhs/jac "
                                                  f"(rel. errors {err_f:.2e}, {err_j:.2e}, {err_p:.2e})"}
        if not native:
            out["native_reason"] = "gfortran not on PATH: interpreted bifpy path only"
        eq, hopf = _auto_equilibria(auto, mod, native)
        out["equilibria"] = eq
        if not hopf:
            return {"available": False, "reason": "AUTO found no Hopf point on the equilibrium branch",
                    "equilibria": eq}
        key = "native" if native else "interpreted"
        out[key] = {f"ntst{nt}": _auto_periodic(auto, mod, hopf[0], nt, native) for nt in NTSTS}
        if native:
            out["interpreted"] = {"ntst100": _auto_periodic(auto, mod, hopf[0], 100, False)}
    except Exception as exc:          # AutoError, TranspileError, RuntimeError, OSError...
        out.update(available=False, reason=f"AUTO-07p run failed: {type(exc).__name__}: "
                                            f"{str(exc).splitlines()[0] if str(exc) else ''}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


# --------------------------------------------------------------------------------------------
# frictionkit
# --------------------------------------------------------------------------------------------
def _frictionkit_branch(model, hopf, stability):
    import warnings
    from frictionkit.runtime import periodic_start_from_hopf, periodic_branch
    t0 = _clock()
    disc, Z, d = periodic_start_from_hopf(model, hopf, HARMONICS)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        br = periodic_branch(disc, Z, 0.0, 30.0, d, method="anm",
                             options=dict(points_per_step=4, stability=stability))
    times = _since(t0)
    folds = br.special_points("fold")
    ends = br.special_points("hopf")
    out = dict(harmonics=HARMONICS, method="anm", stability=stability, **times, status=br.status,
               points=len(br), folds=[float(s.param) for s in folds],
               end=dict(type="hopf", Vb=float(ends[-1].param)) if ends else None,
               special=[[s.kind, float(s.param)] for s in br.special_points()],
               warnings=[str(w.message).split(":")[0] for w in caught], **br.counters)
    if stability and folds:
        i = folds[0].index
        out["stable_around_fold"] = [float(br.stable[i - 1]), float(br.stable[i + 1])]   # 1 stable, 0 unstable
    return out, disc, folds


def _frictionkit_collocation(model, hopf, n_intervals=100, degree=4):
    """The same branch by orthogonal collocation with AUTO's mesh (NTST = 100, NCOL = 4),
    ANM, default stability analysis (condensed monodromy): the like-for-like run."""
    import warnings
    from frictionkit.runtime import periodic_start_from_hopf, periodic_branch
    from frictionkit.runtime.cli._continuation import _to_collocation
    t0 = _clock()
    disc, Z, d = periodic_start_from_hopf(model, hopf, 10)
    coll, Zc, dc = _to_collocation(model, disc, Z, n_intervals, degree, d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        br = periodic_branch(coll, Zc, 0.0, 30.0, dc, method="anm")
    folds = br.special_points("fold")
    out = dict(n_intervals=n_intervals, degree=degree, method="anm", stability=True, **_since(t0),
               status=br.status, points=len(br), folds=[float(s.param) for s in folds],
               special=[[s.kind, float(s.param)] for s in br.special_points()], **br.counters)
    if folds:
        i = folds[0].index
        out["stable_around_fold"] = [float(br.stable[i - 1]), float(br.stable[i + 1])]
    return out


def bench_frictionkit(model):
    """The demo branch (equilibria, Hopf, ANM H = 40 periodic branch, with the default
    stability analysis and without it; by collocation 100 x 4 as AUTO), then the fold
    refined at H = 60, 100."""
    from frictionkit.runtime import equilibrium_branch
    from frictionkit.runtime.engine._fold_near import locate_fold_near
    t0 = _clock()
    eq = equilibrium_branch(model, VB_START, VB_STOP)
    hopf = eq.special_points("hopf")
    out = dict(equilibria=dict(**_since(t0), points=len(eq),
                               hopf=[float(h.param) for h in hopf]))
    out["branch"], _, _ = _frictionkit_branch(model, hopf[0], True)
    out["branch_no_stability"], disc, folds = _frictionkit_branch(model, hopf[0], False)
    out["branch_collocation"] = _frictionkit_collocation(model, hopf[0])
    if folds:
        fold = folds[0]
        refined = {}
        for H in FOLD_HARMONICS:
            t3 = _clock()
            disc, Z = disc.resize(fold.solution, H)
            fold = locate_fold_near(disc, Z)
            refined[f"H{H}"] = dict(fold=float(fold.param), **_since(t3))
        out["fold_refined"] = refined
    return out


def compare(fk, au):
    """Side-by-side summary: wall and CPU times (equilibria + periodic branch, each tool),
    their ratios frictionkit / AUTO (native path, NTST = 100), points, fold locations, Hopf
    points."""
    def total(kind, *parts):
        return sum(part[kind] for part in parts)

    runs = {"frictionkit_H40_stability": [fk["equilibria"], fk["branch"]],
            "frictionkit_H40_no_stability": [fk["equilibria"], fk["branch_no_stability"]],
            "frictionkit_collocation_100x4_stability": [fk["equilibria"], fk["branch_collocation"]]}
    if "fold_refined" in fk:
        runs["frictionkit_H40_no_stability_plus_fold_H60_H100"] = (
            runs["frictionkit_H40_no_stability"] + list(fk["fold_refined"].values()))
    points = {"frictionkit_H40": fk["branch"]["points"], "frictionkit_H40_anm_steps": fk["branch"]["steps"]}
    folds = {"frictionkit_H40": (fk["branch"]["folds"] or [None])[0],
             "frictionkit_collocation_100x4": (fk["branch_collocation"]["folds"] or [None])[0]}
    points["frictionkit_collocation_100x4"] = fk["branch_collocation"]["points"]
    folds.update({f"frictionkit_{k}": r["fold"] for k, r in fk.get("fold_refined", {}).items()})
    out = dict(points=points, fold=folds, hopf={"frictionkit": fk["equilibria"]["hopf"]})
    ref = None
    if au.get("available"):
        path = "native" if "native" in au else "interpreted"
        for name, r in au[path].items():
            runs[f"auto_{path}_{name}"] = [au["equilibria"], r]
            points[f"auto_{name}"] = r["points"]
            folds[f"auto_{name}"] = (r["folds"] or [None])[0]
        if path == "native" and "interpreted" in au:
            runs["auto_interpreted_ntst100"] = [au["equilibria"], au["interpreted"]["ntst100"]]
        out["hopf"]["auto"] = au["equilibria"]["hopf"]
        ref = f"auto_{path}_ntst100"
    for kind in ("wall_s", "cpu_s"):
        out[kind] = {k: total(kind, *parts) for k, parts in runs.items()}
        if ref is not None:
            out[f"{kind[:-2]}_ratio_frictionkit_over_auto_ntst100"] = {
                k: v / out[kind][ref] for k, v in out[kind].items() if k.startswith("frictionkit")}
    best_auto = folds.get(f"auto_ntst{NTSTS[-1]}")
    best_fk = folds.get(f"frictionkit_H{FOLD_HARMONICS[-1]}")
    if best_auto is not None and best_fk is not None:
        out["fold_abs_diff_auto_vs_frictionkit_best"] = abs(best_auto - best_fk)
    return out


def main() -> dict:
    _one_blas_thread()
    from frictionkit.runtime import load_model
    t0 = time.perf_counter()
    model = load_model("belt", continuation="Vb", n=N_REG, FN=FN)
    out = {"case": dict(model="belt", continuation="Vb", n=N_REG, FN=FN, seed="000 §4.2",
                        branch="Hopf B1 -> fold B2 -> Hopf B3"),
           "frictionkit_load_model_s": time.perf_counter() - t0}
    out["frictionkit"] = bench_frictionkit(model)
    out["auto07p"] = bench_auto07p(model)
    out["comparison"] = compare(out["frictionkit"], out["auto07p"])
    return out


if __name__ == "__main__":
    res = main()
    text = json.dumps(res, indent=2, default=str)
    print(text)
    out_dir = Path(__file__).resolve().parent / "results"
    out_dir.mkdir(exist_ok=True)
    (out_dir / "auto.json").write_text(text)
