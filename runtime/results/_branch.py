"""Branch results: column data, full solutions, special points, counters, provenance; HDF5 I/O.

A :class:`Branch` is what :func:`frictionkit.runtime._continuation.continuation` returns.
It is saved with :meth:`Branch.save` to an HDF5 file that can be read without frictionkit
(h5py, MATLAB, HDFView); never pickled.

HDF5 layout
-----------
A run file (:func:`save_run`, what ``frictionkit continue --out`` and ``frictionkit demo``
write) keeps the branches of one run together: the root attribute ``layout`` = ``"run"``
and ``main`` (the name of the main branch) and one group per branch, ``/equilibria`` and
``/periodic``, each holding one branch in the branch layout below (its attributes on the
group).  A branch file (:meth:`Branch.save`) holds one branch at its root.
:func:`load_branch` reads both.  A restart appended to a file (:func:`append_branch`,
``frictionkit continue --restart FILE@I --append``) is a further group ``restart_1``,
``restart_2``, ... in the same branch layout; the root attribute ``appended`` lists them (JSON) and
:func:`load_branch` without ``which`` still returns the file's original branch.

Branch layout (``n_points`` points, ``n_special`` special points)
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Attributes
    ``model`` (str)                  model name (``MODEL_NAME``)
    ``model_hash`` (str)             hash of the canonical recast (``MODEL_HASH``)
    ``continuation_parameter`` (str) name of ``lam``
    ``method`` (str)                 continuation engine: ``"anm"`` or ``"newton"``
    ``frictionkit_version`` (str)
    ``discretization`` (str)         the discretization's ``kind``: ``"aft"``, ``"hbm"``,
                                     ``"collocation-states"``, ``"collocation-recast"``
                                     (files before issue 12: ``"collocation"``, read as
                                     ``"collocation-recast"``), ``"shooting"`` (periodic
                                     orbits), ``"equilibria"`` or ``"aft"`` (equilibria)
    ``sizes`` (JSON str)             what rebuilds the discretization for a restart:
                                     ``harmonics``, ``n_t`` (harmonic balances), and
                                     ``n_intervals``, ``degree`` (collocations; the
                                     collocation of the states adds ``phase_state``, 0 if
                                     absent)
    ``kind`` (str)                   ``"periodic"`` or ``"equilibrium"``
    ``status`` (str), ``message`` (str), ``success`` (bool)
                                     how the run ended (``"range"``, ``"closed"``,
                                     ``"equilibrium"``, ``"max_steps"``, ``"failed"``,
                                     ``"interrupted"``) and why
    ``restarted_from`` (str)         a restarted branch only: ``"<group>@<index>"`` of the
                                     point it continues (``"/"``: a branch file's root)
    ``parameters`` (JSON str)        all parameter values (``lam`` at its start value)
    ``options`` (JSON str)           the continuation options
    ``states``, ``variables`` (JSON str lists)
    ``units`` (JSON str)             unit of each parameter, state and of the time ``"t"``
                                     (``Model.units``; ``""`` dimensionless; absent in older files)
    ``numpy_version``, ``scipy_version``, ``generator_version``, ``backend`` (str)
    ``steps``, ``factorizations``, ``residual_evaluations``, ``jacobian_evaluations`` (int)
    ``analysis_factorizations`` (int) LU factorizations spent after the run on branch-point
                                     detection and bifurcation location (absent in older files)
Datasets (float64 unless noted)
    ``param`` (n_points,)            continuation parameter ``lam``
    ``omega`` (n_points,)            angular frequency [rad/s]; NaN for equilibria
    ``ptp/<state>``, ``min/<state>``, ``max/<state>``, ``mean/<state>`` (n_points,)
                                     peak-to-peak, minimum, maximum and mean over one
                                     period of each original state (extrema of the
                                     Fourier series located by Newton on its derivative)
    ``amplitude/<state>``, ``phase/<state>`` (n_points, H)  periodic harmonic balances: the
                                     amplitude ``A_k`` and phase ``phi_k`` [rad] of harmonic
                                     k = 1..H (column k-1) of each original state
                                     and of each named point of a structure (``y_<point>``,
                                     its displacement, where no state holds it),
                                     ``c_k cos(k omega t) + s_k sin(k omega t) = A_k cos(k omega
                                     t + phi_k)``: ``A_k = hypot(c_k, s_k)``, ``phi_k =
                                     atan2(-s_k, c_k)``; for a forced orbit ``t = 0`` is the
                                     forcing phase 0 (``phi_1`` is the phase relative to
                                     ``cos(w t)``, -pi/2 at a linear resonance); absent in
                                     older files
    ``rms/<state>`` (n_points,)      periodic harmonic balances: root mean square over one
                                     period, ``sqrt(u_0^2 + sum_k A_k^2 / 2)`` (Parseval)
    ``dissipation/<contact>`` (n_points,)  periodic harmonic balances of models with contacts
                                     and second-order states or a structure: the energy each
                                     contact dissipates per period, ``-int_0^T F_c . v dt`` (the
                                     contact's forces times the velocities they act on, any law;
                                     per unit mass for equations written as accelerations;
                                     ``_columns.contact_dissipation``); absent otherwise and in
                                     older files
    ``stable`` (n_points,)           1.0 stable, 0.0 unstable, NaN unknown (filled by the
                                     stability module; equilibria: from the eigenvalues)
    ``eigenvalues`` (n_points, n) complex128, equilibria only: eigenvalues of df/dx
    ``multipliers_re``, ``multipliers_im`` (n_points, n) float64, periodic branches with
                                     stability (option ``stability``, default on): real and
                                     imaginary parts of the Floquet multipliers of each
                                     orbit, by decreasing modulus (HBM: Hill's method on the
                                     HBM Jacobian; collocation: condensed monodromy;
                                     shooting: variational monodromy); NaN at the points whose
                                     ``stable`` flag was inherited from their neighbours (the
                                     analysis pass computes them only where needed, see
                                     ``branch_stability``'s ``stride``); attribute ``method``
                                     on ``multipliers_re``.  Older files hold one complex
                                     (HDF5 compound) dataset ``multipliers``; still read.
    ``max_multiplier`` (n_points,)   largest modulus of the non-trivial multipliers
    ``trivial_multiplier_error`` (n_points,)  distance of the trivial multiplier from 1
                                     (HBM: by Hill's method on the original ODE, the
                                     reliability measure; NaN for forced orbits)
    ``multiplier_agreement`` (n_points,)  HBM: ``|max_multiplier|`` difference between
                                     Hill on the HBM Jacobian and Hill on the original ODE
                                     (NaN otherwise)
    ``motion`` (n_points,) str       "slipping", "stick-slip", "multiple stick" or
                                     "sticking" (models with contacts; seed 000 eq. (26))
    ``accuracy/<column>`` (n_points,)  periodic branches (issue 26; absent in older files): the
                                     error estimates of each orbit, relative to the orbit
                                     (``discretizations/_error.py``): ``err_trunc`` (truncation
                                     of the harmonic balance: one Newton step at 2H from the
                                     ODE's defect on a finer grid), ``err_alias`` (aliasing:
                                     the same with twice the samples), ``err_decay`` (share of
                                     the last quarter of the retained harmonics),
                                     ``decay_rate`` (geometric decay per harmonic), ``err_mesh``
                                     (collocation: mesh defect), and ``harmonics`` (the H of
                                     each point; the ``solution`` rows all have the attribute's
                                     H, the branch's one count)
    ``special/kind`` (n_special,) str   ``"fold"``, ``"hopf"``, ``"bp"``, ``"pd"``, ``"ns"``,
                                     ``"peak"`` (a resonance peak: a maximum of the amplitude
                                     of ``data["state"]``'s harmonic ``data["harmonic"]`` along
                                     the branch, ``data["amplitude"]``)
    ``special/param``, ``special/omega`` (n_special,)  location (omega NaN at folds of
                                     equilibria; at a Hopf point of equilibria: the
                                     imaginary part of the critical eigenvalue)
    ``special/index`` (n_special,) int  index of the branch point just before it
    ``special/solution`` (n_special, size)  the located unknown vector
    ``special/data`` (n_special,) str   JSON of the scalar entries of each special point's
                                     ``data`` (e.g. ``crossing_param`` of a fold: where
                                     the multiplier passes +1; ``located``, ``detected_by``;
                                     ``param_error`` and ``param_error_harmonics`` of a
                                     fold, period doubling or Neimark-Sacker point of a
                                     harmonic balance: its estimated error, the difference
                                     from the point located with that many harmonics,
                                     ``drivers/_accuracy.fold_errors``, ``crossing_errors``)
    ``solution`` (n_points, size)    the full discrete unknowns ``Z = [Y, lam]``; its
                                     attributes give the layout:
                                     ``layout`` = "Y[i*(2H+1)+k]: coefficient k of
                                     variable i (k=0 mean, 2j-1 cos(j omega t), 2j
                                     sin(j omega t)); then omega if autonomous; lam last",
                                     ``harmonics`` (H, 0 for equilibria, -1 for
                                     collocation and shooting, whose ``layout`` says so),
                                     ``variables`` (JSON list: what the rows of Y are, the
                                     recast's variables for its HBM, the states for the
                                     AFT), ``index_omega`` (-1 if none), ``index_lam``
    ``tangent`` (n_points, size)     unit tangent of the branch at each point
    ``validity/<variable>`` (n_points,)  for each validity condition of the recast
                                     (``VALIDITY`` of the model): the worst value over one
                                     period relative to the variable's scale (min u / max|u|
                                     for "positive", min |u| / max|u| for "nonzero");
                                     negative (resp. zero) means violated — e.g. the Gibbs
                                     dip of a truncated sqrt auxiliary (DESIGN §6)
"""
from __future__ import annotations

