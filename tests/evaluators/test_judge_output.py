"""Parsing judge replies: strict JSON, fenced, in prose; contract violations are unscored."""

from __future__ import annotations

import json

import pytest

from app.evaluators.judges.judge_output import (
    JudgeVerdict,
    Unscored,
    parse_rubric_checks,
    parse_verdict,
)

VALID = '{"score": 0.75, "hits": ["a"], "misses": ["b"], "reasoning": "ok"}'


@pytest.mark.parametrize(
    ("text", "score"),
    [
        (VALID, 0.75),
        (f"  {VALID}\n", 0.75),
        (f"Here is my grade:\n```json\n{VALID}\n```\nThanks.", 0.75),
        (f"```\n{VALID}\n```", 0.75),
        (f"After careful thought, {VALID} is my verdict.", 0.75),
        ('{"score": 1}', 1.0),
        ('{"score": 0, "hits": [], "misses": []}', 0.0),
        ('Note {not json} then {"score": 0.5, "reasoning": "half"}', 0.5),
    ],
    ids=[
        "strict",
        "padded",
        "fenced-json",
        "fenced-bare",
        "prose",
        "int-score",
        "zero",
        "brace-noise",
    ],
)
def test_reply_that_follows_the_contract_gives_its_score(text: str, score: float) -> None:
    parsed = parse_verdict(text)
    assert isinstance(parsed, JudgeVerdict)
    assert parsed.score == score


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "Final score: 0.5",
        '{"score": 1.5}',
        '{"score": -0.1}',
        '{"score": "0.9"}',
        '{"score": true}',
        '{"score": NaN}',
        '{"hits": ["a"], "reasoning": "no score"}',
        '{"score": 0.5, "hits": "no"}',
        '{"score": 0.5, "hits": [1, "a"]}',
        '{"score": 0.5, "misses": [null]}',
        '{"score": 0.5, "reasoning": 3}',
        '{"score": 0.5, "hits": ["a"',
        "[0.5]",
        '{"score": 0.2} and later {"score": 0.9}',
    ],
    ids=[
        "empty",
        "blank",
        "prose-only",
        "above-one",
        "below-zero",
        "string-score",
        "bool-score",
        "nan",
        "missing-score",
        "hits-not-array",
        "non-string-hit",
        "null-miss",
        "non-string-reasoning",
        "truncated",
        "array",
        "two-verdicts",
    ],
)
def test_reply_that_violates_the_contract_is_unscored(text: str) -> None:
    parsed = parse_verdict(text)
    assert isinstance(parsed, Unscored)
    assert parsed.reason


def test_blank_hits_are_dropped_and_at_most_four_kept() -> None:
    parsed = parse_verdict('{"score":0.8,"hits":["a",""," ","b","c","d","e"],"misses":["m1"]}')
    assert isinstance(parsed, JudgeVerdict)
    assert parsed.hits == ["a", "b", "c", "d"]
    assert parsed.misses == ["m1"]


def test_same_verdict_twice_is_not_ambiguous() -> None:
    parsed = parse_verdict(f"```json\n{VALID}\n```\nAgain: ```json\n{VALID}\n```")
    assert isinstance(parsed, JudgeVerdict)


def test_unparseable_reply_never_raises_on_deep_nesting() -> None:
    parsed = parse_verdict("{" * 100_000)
    assert isinstance(parsed, Unscored)


RUBRIC_IDS = ("correct", "concise")


def test_rubric_reply_with_every_id_parses() -> None:
    text = (
        '{"checks": [{"id": "correct", "satisfied": true, "reasoning": "yes"},'
        ' {"id": "concise", "satisfied": false, "reasoning": "long"}], "reasoning": "mixed"}'
    )
    parsed = parse_rubric_checks(text, RUBRIC_IDS)
    assert not isinstance(parsed, Unscored)
    assert [check.satisfied for check in parsed.checks] == [True, False]


def rubric_reply(*checks: tuple[str, object]) -> str:
    items = [{"id": key, "satisfied": value} for key, value in checks]
    return json.dumps({"checks": items, "reasoning": ""})


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (rubric_reply(("correct", True)), "missing"),
        (rubric_reply(("correct", True), ("concise", True), ("other", True)), "unknown"),
        (rubric_reply(("correct", True), ("correct", False), ("concise", True)), "more than once"),
        (rubric_reply(("correct", "yes"), ("concise", True)), "satisfied"),
    ],
    ids=["missing-check", "unknown-id", "duplicate-id", "non-bool"],
)
def test_rubric_reply_that_breaks_the_contract_is_unscored(text: str, reason: str) -> None:
    parsed = parse_rubric_checks(text, RUBRIC_IDS)
    assert isinstance(parsed, Unscored)
    assert reason in parsed.reason
