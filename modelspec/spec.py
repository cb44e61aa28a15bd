"""Declaring a model: states, parameters, definitions, equations, forcing, friction contacts.

Example (the seed-000 belt oscillator, seed 000 eqs. 5-6)::

    from frictionkit.modelspec import ModelSpec, laws

    m = ModelSpec("belt", "mass-spring-damper on a moving belt (seed 000)")
    zeta = m.parameter("zeta", 1.3096e-3, doc="modal damping ratio")
    omega1 = m.parameter("omega1", 1.2316e3, unit="rad/s")
    M1 = m.parameter("M1", 6.42e-3, unit="kg")
    FN = m.parameter("FN", 5.0, unit="N")
    Vb = m.parameter("Vb", 0.2, unit="m/s")
    mus, mud = m.parameter("mus", 0.4), m.parameter("mud", 0.2)
    eps, n = m.parameter("eps", 1e-4), m.parameter("n", 10.0)
    y, v = m.second_order("y", velocity="v")
    Vr = m.define("Vr", v - Vb)
    mu = m.friction("belt", laws.regularized, Vr, mus=mus, mud=mud, eps=eps, n=n)
    m.ode(v, -2 * zeta * omega1 * v - omega1**2 * y + FN / M1 * mu)

A model file given to ``frictionkit codegen path/to/model.py`` defines ``model()``
returning a :class:`ModelSpec` (or a module-level ``MODEL``).
"""
from __future__ import annotations

import inspect
import keyword
import math
import unicodedata
import warnings
from dataclasses import dataclass, field

import sympy as sp

from .structure import Structure
from .errors import (DuplicateNameError, ForcingError, InvalidConstantError, InvalidTextError,
                     DECLARED, MissingEquationError, ModelSpecError, NonAnalyticError, ParameterValueError,
                     UnclassifiableLawWarning, UndeclaredSymbolError, UnknownParameterError, UnknownStateError,
                     parameter_message)

#: Names the generated code and the runtime reserve.
RESERVED = {"t", "lam", "pi", "E", "I", "oo", "nan"}

#: Longest model or declared name, in bytes of UTF-8.  The model name and the continuation
#: parameter name the generated files (``_fk_<model>__<parameter>_<key><ABI suffix>``, about
#: 60 bytes more, and a temporary ``.<file>.<random>.tmp`` while it is written); file systems
#: hold 255 bytes per file name (NAME_MAX), so two 64-byte names always fit.
MAX_NAME_BYTES = 64


def check_name_length(name: str, what: str) -> None:
    """Raise :class:`ModelSpecError` if ``name`` is longer than :data:`MAX_NAME_BYTES` in UTF-8."""
    size = len(name.encode("utf-8", "surrogatepass"))
    if size > MAX_NAME_BYTES:
        shown = name if len(name) <= 40 else f"{name[:20]}...{name[-12:]}"
        raise ModelSpecError(f"{what} name {shown!r} is {size} bytes long (UTF-8); names are limited to "
                             f"{MAX_NAME_BYTES} bytes, because they name the generated files and a file name "
                             f"holds 255 bytes; choose a shorter name")

#: Non-analytic constructs, with the regularization suggested in the error message.
NON_ANALYTIC = {
    sp.sign: "replace sign(v) by v/sqrt(v**2 + delta**2)",
    sp.Abs: "replace Abs(v) by sqrt(v**2 + delta**2) (laws.smooth_abs)",
    sp.Heaviside: "replace Heaviside(v) by (1 + v/sqrt(v**2 + delta**2))/2",
    sp.Piecewise: "use a smooth law (e.g. laws.regularized) or run the sampled path (allow_nonanalytic=True)",
    sp.Min: "replace Min(a, b) by (a + b - sqrt((a - b)**2 + delta**2))/2",
    sp.Max: "replace Max(a, b) by (a + b + sqrt((a - b)**2 + delta**2))/2",
    sp.floor: "floor is not differentiable; use a smooth staircase or the sampled path",
    sp.ceiling: "ceiling is not differentiable; use a smooth staircase or the sampled path",
    sp.frac: "frac is not differentiable; use the sampled path",
}


def normalize_name(name):
    """A user name as Python reads it: NFKC-normalised (``ﬁ`` -> ``fi``, ``𝐲`` -> ``y``).

    Python applies NFKC to identifiers in source code, so two names that normalise alike
    would be one variable in a generated module; every name is normalised on declaration
    and compared in that form.
    """
    return unicodedata.normalize("NFKC", name) if isinstance(name, str) else name