from dataclasses import dataclass, field
import json

import numpy as np

from ..discretizations._hbm import coefficients_at
from ..errors import InputError
from ._atomic import atomic_path, read_hdf5
from ._checked import COMPLEX, INTEGERS, STRINGS, Damaged, checked, dataset, int_attr, json_attr, json_text, text_attr
from ._columns import contact_dissipation, validity_columns, orbit_samples, trig_extrema

__all__ = ["Branch", "SpecialPoint", "append_branch", "load_branch", "load_run", "save_run", "trig_extrema"]

#: the groups of a run file, in the order :func:`load_branch` prefers them as main branch
RUN_GROUPS = ("periodic", "equilibria")

SPECIAL_KINDS = ("fold", "hopf", "bp", "pd", "ns", "peak")
HBM_LAYOUT = ("Y[i*(2H+1)+k]: coefficient k of variable i (k=0 mean, 2j-1 cos(j omega t), "
              "2j sin(j omega t)); then omega if autonomous; lam last")
#: collocation and shooting (``harmonics`` = -1): the discretization's own unknowns
OTHER_LAYOUT = ("the unknowns of the discretization named by the provenance's 'discretization' "
                "(collocation-states: Z[r*G+i*p+j] = state r at node j of interval i, G = p N_int; "
                "collocation-recast: seed 003 section 2.2; shooting: the initial state); "
                "then omega at index_omega if autonomous; lam last")


