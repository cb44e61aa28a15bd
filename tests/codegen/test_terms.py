"""The term-by-term helpers of the recast agree with sympy's Poly and Matrix.jacobian."""
import pytest
import sympy as sp

from frictionkit.codegen._terms import jacobian, poly_terms, total_degree

x, v, w = sp.symbols("x v w", real=True)
a, b, c = sp.symbols("a b c", positive=True)

EXPRESSIONS = [
    -a * x + b * x * v - c * v ** 2 / (a + 1) + 3,
    sp.expand((a * x + b * v + c * w + 1) ** 2),
    a * x * w + w ** 2 / b - 2 * x * v * w / (a * c) + a - b,
    x - x + a * (x + v),            # coefficients meet after expansion
    sp.Integer(0),
]
FUNCTIONS = [
    a * sp.tanh(b * v) * x - c * sp.exp(-(v - a) ** 2) + x * sp.log(1 + v ** 2),
    2 * sp.atan(a * (v - b)) / (sp.pi * (c * sp.sqrt((v - b) ** 2 + a ** 2) + 1)) - x,
    a * x * v ** 3 * sp.sin(w) + b / (x ** 2 + 1) + sp.sqrt(a) * x * sp.cos(b * w),
    sp.Add(*[sp.Symbol(f"k{i}") * x ** (i % 3) * v ** (i % 4) for i in range(40)]),
]


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_poly_terms_equal_sympy_poly(expr):
    gens = [x, v, w]
    e = sp.expand(expr)
    ref = sp.Poly(e, *gens, domain=sp.EX)
    assert poly_terms(e, gens) == ([] if e == 0 else ref.terms())
    assert total_degree(e, gens) == max(ref.total_degree(), 0)


def test_poly_terms_refuse_a_generator_inside_a_function():
    with pytest.raises(sp.PolynomialError):
        poly_terms(a * sp.exp(x), [x])


def test_jacobian_equals_sympy_structurally():
    f = FUNCTIONS
    states = [x, v, w]
    mine = jacobian(f, states)
    ref = sp.Matrix(f).jacobian(states)
    assert mine.shape == ref.shape
    for got, want in zip(mine, ref):
        assert got == want          # structural equality: printed code stays byte-identical
