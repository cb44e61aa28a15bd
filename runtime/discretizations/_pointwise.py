"""Path series of the states at sample points, for the ANM on the states alone (DESIGN §5.0).

Shared by the discretizations that evaluate the original ODE pointwise: the AFT harmonic
balance (time samples) and the collocation of the states (Gauss points).  Along the ANM's
path ``Z(a) = sum_q a^q Z_q`` the states at the points have coefficients ``X_q = to_points(U_q)``
(linear in the unknowns' coefficients ``U_q``); the generated Taylor kernel (``Model.taylor``,
codegen/taylor.py) gives, order by order, the coefficients of the recast's auxiliaries and of
``f`` at the points.  :meth:`PointwiseSeries.f_order` returns ``f_p`` with ``x_p = lam_p = 0``,
the part of the order-p coefficient not linear in ``Z_p``; each discretization maps it to its
residual (FFT, or the identity at the Gauss points) and adds its ``omega`` products.

The buffers of one series are kept between the calls (same ``origin``, one more term each
call), so order p costs two kernel calls: the auxiliaries of order ``p - 1`` (``x_{p-1}`` is
known by then) and ``f_p``.

The AFT runs the whole per-order loop of a step in compiled code where it can
(``_pointwise_loop.pyx``, built when frictionkit is installed, :func:`compiled_loop`): the
Python glue around the arithmetic of an order costs more than the arithmetic itself.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import os
import warnings
from pathlib import Path

import numpy as np

from ..errors import InputError

__all__ = ["PointwiseSeries", "compiled_loop", "check_anm"]

_LOOP: dict = {}
#: the source of the compiled loop (shipped as package data beside the extension)
PYX = Path(__file__).with_name("_pointwise_loop.pyx")


def check_anm(disc, system: str, times: str, origin) -> None:
    """Refuse the pointwise ANM right-hand side of ``disc`` (an AFT of periodic orbits or of
    tori: ``system`` names it in the message, ``times`` what its Taylor kernel holds fixed)
    where it does not apply, or without the series origin; say what to do instead."""
    if not disc.supports_anm:
        what = ("a non-analytic friction law (no recast)" if disc.model.sampled else
                f"its Taylor kernel holds {times} fixed, which the continued forcing "
                "frequency moves (regenerate the model with `frictionkit codegen`)" if disc.omega_is_lam else
                "no Taylor kernel (regenerate the model with `frictionkit codegen`)")
        raise NotImplementedError(
            f"the ANM cannot continue the {system} of model {disc.model.name!r}: {what}; "
            "use method='newton' (pseudo-arclength)")
    if origin is None:
        raise InputError("the pointwise ANM right-hand side needs the series origin: "
                         "call series_rhs(terms, origin=Z0)")


def compiled_loop():
    """The compiled per-order loop (``_pointwise_loop.pyx``: ``orders``), or None.

    The loop is built when frictionkit is installed (``setup.py``), so a first continuation
    compiles nothing but its model.  Where that build is missing or older than the ``.pyx``
    (an editable install whose source changed since), it is built at first use in the model
    cache, as a model is, with one warning; where that fails too (no C compiler), None, with
    one warning: the callers then run the same recurrence in Python.  With
    ``FRICTIONKIT_REQUIRE_COMPILED=1`` (CI) a loop that was not built at install is a
    :class:`~frictionkit.codegen.BuildError` instead.
    """
    if "module" not in _LOOP:
        _LOOP["module"] = _installed_loop() or _first_use_loop()
    return _LOOP["module"]


def _installed_loop(source: Path = PYX):
    """The extension built at install, if it was built from ``source`` (its ``.pyx``); else
    None, with the reason in ``_LOOP["missing"]``."""
    try:
        # imported at first use, as the loop was built before (not for a cycle): equilibria
        # and Newton runs never load it
        loop = importlib.import_module(f"{__package__}._pointwise_loop")
        record = Path(loop.__file__).with_name("_pointwise_loop.source.json")
        built_from = json.loads(record.read_text(encoding="utf-8"))["pyx_sha256"]
    except (ImportError, OSError, ValueError, KeyError, TypeError) as exc:
        _LOOP["missing"] = f"not built when frictionkit was installed ({type(exc).__name__}: {exc})"
        return None
    if built_from != hashlib.sha256(source.read_bytes()).hexdigest():
        _LOOP["missing"] = f"built at install from another {source.name} (changed since: reinstall)"
        return None
    return loop


def _first_use_loop():
    """The loop built in the model cache (the fallback of :func:`compiled_loop`), or None."""
    # the models' build machinery and cache (public codegen API; imported here, as by
    # model/_load.py, so that importing the runtime does not import sympy)
    from frictionkit.codegen import BuildError, compile_module
    reinstall = "reinstall frictionkit with a C compiler (pip install -e .) to build it there"
    if os.environ.get("FRICTIONKIT_REQUIRE_COMPILED") == "1":
        raise BuildError(f"the compiled ANM series loop is {_LOOP['missing']} and FRICTIONKIT_REQUIRE_COMPILED=1; "
                         + reinstall)
    try:
        module = compile_module(PYX.read_text(encoding="utf-8"), "pointwise_loop", label="the ANM series loop")[0]
    except BuildError as exc:
        warnings.warn(f"the compiled ANM series loop is {_LOOP['missing']} and could not be built ({exc}); the "
                      "ANM of the AFT harmonic balance runs its orders in Python (slower, same results)",
                      RuntimeWarning, stacklevel=3)
        return None
    warnings.warn(f"the compiled ANM series loop is {_LOOP['missing']}: built in the model cache instead; "
                  + reinstall, RuntimeWarning, stacklevel=3)
    return module


#: orders the buffers hold at first (the ANM's order is at most 60)
ORDERS = 62


class PointwiseSeries:
    """Buffers and recurrence of the pointwise path series of one discretization.

    Parameters
    ----------
    model : Model
        With Taylor kernels (``model.has_taylor``).
    split : callable
        ``Z -> (U, omega, lam)``: the unknowns' coefficients of the states, ``omega``, ``lam``.
    to_points : callable
        ``U -> X`` (n, M): the states at the M points (linear in ``U``).
    times : callable
        ``omega -> t``: the times of the points, held fixed along the path.
    """

    def __init__(self, model, split, to_points, times):
        self.model, self.split, self.to_points, self.times = model, split, to_points, times
        self._c = None

    def f_order(self, terms, origin):
        """``f_p`` at the points with ``x_p = lam_p = 0`` (n, M), for ``terms = [Z_1..Z_{p-1}]``
        about ``origin``; also the coefficients ``omega_0..omega_{p-1}`` and ``U_0..U_{p-1}``."""
        p = len(terms) + 1
        c = self._c
        if c is None or c["origin"] is not origin or c["order"] != p - 1 or p >= len(c["LAM"]):
            c = self.restart(origin, p + 1)
        X, LAM, A, U, om, t = c["X"], c["LAM"], c["A"], c["U"], c["omega"], c["t"]
        c["dirty"] = max(c["dirty"], p)
        U[p - 1], om[p - 1], LAM[p - 1] = self.split(terms[-1])
        X[p - 1] = self.to_points(U[p - 1])
        # auxiliaries of order p-1, then f_p (the buffers hold zeros above the orders filled)
        A[p - 1] = self.model.taylor(t, X[:p], LAM[:p], A[:p - 1], p - 1, c["params"])[0]
        F = self.model.taylor(t, X[:p + 1], LAM[:p + 1], A[:p], p, c["params"])[1]
        c["order"] = p
        return np.asarray(F, dtype=float), om[:p], U[:p]

    def restart(self, origin, orders, points=None):
        """The buffers (dict: ``X, LAM, A, U, omega, t, params``) of a new series at ``origin``,
        order 0 filled, for ``orders`` orders at least; the caller fills the orders from 1 on,
        raises ``"dirty"`` (one past the last order it may write) before writing, and sets
        ``"order"`` (the last order whose right-hand side was formed).

        The buffers of the previous series are reused (one step of the ANM after the other:
        allocating ``ORDERS`` orders of zeros cost about as much as two orders of the series):
        only its orders ``1..dirty-1`` are zeroed again, so the orders above those filled are
        zero, as the kernels need (``x_p = lam_p = 0``).  ``points``: the states at the points
        at ``origin`` when the caller has them (``to_points`` of its ``U``)."""
        U0, om0, lam0 = self.split(origin)
        X0 = np.asarray(self.to_points(U0) if points is None else points, dtype=float)
        c = self._c
        if (c is None or len(c["LAM"]) < orders or c["X"].shape[1:] != X0.shape
                or c["U"].shape[1:] != np.shape(U0)):
            n, M = X0.shape
            size = max(orders, ORDERS)
            c = self._c = dict(X=np.zeros((size, n, M)), A=np.zeros((size, self.model.naux, M)),
                               U=np.zeros((size,) + np.shape(U0)), omega=np.zeros(size), LAM=np.zeros(size))
        else:
            used = slice(1, c["dirty"])
            for key in ("X", "A", "U", "omega", "LAM"):
                c[key][used] = 0.0
        X, A, U, om, LAM = c["X"], c["A"], c["U"], c["omega"], c["LAM"]
        U[0], om[0], LAM[0], X[0] = U0, om0, lam0, X0
        c["t"] = t = self.times(om0)
        c["params"] = self.model.param_vector()      # the kernels read lam from LAM, not from here
        c.update(origin=origin, order=1, dirty=1)
        A[0] = self.model.taylor(t, X[:1], LAM[:1], A[:0], 0, c["params"])[0]
        return c