def _row_names(disc, model, states):
    """The names of what the rows of the unknowns hold (``solution/variables``): all the
    recast's variables for its harmonic balance (HBM), the states for the AFT of the states,
    the collocation of the states and shooting, the unknowns' own names (``row_names``) for a
    discretization that has them (the quadratic collocation: the recast's variables)."""
    own = disc.row_names
    if own is not None:
        return tuple(own)
    variables = tuple(getattr(model, "variables", ()) or states)
    if disc.H is not None and disc.H >= 0:
        extra = 1 + (1 if disc.omega_index is not None else 0)
        rows = (disc.size - extra) // (2 * disc.H + 1)
        if rows == len(variables):
            return variables
    return tuple(states)


@dataclass
class SpecialPoint:
    """A typed special point of a branch (fold, hopf, bp, pd, ns)."""

    kind: str
    param: float
    omega: float
    index: int
    solution: np.ndarray
    data: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.kind not in SPECIAL_KINDS:
            raise InputError(f"special point kind {self.kind!r} is not one of {SPECIAL_KINDS}")


class Branch:
    """A computed branch: columns, full solutions, special points, counters, provenance.

    Attributes
    ----------
    param, omega : ndarray (n_points,)
    ptp, min, max, mean : dict state -> ndarray (n_points,)
    stable : ndarray (n_points,) of 1/0/NaN
    solutions, tangents : ndarray (n_points, size)
    special : list of SpecialPoint
    counters : dict (steps, factorizations, residual_evaluations, jacobian_evaluations)
    status, message : str;  success : bool
    provenance : dict (model, model_hash, continuation_parameter, method, options, versions)
    validity : dict variable -> ndarray (n_points,) of the worst relative value of each
        validity condition (see the HDF5 layout)
    multipliers, max_multiplier, trivial_multiplier_error, multiplier_agreement : ndarray or None
        Floquet data of periodic branches (``_stability.branch_stability``).
    motion : list of str or None
        Motion label of each orbit (models with contacts).
    amplitude, phase : dict state -> ndarray (n_points, H)
        Periodic harmonic balances: amplitude and phase of harmonics 1..H of each state
        (see the HDF5 layout); empty dicts otherwise.
    rms : dict state -> ndarray (n_points,)
        Periodic harmonic balances: root mean square of each state over one period.
    """

    def __init__(self, *, kind, states, variables, harmonics, index_omega, solutions, tangents,
                 param, omega, ptp, vmin, vmax, mean, stable=None, eigenvalues=None, special=(),
                 counters=None, status="", message="", success=True, provenance=None, validity=None,
                 amplitude=None, phase=None, rms=None, dissipation=None):
        self.kind = kind
        self.states = tuple(states)
        self.variables = tuple(variables)
        self.harmonics = int(harmonics)
        self.index_omega = index_omega
        self.solutions = np.asarray(solutions, dtype=float)
        self.tangents = np.asarray(tangents, dtype=float)
        self.param = np.asarray(param, dtype=float)
        self.omega = np.asarray(omega, dtype=float)
        self.ptp, self.min, self.max, self.mean = ptp, vmin, vmax, mean
        self.stable = (np.full(len(self.param), np.nan) if stable is None
                       else np.asarray(stable, dtype=float))
        self.eigenvalues = eigenvalues
        self.special = list(special)
        self.counters = dict(counters or {})
        self.status, self.message, self.success = status, message, bool(success)
        self.provenance = dict(provenance or {})
        self.validity = dict(validity or {})
        self.amplitude, self.phase, self.rms = dict(amplitude or {}), dict(phase or {}), dict(rms or {})
        self.dissipation = dict(dissipation or {})
        self.accuracy = {}                 # error estimates per point (issue 26), name -> (n_points,)
        self.multipliers = None
        self.max_multiplier = None
        self.trivial_multiplier_error = None
        self.multiplier_agreement = None
        self.stability_method = ""
        self.motion = None
        # set by the code that computed the branch, not saved: lets the caller continue work
        self.discretization = None

    def __len__(self):
        return len(self.param)

    def restart(self, index=-1, append_to=None, **kwargs):
        """Continue from point ``index`` (default: the last) of this branch (AUTO's ``IRS``).

        Rebuilds the model (its zoo name, or the model file given as ``model=``: a model file
        the branch names is never run; refused unless its hash is the branch's), the parameter
        values and the discretization from the branch's provenance, and runs the continuation
        again from that point; see :func:`frictionkit.runtime.drivers.restart_branch` for
        ``kwargs`` (``stop``, ``direction``, ``method``, ``harmonics``, ``discretization``,
        ``intervals``, ``degree``, ``options``, ``progress``, ``model``).  ``append_to`` (a
        path, e.g. the file this branch was loaded from) writes the continued branch into that
        file as a further group (:func:`append_branch`); read it back with
        ``load_branch(path, "restart_1")``.

        Returns
        -------
        Branch
        """
        if _RESTART is None:
            raise InputError("Branch.restart needs the drivers: import frictionkit.runtime.drivers (or take "
                             "load_branch from frictionkit.runtime, which loads them)")
        br = _RESTART(self, index, **kwargs)
        if append_to is not None:
            append_branch(append_to, br)
        return br

    def __repr__(self):
        sp = ", ".join(f"{s.kind}@{s.param:.6g}" for s in self.special)
        return (f"<Branch {self.kind} {self.provenance.get('model', '?')} in "
                f"{self.provenance.get('continuation_parameter', '?')}: {len(self)} points, "
                f"status={self.status!r}, special=[{sp}]>")

    # -- construction ---------------------------------------------------------------
    @classmethod
    def from_solutions(cls, disc, solutions, tangents, validity=None, **kw):
        """Compute the columns of each solution of any discretization (contract items 7, 9, 10).

        Harmonic balances: the extrema of every point's Fourier series in one batch
        (:func:`trig_extrema`); the collocations: the exact extrema of their piecewise
        polynomials (``disc.extrema``), the means from 1024 samples; other discretizations:
        from 1024 samples of each orbit.
        ``validity`` (``{variable: relative}``, one value per point), when the caller has
        measured it (the engine's check of every point), is taken as is; otherwise a harmonic
        balance's columns are measured here (:func:`validity_columns`).
        """
        model = disc.model
        st = tuple(disc.state_names)
        n = len(st)
        sol = np.asarray(solutions, dtype=float).reshape(-1, disc.size)
        infos = [disc.unpack(Z) for Z in sol]
        param = [info["lam"] for info in infos]
        omega = [info["omega"] for info in infos]
        known = validity is not None
        validity = dict(validity or {})
        if disc.H is not None:
            # a harmonic balance: exact extrema of its Fourier series
            nh = 2 * disc.H + 1
            U = (np.array([info["coefficients"] for info in infos]).reshape(len(sol), -1, nh) if len(sol)
                 else np.zeros((0, n, nh)))
            mins, maxs = trig_extrema(U[:, :n])
            means = U[:, :n, 0]
            kw.update(_harmonic_columns(st, U[:, :n]) if disc.H else {})
            points = [disc.point_coefficients(Z) for Z in sol] if disc.H and len(sol) else []
            if points and points[0]:
                # a structure's named points (contract item 25): their columns beside the states'
                names = tuple(points[0])
                more = _harmonic_columns(names, np.array([[p[x] for x in names] for p in points]))
                for group in ("amplitude", "phase", "rms"):
                    kw[group].update(more[group])
            if disc.H:
                kw["dissipation"] = contact_dissipation(disc, sol)
            if not known:
                validity = validity_columns(disc, sol)
        else:
            # any other discretization (collocation, shooting): contract item 6
            x = orbit_samples(disc, sol, 1024)
            mins, maxs, means = x.min(axis=2), x.max(axis=2), x.mean(axis=2)
            ext = [disc.extrema(Z) for Z in sol]
            if ext and ext[0] is not None:
                # the collocations' piecewise polynomials: their extrema located exactly (contract
                # item 27; the largest of 1024 samples misses a peak by up to (pi / 1024)^2 / 2
                # of its size)
                mins = np.array([e[0] for e in ext])[:, :n]
                maxs = np.array([e[1] for e in ext])[:, :n]
        mins, maxs, means = (np.asarray(a, dtype=float).reshape(-1, n) for a in (mins, maxs, means))
        ptp = {s: maxs[:, i] - mins[:, i] for i, s in enumerate(st)}
        H = disc.H if disc.H is not None else -1
        return cls(kind="equilibrium" if H == 0 else "periodic", states=st,
                   variables=_row_names(disc, model, st), harmonics=H,
                   index_omega=disc.omega_index if disc.omega_index is not None else -1,
                   solutions=sol, tangents=np.asarray(tangents, dtype=float).reshape(-1, disc.size),
                   param=param, omega=omega, ptp=ptp,
                   vmin={s: mins[:, i] for i, s in enumerate(st)},
                   vmax={s: maxs[:, i] for i, s in enumerate(st)},
                   mean={s: means[:, i] for i, s in enumerate(st)},
                   validity=validity, **kw)

    # -- access ---------------------------------------------------------------------
    def special_points(self, kind=None):
        """Special points, optionally of one kind, in branch order."""
        return [s for s in self.special if kind is None or s.kind == kind]

    def time_series(self, index, n_t=512, periods=1.0):
        """The original states at branch point ``index`` over ``periods`` periods.

        Harmonic-balance branches (``harmonics >= 0``, also loaded from HDF5) are summed from
        their coefficients; collocation and shooting branches are sampled by their
        discretization (``discretization.samples``, contract item 8: the collocation
        polynomials, an integration of the ODE for shooting), which needs a whole number of
        periods dividing ``n_t``.

        Returns
        -------
        t : ndarray (n_t,)   time [s] (for equilibria: a unit interval)
        x : ndarray (n, n_t)
        """
        Z = self.solutions[index]
        H = self.harmonics
        if H < 0:
            return self._sampled_time_series(Z, n_t, periods)
        nh = 2 * H + 1
        n = len(self.states)
        U = Z[: n * nh].reshape(n, nh)
        om = self.omega[index]
        if H == 0 or not np.isfinite(om):
            return np.linspace(0, 1, n_t), np.repeat(U[:, :1], n_t, axis=1)
        theta = 2 * np.pi * periods * np.arange(n_t) / n_t
        return theta / om, coefficients_at(U, theta)

    def _sampled_time_series(self, Z, n_t, periods):
        """:meth:`time_series` of a branch without Fourier coefficients."""
        if self.discretization is None:
            raise InputError("time_series of a collocation or shooting branch needs its discretization "
                             "(branch.discretization; a branch loaded from HDF5 has none)")
        k = int(round(periods))
        if k < 1 or k != periods or n_t % k:
            raise InputError(f"periods = {periods}: a {self.discretization.kind} branch is sampled over a "
                             f"whole number of periods dividing n_t = {n_t}")
        t, x = self.discretization.samples(Z, n_t // k)
        T = (t[1] - t[0]) * len(t) if len(t) > 1 else 0.0
        return np.concatenate([t + j * T for j in range(k)]), np.tile(x, (1, k))

    # -- report and exports (``_report``, ``_export``) -----------------------------------
    def report(self, path, **kwargs):
        """Write the interactive HTML report of this branch (:func:`._report.report`)."""
        from ._report import report
        return report([self], path, **kwargs)

    def to_dataframe(self):
        """One row per point, units in ``df.attrs["units"]`` (:func:`._export.to_dataframe`)."""
        from ._export import to_dataframe
        return to_dataframe(self)

    def to_xarray(self):
        """An :class:`xarray.Dataset` over ``point`` with units (:func:`._export.to_xarray`)."""
        from ._export import to_xarray
        return to_xarray(self)

    # -- HDF5 -------------------------------------------------------------------------
    def save(self, path, extra=None):
        """Write the branch to HDF5 with the layout of this module's docstring, atomically.

        The file is written next to ``path`` and renamed over it when complete
        (:func:`~frictionkit.runtime.results._atomic.atomic_path`): an interrupted or failed
        save leaves the previous file intact.  ``extra(f)``, if given, adds datasets to the
        open :class:`h5py.File` within the same atomic write.  ``path`` may also be a binary
        file-like object (e.g. :class:`io.BytesIO`), written directly (in memory without one:
        :meth:`to_image`).
        """
        if hasattr(path, "write"):
            self._write(path, extra)
            return
        with atomic_path(path) as tmp:
            self._write(tmp, extra)

    def _write(self, path, extra):
        import h5py
        with h5py.File(path, "w") as f:
            self._write_group(f, extra)

    def _write_group(self, f, extra=None):
        """Write the branch layout into ``f``, an open :class:`h5py.File` or group."""
        import h5py
        prov = self.provenance
        a = f.attrs
        for key in ("model", "model_hash", "continuation_parameter", "method",
                    "frictionkit_version", "numpy_version", "scipy_version",
                    "generator_version", "backend", "discretization"):
            a[key] = str(prov.get(key, ""))
        a["kind"] = self.kind
        a["status"] = self.status
        a["message"] = self.message
        a["success"] = self.success
        a["model_source"] = str(prov.get("model_source", ""))
        if prov.get("restarted_from"):
            a["restarted_from"] = str(prov["restarted_from"])
        a["sizes"] = json.dumps(prov.get("sizes", {}))
        a["parameters"] = json.dumps(prov.get("parameters", {}))
        a["options"] = json.dumps(prov.get("options", {}), default=str)
        a["units"] = json.dumps(prov.get("units", {}))
        a["states"] = json.dumps(list(self.states))
        a["variables"] = json.dumps(list(self.variables))
        for k, v in self.counters.items():
            a[k] = int(v)
        f["param"] = self.param
        f["omega"] = self.omega
        for group, data in (("ptp", self.ptp), ("min", self.min), ("max", self.max),
                            ("mean", self.mean)):
            g = f.create_group(group)
            for s in self.states:
                g[s] = np.asarray(data[s], dtype=float)
        for group, data in (("amplitude", self.amplitude), ("phase", self.phase), ("rms", self.rms)):
            if data:
                g = f.create_group(group)
                for s in self.states:
                    g[s] = np.asarray(data[s], dtype=float)
        if self.dissipation:
            g = f.create_group("dissipation")
            for c, v in self.dissipation.items():
                g[c] = np.asarray(v, dtype=float)
        if self.accuracy:
            g = f.create_group("accuracy")
            for c, v in self.accuracy.items():
                g[c] = np.asarray(v, dtype=float)
        f["stable"] = self.stable
        if self.eigenvalues is not None:
            f["eigenvalues"] = np.asarray(self.eigenvalues, dtype=complex)
        g = f.create_group("special")
        g.create_dataset("kind", data=np.array([s.kind for s in self.special], dtype=object),
                         dtype=h5py.string_dtype())
        g["param"] = np.array([s.param for s in self.special], dtype=float)
        g["omega"] = np.array([s.omega for s in self.special], dtype=float)
        g["index"] = np.array([s.index for s in self.special], dtype=np.int64)
        g["solution"] = (np.array([s.solution for s in self.special], dtype=float)
                         if self.special else np.zeros((0, self.solutions.shape[1])))
        g.create_dataset("data", data=np.array([json.dumps(_scalars(s.data)) for s in self.special],
                                               dtype=object), dtype=h5py.string_dtype())
        if self.multipliers is not None:
            mult = np.asarray(self.multipliers, dtype=complex)
            d = f.create_dataset("multipliers_re", data=mult.real)
            f["multipliers_im"] = mult.imag
            d.attrs["method"] = str(self.stability_method)
            for key in ("max_multiplier", "trivial_multiplier_error", "multiplier_agreement"):
                f[key] = np.asarray(getattr(self, key), dtype=float)
        if self.motion is not None:
            f.create_dataset("motion", data=np.array(list(self.motion), dtype=object),
                             dtype=h5py.string_dtype())
        d = f.create_dataset("solution", data=self.solutions)
        d.attrs["layout"] = HBM_LAYOUT if self.harmonics >= 0 else OTHER_LAYOUT
        d.attrs["harmonics"] = self.harmonics
        d.attrs["variables"] = json.dumps(list(self.variables))
        d.attrs["index_omega"] = int(self.index_omega)
        d.attrs["index_lam"] = int(self.solutions.shape[1] - 1)
        f["tangent"] = self.tangents
        g = f.create_group("validity")
        for var, v in self.validity.items():
            g[var] = np.asarray(v, dtype=float)
        if extra is not None:
            extra(f)

    @classmethod
    def load(cls, path, which=None):
        """Read a branch written by :meth:`save` or :func:`save_run`.

        ``which`` (``"periodic"`` or ``"equilibria"``) picks a branch of a run file; by
        default its main branch (periodic if there is one, else the equilibria).  For a
        branch file it must name the file's one branch (or be None).

        Raises
        ------
        InputError
            The file does not exist, is not HDF5 (empty, truncated, text, random bytes) or is
            an HDF5 file without the layout of this module (foreign, missing or mistyped
            datasets); the message names the path and the problem.
        """
        import h5py
        if hasattr(path, "read"):          # a binary file-like object
            with h5py.File(path, "r") as f:
                return cls._read(_pick_group(f, which, "the given file"))
        return read_hdf5(path, lambda f: cls._read(_pick_group(f, which, f"branch file {path}")))

    def to_image(self) -> bytes:
        """The branch as the bytes of an HDF5 file of this module's layout (what :meth:`save`
        writes), made in memory by HDF5's own core driver.

        No Python file object takes part: h5py holds its global lock while it calls the
        methods of one, which its documentation warns can deadlock a process whose other
        threads use h5py or collect garbage (the sweep's in-process Dask workers are threads;
        ``runtime/sweeps/_tasks.py``).  :meth:`from_image` reads the bytes back."""
        import h5py
        with h5py.File.in_memory() as f:
            self._write_group(f)
            f.flush()
            return bytes(f.id.get_file_image())

    @classmethod
    def from_group(cls, group):
        """The branch :meth:`save` wrote into the open HDF5 group ``group`` (of any file: a
        sweep store's task), read in place; the layout is checked as by :meth:`load`."""
        return cls._read(group)

    @classmethod
    def from_image(cls, data: bytes, which=None):
        """The branch in ``data``, the bytes of an HDF5 file (:meth:`to_image`), read in
        memory by HDF5's core driver; the layout is checked as by :meth:`load`."""
        import h5py
        with h5py.File.in_memory(data) as f:
            return cls._read(_pick_group(f, which, "the given HDF5 image"))

    @classmethod
    def _read(cls, f):
        """The branch in group ``f``, every attribute and dataset checked against the layout
        before it is read (:mod:`._checked`: a file may come from anywhere)."""
        if "states" not in f.attrs or "solution" not in f:
            raise KeyError("the root attribute 'states' or the dataset 'solution' (a foreign HDF5 file?)")
        a = f.attrs
        states = json_attr(f, "states", "list of names")
        if not states or len(set(states)) != len(states):
            raise Damaged(f"attribute 'states' of {f.name}: {states!r} is not a list of distinct state names")
        kind = text_attr(f, "kind")
        if kind not in ("periodic", "equilibrium"):
            raise Damaged(f"attribute 'kind' of {f.name}: {kind!r}, not 'periodic' or 'equilibrium'")
        prov = {k: text_attr(f, k, "") for k in ("model", "model_hash", "continuation_parameter", "method",
                                                 "frictionkit_version", "numpy_version", "scipy_version",
                                                 "generator_version", "backend", "discretization")}
        prov["model_source"] = text_attr(f, "model_source", "")
        prov["group"] = f.name.lstrip("/") or "/"      # where in its file the branch was read
        if "restarted_from" in a:
            prov["restarted_from"] = text_attr(f, "restarted_from")
        prov["sizes"] = json_attr(f, "sizes", "table", {})
        prov["units"] = json_attr(f, "units", "table of text", {})
        prov["parameters"] = json_attr(f, "parameters", "table of numbers")
        prov["options"] = json_attr(f, "options", "table")
        counters = {k: int_attr(f, k) for k in ("steps", "factorizations", "residual_evaluations",
                                                "jacobian_evaluations", "analysis_factorizations") if k in a}
        # the number of points n and of unknowns per point fix every other shape
        param = dataset(f, "param", (None,))
        n = len(param)
        sol = checked(f, "solution", (n, None))
        size = sol.shape[1]
        harmonics, index_omega = int_attr(sol, "harmonics"), int_attr(sol, "index_omega")
        if harmonics < -1 or harmonics >= 0 and len(states) * (2 * harmonics + 1) > size \
                or not -1 <= index_omega < size:
            raise Damaged(f"dataset {sol.name}: harmonics {harmonics} and index_omega {index_omega} do not fit "
                          f"{size} unknowns of {len(states)} states")
        variables = json_attr(sol, "variables", "list of names")
        columns = {}
        for group in ("ptp", "min", "max", "mean"):
            columns[group] = {s: dataset(f, f"{group}/{s}", (n,)) for s in states}
        sp = f["special"]
        kinds = [_text(k) for k in dataset(sp, "kind", (None,), STRINGS)]
        n_sp = len(kinds)
        data = ([json_text(_text(d), f"dataset {sp.name}/data", "table") for d in dataset(sp, "data", (n_sp,), STRINGS)]
                if "data" in sp else [{} for _ in kinds])
        special = [SpecialPoint(kind=k, param=float(p), omega=float(o), index=int(i), solution=z, data=dd)
                   for k, p, o, i, z, dd in zip(kinds, dataset(sp, "param", (n_sp,)), dataset(sp, "omega", (n_sp,)),
                                                dataset(sp, "index", (n_sp,), INTEGERS),
                                                dataset(sp, "solution", (n_sp, size)), data)]
        validity = ({k: dataset(f, f"validity/{k}", (n,)) for k in f["validity"]} if "validity" in f else None)
        br = cls(kind=kind, states=states, variables=variables, harmonics=harmonics, index_omega=index_omega,
                 solutions=sol[()], tangents=dataset(f, "tangent", (n, size)), param=param,
                 omega=dataset(f, "omega", (n,)), ptp=columns["ptp"], vmin=columns["min"], vmax=columns["max"],
                 mean=columns["mean"], stable=dataset(f, "stable", (n,)), validity=validity,
                 eigenvalues=dataset(f, "eigenvalues", (n, None), COMPLEX) if "eigenvalues" in f else None,
                 special=special, counters=counters, status=text_attr(f, "status", ""),
                 message=text_attr(f, "message", ""), success=bool(a.get("success", False)), provenance=prov,
                 **{g: {s: dataset(f, f"{g}/{s}", (n,) if g == "rms" else (n, None)) for s in states}
                    for g in ("amplitude", "phase", "rms") if g in f})
        # plain re/im datasets; files before issue 16 hold one complex compound dataset, and
        # files written before the stability columns have neither
        if "multipliers_re" in f:
            re = dataset(f, "multipliers_re", (n, None))
            br.multipliers = re + 1j * dataset(f, "multipliers_im", (n, re.shape[1]))
            br.stability_method = text_attr(f["multipliers_re"], "method", "")
        elif "multipliers" in f:
            br.multipliers = dataset(f, "multipliers", (n, None), COMPLEX)
            br.stability_method = text_attr(f["multipliers"], "method", "")
        if br.multipliers is not None:
            for key in ("max_multiplier", "trivial_multiplier_error", "multiplier_agreement"):
                setattr(br, key, dataset(f, key, (n,)) if key in f else None)
        if "motion" in f:
            br.motion = [_text(x) for x in dataset(f, "motion", (n,), STRINGS)]
        if "dissipation" in f:
            br.dissipation = {c: dataset(f, f"dissipation/{c}", (n,)) for c in f["dissipation"]}
        if "accuracy" in f:
            br.accuracy = {c: dataset(f, f"accuracy/{c}", (n,)) for c in f["accuracy"]}
        return br


def _harmonic_columns(states, U) -> dict:
    """``amplitude``, ``phase`` (P, H) and ``rms`` (P,) of each state from the coefficients
    ``U`` (P, n, 2H+1) of P orbits (conventions in the module docstring's HDF5 layout)."""
    c, s = U[:, :, 1::2], U[:, :, 2::2]
    amp = np.hypot(c, s)
    ph = np.arctan2(-s, c)
    rms = np.sqrt(U[:, :, 0] ** 2 + 0.5 * np.sum(amp ** 2, axis=2))
    return dict(amplitude={x: amp[:, i] for i, x in enumerate(states)},
                phase={x: ph[:, i] for i, x in enumerate(states)},
                rms={x: rms[:, i] for i, x in enumerate(states)})


# the restart driver, registered by ``drivers._branches`` (a higher layer: passed in, not imported)
_RESTART = None


def register_restart(function):
    """Set the function behind :meth:`Branch.restart` (called once by the drivers layer)."""
    global _RESTART
    _RESTART = function


def _text(x) -> str:
    return x.decode() if isinstance(x, bytes) else str(x)


def _scalars(data: dict) -> dict:
    """The JSON-able scalar entries of a special point's ``data`` (arrays are not saved)."""
    out = {}
    for k, v in data.items():
        if isinstance(v, (bool, np.bool_)):
            out[k] = bool(v)
        elif isinstance(v, (int, np.integer)):
            out[k] = int(v)
        elif isinstance(v, (float, np.floating)):
            out[k] = float(v)            # NaN/inf: Python's json writes and reads them
        elif isinstance(v, str):
            out[k] = v
    return out


def _appended(f) -> list:
    """The names of the restart groups appended to an open file (:func:`append_branch`)."""
    return list(json.loads(_text(f.attrs["appended"]))) if "appended" in f.attrs else []


def _pick_group(f, which, where):
    """The group of ``f`` holding branch ``which`` (see :meth:`Branch.load`)."""
    appended = _appended(f)
    if which in appended:
        return f[which]
    if which not in (None, *RUN_GROUPS):
        raise InputError(f"{where}: no branch {which!r}; choose one of {', '.join([*RUN_GROUPS, *appended])}")
    groups = [g for g in RUN_GROUPS if g in f and "states" in f[g].attrs]
    if not groups:                        # a branch file: its one branch is at the root
        kind = "equilibria" if _text(f.attrs.get("kind", "")) == "equilibrium" else "periodic"
        if which not in (None, kind):
            raise InputError(f"{where}: holds only the {kind} branch, not {which!r}")
        return f
    if which is None:
        return f[groups[0]]
    if which not in groups:
        raise InputError(f"{where}: holds only the {', '.join(groups)} branch, not {which!r}")
    return f[which]


def load_branch(path, which=None) -> Branch:
    """Read a branch saved by :meth:`Branch.save` or :func:`save_run`.

    Parameters
    ----------
    path : str or path
        The HDF5 file.
    which : {None, "periodic", "equilibria", "restart_1", "restart_2", ...}
        The branch of a run file; default its main branch (periodic, else equilibria, also
        after restarts were appended); ``"restart_K"`` the K-th appended restart
        (:func:`append_branch`).

    Examples
    --------
    >>> per = load_branch("belt.h5")                    # doctest: +SKIP
    >>> eq = load_branch("belt.h5", "equilibria")       # doctest: +SKIP
    >>> more = load_branch("belt.h5", "restart_1")      # doctest: +SKIP
    """
    return Branch.load(path, which)


def load_run(path) -> list:
    """Every branch of a run file (equilibria first, then the appended restarts in order),
    or the one branch of a branch file (and its appended restarts)."""
    import h5py
    try:
        with h5py.File(path, "r") as f:
            names = [g for g in ("equilibria", "periodic") if g in f and "states" in f[g].attrs]
            appended = _appended(f)
    except OSError:
        names, appended = [], []          # load_branch names the problem
    main = [Branch.load(path, n) for n in names] or [Branch.load(path)]
    return main + [Branch.load(path, n) for n in appended]


def append_branch(path, branch) -> str:
    """Add ``branch`` to the existing HDF5 file ``path`` as a further group; return its name.

    The groups already there are kept unchanged; the new one is ``restart_K`` (K = 1, 2, ...),
    listed in the root attribute ``appended``.  Atomic: the file is copied next to itself,
    the group written into the copy, and the copy renamed over ``path`` once complete, so an
    interrupted or failed append leaves the previous file as it was.

    Raises
    ------
    InputError
        ``path`` does not exist or is not a branch or run file of this module's layout.
    """
    import shutil
    import h5py
    names = read_hdf5(path, lambda f: (_pick_group(f, None, f"branch file {path}").attrs["states"], _appended(f))[1])
    name = f"restart_{len(names) + 1}"
    with atomic_path(path) as tmp:
        shutil.copyfile(path, tmp)
        with h5py.File(tmp, "r+") as f:
            branch._write_group(f.create_group(name))
            f.attrs["appended"] = json.dumps([*names, name])
    return name


def save_run(path, equilibria=None, periodic=None):
    """Write the branches of one run to one HDF5 file (groups ``/equilibria``, ``/periodic``).

    The layout is in this module's docstring; the write is atomic, as :meth:`Branch.save`.
    A branch given as None is left out (at least one is needed).
    """
    import h5py
    branches = {k: b for k, b in (("periodic", periodic), ("equilibria", equilibria)) if b is not None}
    if not branches:
        raise InputError("save_run: give the equilibria, the periodic branch or both")
    with atomic_path(path) as tmp, h5py.File(tmp, "w") as f:
        f.attrs["layout"] = "run"
        f.attrs["main"] = next(iter(branches))
        for name, br in branches.items():
            br._write_group(f.create_group(name))
