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
``da.attrs["units"]`` in xarray, the CSV header names (``ptp_y [m]``: the file is read by a plain
``pandas.read_csv``, the unit in brackets after the column's name, none for a dimensionless
column), a ``units`` struct in MAT files and a ``units`` attribute on each HDF5 dataset.
Everything is read through the :class:`Branch` attributes, never the HDF5 layout.

One orbit (:func:`orbit_columns`, ``frictionkit export FILE@POINT --orbit``): the columns
``t`` and each state over one period (:meth:`Branch.time_series`), in the same three formats.
"""
from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np

from ..errors import InputError
from ._atomic import atomic_path
from ._plots import units_of

__all__ = ["to_columns", "to_dataframe", "to_xarray", "write_csv", "write_mat", "write_h5", "orbit_columns",
           "write_orbit", "FORMATS", "replacing"]

#: export formats -> file suffix
FORMATS = {"csv": ".csv", "mat": ".mat", "h5": ".h5"}


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
    # the states', then a structure's named points' (``y_<point>``) columns
    for s in (list(branch.states) + [p for p in branch.amplitude if p not in branch.states]) if branch.amplitude else ():
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


def header_name(name: str, unit: str) -> str:
    """A CSV column header: ``"name [unit]"``, or ``name`` for a dimensionless column."""
    return f"{name} [{unit}]" if unit else name


def _meta(branch) -> dict:
    """What every export file says about its branch: the model, the kind, the parameter."""
    prov = branch.provenance
    return {"model": str(prov.get("model", "")), "kind": str(branch.kind),
            "continuation_parameter": str(prov.get("continuation_parameter", "lam"))}


def _write_table(cols, units, path, fmt, meta, index_name=None, extra=None):
    """Write the columns ``cols`` (name -> 1-D array) with their ``units`` to ``path`` in
    ``fmt`` (:data:`FORMATS`), atomically (:func:`replacing`).  ``index_name``: the CSV's
    first column (the row number), none if None; ``extra``: MAT/HDF5 arrays stored beside the
    columns (not in the CSV); ``meta``: text attributes (MAT variables, HDF5 root attributes)."""
    extra = extra or {}
    with replacing(path) as tmp:
        if fmt == "csv":
            import pandas as pd
            df = pd.DataFrame({header_name(c, units.get(c, "")): v for c, v in cols.items()})
            if index_name is not None:
                df.index.name = index_name
            df.to_csv(tmp, index=index_name is not None, encoding="utf-8")
        elif fmt == "mat":
            import scipy.io
            data = {_mat_name(c): (v if np.asarray(v).dtype.kind != "U" else np.array(v, dtype=object))
                    for c, v in cols.items()}
            data["units"] = {_mat_name(c): units.get(c, "") for c in cols}
            data.update({_mat_name(k): v for k, v in extra.items()})
            data.update({_mat_name(k): v for k, v in meta.items()})
            scipy.io.savemat(tmp, data, do_compression=True)
        elif fmt == "h5":
            import h5py
            with h5py.File(tmp, "w") as f:
                f.attrs.update(meta)
                f.attrs["columns"] = list(cols)
                for c, v in {**cols, **extra}.items():
                    v = np.asarray(v)
                    ds = f.create_dataset(c, data=v.astype(h5py.string_dtype()) if v.dtype.kind == "U" else v)
                    ds.attrs["units"] = units.get(c, "")
        else:
            raise InputError(f"export format {fmt!r}: expected one of {', '.join(FORMATS)}")
    return Path(path)


def write_csv(branch, path) -> Path:
    """CSV of :func:`to_dataframe`, one row per point; the header names carry the units
    (``Vb [m/s]``, ``ptp_y [m]``): ``pandas.read_csv(path, index_col="point")`` reads it back."""
    cols, units = to_columns(branch)
    return _write_table(cols, units, path, "csv", _meta(branch), index_name="point")


def write_mat(branch, path) -> Path:
    """MATLAB ``.mat`` (scipy.io.savemat): one vector per column, a ``units`` struct, the
    full solutions ``solution`` (n_points x size) and the states' names."""
    cols, units = to_columns(branch)
    extra = {"solution": branch.solutions, "states": np.array(branch.states, dtype=object)}
    return _write_table(cols, units, path, "mat", {}, extra=extra)


def write_h5(branch, path) -> Path:
    """HDF5 table (h5py): one dataset per column, each with its ``units`` attribute; the root
    attributes ``model``, ``kind``, ``continuation_parameter`` and ``columns`` (their order)."""
    cols, units = to_columns(branch)
    return _write_table(cols, units, path, "h5", _meta(branch))


def orbit_columns(branch, index, n_t=512) -> tuple[dict, dict, dict]:
    """``(columns, units, meta)`` of the orbit of point ``index`` of a periodic ``branch``
    over one period: ``t`` and each state at ``n_t`` equally spaced times
    (:meth:`Branch.time_series`; ``t[0] = 0``, the period itself not repeated), their units,
    and the point's ``model``, ``label`` (``GROUP:INDEX``), ``parameter`` (its name), ``value``,
    ``parameter_unit``,
    ``omega`` and ``period`` (MAT variables, HDF5 root attributes).

    Raises
    ------
    InputError
        ``branch`` holds equilibria (no orbit), or ``index`` is out of range.
    """
    n = len(branch)
    if branch.kind == "equilibrium":
        raise InputError("an equilibrium has no orbit to export: export the branch's table (without --orbit), or "
                         "a point of a periodic branch (FILE@periodic:POINT)")
    if not -n <= int(index) < n:
        raise InputError(f"point {index}: the branch has {n} points (0..{n - 1})")
    index = int(index) % n
    t, x = branch.time_series(index, n_t=int(n_t))
    u = units_of(branch)
    cols = {"t": np.asarray(t, dtype=float)}
    units = {"t": u.get("t", "")}
    for s, row in zip(branch.states, np.asarray(x, dtype=float)):
        cols[s], units[s] = row, u.get(s, "")
    meta = _meta(branch)
    pname = meta["continuation_parameter"]
    omega = float(branch.omega[index])
    meta.update(label=f"{branch.provenance.get('group', '/')}:{index}", parameter=pname,
                value=float(branch.param[index]), omega=omega,
                period=2 * np.pi / omega if omega > 0 else float("nan"))
    meta["parameter_unit"] = u.get(pname, "")
    return cols, units, meta


def write_orbit(branch, index, path, fmt="csv", n_t=512) -> Path:
    """Write the orbit of point ``index`` (:func:`orbit_columns`) to ``path`` in ``fmt``
    (``"csv"``: header ``t [s]``, ``y [m]``...; ``"mat"``; ``"h5"``), atomically."""
    cols, units, meta = orbit_columns(branch, index, n_t)
    return _write_table(cols, units, path, fmt, meta)


def _mat_name(c: str) -> str:
    """A valid MATLAB field name (letters, digits, underscores; starts with a letter)."""
    out = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in c)
    return out if out[:1].isalpha() else f"v_{out}"