def check_text(value, what):
    """A user string that reaches generated files: ``None`` or UTF-8-writable ``str``.

    The generator escapes it where it is written (never trusted as code); here only what
    cannot be written at all is refused.
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidTextError(f"{what} must be a string, got {type(value).__name__} {value!r}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidTextError(f"{what} {value!r} holds {value[exc.start]!r} (a lone surrogate), which "
                               f"cannot be written to a UTF-8 file; remove it") from None
    return value


def check_unit(value, what):
    """A unit (:func:`check_text`) that matplotlib can typeset: the figures label their axes
    ``name [unit]``, and matplotlib reads text between two ``$`` as mathtext, so a unit with
    an unbalanced ``$`` or mathtext it cannot parse (``"$m^$"``) is refused here, naming it,
    rather than failing in a plot long after the run."""
    value = check_text(value, what)
    dollars = (value or "").count("$") - (value or "").count(r"\$")
    if not dollars:
        return value
    if dollars % 2:
        raise InvalidTextError(f"{what} {value!r} has an unbalanced '$' (matplotlib typesets the text between two "
                               r"'$' as mathtext): close it, e.g. '$m/s^2$', or write a literal dollar as '\$'")
    # matplotlib only for a unit with mathtext (rare): declaring a model does not load it otherwise
    from matplotlib.mathtext import MathTextParser
    try:
        MathTextParser("path").parse(value)
    except ValueError as exc:
        detail = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        detail = detail.split(": ", 1)[-1]
        detail = detail if len(detail) <= 100 else detail[:100] + "..."
        raise InvalidTextError(f"{what} {value!r} is not mathtext matplotlib can typeset ({detail}); correct "
                               r"it, e.g. '$\mathrm{m/s^2}$', or write a literal dollar as '\$'") from None
    return value


@dataclass(frozen=True)
class Parameter:
    """A model parameter: a real sympy symbol with a default value and documentation."""

    symbol: sp.Symbol
    default: float
    unit: str | None = None
    doc: str | None = None
    positive: bool = False
    bounds: tuple | None = None      # (lower, upper), either None; both inclusive

    @property
    def name(self) -> str:
        return self.symbol.name


@dataclass(frozen=True)
class Contact:
    """A friction contact: its relative velocity and friction law (for motion labels)."""

    name: str
    relative_velocity: sp.Expr
    law: object
    law_params: dict
    coefficient: sp.Symbol


@dataclass(frozen=True)
class Port:
    """The displacement or velocity of a structure's named point, as a symbol of the model."""

    symbol: sp.Symbol
    point: str
    quantity: str          # "displacement" or "velocity"


@dataclass(frozen=True)
class PortLayout:
    """How a structural model's port model (:meth:`ModelSpec.port_model`) is laid out.

    Attributes
    ----------
    inputs : tuple of (str, str, str)
        ``(symbol name, point, "displacement" | "velocity")``: the first port states.
    states : tuple of str
        The model's own states, next.
    forces : tuple of (str, str)
        ``(state name, point)``: the last port states, whose right-hand side is the force.
    structure : Structure
    forcing : tuple of str
        The force states whose force involves neither an input nor an own state (an external
        harmonic forcing ``F0 cos(w t)``): known harmonics in normalized time.
    timed : tuple of str
        The port states whose right-hand side involves the time ``t``.
    """

    inputs: tuple
    states: tuple
    forces: tuple
    structure: object
    forcing: tuple = ()        # force states that are harmonic forcing alone (no input, no own state)
    timed: tuple = ()          # port states whose right-hand side involves the time t


class StructureHandle:
    """What :meth:`ModelSpec.structure` returns: the points' symbols and the forces on them."""

    def __init__(self, spec):
        self._spec = spec

    @property
    def structure(self):
        return self._spec.linear_structure

    def displacement(self, point: str, name: str | None = None) -> sp.Symbol:
        """The displacement of ``point`` (a symbol named ``y_<point>`` unless ``name`` is given)."""
        return self._spec._port(point, "displacement", name)

    def velocity(self, point: str, name: str | None = None) -> sp.Symbol:
        """The velocity of ``point`` (a symbol named ``v_<point>`` unless ``name`` is given)."""
        return self._spec._port(point, "velocity", name)

    def force(self, point: str, expr) -> None:
        """Add ``expr`` to the force acting on the structure at ``point`` (in the direction of
        its displacement): a friction force ``FN * mu``, a harmonic forcing ``F0 * cos(w * t)``
        (with ``m.forcing(w)``); several calls on one point add up."""
        spec = self._spec
        spec.linear_structure.point_index(point)
        value = spec._sympify(expr, f"force on point {point!r}")
        spec.point_forces[point] = spec.point_forces.get(point, sp.Integer(0)) + value


