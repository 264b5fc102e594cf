"""The safe arithmetic evaluator behind ``computed`` values and fabric ``computed_env``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from manifesto.errors import ExpressionError, Origin
from manifesto.resolve.expr import evaluate, is_expression

VARS = {"max_concurrency": 256, "mtp_size": 2, "half": 0.5, "zero": 0}


@pytest.mark.parametrize(("expr", "value"), [
    ("max_concurrency * mtp_size", 512),
    ("max_concurrency * 2 + 2", 514),
    ("2 + 3 * 4", 14),
    ("(2 + 3) * 4", 20),
    ("2 - 3 - 4", -5),  # left associative
    ("64 / 4 / 2", 8),
    ("7 // 2", 3),
    ("-7 // 2", -4),
    ("7 % 3", 1),
    ("-max_concurrency", -256),
    ("--3", 3),
    ("+3", 3),
    ("-(2 + 3) * 2", -10),
    ("  max_concurrency  ", 256),
    ("1.5 * 2", 3),
    ("max_concurrency * half", 128),
    (".5 + 1.", 1.5),
    ("7 / 2", 3.5),
    ("((((1))))", 1),
    ("max_concurrency//mtp_size%100", 28),
], ids=lambda v: str(v))
def test_values(expr, value):
    result = evaluate(expr, VARS)
    assert result == value
    assert type(result) is type(value)  # whole results come back as int


@pytest.mark.parametrize("number", [0, 7, -3, 2.5])
def test_numbers_pass_through(number):
    assert evaluate(number, {}) == number


ORIGIN = Origin("spec.yaml", 9, 9)
PATH = "roles[0].computed.vllm.max_num_seqs"


@pytest.mark.parametrize(("expr", "message"), [
    ("max_concurency * 2", "in expression 'max_concurency * 2': unknown name 'max_concurency' "
                           "(did you mean 'max_concurrency'?); vars: half, max_concurrency, mtp_size, zero"),
    ("tokens", "in expression 'tokens': unknown name 'tokens'; vars: half, max_concurrency, mtp_size, zero"),
    ("max_concurrency *", "in expression 'max_concurrency *': expression ends too early"),
    ("", "in expression '': empty expression"),
    ("   ", "in expression '   ': empty expression"),
    ("(1 + 2", "in expression '(1 + 2': missing ')'"),
    ("1 + 2)", "in expression '1 + 2)': unexpected ')'"),
    ("1 2", "in expression '1 2': unexpected '2'"),
    ("2 ** 3", "in expression '2 ** 3': unexpected '*'"),
    ("max_concurrency / zero", "in expression 'max_concurrency / zero': division by zero"),
    ("1 // 0", "in expression '1 // 0': division by zero"),
    ("1 % (2 - 2)", "in expression '1 % (2 - 2)': division by zero"),
    ("__import__('os').system('true')", "in expression '__import__('os').system('true')': unexpected character "
                                        "\"'\" at position 12"),
    ("max_concurrency.real", "in expression 'max_concurrency.real': unexpected character '.' at position 16"),
    ("a if b else c", "in expression 'a if b else c': unknown name 'a'; vars: half, max_concurrency, mtp_size, zero"),
    ("1e3", "in expression '1e3': unexpected 'e3'"),  # no exponent notation
    ("[1]", "in expression '[1]': unexpected character '[' at position 1"),
], ids=lambda v: str(v))
def test_errors_carry_origin_and_path(expr, message):
    with pytest.raises(ExpressionError) as info:
        evaluate(expr, VARS, ORIGIN, PATH)
    assert info.value.message == message
    assert info.value.format() == f"spec.yaml:9:9: {PATH}: {message}"


@pytest.mark.parametrize(("expr", "names", "message"), [
    ("big * 10", {"big": 1e308}, "in expression 'big * 10': the result is not a finite number (.inf)"),
    ("big * 10 - big * 10", {"big": 1e308}, "in expression 'big * 10 - big * 10': the result is not a finite "
                                           "number (.nan)"),
    ("-big * 10", {"big": 1e308}, "in expression '-big * 10': the result is not a finite number (-.inf)"),
    ("huge * 1.5", {"huge": 10 ** 400}, "in expression 'huge * 1.5': the result is too large"),
    ("huge / 3", {"huge": 10 ** 400}, "in expression 'huge / 3': the result is too large"),
    ("9" * 400 + ".0", {}, f"in expression '{'9' * 77}...': the number {'9' * 20}... is too large"),
    ("a\n* 2", {"a": 1e308 * 10}, "in expression 'a\\n* 2': the result is not a finite number (.inf)"),
], ids=["inf", "nan", "minus-inf", "int-too-large-for-float", "true-division-overflow", "literal", "one-line"])
def test_non_finite_results_are_errors(expr, names, message):
    with pytest.raises(ExpressionError) as info:
        evaluate(expr, names, ORIGIN, PATH)
    assert info.value.message == message
    assert "\n" not in info.value.format()


@pytest.mark.parametrize("number", [float("inf"), float("-inf"), float("nan")], ids=["inf", "minus-inf", "nan"])
def test_non_finite_numbers_are_errors(number):
    with pytest.raises(ExpressionError, match=r"^expected a finite number, got -?\.(inf|nan)$"):
        evaluate(number, {})


def test_empty_vars_are_named():
    with pytest.raises(ExpressionError) as info:
        evaluate("x", {})
    assert str(info.value) == "in expression 'x': unknown name 'x'; vars: (none)"


@pytest.mark.parametrize(("value", "message"), [
    (True, "expected an expression or a number, got a boolean"),
    (False, "expected an expression or a number, got a boolean"),
    (None, "expected an expression or a number"),
    ([1], "expected an expression or a number"),
])
def test_non_expressions_rejected(value, message):
    with pytest.raises(ExpressionError) as info:
        evaluate(value, VARS)
    assert info.value.message == message


def test_never_calls_eval(monkeypatch):
    import builtins

    def boom(*_a, **_k):
        raise AssertionError("eval/exec called")

    monkeypatch.setattr(builtins, "eval", boom)
    monkeypatch.setattr(builtins, "exec", boom)
    assert evaluate("(max_concurrency + 1) * mtp_size - 3 // 2", VARS) == 513


def test_is_expression():
    assert is_expression("a * 2")
    assert not is_expression("  ")
    assert not is_expression(3)


# ---- property: agrees with an independent evaluation of random expression trees ----------

NAMES = {"a": 3, "b": 7, "c": 12}


def _leaf():
    return st.one_of(
        st.integers(0, 999).map(lambda n: (str(n), n)),
        st.sampled_from(sorted(NAMES)).map(lambda n: (n, NAMES[n])),
    )


def _combine(children):
    def binop(pair):
        (lt, lv), op, (rt, rv) = pair
        if op in ("/", "//", "%") and rv == 0:
            return (f"({lt}) + ({rt})", lv + rv)
        value = {"+": lambda: lv + rv, "-": lambda: lv - rv, "*": lambda: lv * rv, "/": lambda: lv / rv,
                 "//": lambda: lv // rv, "%": lambda: lv % rv}[op]()
        return (f"({lt}) {op} ({rt})", value)

    return st.one_of(
        st.tuples(children, st.sampled_from(["+", "-", "*", "/", "//", "%"]), children).map(binop),
        children.map(lambda c: (f"-({c[0]})", -c[1])),
    )


EXPRESSIONS = st.recursive(_leaf(), _combine, max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(EXPRESSIONS)
def test_matches_reference_semantics(tree):
    text, expected = tree
    result = evaluate(text, NAMES)
    if isinstance(expected, float):
        assert result == pytest.approx(expected)
        if expected.is_integer():
            assert type(result) is int
    else:
        assert result == expected


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab019 +-*/%()._[]'\"!=<>", max_size=30))
def test_arbitrary_text_gives_a_number_or_an_expression_error(text):
    try:
        value = evaluate(text, {"a": 2, "b": 0})
    except ExpressionError as exc:
        assert exc.message.startswith("in expression ")
        assert "\n" not in exc.format()
    else:
        assert isinstance(value, (int, float)) and not isinstance(value, bool)


def test_deep_parentheses_are_an_expression_error():
    with pytest.raises(ExpressionError):
        evaluate("(" * 5000 + "1" + ")" * 5000, {})
