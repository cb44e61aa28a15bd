"""The malformed-spec suite (issue 13): a careless or hostile model declaration raises a
specific error whose message names the culprit — never a traceback from deep inside, never
wrong results.  Each case builds a model and says which call must fail, with what error
type and which words of the message (the culprit: equation, symbol, parameter)."""
import numpy as np
import pytest
import sympy as sp

from frictionkit.codegen import RecastError, generate_module, recast
from frictionkit.modelspec import (DuplicateNameError, ForcingError, InvalidConstantError, InvalidTextError,
                                   ModelSpec, ModelSpecError, NonAnalyticError, ParameterValueError,
                                   UndeclaredSymbolError, UnknownParameterError, UnknownStateError, laws)


def osc(**defaults):
    m = ModelSpec("osc")
    k = m.parameter("k", defaults.get("k", 1.0))
    x, v = m.second_order("x", velocity="v")
    return m, k, x, v


def with_rhs(extra, **kw):
    """Oscillator whose acceleration is ``-k x + extra(m, k, x, v)``; validation must fail."""
    def build():
        m, k, x, v = osc()
        m.ode(v, -k * x + extra(m, k, x, v), **kw)
        m.validate()
    return build


def param_then(expr_of_a, default):
    """A parameter ``a`` with ``default`` entering through ``expr_of_a(a, v)``."""
    def build():
        m, k, x, v = osc()
        a = m.parameter("a", default)
        m.ode(v, -k * x + expr_of_a(a, v))
        m.validate()
    return build


def two(first, second):
    """Declare ``first`` then ``second`` (each ``(kind, name)``) on one model."""
    def build():
        m = ModelSpec("osc")
        for kind, name in (first, second):
            if kind == "parameter":
                m.parameter(name, 1.0)
            elif kind == "state":
                m.state(name)
            elif kind == "definition":
                m.define(name, sp.Integer(1))
            else:
                m.algebraic_variable(name)
    return build


def nonlinear_continuation(kind):
    """Continuation parameter k entering non-linearly (k**2) next to a user name 'k_c'."""
    def build():
        m, k, x, v = osc()
        extra = 0
        if kind == "parameter":
            extra = m.parameter("k_c", 0.5) * v
        elif kind == "definition":
            extra = m.define("k_c", v**3)
        elif kind == "state":
            z = m.state("k_c")
            m.ode(z, -z)
        m.ode(v, -k**2 * x + extra)
        recast(m, "k")
    return build


def declare(fn):
    def build():
        m, k, x, v = osc()
        fn(m, k, x, v)
    return build


def fresh(fn):
    def build():
        fn(ModelSpec("osc"))
    return build


def checked(name, cont, **values):
    """A shipped model's generated check_parameters at ``values`` (load-time checks)."""
    def build():
        mod = generate_module(name, cont, backend="numpy")
        p = np.array(mod.DEFAULTS, dtype=float)
        for k, val in values.items():
            p[mod.PARAMETERS.index(k)] = val
        mod.check_parameters(p)
    return build


def sym(name):
    return sp.Symbol(name, real=True)


