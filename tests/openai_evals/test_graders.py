"""The OpenAI graders and the ``multi`` formula, unit by unit."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from app.evaluation.openai_graders.checks import string_check, text_similarity
from app.evaluation.openai_graders.formula import (
    FormulaError,
    evaluate_formula,
    formula_names,
    parse_formula,
)
from app.evaluation.openai_graders.models import GRADER, StringCheckGrader, TextSimilarityGrader
from app.evaluation.openai_graders.scope import GraderProblem, sample_scope


def scope(output: str, **item: Any) -> dict[str, Any]:
    return {"item": item, "sample": sample_scope(output)}


@pytest.mark.parametrize(
    ("operation", "output", "reference", "passed"),
    [
        ("eq", "Paris", "Paris", True),
        ("eq", "paris", "Paris", False),
        ("ne", "Rome", "Paris", True),
        ("like", "It is Paris.", "Paris", True),
        ("like", "It is paris.", "Paris", False),
        ("ilike", "It is PARIS.", "paris", True),
    ],
)
def test_string_check_operations(operation: str, output: str, reference: str, passed: bool) -> None:
    grader = StringCheckGrader.model_validate(
        {
            "type": "string_check",
            "name": "s",
            "input": "{{ sample.output_text }}",
            "reference": "{{ item.ref }}",
            "operation": operation,
        }
    )
    graded = string_check(grader, scope(output, ref=reference))
    assert (graded.passed, graded.score) == (passed, 1.0 if passed else 0.0)


def test_templates_read_output_json_and_name_an_undefined_key() -> None:
    grader = StringCheckGrader(
        type="string_check",
        name="s",
        input="{{ sample.output_json.city }}",
        reference="{{ item.city }}",
        operation="eq",
    )
    assert string_check(grader, scope('{"city": "Oslo"}', city="Oslo")).passed
    with pytest.raises(GraderProblem, match=r"s\.reference.*town"):
        string_check(
            grader.model_copy(update={"reference": "{{ item.town }}"}), scope('{"city": "Oslo"}')
        )


def test_text_similarity_passes_at_its_threshold() -> None:
    grader = TextSimilarityGrader(
        type="text_similarity",
        name="t",
        input="{{ sample.output_text }}",
        reference="the cat sat",
        evaluation_metric="fuzzy_match",
        pass_threshold=0.9,
    )
    assert text_similarity(grader, scope("the cat sat")).passed
    assert not text_similarity(grader, scope("a dog ran off")).passed


def test_formula_arithmetic_and_functions() -> None:
    tree = parse_formula("0.5 * a + 0.5 * max(b, 0.2) - abs(-0.1) + 2 ^ 2 / 8")
    assert formula_names(tree) == {"a", "b"}
    assert evaluate_formula(tree, {"a": 1.0, "b": 0.0}) == pytest.approx(1.0)
    assert (
        evaluate_formula(parse_formula("sqrt(a) + floor(1.7) + log(exp(b))"), {"a": 4, "b": 2}) == 5
    )


@pytest.mark.parametrize(
    "formula",
    [
        "__import__('os').system('true')",
        "a.__class__",
        "a[0]",
        "a if b else 1",
        "a < b",
        "'text'",
        "open('x')",
        "lambda: 1",
        "[a for a in b]",
        "max(a, key=b)",
        "True + a",
    ],
)
def test_formula_refuses_everything_but_arithmetic(formula: str) -> None:
    with pytest.raises(FormulaError):
        parse_formula(formula)


def test_formula_faults_are_errors_not_crashes() -> None:
    with pytest.raises(FormulaError, match="not one of its graders"):
        evaluate_formula(parse_formula("a + c"), {"a": 1})
    with pytest.raises(FormulaError, match="could not be computed"):
        evaluate_formula(parse_formula("a / b"), {"a": 1, "b": 0})
    with pytest.raises(FormulaError, match="exponent"):
        evaluate_formula(parse_formula("a ** 1000"), {"a": 2})


@given(st.floats(-1e6, 1e6), st.floats(-1e6, 1e6))
def test_formula_matches_python_arithmetic(a: float, b: float) -> None:
    value = evaluate_formula(parse_formula("(a - b) * 2 + a / 4"), {"a": a, "b": b})
    assert math.isclose(value, (a - b) * 2 + a / 4, rel_tol=1e-9, abs_tol=1e-9)


def test_multi_formula_must_name_its_graders_and_labels_must_pass_among_labels() -> None:
    sub = {"type": "string_check", "name": "s", "input": "x", "reference": "x", "operation": "eq"}
    with pytest.raises(ValidationError, match="calculate_output names"):
        GRADER.validate_python(
            {"type": "multi", "name": "m", "graders": {"s": sub}, "calculate_output": "s + t"}
        )
    with pytest.raises(ValidationError, match="passing_labels"):
        GRADER.validate_python(
            {
                "type": "label_model",
                "name": "l",
                "model": "m",
                "input": [{"role": "user", "content": "x"}],
                "labels": ["a"],
                "passing_labels": ["b"],
            }
        )
    with pytest.raises(ValidationError, match="extra"):
        GRADER.validate_python({**sub, "unknown_option": 1})
