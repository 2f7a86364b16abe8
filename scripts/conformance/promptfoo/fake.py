"""The harness's fake LLM: ``testkit``'s server with two deterministic rules both tools meet.

- A prompt ``REPLY:<text>:END`` is answered with ``<text>`` exactly (the corpus's prompts
  are ``REPLY:{{out}}:END``, so a test's ``vars.out`` is its output), the two characters
  ``\\n`` read as a newline (promptfoo drops a var's final newline from the prompt it
  sends, so a final newline is written that way).
- A request whose text carries ``GRADE=<score>`` (written only in rubrics, never in prompts)
  is a grader's: it gets a verdict with that score, in the shape the request asks for (a
  JSON schema's instance for this service's judge, its rubric checks ``satisfied`` from 0.5
  up; promptfoo's ``{pass, score, reason}`` otherwise), passing from 0.5 up.

- A prompt ``CALL:<name>:<arguments>:END`` is answered with one tool call of ``<name>`` whose
  arguments are ``<arguments>`` as written (JSON or not), and no text; on Chat Completions,
  a request that offers legacy ``functions`` gets OpenAI's legacy ``function_call`` message
  instead (``finish_reason: function_call``).
- A request whose text carries ``PICK=<word>`` (written only in ``select-best`` criteria)
  is a comparison's: it is answered ``Answer <word> is the best.``, so ``PICK=1`` names the
  second answer and ``PICK=none`` none of them.

- A prompt ``SETTINGS:<anything>:END`` is answered with the model settings the request
  carries, as a JSON object (``max_tokens`` for any spelling of the token limit), so that a
  provider's ``config`` is seen in its output. ``GRADE=T`` in a rubric grades with the
  request's temperature (0 when it sends none), so that a grading provider's is seen too.

- A prompt ``IMAGES:<anything>:END`` is answered with the image parts the request carried
  (every turn's, in order, as sent) and the text parts of its last user turn, as JSON with
  sorted keys (``{"images": [...], "texts": [...]}``), so that what each tool sends is seen.
- A prompt ``REFUSE:<anything>:END`` is answered with an HTTP 400 error (neither tool
  retries it), so that a test whose provider call fails is seen.

A Hugging Face text-classification request (``POST .../models/<model>``, promptfoo's
``classifier`` pointed here by ``apiEndpoint``) gets the server's own scores whatever these
rules say (``testkit.fake_wire.classification_body``: ``HATE=<score>`` in the text).

Every other request gets the default reply (the last user turn echoed).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from app.providers.structured_output.schema_instance import instance_from_schema
from testkit.fake_llm import FakeLLM, Reply
from testkit.fake_wire import RecordedRequest, error, last_user_text, requested_schema

SETTINGS_PREFIX = "SETTINGS:"
SETTINGS_KEYS = (
    *("temperature", "top_p", "seed", "stop", "frequency_penalty", "presence_penalty"),
    *("store", "metadata", "user", "logit_bias", "reasoning_effort"),
)
TOKEN_LIMITS = ("max_tokens", "max_completion_tokens", "max_output_tokens")
REPLY_PREFIX = "REPLY:"
CALL_PREFIX = "CALL:"
IMAGES_PREFIX = "IMAGES:"
REFUSE_PREFIX = "REFUSE:"
REPLY_END = ":END"
_GRADE = re.compile(r"GRADE=([01](?:\.\d+)?|T)")
_PICK = re.compile(r"PICK=(\w+)")


def grade_of(recorded: RecordedRequest) -> float | None:
    """The score a grader request asks for (``GRADE=0.7`` in its text), or None."""
    found = _GRADE.search(recorded.messages_text())
    if found is None:
        return None
    if found.group(1) == "T":
        return float((recorded.json or {}).get("temperature") or 0)
    return float(found.group(1))


def settings_of(recorded: RecordedRequest) -> str:
    """The model settings of ``recorded`` as JSON text (the token limit as ``max_tokens``)."""
    body = recorded.json if isinstance(recorded.json, dict) else {}
    settings = {key: body[key] for key in SETTINGS_KEYS if key in body}
    limit = next((body[key] for key in TOKEN_LIMITS if key in body), None)
    if limit is not None:
        settings["max_tokens"] = limit
    return json.dumps(settings, sort_keys=True)


def images_of(recorded: RecordedRequest) -> str:
    """The image parts of ``recorded`` and its last user turn's texts, as sorted JSON."""
    body = recorded.json if isinstance(recorded.json, dict) else {}
    messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
    images = [
        part
        for message in messages
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if isinstance(part, dict) and part.get("type") != "text"
    ]
    users = [m for m in messages if m.get("role") == "user"]
    content = users[-1].get("content") if users else None
    texts = (
        [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        if isinstance(content, list)
        else [content]
    )
    return json.dumps({"images": images, "texts": texts}, sort_keys=True)


def _satisfied(value: Any, met: bool) -> Any:
    """``value`` with every rubric check's ``satisfied`` set to ``met``."""
    if isinstance(value, list):
        return [_satisfied(item, met) for item in value]
    if isinstance(value, dict):
        return {
            key: met if key == "satisfied" else _satisfied(item, met) for key, item in value.items()
        }
    return value


STATEMENTS = 10
"""How many statements the fake lists where promptfoo's graders count them."""
_CONTEXT = re.compile(r"\ncontext: (.*?)\ncandidate sentences:", re.DOTALL)


def _counted(score: float) -> int:
    return round(score * STATEMENTS)


def _verdicts(_text: str, score: float) -> str:
    words = ("Yes." if number < _counted(score) else "No." for number in range(STATEMENTS))
    return "Final verdict for each statement in order: " + " ".join(words)


def _attributions(_text: str, score: float) -> str:
    return "\n".join(
        f"{number + 1}. Sentence {number + 1}. So "
        + ("[Attributed]" if number < _counted(score) else "[Not Attributed]")
        for number in range(STATEMENTS)
    )


def _quoted_sentences(text: str, score: float) -> str:
    """The share ``score`` of the context's sentences, quoted (context-relevance)."""
    found = _CONTEXT.search(json.loads(text)["messages"][-1]["content"])
    sentences = re.split(r"(?<=\.)\s+", found.group(1).strip()) if found else []
    return "\n".join(sentences[: round(score * len(sentences))]) or "Insufficient Information"


_RULES: tuple[tuple[str, Callable[[str, float], str]], ...] = (
    ("single character", lambda _, score: "Reasoning.\n" + ("Y" if score >= 0.5 else "N")),
    ("must be a single letter A, B, C, D, or E", lambda _, score: json.dumps(
        {"category": "C" if score >= 0.5 else "D", "reason": f"graded {score:g}"})),
    ("concise evaluation steps applicable", lambda *_: json.dumps({"steps": ["Check it."]})),
    ("MUST be an integer from 0 to 10", lambda _, score: json.dumps(
        {"score": round(score * 10), "reason": f"graded {score:g}"})),
    ("'verdict' and 'reason'", lambda _, score: json.dumps(
        {"verdict": "yes" if score >= 0.5 else "no", "reason": f"graded {score:g}"})),
    ("create one or more statements", lambda *_: "\n".join(
        f"Statement {number}." for number in range(1, STATEMENTS + 1))),
    ("Final verdict for each statement in order", _verdicts),
    ("[Attributed]", _attributions),
    ("candidate sentences", _quoted_sentences),
)  # fmt: skip
"""promptfoo's model-graded prompts (by a phrase of theirs) and the reply that gives them the
score a ``GRADE=<score>`` in the request asks for, in the form each prompt asks for (counted
out of ``STATEMENTS`` where promptfoo counts statements)."""


def model_graded_reply(text: str, score: float) -> str | None:
    """The reply to one of promptfoo's model-graded prompts, or None for another request."""
    for phrase, reply in _RULES:
        if phrase in text:
            return reply(text, score)
    return None


def refused(recorded: RecordedRequest) -> Reply | None:
    """An HTTP 400 error for a ``REFUSE:...:END`` prompt (None for another request)."""
    text = last_user_text(recorded)
    if text.startswith(REFUSE_PREFIX) and text.endswith(REPLY_END):
        return error(400, "refused as the prompt asks")
    return None


def respond_or_refuse(recorded: RecordedRequest) -> Reply | None:
    """``respond``, but a ``REFUSE:...:END`` prompt gets its HTTP 400 (``refused``)."""
    return refused(recorded) or respond(recorded)


def legacy_function_call(recorded: RecordedRequest, name: str, arguments: str) -> Reply | None:
    """A Chat Completions reply with a legacy ``function_call``, to a request offering
    ``functions`` (None: another request)."""
    body = recorded.json if isinstance(recorded.json, dict) else {}
    if recorded.wire not in ("openai", "azure") or "functions" not in body:
        return None
    message = {"role": "assistant", "content": None,
               "function_call": {"name": name, "arguments": arguments}}  # fmt: skip
    return Reply(body={
        "id": "chatcmpl-legacy", "object": "chat.completion", "created": 0,
        "model": body.get("model", "fake-model"),
        "choices": [{"index": 0, "message": message, "finish_reason": "function_call"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    })  # fmt: skip


def respond(recorded: RecordedRequest) -> Reply | None:
    """The harness's reply to ``recorded`` (None: the server's default)."""
    pick = _PICK.search(recorded.messages_text())
    if pick is not None:
        return Reply(text=f"Answer {pick.group(1)} is the best.")
    score = grade_of(recorded)
    if score is not None and requested_schema(recorded) is None:
        special = model_graded_reply(recorded.messages_text(), score)
        if special is not None:
            return Reply(text=special)
    if score is not None:
        reason = f"graded {score:g} as the rubric asks"
        known = {"score": score, "pass": score >= 0.5, "reason": reason, "reasoning": reason}
        schema = requested_schema(recorded)
        if schema is not None:
            verdict = instance_from_schema(schema, score=score, text=reason, known=known)
            return Reply(text=json.dumps(_satisfied(verdict, score >= 0.5)))
        return Reply(text=json.dumps({"pass": score >= 0.5, "score": score, "reason": reason}))
    text = last_user_text(recorded)
    if text.startswith(CALL_PREFIX) and text.endswith(REPLY_END):
        name, _, arguments = text[len(CALL_PREFIX) : -len(REPLY_END)].partition(":")
        return legacy_function_call(recorded, name, arguments) or Reply(
            tool_calls=[{"name": name, "arguments": arguments}]
        )
    if text.startswith(SETTINGS_PREFIX) and text.endswith(REPLY_END):
        return Reply(text=settings_of(recorded))
    if text.startswith(IMAGES_PREFIX) and text.endswith(REPLY_END):
        return Reply(text=images_of(recorded))
    if text.startswith(REPLY_PREFIX) and text.endswith(REPLY_END):
        reply = text[len(REPLY_PREFIX) : -len(REPLY_END)]
        return Reply(text=reply.replace("\\n", "\n"))
    return None


def harness_fake() -> FakeLLM:
    """A fake LLM answering by the harness's rules (recording nothing)."""
    fake = FakeLLM()
    fake.responder = respond_or_refuse
    fake.record = False
    return fake
