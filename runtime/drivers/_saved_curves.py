"""Two-parameter curves started from a point of a branch loaded from a file.

``analysis``'s :func:`fold_curve`, :func:`pd_curve` and :func:`ns_curve` continue a special
point of a branch computed in the session (they need its discretization); the public names of
``frictionkit.runtime`` are these, which first give a loaded branch its discretization back
(:func:`._branches.attach_discretization`, the restart's rebuild: the model is the zoo model
the branch names or the ``model`` the caller gives, its hash checked).
"""
from __future__ import annotations

from ..analysis import _curves, _pd_ns_curves
from ._branches import attach_discretization

__all__ = ["fold_curve", "pd_curve", "ns_curve"]


def fold_curve(branch, fold, mu_name, mu_min, mu_max, *, model=None, **options):
    """:func:`frictionkit.runtime.analysis.fold_curve` on ``branch``, which may have been
    loaded from a file (``model``: the model file, ModelSpec or module of a branch that is not
    of a zoo model; see :func:`._branches.attach_discretization`).  ``options`` are those of
    the analysis function (``direction``, ``lam_min``, ``lam_max``, ``step``, ...)."""
    return _curves.fold_curve(attach_discretization(branch, model), fold, mu_name, mu_min, mu_max, **options)


def pd_curve(branch, pd, mu_name, mu_min, mu_max, *, model=None, **options):
    """:func:`frictionkit.runtime.analysis.pd_curve` on a branch that may have been loaded
    from a file (``model`` as in :func:`fold_curve`)."""
    return _pd_ns_curves.pd_curve(attach_discretization(branch, model), pd, mu_name, mu_min, mu_max, **options)


def ns_curve(branch, ns, mu_name, mu_min, mu_max, *, model=None, **options):
    """:func:`frictionkit.runtime.analysis.ns_curve` on a branch that may have been loaded
    from a file (``model`` as in :func:`fold_curve`)."""
    return _pd_ns_curves.ns_curve(attach_discretization(branch, model), ns, mu_name, mu_min, mu_max, **options)
