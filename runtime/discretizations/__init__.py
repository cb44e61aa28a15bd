"""Discretizations of periodic orbits and equilibria: one contract, one module per method.

:class:`Discretization` (``_base.py``) is the contract the engines and analyses use;
harmonic balance (:class:`HBMDiscretization`, the frequency-domain quadratic form,
:class:`AFTDiscretization`, alternating frequency-time on the original ODE, and
:class:`CondensedAFTDiscretization`, a structure's condensed onto its contacts), orthogonal
collocation (:class:`CollocationDiscretization` of the quadratic system,
:class:`StateCollocationDiscretization` of the original ODE's states), shooting (:class:`ShootingDiscretization`)
and the scaled systems (:class:`ScaledDiscretization`) honour it.
"""
from ._aft import AFTDiscretization, default_n_t
from ._base import Discretization
from ._collocation import CollocationDiscretization
from ._hbm import (
    HBMDiscretization,
    coefficients_to_samples,
    equilibrium_discretization,
    n_samples,
    samples_to_coefficients,
    shift_phase,
    to_subharmonic,
)
from ._scaled import ScaledDiscretization
from ._shooting import PeriodicOrbit, ShootingDiscretization
from ._state_collocation import StateCollocationDiscretization

__all__ = ["Discretization", "HBMDiscretization", "coefficients_to_samples", "equilibrium_discretization",
           "n_samples", "samples_to_coefficients", "shift_phase", "to_subharmonic", "AFTDiscretization",
           "default_n_t", "CollocationDiscretization", "CondensedAFTDiscretization", "PeriodicOrbit",
           "ShootingDiscretization",
           "ScaledDiscretization", "StateCollocationDiscretization"]


def __getattr__(name):
    """``CondensedAFTDiscretization`` at first use: its module imports ``scipy.sparse`` (ARPACK,
    sparse matrices), which a model of a few states never needs (0.01 s of every command)."""
    if name == "CondensedAFTDiscretization":
        from ._condensed import CondensedAFTDiscretization
        return CondensedAFTDiscretization
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
