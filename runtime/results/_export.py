"""Branches as tables: pandas, xarray, CSV and MATLAB files.

One row per branch point; the columns are the continuation parameter, ``omega``, the
period ``T`` (periodic branches), ``ptp_<state>``, ``min_<state>``, ``max_<state>``,
``mean_<state>``, for periodic harmonic balances ``amp1_<state>``, ``phase1_<state>`` [rad]
(the first harmonic ``A_1 cos(omega t + phi_1)``) and ``rms_<state>``, ``diss_<contact>`` (energy
dissipated per period by each contact, where the branch has it), ``stable`` (1 stable, 0
unstable, NaN unknown), ``max_multiplier`` and ``motion`` where known, and the error estimates
of ``Branch.accuracy`` (``err_trunc``, ``err_alias``, ``err_mesh``, ``harmonics``, ...) where the
branch has them.  Units (``Model.units``, stored in the branch's provenance) sit in
the table's metadata: ``df.attrs["units"][column]`` in pandas (a column taken out with
``df[c]`` is a new Series without them, so they live on the frame),
``da.attrs["units"]`` in xarray, a ``# units:`` header line in CSV and a ``units`` struct in
MAT files.  Everything is read through the :class:`Branch` attributes, never the HDF5
layout.
"""
from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np

from ..errors import InputError
from ._atomic import atomic_path
from ._plots import units_of

__all__ = ["to_columns", "to_dataframe", "to_xarray", "write_csv", "write_mat", "replacing"]


def to_columns(branch) -> tuple[dict, dict]:
    """``(columns, units)``: name -> 1-D array (one entry per point) and name -> unit."""
    u = units_of(branch)
    pname = branch.provenance.get("continuation_parameter", "lam")
    tu = u.get("t", "")
    cols = {pname: branch.param, "omega": branch.omega}
    units = {pname: u.get(pname, ""), "omega": f"rad/{tu}" if tu else ""}
    if branch.kind == "periodic":
        with np.errstate(divide="ignore", invalid="ignore"):
            cols["T"] = np.where(branch.omega > 0, 2 * np.pi / branch.omega, np.nan)
        units["T"] = tu
    for what, data in (("ptp", branch.ptp), ("min", branch.min), ("max", branch.max), ("mean", branch.mean)):
        for s in branch.states:
            cols[f"{what}_{s}"] = np.asarray(data[s], dtype=float)
            units[f"{what}_{s}"] = u.get(s, "")
    for s in branch.states if branch.amplitude else ():
        cols[f"amp1_{s}"] = np.asarray(branch.amplitude[s], dtype=float)[:, 0]
        cols[f"phase1_{s}"] = np.asarray(branch.phase[s], dtype=float)[:, 0]
        cols[f"rms_{s}"] = np.asarray(branch.rms[s], dtype=float)
        units.update({f"amp1_{s}": u.get(s, ""), f"phase1_{s}": "rad", f"rms_{s}": u.get(s, "")})
    for c, v in branch.dissipation.items():
        cols[f"diss_{c}"] = np.asarray(v, dtype=float)
        units[f"diss_{c}"] = ""
    cols["stable"] = branch.stable
    units["stable"] = ""
    if branch.max_multiplier is not None:
        cols["max_multiplier"] = np.asarray(branch.max_multiplier, dtype=float)
        units["max_multiplier"] = ""
    if branch.motion is not None:
        cols["motion"] = np.asarray(branch.motion, dtype=str)
        units["motion"] = ""
    for c, v in getattr(branch, "accuracy", {}).items():
        cols[c] = np.asarray(v, dtype=float)
        units[c] = ""
    return cols, units


def to_dataframe(branch):
    """A :class:`pandas.DataFrame`, one row per branch point (see the module docstring)."""
    import pandas as pd
    cols, units = to_columns(branch)
    df = pd.DataFrame(cols)
    df.index.name = "point"
    df.attrs.update(units=units, model=str(branch.provenance.get("model", "")), kind=branch.kind)
    return df


def to_xarray(branch):
    """An :class:`xarray.Dataset` on dimension ``point``; each variable's ``attrs["units"]``."""
    import xarray as xr
    cols, units = to_columns(branch)
    ds = xr.Dataset({c: ("point", v, {"units": units[c]}) for c, v in cols.items()},
                    coords={"point": np.arange(len(branch))})
    ds.attrs.update(model=str(branch.provenance.get("model", "")), kind=branch.kind,
                    continuation_parameter=str(branch.provenance.get("continuation_parameter", "lam")))
    return ds


@contextlib.contextmanager
def replacing(path):
    """Yield a temporary path next to ``path``; on success it replaces ``path`` atomically
    (:func:`~._atomic.atomic_path`: the mode kept, a link written through)."""
    path = Path(path)
    if not path.parent.is_dir():
        raise InputError(f"folder {path.parent} does not exist: create it or write {path.name} elsewhere")
    with atomic_path(path) as tmp:
        yield tmp


def write_csv(branch, path) -> Path:
    """CSV of :func:`to_dataframe`; first line ``# units: name=unit, ...``."""
    df = to_dataframe(branch)
    with replacing(path) as tmp:
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            fh.write("# units: " + ", ".join(f"{c}={u}" for c, u in df.attrs["units"].items()) + "\n")
            df.to_csv(fh)
    return Path(path)


def write_mat(branch, path) -> Path:
    """MATLAB ``.mat`` (scipy.io.savemat): one vector per column, a ``units`` struct, the
    full solutions ``solution`` (n_points x size) and the states' names."""
    import scipy.io
    cols, units = to_columns(branch)
    data = {_mat_name(c): (v if v.dtype.kind != "U" else np.array(v, dtype=object)) for c, v in cols.items()}
    data["units"] = {_mat_name(c): u for c, u in units.items()}
    data["solution"] = branch.solutions
    data["states"] = np.array(branch.states, dtype=object)
    with replacing(path) as tmp:
        scipy.io.savemat(tmp, data, do_compression=True)
    return Path(path)


def _mat_name(c: str) -> str:
    """A valid MATLAB field name (letters, digits, underscores; starts with a letter)."""
    out = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in c)
    return out if out[:1].isalpha() else f"v_{out}"
