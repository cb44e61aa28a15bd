"""One task of a sweep, as a worker runs it: rebuild the model, run, summarise, serialise.

:func:`run_task` is the function Dask ships to the workers.  It takes the sweep's JSON (see
``_spec``) and a task index and returns plain data — a summary row (a dict of scalars and
JSON strings) and each computed branch as the bytes of an HDF5 file written by
:meth:`Branch.save` — so nothing but numbers and bytes crosses the network and the client
never needs the worker's compiled model.

The model is rebuilt from what the task carries: a zoo name, or a model file's source text
written once per worker into a folder named by its hash.  :func:`load_model` compiles it on
first use into the worker's own cache (``FRICTIONKIT_CACHE``) and keeps it for the process,
so a worker compiles each model once.  Numerical failures of the task (``FrictionkitError``)
are results: the row says ``status = "failed"`` and why.  Anything else propagates, so Dask
retries the task elsewhere.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
import tempfile
import time
import warnings

import numpy as np

from ..analysis._lyapunov import first_lyapunov
from ..analysis._motion import classify_motion
from ..drivers._orbits import find_periodic_orbit
from ..drivers._branches import periodic_start_from_simulation
from ..drivers._compose import run_continuation
from ..drivers._forced_start import extreme_values
from ..errors import FrictionkitError, InputError, ModelInterfaceError
from ..model._load import load_model
from ..model._simulate import simulate
from ..results._branch import Branch
from ._spec import SweepSpec

__all__ = ["run_task", "task_model", "stable_intervals"]


def _model_source(spec: SweepSpec):
    """What :func:`load_model` takes: the zoo name, or the model file written from its source."""
    if not spec.model_file:
        return spec.model
    digest = hashlib.sha256(spec.model.encode()).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / f"frictionkit-sweep-models-{os.getuid()}" / digest
    path = folder / spec.model_file
    if not path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(spec.model)
        os.replace(tmp, path)
    return str(path)


def task_model(spec: SweepSpec, index: int):
    """The model of task ``index``: fixed values, then the grid point's."""
    params = {**dict(spec.fixed), **spec.point(index)}
    model = load_model(_model_source(spec), continuation=spec.param, params=params)
    if model.model_hash != spec.model_hash:
        raise ModelInterfaceError(f"the worker built model {spec.model_label!r} with hash {model.model_hash}, "
                                  f"the sweep expects {spec.model_hash}: a different frictionkit or model "
                                  "version on this worker")
    return model


def stable_intervals(branch) -> list:
    """``[[lo, hi], ...]``: the parameter ranges covered by runs of stable points of ``branch``
    (``stable == 1``), merged where they overlap (a folded branch covers a range twice).

    A run ends at the special point (Hopf, fold, ...) the branch located between its last
    stable point and the next one (by parameter, or by index: at a fold both points lie on the
    same side of it), else at its last stable point.
    """
    param, stable = branch.param, np.asarray(branch.stable, dtype=float)
    sp_param = np.array([s.param for s in branch.special], dtype=float)
    sp_index = np.array([s.index for s in branch.special], dtype=int)

    def edge(inside, outside):
        a, b = sorted((param[inside], param[outside]))
        lo, hi = sorted((inside, outside))
        near = ((sp_param >= a) & (sp_param <= b)) | ((sp_index >= lo - 1) & (sp_index <= hi))
        cand = sp_param[near]
        return float(cand[np.argmin(np.abs(cand - param[inside]))]) if len(cand) else float(param[inside])

    runs, i = [], 0
    while i < len(param):
        if stable[i] != 1:
            i += 1
            continue
        j = i
        while j + 1 < len(param) and stable[j + 1] == 1:
            j += 1
        ends = [float(param[i]), float(param[j])]
        if i > 0:
            ends.append(edge(i, i - 1))
        if j + 1 < len(param):
            ends.append(edge(j, j + 1))
        runs.append([min(ends + list(param[i:j + 1])), max(ends + list(param[i:j + 1]))])
        i = j + 1
    runs.sort()
    merged = []
    for lo, hi in runs:
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return merged


