"""The periodic-orbit methods by name, and the one place a name becomes a discretization.

Users choose a method by name (``frictionkit continue --method``, ``demo --method``,
``sweep --method``, ``discretization=`` of the Python starts, :meth:`Branch.restart`);
:func:`periodic_kind` turns that name into the ``kind`` of the discretization that runs
(contract item 1, the word saved as ``discretization`` in a branch's provenance) and
:func:`build_collocation` builds a collocation of that kind.  Every driver goes through them,
so a name means the same thing everywhere.

======================  =====================================================================
name                    discretization (``kind``)
======================  =====================================================================
``"aft"``               harmonic balance of the n states, the recast applied pointwise at the
                        time samples (DESIGN §5.0): ``"aft"``
``"hbm"``               harmonic balance of the quadratic recast in the frequency domain
                        (MANLAB's, every auxiliary truncated): ``"hbm"``
``"collocation"``       Gauss collocation of the n states, the recast applied pointwise at
                        the Gauss points (DESIGN §5.0, §5.2): ``"collocation-states"``
``"collocation-recast"`` orthogonal collocation of the quadratic recast (every auxiliary a
                        nodal unknown, DESIGN §5.2): ``"collocation-recast"``
``None``                ``"aft"``
``"aft-full"``          structural models (DESIGN §6): the AFT of every state of the reduced
                        system, uncondensed (``"aft"``), the cross-check of the default
======================  =====================================================================

Structural models (a linear structure with contacts, ``Model.structure``) take the harmonic
balance condensed onto their contacts, ``"aft-condensed"``
(``discretizations/_condensed.py``), for ``None`` and ``"aft"``; ``"aft-full"`` is the
uncondensed AFT of the whole reduced system; ``"collocation"`` collocates the whole reduced
system's states; the recast forms do not exist for them.

As for the harmonic balance, the pointwise form is what ``"collocation"`` means wherever
the model has the generated Taylor kernels (analytic laws); hand-written modules without
them keep the recast forms (``None`` -> ``"hbm"``, ``"collocation"`` ->
``"collocation-recast"``).  Sampled models (non-analytic laws, DESIGN §5.4) take the AFT:
they have no recast (``"hbm"`` and ``"collocation-recast"`` are refused), and the
collocations are refused for them too (``StateCollocationDiscretization`` accepts them
when built by hand, but Gauss collocation of a non-smooth right-hand side loses its order:
on the drill model, 40 x 3, Newton crawled 400 steps near eta = 1.04 where the AFT H = 20
crossed [1, 5] in 314).

Branches saved before the recast collocation was renamed say ``discretization =
"collocation"``; :data:`SAVED_KINDS` reads that as ``"collocation-recast"``.
"""
from __future__ import annotations

from ..analysis._equilibria import _use_aft
from ..discretizations._collocation import CollocationDiscretization
from ..discretizations._state_collocation import StateCollocationDiscretization
from ..errors import InputError
from ._choices import PERIODIC_METHODS

__all__ = ["PERIODIC_METHODS", "COLLOCATION_KINDS", "SAVED_KINDS", "periodic_kind", "build_collocation"]

# the kinds of the two collocations and their classes
COLLOCATION_KINDS = {"collocation-states": StateCollocationDiscretization,
                     "collocation-recast": CollocationDiscretization}
# the discretization word of a saved branch -> the kind that rebuilds it (files written before
# the recast collocation was called "collocation-recast" say "collocation")
SAVED_KINDS = {"collocation": "collocation-recast"}


def periodic_kind(model, name) -> str:
    """The discretization ``kind`` the periodic-orbit method ``name`` means for ``model``.

    Parameters
    ----------
    model : Model
    name : {None, "aft", "hbm", "collocation", "collocation-recast"} or a kind
        A method name (module docstring); the kinds ``"collocation-states"`` (and a saved
        branch's ``"collocation"``, see :data:`SAVED_KINDS`) are accepted too.

    Raises
    ------
    InputError
        An unknown name; a recast form for a sampled model (no quadratic recast).
    """
    if model.structure is not None:
        if name in ("hbm", "collocation-recast"):
            raise InputError(f"method {name!r}: model {model.name!r} is a structure with contacts, which has no "
                             "quadratic recast of the whole system; use 'aft' (condensed onto the contacts, the "
                             "default), 'aft-full' (uncondensed) or 'collocation'")
        if name in (None, "aft", "aft-condensed"):
            return "aft-condensed"
        if name == "aft-full":
            return "aft"
    elif name == "aft-full":
        return periodic_kind(model, "aft")
    elif name == "aft-condensed":
        raise InputError(f"method 'aft-condensed': model {model.name!r} has no structure to condense")
    if name in ("collocation", "collocation-recast", "collocation-states"):
        if model.sampled:
            raise InputError(f"method {name!r}: model {model.name!r} has a non-analytic friction law, which "
                             "the collocations do not continue (no quadratic recast; Gauss collocation of a "
                             "non-smooth right-hand side loses its order); use method 'aft', the sampled "
                             "path (DESIGN §5.4)")
        if name == "collocation-states" or (name == "collocation" and model.has_taylor):
            return "collocation-states"
        return "collocation-recast"
    if name not in (None, "aft", "hbm"):
        raise InputError(f"method {name!r}: choose one of {', '.join(PERIODIC_METHODS)} (periodic orbits)")
    return "aft" if _use_aft(model, name) else "hbm"


def build_collocation(model, kind, n_intervals, degree, phase_state=0, mesh=None):
    """A collocation discretization of ``kind`` (a key of :data:`COLLOCATION_KINDS`) on
    ``n_intervals`` sub-intervals of degree ``degree``, extremum of state ``phase_state`` at
    ``tau = 0`` (both collocations' default phase condition); its constructor checks the sizes.
    ``mesh``: the interval boundaries of a non-uniform mesh (the collocation of the states)."""
    try:
        cls = COLLOCATION_KINDS[kind]
    except KeyError:
        raise InputError(f"{kind!r} is not a collocation ({', '.join(COLLOCATION_KINDS)})") from None
    if mesh is not None:
        if kind != "collocation-states":
            raise InputError(f"a non-uniform mesh is a collocation of the states, not {kind!r}")
        return cls(model, int(n_intervals), int(degree), phase_state=int(phase_state), mesh=mesh)
    return cls(model, int(n_intervals), int(degree), phase_state=int(phase_state))
