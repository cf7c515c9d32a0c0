"""dual: forward-mode differentiation with Dual(val, der=0.0).

Each function a test asks about is followed here from its Python source (the one its snippet
prints), with one rule changed at a time (the model below), so that a wrong answer that matches
a known wrong rule everywhere is named.
"""

from __future__ import annotations

import ast
import math

import pytest

from autograder.answers import Tolerance
from autograder.parts import Part
from autograder.suspects import ratio, unwrapped

PART = Part("dual",
            misconceptions=("dual-number-not-wrapped", "dual-product-rule", "dual-sin-sign",
                            "dual-constant-derivative"))

NOT_WRAPPED = {"dual-number-not-wrapped": unwrapped("val")}
SAME = Tolerance(rel=1e-9, abs=1e-12)
LESSON = "x.sin() * x.exp() + x * x"


def follow(source: str, x: float, der: float, *, mistake: str = "") -> tuple[float, float]:
    """(f(x), der * f'(x)) for the function `source` of x (+, *, .sin(), .exp() and numbers),
    by the forward rules, with one rule changed as `mistake` says."""
    def walk(node: ast.AST) -> tuple[float, float]:
        if isinstance(node, ast.Name) and node.id == "x":
            return x, der
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return node.value, 1.0 if mistake == "dual-constant-derivative" else 0.0
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            value, derivative = walk(node.operand)
            return -value, derivative if isinstance(node.operand, ast.Constant) else -derivative
        if isinstance(node, ast.BinOp) and type(node.op) in (ast.Add, ast.Mult):
            (a, da), (b, db) = walk(node.left), walk(node.right)
            if isinstance(node.op, ast.Add):
                return a + b, da + db
            return a * b, da * db if mistake == "dual-product-rule" else da * b + a * db
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args:
            a, da = walk(node.func.value)
            if node.func.attr == "sin":
                return math.sin(a), (-1.0 if mistake == "dual-sin-sign" else 1.0) * math.cos(a) * da
            if node.func.attr == "exp":
                return math.exp(a), math.exp(a) * da
        raise ValueError(f"not a function this model follows: {ast.dump(node)}")
    return walk(ast.parse(source, mode="eval").body)


def follows(mistake: str, functions: list[tuple[str, float]] | None, der: float | None = None):
    """The submission's answer for every function is the one the changed rule gives. The
    functions are `functions`, or those the reference's cases name (`f`, `x`, `der`)."""
    def test(expected, got):
        asked = functions or [(case["inputs"]["f"], case["inputs"]["x"]) for case in expected]
        tangent = der if der is not None else expected[0]["inputs"]["der"]
        cases = got.observations if isinstance(got.observations, list) else [got.observations]
        return len(cases) == len(asked) and all(
            all(SAME.close(case[key], value) for key, value in zip(("val", "der"),
                                                                   follow(f, x, tangent, mistake=mistake)))
            for case, (f, x) in zip(cases, asked))
    return test


def mistakes(functions: list[tuple[str, float]] | None = None, der: float | None = None) -> dict:
    rules = ("dual-product-rule", "dual-sin-sign", "dual-constant-derivative")
    return {**NOT_WRAPPED, **{rule: follows(rule, functions, der) for rule in rules}}


def test_the_lessons_example(grade, ask):
    """The lesson's d/dx [sin(x) e^x + x^2], at x = {x}."""
    x = ask.number(1.0, 0.5, 2.0)
    grade("dual:lesson", x=x, suspects=mistakes([(LESSON, x)], 1.0))


def test_the_lessons_example_plus_a_constant(grade, ask):
    """The lesson's function plus {c}: the same derivative."""
    x, c = ask.number(1.0, 0.5, 2.0), ask.whole(3, 2, 9)
    grade("dual:lesson_plus_constant", x=x, c=c, suspects=mistakes([(f"{LESSON} + {c}", x)], 1.0))


# A constant of each kind: a float and a negative int.
CONSTANTS = {"float": lambda ask: ask.number(2.5, 0.5, 5.0), "int": lambda ask: ask.whole(-4, -2000, -2)}


@pytest.mark.parametrize("kind", list(CONSTANTS))
def test_a_constant(grade, ask, kind):
    """Dual(c) with no derivative given is a constant: der 0.0."""
    grade("dual:constant", c=CONSTANTS[kind](ask),
          suspects={"dual-constant-derivative": lambda e, g: g.observations["der"] == 1})


# A plain number of each kind: a whole one and a negative float.
NUMBERS = {"int": lambda ask: ask.whole(2, 2, 9), "float": lambda ask: ask.number(-1.5, -3.0, -0.5)}


@pytest.mark.parametrize("kind", list(NUMBERS))
def test_plain_numbers_on_either_side(grade, ask, kind):
    """x + k, k + x, x * k and k * x with a plain number k and a tangent of {der}."""
    der = ask.number(2.5, 1.5, 4.0)
    grade("dual:with_numbers", x=ask.number(0.7, 0.2, 1.5), der=der, k=NUMBERS[kind](ask), suspects={
        **NOT_WRAPPED,
        "dual-constant-derivative": lambda e, g: all(
            SAME.close(case["der"], der + 1) for case in g.observations["sums"]),
        "dual-product-rule": lambda e, g: all(case["der"] == 0 for case in g.observations["products"])})


def test_products_with_two_tangents(grade, ask):
    """Dual(a, a') * Dual(b, b') at seeded random values: the derivative a'b + ab'."""
    grade("dual:products", seed=ask.seed(11), count=12, suspects={
        "dual-product-rule": lambda e, g: all(
            SAME.close(case["der"], case_e["inputs"]["da"] * case_e["inputs"]["db"])
            for case, case_e in zip(g.observations, e))})


def test_sin_and_exp(grade, ask):
    """x.sin() and x.exp() at seeded random points with a tangent of {der}."""
    grade("dual:sin_and_exp", seed=ask.seed(12), count=12, der=ask.number(2.5, 1.5, 4.0),
          suspects={"dual-sin-sign": ratio("sin_der", -1)})


# The tangent: the usual 1 (the derivative itself), a larger one and a negative one.
TANGENTS = {"one": (21, None), "larger": (22, (2.5, 1.5, 4.0)), "negative": (23, (-0.75, -2.0, -0.25))}


@pytest.mark.parametrize("tangent", list(TANGENTS))
def test_random_functions(grade, ask, tangent):
    """Seeded random functions of + * sin exp with int and float constants on either side."""
    public_seed, der_range = TANGENTS[tangent]
    seed, der = ask.seed(public_seed), ask.number(*der_range) if der_range else 1.0
    grade("dual:random_functions", seed=seed, count=25, der=der,
          suspects=mistakes())
