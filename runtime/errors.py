"""Exception hierarchy of the runtime.

:class:`FrictionkitError` is the one root of every error frictionkit raises on purpose,
defined in :mod:`frictionkit.modelspec.errors` (the lowest package) and re-exported here:
``except FrictionkitError`` catches a bad model, a failed build and a runtime failure alike.
"""
from frictionkit.modelspec.errors import FrictionkitError

__all__ = ["FrictionkitError", "InputError", "ModelInterfaceError", "ConvergenceError", "NonFiniteError",
           "ClusterError"]


class InputError(FrictionkitError, ValueError):
    """Bad user input: unknown model or parameter, a value out of range, a bad option.

    Typical causes: a misspelt parameter in ``--set``, a start value outside
    ``[start, stop]``, ``harmonics < 1``, a Hopf index that does not exist.
    """


class ModelInterfaceError(FrictionkitError, TypeError):
    """A model module does not honour the generated-model interface.

    Typical causes: a hand-written module missing a required name, rows of an unknown
    kind, variables that do not start with the states.
    """


class ConvergenceError(FrictionkitError, RuntimeError):
    """A Newton correction or a continuation step failed.

    Typical causes: a diverging correction (step too long, near a singular point), NaN in
    the residual (a validity condition of the recast violated), too few harmonics.
    """


class NonFiniteError(ConvergenceError):
    """A residual, Jacobian or series term is NaN/inf: the path left the domain of the model
    (a sqrt of a negative number, a pole) or of the recast, or the step was too long.

    On the pointwise path (DESIGN §5.0) the auxiliaries are the model's own functions of the
    states, so this is where a branch meets the branch cut of a sqrt or a pole."""


class ClusterError(FrictionkitError, RuntimeError):
    """The Dask cluster of a sweep cannot run its tasks (what was stored stays stored).

    Typical causes: a local cluster whose workers fail to start (an unwritable temporary
    folder, no free port, too little memory), every worker of a cluster gone for longer than
    the sweep's ``worker_timeout`` (killed, out of memory, the machine shut down).
    """
