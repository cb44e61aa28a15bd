"""Exception hierarchy of the runtime.

``FrictionkitError`` is the base of everything the runtime raises on purpose.
"""


class FrictionkitError(Exception):
    """Base class of frictionkit runtime errors."""


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
