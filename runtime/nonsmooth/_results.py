"""Coulomb branches: column data over V_b or F_N, saved with the branch layout of issue 3.

:meth:`CoulombBranch.to_branch` gives a :class:`frictionkit.runtime._branch.Branch` (the
runtime core's branch object) and :meth:`CoulombBranch.save` writes it with
``Branch.save``, so Coulomb files read back with ``load_branch`` and plot like continued
branches.  HDF5 layout (readable with h5py alone)::

    /                       attrs: model="belt", model_hash, continuation_parameter ("Vb" or
                                   "FN"), method="coulomb-exact", frictionkit_version,
                                   discretization="coulomb-exact", kind="periodic", status,
                                   message, parameters (JSON: the fixed belt parameters), ...
    param        (M,)       continuation parameter values (V_b [m/s] or F_N [N])
    omega        (M,)       angular frequency 2 pi / t2 [rad/s], NaN where no stick-slip
    ptp/<state>  (M,)       peak-to-peak amplitude, states "y" [m] and "v" [m/s]
    min/<state>, max/<state>, mean/<state>  (M,)
    stable       (M,)       1.0 where the cycle exists (see below), NaN elsewhere
    special/kind, special/param, special/omega   empty: the end of the Coulomb branch is not
                            one of the smooth special-point kinds (fold, hopf, bp, pd, ns)
    solution     (M, 1)     only lam: the exact cycle has no discrete unknowns (its
                            ``layout`` attribute says so); rebuild it with ``coulomb_cycle``
    tangent      (M, 1)     ones
    period       (M,)       t2 [s] (seed 000 eq. 17)                          (extra)
    exists       (M,) int8  1 where the stick-slip cycle exists (ineq. 16 false) (extra)
    limits/kind, limits/param, limits/omega                                   (extra)
                            the existence limit inside the range: kind "V_max" or "F_min"
                            (seed 000 §3.3), the last value where the cycle exists (located
                            to 1e-9 relative) and the pulsation there

``stable``: a one-mass Coulomb stick-slip cycle attracts every trajectory that sticks once
in finite time (the release state is unique), so it is stable wherever it exists.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..errors import InputError
from .._version import __version__
from ..results._atomic import read_hdf5
from ._coulomb import BeltParameters, coulomb_cycle, max_belt_speed, min_normal_force

__all__ = ["CoulombBranch", "coulomb_branch", "load_coulomb_branch"]

STATES = ("y", "v")


@dataclass
class CoulombBranch:
    """Exact Coulomb stick-slip quantities over a range of V_b or F_N (column arrays)."""

    continuation_parameter: str
    param: np.ndarray
    omega: np.ndarray
    period: np.ndarray
    exists: np.ndarray
    ptp: dict
    minimum: dict
    maximum: dict
    mean: dict
    params: BeltParameters
    special: dict = field(default_factory=lambda: {"kind": [], "param": [], "omega": []})
    status: str = "range"
    message: str = ""

    @property
    def stable(self) -> np.ndarray:
        return np.where(self.exists, 1.0, np.nan)

    def _limits(self):
        kind = "V_max" if self.continuation_parameter == "Vb" else "F_min"
        return ([kind] * len(self.special["param"]), list(self.special["param"]), list(self.special["omega"]))

    def to_branch(self):
        """The same data as a runtime-core :class:`~frictionkit.runtime._branch.Branch`."""
        import scipy

        from ..results._branch import Branch
        p = asdict(self.params)
        m = self.param.size
        kinds, params, omegas = self._limits()
        limit_text = ", ".join(f"{k} = {v:.12g}" for k, v in zip(kinds, params)) or "no existence limit in range"
        prov = {"model": "belt", "model_hash": "coulomb-exact-seed000-eq8",
                "continuation_parameter": self.continuation_parameter, "method": "coulomb-exact",
                "frictionkit_version": __version__, "numpy_version": np.__version__,
                "scipy_version": scipy.__version__, "generator_version": "none", "backend": "closed-form",
                "discretization": "coulomb-exact",
                "parameters": {k: v for k, v in p.items() if k != self.continuation_parameter},
                "options": {"existence_limits": dict(zip(kinds, params))}}
        return Branch(kind="periodic", states=STATES, variables=STATES, harmonics=-1, index_omega=-1,
                      solutions=self.param.reshape(m, 1), tangents=np.ones((m, 1)), param=self.param,
                      omega=self.omega, ptp=self.ptp, vmin=self.minimum, vmax=self.maximum, mean=self.mean,
                      stable=self.stable, special=(), counters={"steps": m}, status=self.status,
                      message=f"exact Coulomb stick-slip (seed 000 §3); {limit_text}. {self.message}".strip(),
                      success=self.status == "range",
                      provenance=prov)

    def save(self, path) -> Path:
        """Write the branch to HDF5 (layout in this module's docstring)."""
        import h5py
        path = Path(path)
        kinds, params, omegas = self._limits()

        def limits(f):
            f["solution"].attrs["layout"] = ("lam only: the exact Coulomb cycle (seed 000 §3) has no discrete "
                                             "unknowns; rebuild it with frictionkit.runtime.nonsmooth.coulomb_cycle")
            f["period"] = self.period
            f["exists"] = self.exists.astype(np.int8)
            f["limits/kind"] = np.array(kinds, dtype=h5py.string_dtype())
            f["limits/param"] = np.array(params, dtype=float)
            f["limits/omega"] = np.array(omegas, dtype=float)
        self.to_branch().save(path, extra=limits)
        return path


def load_coulomb_branch(path) -> dict:
    """Read any branch file with the issue-3 layout (or a run file's main branch) into plain arrays.

    Returns
    -------
    dict
        ``attrs`` (dict), ``param``, ``omega``, ``ptp`` (dict state -> array) and, when
        present, ``stable`` and ``special``.
    """
    out = read_hdf5(path, _read_coulomb_layout)
    n = np.size(out["param"])
    arrays = [out["param"], out["omega"], *out["ptp"].values()]
    if not all(np.issubdtype(np.asarray(a).dtype, np.number) and np.shape(a) == (n,) for a in arrays):
        raise InputError(f"branch file {str(path)!r}: damaged (param, omega and ptp must be numeric "
                         f"columns of one length {n})")
    return out


def _read_coulomb_layout(root):
    """The arrays of :func:`load_coulomb_branch` from an open HDF5 file (of a run file,
    ``results/_branch.py``: groups /equilibria, /periodic, its main branch)."""
    f = root[str(root.attrs["main"])] if str(root.attrs.get("layout", "")) == "run" else root
    for name in ("param", "omega", "ptp"):
        if name not in f:
            raise KeyError(f"dataset {name!r} (expected the branch layout of `frictionkit continue --out`)")
    out = {"attrs": {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()},
           "param": f["param"][()], "omega": f["omega"][()],
           "ptp": {k: f["ptp"][k][()] for k in f["ptp"]}}
    for name in ("stable", "special", "limits"):
        if name in f:
            out[name] = f[name][()] if name == "stable" else {k: f[name][k][()] for k in f[name]}
    return out


def coulomb_branch(parameter: str, values, params: BeltParameters | None = None, *,
                   progress: bool = False, **fixed) -> CoulombBranch:
    """Exact Coulomb stick-slip cycle at each value of ``V_b`` or ``F_N`` (seed 000 §3.4 loop).

    Parameters
    ----------
    parameter : {"Vb", "FN"}
        The swept parameter.
    values : array_like
        Its values (> 0).
    params : BeltParameters, optional
        The other parameters (seed 000 Appendix B by default); ``**fixed`` overrides them.
    progress : bool
        Show a tqdm progress bar.

    Returns
    -------
    CoulombBranch
        NaN columns where no stick-slip exists; the existence limit (V_max or F_min, located
        to 1e-9 relative) is a special point when it falls inside the range.
    """
    if parameter not in ("Vb", "FN"):
        raise InputError(f"continuation parameter {parameter!r} not supported for the Coulomb branch; "
                         f"use 'Vb' or 'FN'")
    p = (params or BeltParameters()).with_(**fixed)
    vals = np.asarray(values, dtype=float).reshape(-1)
    if vals.size == 0 or np.any(~np.isfinite(vals)) or np.any(vals <= 0):
        raise InputError(f"{parameter} values must be finite and > 0")
    it = vals
    if progress:
        from tqdm import tqdm
        it = tqdm(vals, desc=f"Coulomb branch in {parameter}", unit="pt", disable=None)
    cols = {k: np.full(vals.size, np.nan) for k in ("omega", "period")}
    stats = {g: {s: np.full(vals.size, np.nan) for s in STATES} for g in ("ptp", "min", "max", "mean")}
    exists = np.zeros(vals.size, dtype=bool)
    done, status, message = vals.size, "range", ""
    try:
        for k, val in enumerate(it):
            c = coulomb_cycle(p.with_(**{parameter: float(val)}))
            exists[k] = c.exists
            cols["omega"][k], cols["period"][k] = c.omega, c.period
            for g, d in (("ptp", c.ptp), ("min", c.minimum), ("max", c.maximum), ("mean", c.mean)):
                for s in STATES:
                    stats[g][s][k] = d[s]
    except KeyboardInterrupt:
        # keep what was computed (the points before the interrupted one)
        done, status, message = k, "interrupted", f"interrupted after {k} of {vals.size} points"
    cut = slice(0, done)
    br = CoulombBranch(continuation_parameter=parameter, param=vals[cut], omega=cols["omega"][cut],
                       period=cols["period"][cut], exists=exists[cut],
                       ptp={s: stats["ptp"][s][cut] for s in STATES}, minimum={s: stats["min"][s][cut] for s in STATES},
                       maximum={s: stats["max"][s][cut] for s in STATES}, mean={s: stats["mean"][s][cut] for s in STATES},
                       params=p, status=status, message=message)
    vals, exists = vals[cut], exists[cut]
    # the existence limit, if the range crosses it
    if vals.size and exists.any() and not exists.all():
        if parameter == "Vb":
            inside, _ = max_belt_speed(p)
        else:
            inside, _ = min_normal_force(p)
        if vals.min() <= inside <= vals.max():
            br.special["kind"].append("existence_limit")
            br.special["param"].append(inside)
            br.special["omega"].append(coulomb_cycle(p.with_(**{parameter: inside})).omega)
    return br