def _hopf_columns(model, eq) -> dict:
    hopf = eq.special_points("hopf")
    out = {"n_hopf": len(hopf)}
    listing = []
    for h in hopf:
        try:
            res = first_lyapunov(model, h.param, h.solution[:model.n])
            crit, l1 = res.criticality, float(res.l1)
        except (FrictionkitError, np.linalg.LinAlgError):
            crit, l1 = "unknown", math.nan
        listing.append({"param": float(h.param), "omega": float(h.omega), "l1": l1, "criticality": crit})
    for k in range(2):       # the first two as plain columns, all of them as JSON
        h = listing[k] if k < len(listing) else {"param": math.nan, "criticality": ""}
        out[f"hopf_{k + 1}"] = h["param"]
        out[f"hopf_{k + 1}_criticality"] = h["criticality"]
    out["hopf"] = json.dumps(listing)
    return out


def _at_columns(per, at) -> dict:
    """Period, amplitude (peak to peak of the first state) and motion of the first *stable*
    orbit of ``per`` at each main-parameter value of ``at`` (linear interpolation between the
    two branch points that bracket it; NaN and "" where there is none)."""
    out = {}
    for a in at:
        period = amp = math.nan
        motion = ""
        if per is not None and len(per) > 1:
            p, st = per.param, per.stable
            ptp = per.ptp[per.states[0]]
            for i in range(len(p) - 1):
                if st[i] == 1 and st[i + 1] == 1 and min(p[i], p[i + 1]) <= a <= max(p[i], p[i + 1]):
                    w = 0.0 if p[i + 1] == p[i] else (a - p[i]) / (p[i + 1] - p[i])
                    period = float(2 * np.pi / ((1 - w) * per.omega[i] + w * per.omega[i + 1]))
                    amp = float((1 - w) * ptp[i] + w * ptp[i + 1])
                    motion = per.motion[i] if per.motion else ""
                    break
        out[f"period@{a:g}"], out[f"amplitude@{a:g}"], out[f"motion@{a:g}"] = period, amp, motion
    return out


def _continuation_task(spec, model):
    """Equilibria, Hopf points and the periodic branch from Hopf point ``from_hopf``, exactly as
    ``frictionkit continue --from-hopf`` (:func:`run_continuation`)."""
    o = dict(spec.options)
    kw = dict(harmonics=o["harmonics"], method=o["method"], options=dict(max_steps=o["max_steps"]),
              progress=False, echo=lambda s: None, discretization=o["discretization"],
              intervals=o["intervals"], degree=o["degree"])
    try:
        eq, per = run_continuation(model, spec.start, spec.stop, start="hopf", hopf_index=o["from_hopf"], **kw)
        status, message = ("done" if per.success else "partial"), f"periodic branch: {per.status}: {per.message}"
    except InputError as exc:
        if "--from-hopf" not in str(exc):
            raise
        # no such Hopf point on this range: a result (e.g. sliding stable throughout)
        eq, _ = run_continuation(model, spec.start, spec.stop, start="equilibria", **kw)
        per, status, message = None, "no-hopf", str(exc)
    row = {"status": status, "message": message, **_hopf_columns(model, eq)}
    folds = per.special_points("fold") if per is not None else []
    row["n_fold"] = len(folds)
    row["folds"] = json.dumps([float(f.param) for f in folds])
    row["eq_stable"] = json.dumps(stable_intervals(eq))
    row["orbit_stable"] = json.dumps(stable_intervals(per) if per is not None else [])
    labels = sorted(set(per.motion)) if per is not None and per.motion else []
    row["motion"] = ",".join(labels)
    row.update(_at_columns(per, o["at"]))
    branches = {"equilibria": eq} if per is None else {"equilibria": eq, "periodic": per}
    return row, branches


def _orbit_task(spec, model):
    """One periodic orbit at ``start`` (harmonic balance started from a simulation to the
    attractor, :func:`periodic_start_from_simulation`): its period, amplitude and motion type,
    saved as a one-point branch."""
    o = dict(spec.options)
    disc, Z = periodic_start_from_simulation(model, spec.start, o["harmonics"], discretization=o["discretization"])
    br = Branch.from_solutions(disc, [Z], [np.zeros_like(Z)], status="orbit", message="periodic orbit found",
                               provenance=dict(model=model.name, model_hash=model.model_hash,
                                               continuation_parameter=model.continuation))
    info = disc.unpack(Z)
    row = {"status": "periodic", "message": "", "period": float(2 * np.pi / info["omega"]),
           "amplitude": float(br.ptp[br.states[0]][0])}
    row["motion"] = (classify_motion(model, info["lam"], info["samples"], omega=info["omega"]).label
                     if len(model.contacts) else "")
    return row, {"orbit": br}