CASES = [
    # -- names: NFKC folding, collisions with each other and with generated identifiers
    ("nfkc-ligature-param", two(("parameter", "fi"), ("parameter", "\ufb01")), DuplicateNameError,
     r"'fi' \('\ufb01' reads as 'fi' in Python: NFKC\) is already declared as a parameter"),
    ("nfkc-bold-state", two(("state", "y"), ("state", "\U0001d432")), DuplicateNameError,
     r"state 'y' \('\U0001d432' reads as 'y'"),
    ("nfkc-definition-vs-param", two(("parameter", "fi"), ("definition", "\ufb01")), DuplicateNameError,
     r"definition 'fi'.*already declared as a parameter"),
    ("nfkc-fullwidth-algebraic", two(("state", "z"), ("algebraic", "\uff5a")), DuplicateNameError,
     r"algebraic variable 'z'.*already declared as a state"),
    ("nfkc-invalid-after-folding", fresh(lambda m: m.parameter("\u00bd", 1.0)), ModelSpecError,
     r"parameter name '1\u20442' is not a valid identifier"),
    ("param-c-collides", nonlinear_continuation("parameter"), DuplicateNameError,
     r"parameter 'k_c' of model 'osc' collides with the constant-in-time variable 'k_c'.*'k'.*rename"),
    ("definition-c-collides", nonlinear_continuation("definition"), DuplicateNameError,
     r"definition 'k_c' .*collides.*continuation parameter 'k'"),
    ("state-c-collides", nonlinear_continuation("state"), DuplicateNameError,
     r"state 'k_c' .*collides.*continuation parameter 'k'"),
    ("keyword-name", fresh(lambda m: m.parameter("lambda", 1.0)), ModelSpecError,
     r"parameter name 'lambda' is not a valid identifier"),
    ("underscore-name", fresh(lambda m: m.state("_x")), ModelSpecError, r"state name '_x' must not start with"),
    ("reserved-lam", fresh(lambda m: m.parameter("lam", 1.0)), ModelSpecError, r"parameter name 'lam' is reserved"),
    ("reserved-I", fresh(lambda m: m.state("I")), ModelSpecError, r"state name 'I' is reserved"),
    ("name-not-a-string", fresh(lambda m: m.parameter(3, 1.0)), ModelSpecError, r"parameter name 3 is not"),
    ("model-name-keyword", lambda: ModelSpec("class"), ModelSpecError, r"model name 'class'"),
    ("model-name-number", lambda: ModelSpec(7), ModelSpecError, r"model name 7"),
    ("contact-name-invalid", declare(lambda m, k, x, v: m.friction("my contact", laws.smooth_abs, v, delta=0.1)),
     ModelSpecError, r"contact name 'my contact'"),
    ("duplicate-contact", declare(lambda m, k, x, v: [m.friction("c", laws.smooth_abs, v, delta=0.1),
                                                      m.friction("c", laws.smooth_abs, v, delta=0.1)]),
     DuplicateNameError, r"definition 'mu_c'"),
    # -- user text that reaches generated files
    ("description-not-text", lambda: ModelSpec("osc", description=b"bytes"), InvalidTextError,
     r"description of model 'osc' must be a string"),
    ("description-surrogate", lambda: ModelSpec("osc", description="a\ud800b"), InvalidTextError,
     r"description of model 'osc'.*lone surrogate"),
    ("unit-not-text", fresh(lambda m: m.parameter("k", 1.0, unit=5)), InvalidTextError,
     r"unit of parameter 'k' must be a string"),
    ("unit-surrogate", fresh(lambda m: m.parameter("k", 1.0, unit="\udfff")), InvalidTextError,
     r"unit of parameter 'k'.*surrogate"),
    ("doc-not-text", fresh(lambda m: m.parameter("k", 1.0, doc=["x"])), InvalidTextError,
     r"doc of parameter 'k' must be a string"),
    # -- defaults
    ("default-bool", fresh(lambda m: m.parameter("k", True)), ModelSpecError, r"parameter 'k': default True"),
    ("default-complex", fresh(lambda m: m.parameter("k", 1 + 2j)), ModelSpecError, r"parameter 'k': default"),
    ("default-inf", fresh(lambda m: m.parameter("k", float("inf"))), ModelSpecError, r"'k'.*must be finite"),
    ("default-none", fresh(lambda m: m.parameter("k", None)), ModelSpecError, r"'k': default None is not a number"),
    ("default-text", fresh(lambda m: m.parameter("k", "1e3 N")), ModelSpecError, r"'k': default '1e3 N'"),
    # -- complex constants
    ("imaginary-unit", with_rhs(lambda m, k, x, v: sp.I * v), InvalidConstantError,
     r"equation for 'v':.*imaginary unit I"),
    ("sqrt-of-negative-number", with_rhs(lambda m, k, x, v: sp.sqrt(-2) * v), InvalidConstantError,
     r"equation for 'v':.*imaginary unit"),
    ("sqrt-of-negative-expression", with_rhs(lambda m, k, x, v: sp.sqrt(-1 - v**2)), InvalidConstantError,
     r"equation for 'v': sqrt\(-v\*\*2 - 1\) is the root of -v\*\*2 - 1, which is negative"),
    ("cube-root-of-negative", with_rhs(lambda m, k, x, v: sp.Pow(-2, sp.Rational(1, 3)) * v),
     InvalidConstantError, r"equation for 'v':.*root of -2"),
    ("log-of-negative", with_rhs(lambda m, k, x, v: sp.log(-2) * v), InvalidConstantError,
     r"equation for 'v':.*imaginary unit"),
    ("python-complex", with_rhs(lambda m, k, x, v: 1j * v), InvalidConstantError, r"equation for 'v':"),
    ("complex-exponential", with_rhs(lambda m, k, x, v: sp.exp(sp.I * v)), InvalidConstantError,
     r"equation for 'v'"),
    ("complex-in-definition", declare(lambda m, k, x, v: (m.ode(v, -k * x + m.define("d", sp.I * x)),
                                                          m.validate())),
     InvalidConstantError, r"definition 'd'"),
    ("complex-in-mass", with_rhs(lambda m, k, x, v: 0, mass=1 + sp.I), InvalidConstantError, r"mass of 'v'"),
    # -- non-finite constants
    ("one-over-zero", with_rhs(lambda m, k, x, v: 1 / sp.S(0)), InvalidConstantError,
     r"equation for 'v': the constant zoo is not finite"),
    ("state-over-zero", with_rhs(lambda m, k, x, v: v / sp.S(0)), InvalidConstantError,
     r"equation for 'v': the constant zoo"),
    ("infinity", with_rhs(lambda m, k, x, v: sp.oo * v), InvalidConstantError, r"equation for 'v'.*oo"),
    ("minus-infinity", with_rhs(lambda m, k, x, v: -sp.oo), InvalidConstantError, r"equation for 'v'.*-oo"),
    ("nan", with_rhs(lambda m, k, x, v: sp.nan * x), InvalidConstantError, r"equation for 'v': the constant nan"),
    ("python-inf", with_rhs(lambda m, k, x, v: float("inf") * x), InvalidConstantError, r"equation for 'v'"),
    ("python-nan", with_rhs(lambda m, k, x, v: float("nan")), InvalidConstantError, r"equation for 'v'"),
    ("infinite-mass", with_rhs(lambda m, k, x, v: 0, mass=sp.oo), InvalidConstantError, r"mass of 'v'"),
    ("zoo-in-constraint", declare(lambda m, k, x, v: (m.ode(v, -k * x), m.constraint(m.algebraic_variable("z"),
                                                                                     sym("z") - 1 / sp.S(0)),
                                                      m.validate())),
     InvalidConstantError, r"constraint for 'z'"),
    # -- parameter values that cannot be evaluated (defaults at validation)
    ("zero-mass-literal", with_rhs(lambda m, k, x, v: 0, mass=0), ModelSpecError, r"mass of 'v' is zero"),
    ("mass-parameter-zero", declare(lambda m, k, x, v: (m.ode(v, -k * x, mass=m.parameter("M", 0.0)),
                                                        m.validate())),
     ParameterValueError, r"parameter 'M' \(default M = 0.0\).*mass of 'v'"),
    ("denominator-parameter-zero", param_then(lambda a, v: v / a, 0.0), ParameterValueError,
     r"parameter 'a' \(default a = 0.0\): a = 0 must not be 0; it is a denominator.*equation for 'v'"),
    ("denominator-difference-zero", declare(lambda m, k, x, v: (
        m.ode(v, -k * x + v / (m.parameter("a", 2.0) - m.parameter("b", 2.0))), m.validate())),
     ParameterValueError, r"parameters 'a', 'b' \(defaults a = 2.0, b = 2.0\): a - b = 0 must not be 0"),
    ("declared-positive-default", declare(lambda m, k, x, v: (
        m.ode(v, -k * x - m.parameter("c", -0.5, positive=True) * v), m.validate())),
     ParameterValueError, r"parameter 'c' \(default c = -0.5\): c = -0.5 must be positive, as the declaration"),
    ("declared-bounds-default", declare(lambda m, k, x, v: (
        m.ode(v, -k * x - m.parameter("c", 2.0, bounds=(0, 1)) * v), m.validate())),
     ParameterValueError, r"parameter 'c' \(default c = 2.0\): 1.0 - c = -1 must not be negative, as the "
                          r"declaration of 'c' \(upper bound 1\)"),
    ("declared-bounds-empty", declare(lambda m, k, x, v: m.parameter("c", 2.0, bounds=(1, 0))), ModelSpecError,
     r"parameter 'c': bounds=\(1, 0\) is empty"),
    ("declared-positive-not-bool", declare(lambda m, k, x, v: m.parameter("c", 2.0, positive="yes")),
     ModelSpecError, r"parameter 'c': positive='yes' must be True or False"),
    ("sqrt-parameter-negative", param_then(lambda a, v: sp.sqrt(a) * v, -1.0), ParameterValueError,
     r"parameter 'a' \(default a = -1.0\): a = -1 must not be negative; it is under a square root"),
    ("sqrt-inside-state-expression", param_then(lambda a, v: sp.sqrt(v**2 + sp.sqrt(a)), -4.0),
     ParameterValueError, r"parameter 'a'.*under a square root"),
    ("inverse-sqrt-parameter-zero", param_then(lambda a, v: v / sp.sqrt(a), 0.0), ParameterValueError,
     r"parameter 'a'.*must be positive"),
    ("log-parameter-zero", param_then(lambda a, v: sp.log(a) * v, 0.0), ParameterValueError,
     r"parameter 'a'.*must be positive; it is under a root or a logarithm"),
    ("inner-denominator-first", param_then(lambda a, v: v / (1 + 1 / a), 0.0), ParameterValueError,
     r"parameter 'a'.*a = 0 must not be 0"),
    # -- parameter values at load (the generated check_parameters)
    # declared domains (zoo: ModelSpec.parameter(..., positive=True)) are checked first
    ("load-zero-regularization", checked("belt", "Vb", n=0.0), ParameterValueError,
     r"parameter 'n' \(value n = 0.0\): n = 0 must be positive, as the declaration of 'n' \(positive=True\)"),
    ("load-negative-smoothing", checked("belt", "Vb", eps=-1.0), ParameterValueError,
     r"parameter 'eps' \(value eps = -1.0\): eps = -1 must be positive"),
    ("load-negative-sqrt", checked("belt", "Vb", mus=0.1, mud=0.3), ParameterValueError,
     r"parameters 'mud', 'mus'.*must not be negative; it is under a square root"),
    ("load-zero-mass", checked("shaw", "w", m=0.0), ParameterValueError, r"parameter 'm'.*declaration of 'm'"),
    ("load-zero-modal-mass", checked("belt", "FN", M1=0.0), ParameterValueError, r"parameter 'M1'"),
    ("load-nan", checked("belt", "Vb", eps=float("nan")), ParameterValueError,
     r"parameter 'eps': value nan must be a finite number"),
    ("load-inf", checked("weakstrong", "vd", v0=float("inf")), ParameterValueError, r"parameter 'v0'"),
    ("load-zero-reference-velocity", checked("weakstrong", "vd", v0=0.0), ParameterValueError,
     r"parameter 'v0'"),
    # -- structure (beyond tests/modelspec/test_errors.py)
    ("rhs-is-text", declare(lambda m, k, x, v: m.ode(v, "-k*x")), ModelSpecError,
     r"equation for 'v': '-k\*x' is not a sympy expression"),
    ("rhs-is-matrix", declare(lambda m, k, x, v: m.ode(v, sp.Matrix([x, v]))), ModelSpecError,
     r"(?s)equation for .v.:.*not a scalar"),
    ("ode-for-algebraic", declare(lambda m, k, x, v: m.ode(m.algebraic_variable("z"), x)), UnknownStateError,
     r"'z' is not a declared state"),
    ("constraint-on-state", declare(lambda m, k, x, v: m.constraint(x, x - 1)), UnknownStateError,
     r"constraint for 'x'.*not a declared algebraic variable"),
    ("second-ode", declare(lambda m, k, x, v: (m.ode(v, -x), m.ode(v, x))), DuplicateNameError,
     r"state 'v' already has an equation"),
    ("second-constraint", declare(lambda m, k, x, v: (m.algebraic_variable("z"),
                                                      m.constraint(sym("z"), sym("z") - x),
                                                      m.constraint(sym("z"), sym("z")))),
     DuplicateNameError, r"variable 'z' already has a constraint"),
    ("forcing-not-parameter", declare(lambda m, k, x, v: m.forcing(sym("w"))), UnknownParameterError,
     r"forcing frequency w"),
    ("law-not-callable", declare(lambda m, k, x, v: m.friction("c", 0.3, v)), ModelSpecError,
     r"contact 'c': law 0.3"),
    ("undeclared-in-mass", with_rhs(lambda m, k, x, v: 0, mass=sym("mm")), UndeclaredSymbolError,
     r"mass of 'v': symbol 'mm' is not declared"),
    ("non-analytic-in-mass", declare(lambda m, k, x, v: (m.ode(v, -k * x, mass=sp.Abs(k) + 1), m.validate())),
     NonAnalyticError, r"mass of 'v': Abs"),
    ("non-analytic-in-definition", declare(lambda m, k, x, v: (m.ode(v, -k * x + m.define("d", sp.sign(v))),
                                                               m.validate())),
     NonAnalyticError, r"definition 'd': sign"),
    ("state-exponent", declare(lambda m, k, x, v: (m.ode(v, -k * x + v**x), recast(m, "k"))), RecastError,
     r"equation for 'v': power v\*\*x has a non-constant exponent"),
    ("time-inside-nonlinearity", declare(lambda m, k, x, v: (m.forcing(m.parameter("w", 1.0)),
                                                             m.ode(v, -k * x + sp.cos(sym("w") * m.t) ** 2),
                                                             recast(m, "k"))),
     RecastError, r"equation for 'v'"),
    ("forcing-frequency-outside-forcing", declare(lambda m, k, x, v: (
        m.forcing(m.parameter("w", 1.0)), m.ode(v, -k * x * sym("w") + sp.cos(sym("w") * m.t)), recast(m, "w"))),
     RecastError, r"equation for 'v': the continuation parameter w is the forcing frequency"),
    ("definition-cycle", declare(lambda m, k, x, v: (m.define("d1", sym("d2") + 1), m.define("d2", sym("d1")),
                                                     m.ode(v, sym("d1")), m.validate())),
     ModelSpecError, r"definitions of model 'osc' refer to each other in a cycle"),
]


def test_the_suite_is_large_enough():
    assert len(CASES) >= 60


@pytest.mark.parametrize("build,error,message", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_spec_names_the_culprit(build, error, message):
    with pytest.raises(error, match=message) as info:
        build()
    # every error is one of the project's: a ModelSpecError under the FrictionkitError root
    from frictionkit.modelspec import FrictionkitError
    assert isinstance(info.value, (ModelSpecError, FrictionkitError))
