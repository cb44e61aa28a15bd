"""Restart a saved point in another continuation parameter or with other parameter values
(AUTO's restart with a new ``ICP`` or new ``PAR`` values).

:func:`restart_branch` continues a saved branch as it was computed; :func:`restart_in_parameter`
takes the states (equilibria) or the orbit (periodic branches: its states over one period) of
the saved point, sets the old continuation parameter to its value at the point and the
``values`` given, loads the model for the new parameter, corrects the point there (Newton at
fixed parameter: with new values it is a guess, no longer a solution) and continues it.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import ConvergenceError, InputError
from ..model._load import load_model
from ..results._labels import check_restart_point
from ._branches import _restart_model, equilibrium_branch, periodic_branch, periodic_start_from_orbit
from ._methods import SAVED_KINDS

__all__ = ["restart_in_parameter"]


def restart_in_parameter(branch, index=-1, param=None, values=None, stop=None, direction=None, method=None,
                         harmonics=None, options=None, progress=None, discretization=None, intervals=None,
                         degree=None, special=None, model=None):
    """Continue point ``index`` of a saved branch in ``param`` with the parameter ``values``.

    Parameters
    ----------
    branch : Branch
        A saved branch (its provenance names the model, its parameter values and method).
    index : int
        The point (negative counts from the end).
    param : str, optional
        The new continuation parameter (default: the branch's).  Its start value is its value
        at the point: the branch's own parameter's value there, a value of ``values``, or the
        saved value.
    values : dict, optional
        Parameter values replacing the saved ones (``--set``).
    stop : float
        The end of the new range (required: the saved range belongs to the old parameter
        unless ``param`` is the branch's).
    direction, method, harmonics, options, progress, discretization, intervals, degree
        As in :func:`restart_branch`; the periodic-orbit method defaults to the branch's.
    special : SpecialPoint, optional
        A special point of an equilibrium branch to start from instead of the saved point
        ``index`` (its states and parameter value; a periodic branch starts from the saved
        orbit ``index``).
    model : str or path, optional
        The model file the branch was computed with (a branch file's own reference to a file is
        never run: :func:`restart_branch`); zoo models need none.

    Returns
    -------
    Branch
    """
    prov = branch.provenance
    old = prov["continuation_parameter"]
    index = check_restart_point(branch, index)
    current = _restart_model(prov, model)              # refused if the model changed since the branch
    param = param or old
    params = {k: float(v) for k, v in prov.get("parameters", {}).items()}
    at_special = special is not None and branch.kind == "equilibrium"
    params[old] = float(special.param if at_special else branch.param[index])
    unknown = sorted(set(values or {}) - set(params))
    if unknown:
        raise InputError(f"--set {unknown[0]}: the model has no parameter {unknown[0]!r}; its parameters: "
                         f"{', '.join(sorted(params))}")
    params.update(values or {})
    if param not in params:
        raise InputError(f"--param {param}: the model has no parameter {param!r}; its parameters: "
                         f"{', '.join(sorted(params))}")
    lam = params.pop(param)
    if stop is None:
        if param != old:
            raise InputError(f"--param {param}: give --stop, the other end of the range of {param} (the saved "
                             f"range is that of {old})")
        lo, hi = prov.get("options", {}).get("lam_min"), prov.get("options", {}).get("lam_max")
        up = (direction or (1.0 if branch.tangents[index][-1] >= 0 else -1.0)) > 0
        stop = hi if up else lo
    if stop is None or isinstance(stop, str) or not math.isfinite(float(stop)) or float(stop) == lam:
        raise InputError(f"--stop {stop}: give a finite end of the range of {param} other than its start {lam:g}")
    stop = float(stop)
    if direction is not None and (stop - lam) * direction < 0:
        raise InputError(f"--stop {stop:g} lies {'below' if direction > 0 else 'above'} the restart point "
                         f"{param} = {lam:g} but the direction is {'up' if direction > 0 else 'down'}")
    # the model just checked (a zoo name or the caller's file), never a file the branch names
    model = load_model(getattr(current, "source", "") or current.name, continuation=param, params=params)
    opts = {k: v for k, v in prov.get("options", {}).items() if k in ("stability", "branch_points", "locate_folds")}
    opts.update(options or {})
    if method is None and prov.get("method") in ("anm", "newton"):
        method = prov["method"]
    if branch.kind == "equilibrium":
        x = (np.asarray(special.solution[:len(branch.states)], dtype=float) if at_special
             else np.array([branch.mean[s][index] for s in branch.states]))
        return equilibrium_branch(model, lam, stop, method=method, options=opts, x_guess=x, progress=progress,
                                  discretization="aft" if prov.get("discretization") == "aft" else "hbm")
    if intervals is not None or degree is not None:
        raise InputError("--intervals/--degree: a restart in another parameter or with other values continues "
                         "in the harmonic balance (--method aft or hbm)")
    if discretization not in (None, "aft", "hbm"):
        raise InputError(f"--method {discretization}: a restart in another parameter or with other values "
                         "continues in the harmonic balance (--method aft or hbm); convert to a collocation "
                         "with a plain --restart of the new branch")
    kind = discretization or SAVED_KINDS.get(prov.get("discretization", "aft"), "aft")
    if kind not in ("aft", "hbm"):
        kind = "aft"                   # a collocation branch: its orbit starts the default harmonic balance
    H = int(harmonics or (branch.harmonics if branch.harmonics > 0 else 30))
    n_t = max(8 * H + 8, 512)
    _, x = branch.time_series(index, n_t=n_t)
    omega = float(branch.omega[index])
    if not np.isfinite(omega) or omega <= 0:
        raise InputError(f"restart point {index}: no frequency saved for its orbit; restart without "
                         "--param/--set")
    try:
        disc, Z = periodic_start_from_orbit(model, lam, x, 2 * np.pi / omega, H, discretization=kind)
    except ConvergenceError as exc:
        changed = ", ".join(f"{k} = {v:g}" for k, v in (values or {}).items())
        raise InputError(f"restart point {index}: its orbit could not be corrected at {param} = {lam:g}"
                         + (f" with {changed}" if changed else "") + f" ({exc}); near a fold, or for values far "
                         "from the saved ones, there may be no orbit there: restart from another point, or "
                         "change the values in smaller steps") from None
    lo, hi = min(lam, stop), max(lam, stop)
    return periodic_branch(disc, Z, lo, hi, 1.0 if stop > lam else -1.0, method=method,
                           options={**opts, "lam_min": lo, "lam_max": hi}, progress=progress)
