"""The one fake LLM both sides talk to: deterministic answers, every request logged with its time.

A candidate call is answered with its last user turn (so two tools that send the same turn
get the same answer). A judge call (either tool's output contract in the system message, a
requested schema, or a judge marker) gets a verdict whose score depends only on the answer
it grades: ``WRONG`` in it scores 0, ``PARTLY`` 0.5, anything else 1, so a suite can steer
each grade from its input.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from app.providers.structured_output.schema_instance import instance_from_schema
from testkit.fake_llm import FakeLLM, RunningServer
from testkit.fake_wire import JUDGE_MARKER, RecordedRequest, Reply, requested_schema

JUDGE_CONTRACTS = (
    "You must respond with a single JSON object",
    "You must return a valid JSON object",
    "You are an expert grader",
)
_RUBRIC_ID = re.compile(r"^(?:- \[([^\]]+)\]|### Criterion: (\S+))", re.M)
"""A rubric item's id in a judge prompt: ``- [id]`` (this service's, AgentV's checklist) or
AgentV's ``### Criterion: id`` (criteria scored in ranges)."""
_ANSWER_MARKERS = ("[[ ## answer ## ]]", JUDGE_MARKER, "[[ ## output ## ]]")
_SECTION = re.compile(r"\[\[ ## question ## \]\]\n(.*?)(?:\n\n\[\[ ## |\Z)", re.S)


@dataclass
class Logged:
    """One request: when it arrived (epoch seconds), its API key, its chat messages."""

    at: float
    key: str
    messages: list[dict[str, Any]]
    judge: bool

    def answer(self) -> str | None:
        """The answer a judge prompt grades (after its answer marker), if it has one."""
        for message in self.messages:
            content = message.get("content")
            if not isinstance(content, str):
                continue
            for marker in _ANSWER_MARKERS:
                if marker in content:
                    return content.rsplit(marker, 1)[1].strip("\n").split("\n\n[[ ## ")[0]
        return None

    def question(self) -> str | None:
        """The ``[[ ## question ## ]]`` section of a judge prompt, if it has one."""
        for message in self.messages:
            content = message.get("content")
            match = _SECTION.search(content) if isinstance(content, str) else None
            if match:
                return match.group(1)
        return None


def _system_text(messages: list[dict[str, Any]]) -> str:
    return "\n".join(
        str(m.get("content")) for m in messages if m.get("role") in ("system", "developer")
    )


def is_judge(recorded: RecordedRequest, messages: list[dict[str, Any]]) -> bool:
    """Whether a request is a grader's (either tool's judge contract or marker)."""
    system = _system_text(messages)
    return (
        any(contract in system for contract in JUDGE_CONTRACTS)
        or requested_schema(recorded) is not None
        or JUDGE_MARKER in recorded.messages_text()
    )


def judge_score(messages: list[dict[str, Any]]) -> float:
    """The score a judge gives: from the graded answer's words alone."""
    text = "\n".join(str(m.get("content")) for m in messages if m.get("role") == "user")
    for marker in _ANSWER_MARKERS:
        if marker in text:
            text = text.rsplit(marker, 1)[1]
            break
    if "WRONG" in text:
        return 0.0
    return 0.5 if "PARTLY" in text else 1.0


def rubric_checks(messages: list[dict[str, Any]], score: float) -> list[dict[str, Any]]:
    """One check per ``- [id]`` rubric line: all met at score 1, every other one at 0.5
    (with ``score``, 0-10, for criteria scored in ranges)."""
    text = "\n".join(str(m.get("content")) for m in messages if m.get("role") == "user")
    ids = [listed or ranged for listed, ranged in _RUBRIC_ID.findall(text)]
    return [
        {"id": item, "satisfied": score == 1.0 or (score == 0.5 and index % 2 == 0),
         "score": round(10 * score), "reasoning": "fake"}
        for index, item in enumerate(ids)
    ]  # fmt: skip


def verdict(recorded: RecordedRequest, messages: list[dict[str, Any]], score: float) -> str:
    """A verdict both tools parse: the requested schema's instance, else a union of shapes."""
    passed = score >= 0.5
    known: dict[str, Any] = {
        "score": score,
        "hits": ["checked"] if passed else [],
        "misses": [] if passed else ["not met"],
        "reasoning": "fake judge",
        "assertions": [{"text": "checked", "passed": passed}],
        "checks": rubric_checks(messages, score),
        "overall_reasoning": "fake judge",
        "satisfied": passed,
        "passed": passed,
    }
    schema = requested_schema(recorded)
    if schema is not None:
        return json.dumps(instance_from_schema(schema, score=score, text="fake", known=known))
    return json.dumps(known)


class LoggingFake:
    """The fake LLM with a responder that logs and answers as described above."""

    def __init__(self) -> None:
        self.fake = FakeLLM()
        self.fake.record = False
        self.fake.responder = self._respond
        self.log: list[Logged] = []

    @property
    def url(self) -> str:
        return self.fake.url

    def _respond(self, recorded: RecordedRequest) -> Reply | None:
        body = recorded.json if isinstance(recorded.json, dict) else {}
        messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
        judge = is_judge(recorded, messages)
        key = recorded.headers.get("authorization", "").removeprefix("Bearer ")
        self.log.append(Logged(time.time(), key, messages, judge))
        if judge:
            return Reply(text=verdict(recorded, messages, judge_score(messages)))
        return None

    def take(self, key: str | None = None) -> list[Logged]:
        """The requests logged so far (of one API key), forgetting them."""
        taken, self.log = self.log, []
        return [entry for entry in taken if key is None or entry.key == key]


@contextmanager
def serve() -> Iterator[LoggingFake]:
    """The logging fake on 127.0.0.1 and a free port."""
    logging_fake = LoggingFake()
    server = RunningServer(logging_fake.fake)
    server.start()
    try:
        yield logging_fake
    finally:
        server.stop()
