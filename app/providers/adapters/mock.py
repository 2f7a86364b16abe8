"""The embedded offline provider: deterministic answers through the same limiter and retries.

As a candidate it answers from its target's keys: ``answers`` (per case id), else
``response`` (a fixed text), else it echoes the last user turn. As a judge it returns a verdict
JSON: an instance of ``options.json_schema`` when one is given, else
``{score, hits, misses, reasoning}``. The score is the share of the expected words (the
``expected_outcome`` and ``reference_answer`` sections of the judge prompt) found in the
``candidate_answer`` section, so a better answer scores higher. With a candidate answer it
reports the target's configured ``tool_calls`` (by case id, ``"*"`` for any) and ``cost_usd``.
"""

from __future__ import annotations

import asyncio
import json
import re
from functools import lru_cache
from typing import Any

from app.providers.base import (
    CallRole,
    ProviderKind,
    ProviderRequest,
    ProviderResponse,
    ToolCall,
    Usage,
)
from app.providers.preview import ProviderPreview
from app.providers.structured_output.schema_instance import instance_from_schema
from app.settings.targets import MockTarget

_SECTION = re.compile(r"\[\[ ## ([A-Za-z_]+) ## \]\]")
_SECTION_START = "[[ ## "
_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset(
    {
        "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "in", "is",
        "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "were", "will",
        "with",
    }
)  # fmt: skip
MOCK_MODEL = "mock"


def prompt_sections(text: str) -> dict[str, str]:
    """The ``[[ ## name ## ]]`` sections of a judge prompt, by name."""
    sections: dict[str, str] = {}
    matches = []
    start = text.find(_SECTION_START)  # str.find, then one match per marker (about a
    while start != -1:  # fifth cheaper than scanning the whole prompt with the pattern)
        if match := _SECTION.match(text, start):
            matches.append(match)
        start = text.find(_SECTION_START, start + 1)
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        sections[match.group(1)] = text[match.end() : end].strip()
    return sections


@lru_cache(maxsize=256)
def _word_count(text: str) -> int:
    """Words of a message (cached: a judge's system prompt is the same on every call)."""
    return len(text.split())


def _words(text: str) -> list[str]:
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        if word not in _STOPWORDS:
            seen.setdefault(word, None)
    return list(seen)


def overlap_verdict(prompt: str) -> dict[str, Any]:
    """A verdict scoring how many expected words the candidate answer contains, in [0, 1]."""
    sections = prompt_sections(prompt)
    candidate = set(_words(sections.get("candidate_answer", "")))
    expected = _words(
        sections.get("expected_outcome", "") + "\n" + sections.get("reference_answer", "")
    )
    if not expected:
        score = 1.0 if candidate else 0.0
        found: list[str] = []
        missing: list[str] = []
    else:
        found = [word for word in expected if word in candidate]
        missing = [word for word in expected if word not in candidate]
        score = round(len(found) / len(expected), 4)
    return {
        "score": score,
        "hits": [f"mentions {word!r}" for word in found[:5]],
        "misses": [f"does not mention {word!r}" for word in missing[:5]],
        "reasoning": f"{len(found)} of {len(expected)} expected words appear in the answer",
    }


def judge_prompt_text(request: ProviderRequest) -> str:
    """All the text a judge is shown: the chatPrompt turns, else the question."""
    turns = "\n\n".join(message.content for message in request.chat_prompt)
    return turns or request.question


def last_user_turn(request: ProviderRequest) -> str:
    """The last user turn of the chatPrompt, else the question."""
    for message in reversed(request.chat_prompt):
        if message.role == "user":
            return message.content
    return request.question


class MockAdapter:
    """Answers without a network; the registry wraps it like any other adapter."""

    kind: ProviderKind = "api"

    def __init__(self, target: MockTarget) -> None:
        self.target = target
        self.name = target.name

    def rule(self, request: ProviderRequest) -> str:
        """Which rule answers ``request``: judge, answers, response or echo."""
        if request.role == CallRole.JUDGE:
            return "judge"
        if request.case_id is not None and request.case_id in self.target.answers:
            return "answers"
        return "response" if self.target.response is not None else "echo"

    def answer(self, request: ProviderRequest) -> str:
        """The deterministic reply text for ``request``."""
        rule = self.rule(request)
        if rule == "judge":
            verdict = overlap_verdict(judge_prompt_text(request))
            schema = request.options.json_schema
            if schema is None:
                return json.dumps(verdict)
            value = instance_from_schema(
                schema,
                score=float(verdict["score"]),
                text=str(verdict["reasoning"]),
                known=verdict,
            )
            return json.dumps(value)
        if rule == "answers":
            return self.target.answers[str(request.case_id)]
        if rule == "response":
            return str(self.target.response)
        return last_user_turn(request)

    def preview(self, request: ProviderRequest) -> ProviderPreview:
        """The rule that would answer and the messages it would see."""
        body = {
            "model": MOCK_MODEL,
            "rule": self.rule(request),
            "messages": [m.model_dump() for m in request.chat_prompt],
        }
        return ProviderPreview(body=body, rewrites=[])

    def tool_calls(self, request: ProviderRequest) -> tuple[ToolCall, ...]:
        """The tool calls reported with a candidate answer: the case's, else ``"*"``'s."""
        if request.role == CallRole.JUDGE:
            return ()
        configured = self.target.tool_calls
        calls = configured.get(str(request.case_id), configured.get("*", []))
        return tuple(ToolCall.model_validate(call.model_dump()) for call in calls)

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Answer after the target's ``latency_ms``."""
        if self.target.latency_ms:
            await asyncio.sleep(self.target.latency_ms / 1000)
        text = self.answer(request)
        prompt_words = sum(_word_count(m.content) for m in request.chat_prompt)
        candidate = request.role != CallRole.JUDGE
        return ProviderResponse(
            text=text,
            usage=Usage(input_tokens=prompt_words, output_tokens=len(text.split())),
            latency_ms=self.target.latency_ms,
            model=MOCK_MODEL,
            finish_reason="stop",
            raw={"rule": self.rule(request), "text": text},
            tool_calls=self.tool_calls(request),
            cost_usd=self.target.cost_usd if candidate else None,
        )

    async def aclose(self) -> None:
        """Nothing to release."""
