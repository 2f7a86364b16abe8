"""The mock provider: candidate rules and a meaningful, schema-valid judge."""

from __future__ import annotations

import json
import time

import jsonschema

from app.formatting.messages import ChatMessage
from app.providers.adapters.mock import overlap_verdict
from app.providers.base import CallRole
from tests.providers.conftest import VERDICT_SCHEMA, multi_turn_prompt, request_for

RUBRIC_SCHEMA = {
    "type": "object",
    "$defs": {
        "Check": {
            "type": "object",
            "properties": {
                "id": {"type": "string", "enum": ["r1", "r2", "r3"]},
                "satisfied": {"type": "boolean"},
                "reasoning": {"type": "string"},
            },
            "required": ["id", "satisfied", "reasoning"],
        }
    },
    "properties": {
        "checks": {"type": "array", "items": {"$ref": "#/$defs/Check"}},
        "overall_reasoning": {"type": "string"},
        "score": {"type": "integer", "minimum": 0, "maximum": 10},
    },
    "required": ["checks", "overall_reasoning", "score"],
}


def judge_prompt(candidate: str, expected: str) -> tuple[ChatMessage, ...]:
    text = (
        "[[ ## expected_outcome ## ]]\n" + expected + "\n\n[[ ## question ## ]]\nQ\n\n"
        "[[ ## reference_answer ## ]]\n\n[[ ## candidate_answer ## ]]\n" + candidate
    )
    return (
        ChatMessage(role="system", content="Return JSON."),
        ChatMessage(role="user", content=text),
    )


async def test_mock_echoes_the_last_user_turn_by_default(make_registry):
    registry = make_registry()
    reply = await registry.get("default").complete(request_for(multi_turn_prompt()))
    assert reply.text == "And now?"
    assert reply.model == "mock"


async def test_mock_answers_per_case_then_fixed_text(make_registry):
    registry = make_registry([
        {"name": "default", "provider": "mock", "response": "fixed",
         "answers": {"case-1": "four"}},
    ])  # fmt: skip
    runtime = registry.get("default")
    assert (await runtime.complete(request_for(case_id="case-1"))).text == "four"
    assert (await runtime.complete(request_for(case_id="case-2"))).text == "fixed"


async def test_mock_judge_scores_by_overlap_with_the_expected_outcome(make_registry):
    runtime = make_registry().get("default")
    good = await runtime.complete(request_for(
        judge_prompt("Paris is the capital of France", "Says Paris is the capital of France"),
        role=CallRole.JUDGE,
    ))  # fmt: skip
    bad = await runtime.complete(request_for(
        judge_prompt("I do not know", "Says Paris is the capital of France"), role=CallRole.JUDGE,
    ))  # fmt: skip
    good_verdict, bad_verdict = json.loads(good.text), json.loads(bad.text)
    assert set(good_verdict) == {"score", "hits", "misses", "reasoning"}
    assert 0.5 < good_verdict["score"] <= 1.0
    assert bad_verdict["score"] == 0.0
    assert bad_verdict["misses"]


async def test_mock_judge_follows_the_requested_schema(make_registry):
    runtime = make_registry().get("default")
    for schema in (VERDICT_SCHEMA, RUBRIC_SCHEMA):
        reply = await runtime.complete(request_for(
            judge_prompt("Paris", "Paris"), role=CallRole.JUDGE, schema=schema,
        ))  # fmt: skip
        value = json.loads(reply.text)
        jsonschema.validate(value, schema)
    assert [c["id"] for c in value["checks"]] == ["r1", "r2", "r3"]
    assert value["score"] == 10


def test_overlap_is_deterministic_and_bounded():
    prompt = judge_prompt("alpha beta", "alpha beta gamma delta")[1].content
    first, second = overlap_verdict(prompt), overlap_verdict(prompt)
    assert first == second
    assert first["score"] == 0.5


async def test_mock_latency_is_applied(make_registry):
    runtime = make_registry([{"name": "default", "provider": "mock", "latency_ms": 30}]).get(
        "default"
    )
    started = time.perf_counter()
    reply = await runtime.complete(request_for())
    assert time.perf_counter() - started >= 0.025
    assert reply.latency_ms == 30
