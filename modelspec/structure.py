"""Linear structures given numerically, with contacts declared symbolically (DESIGN §6).

A structure is linear and numeric: modal data (natural frequencies, damping ratios, mass-
normalised mode shapes at named points) or mass, damping and stiffness matrices (dense
numpy, ``scipy.sparse`` or MatrixMarket ``.mtx`` files), never expanded in sympy.  Only what
acts on it is symbolic: the forces at its named points (friction contacts, harmonic forcing),
written with the displacement and velocity symbols of those points::

    import numpy as np
    from frictionkit.modelspec import ModelSpec, Structure, laws

    m = ModelSpec("bowed", "bowed string, N modes")
    Vb, FN = m.parameter("Vb", 0.1, unit="m/s"), m.parameter("FN", 1.0, unit="N")
    k = np.arange(1, 9)
    s = m.structure(Structure.modal(frequencies=2 * np.pi * 100 * k, damping=0.005,
                                    shapes={"bow": np.sqrt(2) * np.sin(k * np.pi * 0.1)}))
    mu = m.friction("bow", laws.regularized, s.velocity("bow") - Vb, mus=0.4, mud=0.2, eps=1e-4, n=10)
    s.force("bow", FN * mu)

The modal equations are ``q_j'' + 2 zeta_j w_j q_j' + w_j^2 q_j = sum_P phi_j(P) F_P`` with
the shapes mass-normalised (``phi_j^T M phi_j = 1``): the displacement of point ``P`` is
``sum_j phi_j(P) q_j``.  Matrices are reduced by the runtime (modes below a cut-off, plus the
static correction of the truncated ones at the points where forces act), so that codegen and
the harmonic balance only ever see the points.

This module checks what it can without solving anything (shapes, symmetry, finiteness,
point names, damping options, readable files); the runtime's reduction checks the rest
(a mass that is not positive definite, a cut-off with no mode below it).
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .errors import ModelSpecError

__all__ = ["Structure", "StructureError"]


class StructureError(ModelSpecError):
    """A structure's numeric data are not usable: matrices of mismatched or non-square shape,
    a non-symmetric matrix, non-finite entries, a ``.mtx`` file that does not parse, a point
    that does not exist, contradictory damping options, modes that are not underdamped."""


def _read_matrix(value, what):
    """A 2-D float matrix from an array, a scipy.sparse matrix or a MatrixMarket file path."""
    # scipy only for structures given as matrices: declaring any other model does not import it
    import scipy.io
    import scipy.sparse
    if isinstance(value, (str, Path)):
        path = Path(value)
        if not path.is_file():
            raise StructureError(f"{what}: file {str(path)!r} does not exist")
        try:
            value = scipy.io.mmread(str(path))
        except Exception as exc:            # scipy raises ValueError, TypeError, IndexError...
            raise StructureError(f"{what}: file {str(path)!r} is not a MatrixMarket matrix ({exc}); "
                                 "write it with scipy.io.mmwrite or your finite-element code's .mtx export") from None
    try:
        if scipy.sparse.issparse(value):
            mat = scipy.sparse.csr_matrix(value, dtype=float)
            data = mat.data
        else:
            mat = np.array(value, dtype=float)
            data = mat
    except (TypeError, ValueError) as exc:
        raise StructureError(f"{what}: {type(value).__name__} is not a real matrix ({exc})") from None
    if mat.ndim != 2 or mat.shape[0] != mat.shape[1]:
        raise StructureError(f"{what}: a {'x'.join(map(str, mat.shape))} array is not a square matrix")
    if not np.all(np.isfinite(data)):
        raise StructureError(f"{what}: has non-finite entries (inf or nan)")
    return mat


def _asymmetry(mat):
    """``max |A - A^T| / max |A|`` (0 for a symmetric matrix)."""
    big = abs(mat).max()                  # ndarray and scipy.sparse alike
    return float(abs(mat - mat.T).max()) / float(big) if big else 0.0


def _vector(value, n, what):
    arr = np.array(value, dtype=float).ravel()
    if arr.shape != (n,):
        raise StructureError(f"{what}: has {arr.size} entries, the structure {n}")
    if not np.all(np.isfinite(arr)):
        raise StructureError(f"{what}: has non-finite entries")
    return arr


@dataclass(frozen=True)
class Structure:
    """A linear structure's numeric data and its named points (build it with :meth:`modal`,
    :meth:`from_matrices` or :meth:`from_mtx`).

    Attributes
    ----------
    kind : {"modal", "matrices"}
    points : tuple of str
        The named points (where forces act, where results are wanted).
    data : dict
        Modal: ``frequencies`` (n_m,) rad/s, ``damping`` (n_m,), ``shapes`` (n_points, n_m).
        Matrices: ``mass``, ``stiffness``, optional ``damping_matrix``, ``rayleigh``,
        ``damping_ratio``, ``point_vectors`` (n_points, n_dof) and the reduction options
        ``modes``, ``cutoff``, ``static_correction``.
    displacement_unit : str
        Unit of the displacements (velocities are per the model's time unit).
    """

    kind: str
    points: tuple
    data: dict = field(repr=False)
    displacement_unit: str = ""

    # -- constructors ---------------------------------------------------------------------
    @classmethod
    def modal(cls, frequencies, damping, shapes, *, displacement_unit: str = "") -> "Structure":
        """A structure from modal data.

        Parameters
        ----------
        frequencies : array_like (n_m,)
            Natural angular frequencies ``w_j`` [rad/s], all positive (rigid-body modes are not
            supported: constrain the structure).
        damping : float or array_like (n_m,)
            Modal damping ratios ``zeta_j``, in ``[0, 1)`` (underdamped modes).
        shapes : dict
            ``{point name: array (n_m,)}``, the mass-normalised mode shapes at the point.
        displacement_unit : str, optional
        """
        w = np.array(frequencies, dtype=float).ravel()
        if w.size == 0:
            raise StructureError("Structure.modal: frequencies is empty; give at least one mode")
        if not np.all(np.isfinite(w)) or np.any(w <= 0):
            bad = int(np.flatnonzero(~(np.isfinite(w) & (w > 0)))[0])
            raise StructureError(f"Structure.modal: frequency {bad} is {w[bad]!r}; natural frequencies must be "
                                 "finite and positive (a rigid-body mode has none: constrain the structure)")
        zeta = np.broadcast_to(np.array(damping, dtype=float), w.shape).copy() if np.ndim(damping) == 0 \
            else _vector(damping, w.size, "Structure.modal: damping")
        _check_ratios(zeta, "Structure.modal: damping")
        names, rows = _point_rows(shapes, w.size, "Structure.modal: shapes")
        return cls("modal", names, dict(frequencies=w, damping=zeta, shapes=rows),
                   _unit(displacement_unit))

    @classmethod
    def from_matrices(cls, mass, stiffness, *, points, damping=None, rayleigh=None, damping_ratio=None,
                      modes=None, cutoff=None, static_correction=True, displacement_unit: str = "") -> "Structure":
        """A structure from mass, stiffness (and damping) matrices, reduced at load time.

        Parameters
        ----------
        mass, stiffness : ndarray, scipy.sparse matrix or path to a ``.mtx`` file
            Symmetric, square, of the same size n_dof; the mass positive definite (checked by
            the reduction).
        points : dict
            ``{name: dof index}`` or ``{name: array (n_dof,)}`` (a load/observation vector,
            e.g. a relative displacement between two degrees of freedom).
        damping : matrix or path, optional
            A damping matrix; it must be proportional (diagonal in the retained modes: checked
            by the reduction).  At most one of ``damping``, ``rayleigh`` and ``damping_ratio``.
        rayleigh : (alpha, beta), optional
            ``C = alpha M + beta K``: modal ratios ``(alpha / w + beta w) / 2``.
        damping_ratio : float or array_like, optional
            Modal damping ratios of the retained modes.
        modes : int, optional
            Number of retained modes (lowest frequencies); or
        cutoff : float, optional
            Keep the modes below this angular frequency [rad/s].  One of ``modes`` and
            ``cutoff`` is required.
        static_correction : bool
            Add the static correction of the truncated modes (residual flexibility) at the
            points where forces act (default True).
        """
        M = _read_matrix(mass, "mass matrix")
        K = _read_matrix(stiffness, "stiffness matrix")
        if M.shape != K.shape:
            raise StructureError(f"mass matrix is {M.shape[0]}x{M.shape[1]} but stiffness matrix "
                                 f"{K.shape[0]}x{K.shape[1]}: they must have the same size")
        n = M.shape[0]
        for mat, what in ((M, "mass matrix"), (K, "stiffness matrix")):
            if _asymmetry(mat) > 1e-10:
                raise StructureError(f"{what} is not symmetric (max |A - A^T| / max |A| = {_asymmetry(mat):.2g}); "
                                     "frictionkit reduces symmetric (conservative) structures")
        given = [k for k, v in (("damping", damping), ("rayleigh", rayleigh), ("damping_ratio", damping_ratio))
                 if v is not None]
        if len(given) > 1:
            raise StructureError(f"Structure.from_matrices: give one damping option, not {' and '.join(given)}")
        data = dict(mass=M, stiffness=K, static_correction=bool(static_correction))
        if damping is not None:
            C = _read_matrix(damping, "damping matrix")
            if C.shape != M.shape:
                raise StructureError(f"damping matrix is {C.shape[0]}x{C.shape[1]}, the mass matrix {n}x{n}")
            data["damping_matrix"] = C
        if rayleigh is not None:
            try:
                a, b = (float(x) for x in rayleigh)
            except (TypeError, ValueError):
                raise StructureError(f"rayleigh={rayleigh!r} must be (alpha, beta): C = alpha M + beta K") from None
            if not (math.isfinite(a) and math.isfinite(b)) or a < 0 or b < 0:
                raise StructureError(f"rayleigh={rayleigh!r}: alpha and beta must be finite and >= 0")
            data["rayleigh"] = (a, b)
        if damping_ratio is not None:
            ratio = np.array(damping_ratio, dtype=float).ravel()
            _check_ratios(ratio, "damping_ratio")
            data["damping_ratio"] = ratio
        if (modes is None) == (cutoff is None):
            raise StructureError("Structure.from_matrices: give the retained modes as modes=<count> or "
                                 "cutoff=<angular frequency, rad/s> (one of them)")
        if modes is not None:
            if isinstance(modes, bool) or int(modes) != modes or not 1 <= int(modes) < n:
                raise StructureError(f"modes={modes!r}: give an integer between 1 and n_dof - 1 = {n - 1}")
            data["modes"] = int(modes)
        if cutoff is not None:
            c = float(cutoff)
            if not math.isfinite(c) or c <= 0:
                raise StructureError(f"cutoff={cutoff!r} must be a positive angular frequency [rad/s]")
            data["cutoff"] = c
        names, rows = [], []
        if not isinstance(points, dict) or not points:
            raise StructureError("points must be a non-empty dict {name: dof index or vector (n_dof,)}")
        for name, where in points.items():
            _check_point_name(name)
            if isinstance(where, (int, np.integer)) and not isinstance(where, bool):
                if not 0 <= int(where) < n:
                    raise StructureError(f"point {name!r}: degree of freedom {int(where)} does not exist "
                                         f"(the structure has {n}, 0..{n - 1})")
                row = np.zeros(n)
                row[int(where)] = 1.0
            else:
                row = _vector(where, n, f"point {name!r}")
                if not np.any(row):
                    raise StructureError(f"point {name!r}: its vector is zero")
            names.append(name)
            rows.append(row)
        data["point_vectors"] = np.array(rows)
        return cls("matrices", tuple(names), data, _unit(displacement_unit))

    @classmethod
    def from_mtx(cls, mass_file, stiffness_file, *, damping_file=None, **options) -> "Structure":
        """:meth:`from_matrices` with the matrices read from MatrixMarket files (``scipy.io.mmread``)."""
        return cls.from_matrices(Path(mass_file), Path(stiffness_file),
                                 damping=None if damping_file is None else Path(damping_file), **options)

    # -- properties -----------------------------------------------------------------------
    @property
    def n_dof(self) -> int:
        """Degrees of freedom of the model as given (modes for modal data)."""
        if self.kind == "modal":
            return int(self.data["frequencies"].size)
        return int(self.data["mass"].shape[0])

    def point_index(self, name) -> int:
        """Position of a point in :attr:`points`, or a :class:`StructureError` naming them."""
        if name not in self.points:
            raise StructureError(f"point {name!r} does not exist; the structure's points are "
                                 f"{', '.join(self.points)}")
        return self.points.index(name)

    def fingerprint(self) -> str:
        """SHA-256 of every number and option (the model's hash includes it)."""
        h = hashlib.sha256(repr((self.kind, self.points, self.displacement_unit)).encode())
        for key in sorted(self.data):
            value = self.data[key]
            h.update(key.encode() + b"\0")
            if hasattr(value, "tocoo"):
                coo = value.tocoo()
                order = np.lexsort((coo.col, coo.row))
                for arr in (coo.row[order], coo.col[order], coo.data[order]):
                    h.update(np.ascontiguousarray(arr, dtype=np.float64).tobytes())
                h.update(repr(value.shape).encode())
            elif isinstance(value, np.ndarray):
                h.update(repr(value.shape).encode() + np.ascontiguousarray(value, dtype=np.float64).tobytes())
            else:
                h.update(repr(value).encode())
        return h.hexdigest()


def _check_ratios(zeta, what):
    if not np.all(np.isfinite(zeta)) or np.any(zeta < 0) or np.any(zeta >= 1):
        bad = float(zeta[~(np.isfinite(zeta) & (zeta >= 0) & (zeta < 1))][0])
        raise StructureError(f"{what}: damping ratio {bad!r} is outside [0, 1); frictionkit's modes are "
                             "underdamped (an overdamped or critically damped mode has no resonance)")


def _check_point_name(name):
    if not isinstance(name, str) or not name.isidentifier():
        raise StructureError(f"point name {name!r} must be an identifier (letters, digits, underscores)")


def _point_rows(shapes, n_m, what):
    if not isinstance(shapes, dict) or not shapes:
        raise StructureError(f"{what} must be a non-empty dict {{point name: mode-shape values (n_modes,)}}")
    names, rows = [], []
    for name, values in shapes.items():
        _check_point_name(name)
        names.append(name)
        rows.append(_vector(values, n_m, f"{what}[{name!r}]"))
    return tuple(names), np.array(rows)


def _unit(text):
    if text is None:
        return ""
    if not isinstance(text, str):
        raise StructureError(f"displacement_unit must be a string, got {type(text).__name__}")
    return text