def _simulate_task(spec, model, index):
    """Time integration to the attractor from ``x0`` (or a random state seeded by ``seed`` and
    the task index), then a classification: equilibrium, periodic (shooting converges from the
    final state; its period) with its motion type, or not converged."""
    o = dict(spec.options)
    n = model.n
    if o["x0"] is not None:
        x0 = np.asarray(o["x0"], dtype=float)
        if x0.shape != (n,):
            raise InputError(f"x0 needs {n} values (states {', '.join(model.states)})")
    else:
        x0 = np.random.default_rng([int(o["seed"]), int(index)]).standard_normal(n)
    t_end = float(o["t_end"])
    sol = simulate(model, x0, (0.0, t_end), lam=spec.start, method="LSODA", rtol=1e-9, atol=1e-12,
                   t_eval=np.linspace(0.5 * t_end, t_end, 4001))
    x = sol.y
    scale = max(1.0, float(np.abs(x).max()))
    row = {"status": "not-converged", "message": "", "period": math.nan, "amplitude": float(np.ptp(x[0])),
           "motion": ""}
    if np.ptp(x, axis=1).max() < 1e-8 * scale:
        row.update(status="equilibrium", amplitude=0.0)
        return row, {}
    # period guess: mean spacing of upward crossings of the first state's mean
    c = x[0] - x[0].mean()
    up = np.flatnonzero((c[:-1] < 0) & (c[1:] >= 0))
    if len(up) < 3:
        row["message"] = "fewer than 3 oscillations in the second half of the integration"
        return row, {}
    T = float(np.mean(np.diff(sol.t[up])))
    try:
        orbit = find_periodic_orbit(model, spec.start, x[:, -1], T if not model.forced else None)
    except FrictionkitError as exc:
        row["message"] = f"shooting did not converge: {exc}"
        return row, {}
    row.update(status="periodic", period=float(orbit.T))
    if len(model.contacts):
        row["motion"] = classify_motion(model, spec.start, lambda m: orbit.at(orbit.times(m)),
                                        omega=orbit.omega).label
        if row["motion"] != "slipping":
            row["status"] = "stick-slip"
    return row, {}


def run_task(spec_json: str, index: int) -> dict:
    """Run task ``index`` of the sweep ``spec_json``; return ``{"index", "row", "branches"}``.

    ``row`` holds the grid values, ``status``, ``message`` and the task's summary columns;
    ``branches`` maps a name (``equilibria``, ``periodic``, ``orbit``) to the bytes of an HDF5
    file in :meth:`Branch.save`'s layout; ``seconds`` is the task's time on the worker.  A ``FrictionkitError`` gives ``status = "failed"``
    with its message (a result, not lost); other exceptions propagate (Dask retries them).
    """
    t0 = time.perf_counter()
    spec = SweepSpec.from_json(spec_json)
    point = spec.point(index)
    model = None
    try:
        model = task_model(spec, index)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)   # validity warnings: in the branches
            if spec.task == "continuation":
                row, branches = _continuation_task(spec, model)
            elif spec.task == "orbit":
                row, branches = _orbit_task(spec, model)
            else:
                row, branches = _simulate_task(spec, model, index)
    except FrictionkitError as exc:
        message = f"{type(exc).__name__}: {exc}"
        extreme = extreme_values(model) if model is not None and "(default " not in message else []
        if extreme:                      # our sentence first, naming the likely culprit (issue 28)
            message = (f"{', '.join(extreme)}: outside 1e-100..1e100, the likely cause; choose a value in the "
                       f"model's range ({message})")
        row, branches = {"status": "failed", "message": message}, {}
    return {"index": int(index), "row": {**point, **row},
            "branches": {k: b.to_image() for k, b in branches.items()}, "seconds": time.perf_counter() - t0}