@dataclass
class ModelSpec:
    """A model as the user declares it (pure sympy, no code generated).

    Parameters
    ----------
    name : str
        Identifier of the model (used in generated file names: at most
        :data:`MAX_NAME_BYTES` bytes in UTF-8, as every declared name).
    description : str, optional
        One line shown in ``--explain`` and in generated docstrings.
    sampled : bool, optional
        Accept non-analytic functions (``Abs``, ``sign``, ``Piecewise``...): no quadratic
        recast is made and the model runs on the sampled path (AFT / shooting, DESIGN §5.4).
    time_unit : str, optional
        Unit of the time ``t`` (e.g. ``"s"``); none means dimensionless time (``""``).
    condense : bool, optional
        A model linear but for its contacts (one ``second_order`` per mode, say) is recognised
        and given the harmonic balance condensed onto its contacts (DESIGN §6;
        ``codegen/structure.py``): ``None`` (default) when it pays (at least 8 states, four per
        contact), ``True`` whenever the model has that form, ``False`` never.
    """

    name: str
    description: str = ""
    sampled: bool = False
    time_unit: str | None = None
    condense: bool | None = None
    t: sp.Symbol = field(default_factory=lambda: sp.Symbol("t", real=True))
    parameters: dict = field(default_factory=dict)
    states: list = field(default_factory=list)
    algebraic: list = field(default_factory=list)
    odes: dict = field(default_factory=dict)
    masses: dict = field(default_factory=dict)
    constraints: dict = field(default_factory=dict)
    definitions: dict = field(default_factory=dict)
    contacts: list = field(default_factory=list)
    forcing_frequency: sp.Symbol | None = None
    state_units: dict = field(default_factory=dict)   # state name -> unit text ("" if none)
    state_docs: dict = field(default_factory=dict)    # state name -> doc text ("" if none)
    _kinematic: set = field(default_factory=set)
    # a linear structure given numerically (DESIGN §6; :meth:`structure`), the displacement and
    # velocity symbols of its points (name -> Port) and the forces acting at its points
    linear_structure: object = None
    ports: dict = field(default_factory=dict)
    point_forces: dict = field(default_factory=dict)

    def __post_init__(self):
        self.name = normalize_name(self.name)
        if not isinstance(self.name, str) or not self.name.isidentifier() or keyword.iskeyword(self.name):
            raise ModelSpecError(f"model name {self.name!r} must be a Python identifier "
                                 f"(letters, digits, underscores), e.g. 'belt_2dof'")
        check_name_length(self.name, "model")
        self.description = check_text(self.description, f"description of model {self.name!r}") or ""
        self.time_unit = check_unit(self.time_unit, f"time unit of model {self.name!r}") or ""
        if self.condense not in (None, True, False):
            raise ModelSpecError(f"model {self.name!r}: condense={self.condense!r} must be None, True or False")

    # -- declarations ---------------------------------------------------------------
    def _new_name(self, name: str, what: str) -> str:
        """Check a new name and return it NFKC-normalised (the form every later step uses)."""
        given, name = name, normalize_name(name)
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
            raise ModelSpecError(f"{what} name {name!r} is not a valid identifier; use letters, "
                                 f"digits and underscores, not starting with a digit")
        check_name_length(name, what)
        if name in RESERVED:
            raise ModelSpecError(f"{what} name {name!r} is reserved by frictionkit "
                                 f"(reserved: {', '.join(sorted(RESERVED))}); choose another name")
        if name.startswith("_"):
            raise ModelSpecError(f"{what} name {name!r} must not start with an underscore")
        for kind, names in (("parameter", self.parameters), ("state", [s.name for s in self.states]),
                            ("algebraic variable", [z.name for z in self.algebraic]),
                            ("definition", self.definitions),
                            ("contact", [c.name for c in self.contacts])):
            if name in names:
                same = "" if given == name else f" ({given!r} reads as {name!r} in Python: NFKC)"
                raise DuplicateNameError(f"{what} {name!r}{same} is already declared as a {kind} of model "
                                         f"{self.name!r}; every name must be unique")
        return name

    def parameter(self, name: str, default: float, unit: str | None = None, doc: str | None = None, *,
                  positive: bool = False, bounds: tuple | None = None) -> sp.Symbol:
        """Declare a parameter with its default value; returns its sympy symbol.

        ``positive=True`` (e.g. a regularization parameter, a mass) and ``bounds=(lower,
        upper)`` (inclusive, either None) restrict the values a model may be loaded with;
        they join :meth:`parameter_conditions`, so the generated module's
        ``check_parameters`` refuses other values naming the parameter.
        """
        name = self._new_name(name, "parameter")
        unit = check_unit(unit, f"unit of parameter {name!r}")
        doc = check_text(doc, f"doc of parameter {name!r}")
        if isinstance(default, bool) or isinstance(default, complex):
            raise ModelSpecError(f"parameter {name!r}: default {default!r} is not a real number")
        try:
            value = float(default)
        except (TypeError, ValueError):
            raise ModelSpecError(f"parameter {name!r}: default {default!r} is not a number") from None
        if not math.isfinite(value):
            raise ModelSpecError(f"parameter {name!r}: default {default!r} must be finite")
        if not isinstance(positive, bool):
            raise ModelSpecError(f"parameter {name!r}: positive={positive!r} must be True or False")
        if bounds is not None:
            try:
                lo, hi = (None if b is None else float(b) for b in bounds)
            except (TypeError, ValueError):
                raise ModelSpecError(f"parameter {name!r}: bounds={bounds!r} must be (lower, upper), "
                                     "numbers or None") from None
            if lo is not None and hi is not None and not lo < hi:
                raise ModelSpecError(f"parameter {name!r}: bounds={bounds!r} is empty (lower >= upper)")
            bounds = (lo, hi)
        sym = sp.Symbol(name, real=True)
        self.parameters[name] = Parameter(sym, value, unit, doc, positive, bounds)
        return sym

    def state(self, name: str, unit: str | None = None, doc: str | None = None) -> sp.Symbol:
        """Declare a first-order state (with its unit, e.g. ``"m"``); give its equation with :meth:`ode`."""
        name = self._new_name(name, "state")
        unit = check_unit(unit, f"unit of state {name!r}")
        doc = check_text(doc, f"doc of state {name!r}")
        sym = sp.Symbol(name, real=True)
        self.states.append(sym)
        self.state_units[name] = unit or ""
        self.state_docs[name] = doc or ""
        return sym

    def second_order(self, name: str, velocity: str | None = None, unit: str | None = None,
                     velocity_unit: str | None = None, doc: str | None = None):
        """Declare a second-order coordinate; its velocity state is introduced for you.

        Returns ``(position, velocity)`` symbols; ``position' = velocity`` is added, and
        the acceleration is given with ``ode(velocity, ...)``.  ``unit`` and ``velocity_unit``
        are the units of the two states (e.g. ``"m"`` and ``"m/s"``).
        """
        velocity = velocity or f"{normalize_name(name)}_dot"
        pos = self.state(name, unit=unit, doc=doc)
        vel = self.state(velocity, unit=velocity_unit)
        self.odes[pos] = vel
        self._kinematic.add(pos)
        return pos, vel

    def algebraic_variable(self, name: str) -> sp.Symbol:
        """Declare an algebraic variable ``z``; give its equation ``0 = g`` with :meth:`constraint`."""
        name = self._new_name(name, "algebraic variable")
        sym = sp.Symbol(name, real=True)
        self.algebraic.append(sym)
        return sym

    def define(self, name: str, expr) -> sp.Symbol:
        """Name an intermediate quantity (substituted in the equations; recast once, shared)."""
        name = self._new_name(name, "definition")
        expr = self._sympify(expr, f"definition {name!r}")
        sym = sp.Symbol(name, real=True)
        self.definitions[name] = (sym, expr)
        return sym

    def ode(self, state, rhs, mass=1):
        """Set the differential equation ``mass * state' = rhs`` (mass: parameters only)."""
        where = f"equation for {getattr(state, 'name', state)!r}"
        if not isinstance(state, sp.Symbol):
            raise UnknownStateError(f"{where}: the left-hand side must be a state symbol returned by "
                                    f"state() or second_order(), got {state!r}")
        if state.name in self.parameters:
            raise UnknownStateError(f"{where}: {state.name!r} is a parameter, not a state; declare it "
                                    f"with m.state({state.name!r}) instead of m.parameter(...)")
        if state not in self.states:
            raise UnknownStateError(f"{where}: {state.name!r} is not a declared state of model "
                                    f"{self.name!r} (states: {', '.join(s.name for s in self.states) or 'none'})")
        if state in self._kinematic:
            raise ModelSpecError(f"{where}: {state.name!r} is the position of a second-order coordinate; "
                                 f"its equation is {state.name}' = velocity; give the acceleration "
                                 f"with ode(<velocity>, ...) instead")
        if state in self.odes:
            raise DuplicateNameError(f"{where}: state {state.name!r} already has an equation")
        self.odes[state] = self._sympify(rhs, where)
        self.masses[state] = self._sympify(mass, f"mass of {state.name!r}")

    def constraint(self, variable, expr):
        """Set the algebraic equation ``0 = expr`` that determines ``variable``."""
        where = f"constraint for {getattr(variable, 'name', variable)!r}"
        if not isinstance(variable, sp.Symbol) or variable not in self.algebraic:
            raise UnknownStateError(f"{where}: {variable!r} is not a declared algebraic variable "
                                    f"(declare it with m.algebraic_variable(name))")
        if variable in self.constraints:
            raise DuplicateNameError(f"{where}: variable {variable.name!r} already has a constraint")
        self.constraints[variable] = self._sympify(expr, where)

    def forcing(self, frequency: sp.Symbol):
        """Declare ``frequency`` (a parameter) as the angular frequency ``w`` of a periodic forcing.

        Equations may then contain ``cos(w*t)`` and ``sin(w*t)`` added to the right-hand side.
        """
        if not isinstance(frequency, sp.Symbol) or frequency.name not in self.parameters:
            raise UnknownParameterError(f"forcing frequency {frequency!r} must be a declared parameter")
        self.forcing_frequency = frequency
        return frequency

    def friction(self, name: str, law, relative_velocity, **law_params) -> sp.Symbol:
        """Apply a friction law to a relative velocity; returns the friction coefficient.

        Parameters
        ----------
        name : str
            Name of the contact (the coefficient is the definition ``mu_<name>``).
        law : callable
            ``law(vr, **law_params) -> sympy expression`` (see :mod:`frictionkit.modelspec.laws`).
        relative_velocity : sympy expression
        **law_params
            Parameters of the law: symbols, numbers, or states and expressions of them (a
            law with an internal state, e.g. the bristle deflection ``z`` of a LuGre law,
            declared with :meth:`state` and its own :meth:`ode`).  The motion labels use
            such a law in steady sliding (:meth:`steady_sliding_law`).
        """
        name = normalize_name(name)
        if not isinstance(name, str) or not name.isidentifier():
            raise ModelSpecError(f"contact name {name!r} is not a valid identifier; use letters, digits "
                                 f"and underscores")
        if not callable(law):
            raise ModelSpecError(f"contact {name!r}: law {law!r} is not a function of the relative velocity")
        vr = self._sympify(relative_velocity, f"relative velocity of contact {name!r}")
        try:
            inspect.signature(law).bind(vr, **law_params)
        except TypeError as exc:
            raise ModelSpecError(f"contact {name!r}: law {getattr(law, '__name__', law)} rejected its "
                                 f"parameters ({exc}); pass exactly the law's keyword arguments") from None
        except ValueError:               # no signature to read (a builtin): the call says
            pass
        try:
            expr = law(vr, **law_params)
        except Exception as exc:       # the user's own code: its failure named, never a traceback
            raise ModelSpecError(f"contact {name!r}: law {getattr(law, '__name__', law)} raised "
                                 f"{type(exc).__name__} ({exc}) when applied to the relative velocity {vr}; "
                                 "a law takes sympy expressions and returns one (sympy.tanh, not math.tanh or "
                                 "numpy.tanh; no if on a symbol)") from None
        expr = self._sympify(expr, f"law {getattr(law, '__name__', law)} of contact {name!r}")
        coef = self.define(f"mu_{name}", expr)
        self._new_name(name, "contact")
        self.contacts.append(Contact(name, vr, law, dict(law_params), coef))
        return coef

    def structure(self, structure) -> "StructureHandle":
        """Attach a linear structure given numerically (DESIGN §6); returns its handle.

        The structure (:class:`~frictionkit.modelspec.Structure`: modal data or matrices) is
        never expanded in sympy; the handle gives the displacement and velocity symbols of its
        named points, to write contact laws with, and takes the forces acting at the points
        (:meth:`StructureHandle.force`).  The model's own states (a friction law's internal
        state, a rigid body) are declared as usual.  Codegen then sees only the points, the
        forces and those states, so its cost does not depend on the structure's size.
        """
        if not isinstance(structure, Structure):
            raise ModelSpecError(f"model {self.name!r}: structure() takes a Structure (Structure.modal, "
                                 f"Structure.from_matrices, Structure.from_mtx), got {type(structure).__name__}")
        if self.linear_structure is not None:
            raise DuplicateNameError(f"model {self.name!r} already has a structure; declare one per model "
                                     "(assemble several substructures into its matrices)")
        self.linear_structure = structure
        return StructureHandle(self)

    def _port(self, point, quantity, name):
        structure = self.linear_structure
        structure.point_index(point)                  # a clear error for an unknown point
        for port in self.ports.values():
            if port.point == point and port.quantity == quantity:
                if name is not None and normalize_name(name) != port.symbol.name:
                    raise DuplicateNameError(f"the {quantity} of point {point!r} is already declared as "
                                             f"{port.symbol.name!r}")
                return port.symbol
        name = self._new_name(name or f"{'y' if quantity == 'displacement' else 'v'}_{point}",
                              f"{quantity} of point {point!r}")
        sym = sp.Symbol(name, real=True)
        self.ports[name] = Port(sym, point, quantity)
        return sym

    def steady_sliding_law(self, contact: Contact, vr: sp.Symbol):
        """The friction law of ``contact`` as a function of its relative velocity ``vr`` alone.

        The motion labels need the law as a function of the relative velocity: the limit
        velocity ``V_n`` is at its static peak (seed 003 eq. (7)).  A law that takes other
        states too (the bristle deflection ``z`` of a LuGre law) is taken in *steady
        sliding*: the relative velocity held at ``vr`` and those states at rest, i.e. at the
        root of their own equations (for LuGre ``z' = 0`` gives the steady-state Stribeck
        curve of Canudas de Wit et al., IEEE TAC 40, 1995).  The root is solved for
        in closed form when the equations of those states (and of the states they involve in
        turn) are linear in them and involve the other states only through the relative
        velocity: ``relative_velocity = vr`` is solved for one state it holds and substituted.

        Parameters
        ----------
        contact : Contact
        vr : sympy.Symbol
            The symbol standing for the relative velocity.

        Returns
        -------
        (sympy.Expr, None)
            The law of ``vr`` and the parameters (the law itself, definitions expanded, when
            it takes no state).
        (None, str)
            Why steady sliding has no closed form here (the reason, for a warning).
        """
        law = self.expand_definitions(contact.law(vr, **contact.law_params))
        unknowns = list(self.states) + list(self.algebraic)
        if not law.free_symbols & set(unknowns):
            return law, None
        # the states of the relative velocity enter through it: one of them is solved for
        rel = self.expand_definitions(contact.relative_velocity)
        subs = {}
        for s in (x for x in self.states if x in rel.free_symbols):
            roots = sp.solve(sp.Eq(rel, vr), s)
            if len(roots) == 1:
                subs = {s: roots[0]}
                break
        law = law.xreplace(subs)
        internal = [x for x in unknowns if x in law.free_symbols]
        names = ", ".join(x.name for x in internal)
        if self.t in law.free_symbols:
            return None, "the law depends on the time t"
        if not internal:
            return law, None
        equations, pending = {}, list(internal)
        while pending:
            x = pending.pop(0)
            e = self.odes[x] if x in self.odes else self.constraints[x]
            e = self.expand_definitions(e).xreplace(subs)
            if self.t in e.free_symbols:
                return None, f"the law takes the state(s) {names}, whose equations depend on the time"
            equations[x] = e
            pending += [w for w in unknowns if w in e.free_symbols and w not in equations and w not in pending]
            if len(equations) + len(pending) > 4:
                return None, (f"the law takes the state(s) {names}, whose equations involve more than "
                              "four states at a fixed relative velocity")
        X = [x for x in unknowns if x in equations]
        F = sp.Matrix([equations[x] for x in X])
        A = F.jacobian(X)
        if A.free_symbols & set(X):
            return None, (f"the law takes the state(s) {names}, whose equations at a fixed relative "
                          "velocity are not linear in " + ", ".join(x.name for x in X))
        if A.det() == 0:
            return None, (f"the law takes the state(s) {names}, which a fixed relative velocity does "
                          "not determine (the equations of " + ", ".join(x.name for x in X)
                          + " have no unique rest point)")
        root = A.LUsolve(-F.xreplace({x: 0 for x in X}))
        return law.xreplace(dict(zip(X, root))), None

    # -- helpers --------------------------------------------------------------------
    def _sympify(self, expr, where):
        try:
            out = sp.sympify(expr, strict=True)
        except (sp.SympifyError, TypeError):
            raise ModelSpecError(f"{where}: {expr!r} is not a sympy expression; build it from the "
                                 f"symbols returned by parameter()/state()") from None
        if not isinstance(out, sp.Expr) or getattr(out, "is_Matrix", False):
            raise ModelSpecError(f"{where}: {expr!r} is not a scalar sympy expression "
                                 f"(got {type(out).__name__})")
        return out

    @property
    def parameter_symbols(self):
        return [p.symbol for p in self.parameters.values()]

    def expand_definitions(self, expr):
        """Substitute every named definition (recursively) into ``expr``."""
        subs = {sym: e for sym, e in self.definitions.values()}
        for _ in range(len(subs) + 1):
            new = expr.xreplace(subs)
            if new == expr:
                return new
            expr = new
        raise ModelSpecError(f"definitions of model {self.name!r} refer to each other in a cycle")

    def canonical(self) -> str:
        """Text of the whole declaration, the same in every process: equal texts, equal models.

        Every field is written (the docs too), the expressions with :func:`sympy.srepr` (their
        symbols' assumptions included), the set of kinematic positions sorted, and each
        friction law by its name and its expression of a probe symbol ``_vr`` (what the recast
        reads of it), never by its ``repr`` (which holds an address).  The code generator keys
        its source cache on it; the belt's text takes about 1 ms.
        """
        vr = sp.Symbol("_vr", real=True)
        parts = [repr((self.name, self.description, self.sampled, self.time_unit)), sp.srepr(self.t)]
        if self.condense is not None:
            parts.append(f"condense={self.condense!r}")
        parts += [repr((p.name, p.default, p.unit, p.doc, p.positive, p.bounds)) + sp.srepr(p.symbol)
                  for p in self.parameters.values()]
        parts += [sp.srepr(x) for x in (self.states, self.algebraic, list(self.odes.items()),
                                        list(self.masses.items()), list(self.constraints.items()),
                                        list(self.definitions.items()), self.forcing_frequency,
                                        sorted(self._kinematic, key=lambda s: s.name))]
        for c in self.contacts:
            law = f"{getattr(c.law, '__module__', '')}.{getattr(c.law, '__qualname__', c.law)}"
            parts.append(repr((c.name, law)) + sp.srepr([c.relative_velocity, list(c.law_params.items()),
                                                          c.coefficient, c.law(vr, **c.law_params)]))
        parts += [repr(list(self.state_units.items())), repr(list(self.state_docs.items()))]
        if self.linear_structure is not None:
            parts += [self.linear_structure.fingerprint(),
                      sp.srepr([(n, p.symbol, p.point, p.quantity) for n, p in self.ports.items()]),
                      sp.srepr(list(self.point_forces.items()))]
        return "\n".join(parts)

    def port_model(self) -> tuple["ModelSpec", "PortLayout"]:
        """The model codegen sees for a structural model (DESIGN §6), and its layout.

        Its states are, in this order: the inputs (the displacement and velocity symbols of
        the structure's points, each with ``w' = 0``: their values come from the structure),
        the model's own states with their equations, and one state per loaded point whose
        right-hand side is the force on it (``F_P' = force``).  The generated ``rhs``, ``jac``,
        ``dfdlam`` and Taylor kernels of this small ODE are thus those of the forces and of the
        own states, as functions of the inputs and the own states; the structure itself never
        reaches codegen, whatever its size.

        Raises
        ------
        ModelSpecError
            The model has no structure.
        """
        if self.linear_structure is None:
            raise ModelSpecError(f"model {self.name!r} has no structure (declare one with m.structure(...))")
        taken = set(self.parameters) | {x.name for x in self.states} | {z.name for z in self.algebraic}
        taken |= set(self.definitions) | {c.name for c in self.contacts} | set(self.ports)
        port = ModelSpec(self.name, self.description, self.sampled, self.time_unit, t=self.t)
        port.parameters = dict(self.parameters)
        port.definitions = dict(self.definitions)
        port.contacts = list(self.contacts)
        port.algebraic, port.constraints = list(self.algebraic), dict(self.constraints)
        port.forcing_frequency = self.forcing_frequency
        unit = self.linear_structure.displacement_unit
        inputs = []
        for name, p in self.ports.items():
            port.states.append(p.symbol)
            port.odes[p.symbol] = sp.Integer(0)
            velocity_unit = f"{unit}/{self.time_unit or 's'}" if unit else ""
            port.state_units[name] = unit if p.quantity == "displacement" else velocity_unit
            inputs.append((name, p.point, p.quantity))
        for x in self.states:
            port.states.append(x)
            port.odes[x] = self.odes[x]
            if x in self.masses:
                port.masses[x] = self.masses[x]
            port.state_units[x.name] = self.state_units.get(x.name, "")
            port.state_docs[x.name] = self.state_docs.get(x.name, "")
        port._kinematic = set(self._kinematic)
        forces = []
        for point, expr in self.point_forces.items():
            name, k = f"F_{point}", 1
            while name in taken:
                name, k = f"F_{point}_{k}", k + 1
            taken.add(name)
            sym = sp.Symbol(name, real=True)
            port.states.append(sym)
            port.odes[sym] = expr
            port.state_units[name] = ""
            forces.append((name, point))
        dynamic = {p.symbol for p in self.ports.values()} | set(self.states) | set(self.algebraic)
        forcing, timed = [], []
        for sym in port.states:
            rhs = port.expand_definitions(port.odes[sym])
            if self.t in rhs.free_symbols:
                timed.append(sym.name)
                if sym.name in dict(forces) and not (rhs.free_symbols & dynamic):
                    forcing.append(sym.name)
        layout = PortLayout(tuple(inputs), tuple(x.name for x in self.states), tuple(forces),
                            self.linear_structure, tuple(forcing), tuple(timed))
        return port, layout

    # -- validation -----------------------------------------------------------------
    def validate(self, continuation: str | None = None, allow_nonanalytic: bool | None = None):
        """Check the whole declaration; raise a :class:`ModelSpecError` naming the culprit.

        Parameters
        ----------
        continuation : str, optional
            Name of the continuation parameter to check.
        allow_nonanalytic : bool, optional
            Accept ``Abs``, ``sign``, ``Piecewise``... (sampled path only, DESIGN §5.4);
            defaults to the model's ``sampled`` flag.
        """
        if allow_nonanalytic is None:
            allow_nonanalytic = self.sampled
        if not self.states and self.linear_structure is None:
            raise MissingEquationError(f"model {self.name!r} declares no state; use m.state(...) or "
                                       f"m.second_order(...)")
        if self.linear_structure is not None and not self.point_forces:
            raise MissingEquationError(f"model {self.name!r} has a structure but no force acts on it; declare "
                                       f"the contacts' and the forcing's forces with s.force(<point>, <expression>)")
        for s in self.states:
            if s not in self.odes:
                raise MissingEquationError(f"state {s.name!r} of model {self.name!r} has no equation; "
                                           f"add m.ode({s.name}, <right-hand side>)")
        for z in self.algebraic:
            if z not in self.constraints:
                raise MissingEquationError(f"algebraic variable {z.name!r} of model {self.name!r} has no "
                                           f"equation; add m.constraint({z.name}, <expression>)")
        known = set(self.parameter_symbols) | set(self.states) | set(self.algebraic) | {self.t}
        known |= {sym for sym, _ in self.definitions.values()} | {p.symbol for p in self.ports.values()}
        equations = [(f"equation for {s.name!r}", e) for s, e in self.odes.items()]
        equations += [(f"force on point {p!r}", e) for p, e in self.point_forces.items()]
        equations += [(f"mass of {s.name!r}", e) for s, e in self.masses.items()]
        equations += [(f"constraint for {z.name!r}", e) for z, e in self.constraints.items()]
        equations += [(f"definition {n!r}", e) for n, (_, e) in self.definitions.items()]
        for where, expr in equations:
            unknown = sorted((s.name for s in expr.free_symbols if s not in known))
            if unknown:
                raise UndeclaredSymbolError(
                    f"{where}: symbol {unknown[0]!r} is not declared (undeclared: {', '.join(unknown)}); "
                    f"declare it with m.parameter({unknown[0]!r}, <default>) or m.state({unknown[0]!r})")
        for where, expr in equations:
            self._check_constants(where, expr)
        for where, expr in equations:
            self._check_analytic(where, expr, allow_nonanalytic)
        for s, mass in self.masses.items():
            bad = mass.free_symbols - set(self.parameter_symbols)
            if bad:
                raise ModelSpecError(f"mass of {s.name!r} depends on {sorted(b.name for b in bad)}; a mass "
                                     f"may only depend on parameters (move the rest to the right-hand side)")
            if mass == 0:
                raise ModelSpecError(f"mass of {s.name!r} is zero; declare an algebraic variable instead")
        for where, expr in equations:
            self._check_time(where, self.expand_definitions(expr))
        if continuation is not None:
            self.check_parameter(continuation, "continuation parameter")
        self.check_values({p.name: p.default for p in self.parameters.values()}, "default")
        vr = sp.Symbol("_vr", real=True)
        for c in self.contacts:
            _, reason = self.steady_sliding_law(c, vr)
            if reason is not None:
                warnings.warn(f"contact {c.name!r} of model {self.name!r}: {reason}, so its steady sliding "
                              "has no closed form; the motion labels of its orbits will be 'unknown' (the "
                              "branches, their stability and bifurcations are not affected)",
                              UnclassifiableLawWarning, stacklevel=2)
        return self

    def parameter_conditions(self):
        """Conditions the parameter values must meet for the model to be evaluable.

        Declared domains come first (``positive``, ``bounds``); masses must not vanish; in
        every parameter-only sub-expression of the equations a denominator must not vanish,
        a square-root (even-root) argument must not be negative and a logarithm's argument
        must be positive.  Inner conditions come first, so that the first failing one names
        the culprit.

        Returns
        -------
        list of (str, str, sympy.Expr)
            ``(where, kind, expr)`` with kind "nonzero", "nonnegative" or "positive".
        """
        params = set(self.parameter_symbols)
        out, seen = [], set()

        def add(where, kind, expr):
            if expr.is_number or (kind, expr) in seen:
                return
            seen.add((kind, expr))
            out.append((where, kind, expr))

        # declared domains first (``parameter(..., positive=True, bounds=...)``)
        for p in self.parameters.values():
            where = f"{DECLARED} of {p.name!r}"
            if p.positive:
                add(f"{where} (positive=True)", "positive", p.symbol)
            lo, hi = p.bounds or (None, None)
            if lo is not None:
                add(f"{where} (lower bound {lo:g})", "nonnegative", p.symbol - sp.Float(lo))
            if hi is not None:
                add(f"{where} (upper bound {hi:g})", "nonnegative", sp.Float(hi) - p.symbol)

        for s, mass in self.masses.items():
            for where, kind, e in self._conditions_in(f"mass of {s.name!r}", mass, params):
                add(where, kind, e)
            add(f"mass of {s.name!r}", "nonzero", mass)
        equations = [(f"equation for {s.name!r}", e) for s, e in self.odes.items()]
        equations += [(f"constraint for {z.name!r}", e) for z, e in self.constraints.items()]
        equations += [(f"definition {n!r}", e) for n, (_, e) in self.definitions.items()]
        for where, expr in equations:
            for w, kind, e in self._conditions_in(where, expr, params):
                add(w, kind, e)
        return out

    @staticmethod
    def _conditions_in(where, expr, params):
        for node in sp.postorder_traversal(expr):
            if not node.free_symbols or not node.free_symbols <= params:
                continue
            if node.is_Pow and node.exp.is_number:
                ex = node.exp
                if ex.is_Rational and not ex.is_Integer and ex.q % 2 == 0:
                    yield (where, "positive" if ex < 0 else "nonnegative", node.base)
                elif ex.is_negative:
                    yield (where, "nonzero", node.base)
            elif isinstance(node, sp.log):
                yield (where, "positive", node.args[0])

    def check_values(self, values: dict, what="value"):
        """Raise :class:`ParameterValueError` naming the parameter if ``values`` are not valid."""
        for name, value in values.items():
            if not math.isfinite(value):
                raise ParameterValueError(f"parameter {name!r}: {what} {value!r} must be a finite number")
        subs = {self.parameters[n].symbol: sp.Float(v) for n, v in values.items()}
        for where, kind, expr in self.parameter_conditions():
            try:
                value = complex(expr.xreplace(subs).evalf())
            except (TypeError, ValueError):      # zoo / nan: an inner condition already failed
                value = complex(float("nan"))
            ok = {"nonzero": value != 0, "nonnegative": value.real >= 0,
                  "positive": value.real > 0}[kind] and value.imag == 0 and math.isfinite(value.real)
            if not ok:
                names = sorted(str(x) for x in expr.free_symbols)
                raise ParameterValueError(parameter_message(where, kind, sp.sstr(expr), names, value.real,
                                                            values, what))

    def _check_constants(self, where, expr):
        """Refuse complex and non-finite constants (they would be printed into float arrays)."""
        for node in sp.preorder_traversal(expr):
            if node in (sp.S.ComplexInfinity, sp.S.Infinity, sp.S.NegativeInfinity, sp.S.NaN) or (
                    isinstance(node, sp.Float) and not math.isfinite(float(node))):
                raise InvalidConstantError(
                    f"{where}: the constant {sp.sstr(node)} is not finite (in {sp.sstr(expr)}); a division "
                    f"by zero (1/0 gives zoo), oo or nan cannot be evaluated: write a finite expression")
            if node is sp.I:
                raise InvalidConstantError(
                    f"{where}: {sp.sstr(expr)} holds the imaginary unit I (from I itself, sqrt or log of a "
                    f"negative number); frictionkit models are real: rewrite it with real constants")
            if node.is_Pow and node.exp.is_number and not node.exp.is_integer and (
                    node.base.is_extended_negative):
                raise InvalidConstantError(
                    f"{where}: {sp.sstr(node)} is the root of {sp.sstr(node.base)}, which is negative for "
                    f"every real value, so it is complex; frictionkit models are real: fix the sign")

    def check_parameter(self, name, what="parameter"):
        if name not in self.parameters:
            raise UnknownParameterError(
                f"{what} {name!r} is not a parameter of model {self.name!r}; its parameters are "
                f"{', '.join(self.parameters) or 'none'}")

    def _check_analytic(self, where, expr, allow):
        for node in sp.preorder_traversal(expr):
            for func, hint in NON_ANALYTIC.items():
                if isinstance(node, func) or getattr(node, "func", None) is func:
                    if allow:
                        return
                    raise NonAnalyticError(
                        f"{where}: {func.__name__} in {sp.sstr(node)} is not analytic, so it cannot be "
                        f"recast to quadratic form; {hint} (or declare ModelSpec(..., sampled=True) to "
                        f"run it on the sampled path: AFT harmonic balance / shooting, no ANM)")

    def _check_time(self, where, expr):
        if self.t not in expr.free_symbols:
            return
        w = self.forcing_frequency
        if w is None:
            raise ForcingError(f"{where}: time t appears but no forcing frequency is declared; "
                               f"declare it with m.forcing(<parameter>) and use cos(w*t), sin(w*t)")
        for node in sp.preorder_traversal(expr):
            if self.t in getattr(node, "free_symbols", ()) and isinstance(node, (sp.cos, sp.sin)):
                if sp.simplify(node.args[0] - w * self.t) != 0:
                    raise ForcingError(f"{where}: {sp.sstr(node)} is not a forcing at the declared "
                                       f"frequency; only cos({w}*t) and sin({w}*t) are allowed")
        stripped = expr.replace(lambda e: isinstance(e, (sp.cos, sp.sin)) and self.t in e.free_symbols,
                                lambda e: sp.Symbol("_forcing"))
        if self.t in stripped.free_symbols:
            raise ForcingError(f"{where}: time t appears outside cos({w}*t)/sin({w}*t); the model must "
                               f"be autonomous apart from harmonic forcing")

