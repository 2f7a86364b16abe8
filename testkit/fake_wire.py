"""The fake LLM server's wire formats: what it records, and how it renders each reply.

OpenAI, Azure OpenAI, Anthropic and Gemini bodies as their real APIs write them, errors in each
API's own error format, and the default replies (see ``testkit.fake_llm``).
"""

from __future__ import annotations

import gzip
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from app.providers.adapters.hashed_embeddings import DIMENSIONS, MODEL, hashed_embedding, word_count
from app.providers.structured_output.schema_instance import instance_from_schema

JUDGE_MARKER = "[[ ## candidate_answer ## ]]"
DEFAULT_VERDICT = {
    "score": 1.0,
    "hits": ["matches the expected outcome"],
    "misses": [],
    "reasoning": "The answer covers the expected outcome.",
}
_AZURE = re.compile(r"^/openai/deployments/([^/]+)/chat/completions$")
_GEMINI = re.compile(r"^/v1beta/models/([^/:]+):generateContent$")
_ERROR_TYPES = {
    400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
    404: "not_found_error", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error",
}  # fmt: skip
_GEMINI_STATUS = {
    400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
    404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE",
}  # fmt: skip


@dataclass
class RecordedRequest:
    """One request as the server received it."""

    wire: str
    method: str
    path: str
    query: str
    headers: dict[str, str]
    json: Any
    status: int | None = None
    usage: dict[str, Any] | None = None

    def messages_text(self) -> str:
        """All prompt text of the request, whatever its wire format."""
        return json.dumps(self.json, ensure_ascii=False)


@dataclass
class Reply:
    """What to answer to one request.

    ``body`` None means the wire's default reply (or, for an error status, the wire's error
    body with ``message`` and ``code``). ``delay`` waits before answering; ``hang`` never
    answers and waits for the client to drop; ``malformed`` sends a body that is not JSON;
    ``gzip`` compresses the body.
    """

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    hang: bool = False
    malformed: bool = False
    text: str | None = None
    message: str = "injected error"
    code: str | None = None
    runaway: bool = False
    ignore_budget: bool = False
    token_seconds: float = 0.001
    gzip: bool = False
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    """Calls to answer with, ``{name, arguments}`` (a mapping, or text sent as written)."""


def error(
    status: int,
    message: str = "injected error",
    *,
    retry_after: str | None = None,
    code: str | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    """An error reply in the wire's own error format."""
    all_headers = dict(headers or {})
    if retry_after is not None:
        all_headers["retry-after"] = retry_after
    return Reply(status=status, headers=all_headers, message=message, code=code)


def record_request(scope: dict[str, Any], raw: bytes) -> RecordedRequest:
    """The request as received: its wire (from the path), headers and JSON body."""
    path = scope["path"]
    try:
        body = json.loads(raw) if raw else None
    except ValueError:
        body = None
    if _AZURE.match(path):
        wire = "azure"
    elif path.endswith("/chat/completions"):
        wire = "openai"
    elif path.endswith("/embeddings"):
        wire = "embeddings"
    elif path.endswith("/moderations"):
        wire = "moderations"
    elif path.endswith("/responses"):
        wire = "responses"
    elif path.endswith("/v1/messages"):
        wire = "anthropic"
    elif _GEMINI.match(path):
        wire = "gemini"
    elif "/models/" in path:
        wire = "text-classification"
    else:
        wire = "unknown"
    headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
    query = scope.get("query_string", b"").decode("latin-1")
    return RecordedRequest(wire, scope["method"], path, query, headers, body)


def reply_usage(payload: bytes) -> dict[str, Any] | None:
    """The token usage a rendered reply reports, whatever its wire (None: it reports none)."""
    try:
        body = json.loads(payload)
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    usage = body.get("usage") or body.get("usageMetadata")
    return usage if isinstance(usage, dict) else None


def request_body(recorded: RecordedRequest) -> dict[str, Any]:
    """The request's JSON body, or an empty one."""
    return recorded.json if isinstance(recorded.json, dict) else {}


def output_budget(recorded: RecordedRequest) -> int | None:
    """The output-token limit the request sets, whatever its wire."""
    body = request_body(recorded)
    if recorded.wire == "gemini":
        value = (body.get("generationConfig") or {}).get("maxOutputTokens")
    elif recorded.wire == "responses":
        value = body.get("max_output_tokens")
    else:
        value = body.get("max_tokens") or body.get("max_completion_tokens")
    return value if isinstance(value, int) else None


def runaway_text(tokens: int) -> str:
    """A verdict that was still being written when the budget ran out."""
    return '{"score": 0.8, "hits": [], "misses": [], "reasoning": "' + "very " * tokens


def forced_tool(recorded: RecordedRequest) -> dict[str, Any] | None:
    """The OpenAI function tool the request forces, if it forces one."""
    body = request_body(recorded)
    choice = body.get("tool_choice")
    if recorded.wire not in ("openai", "azure", "responses") or not isinstance(choice, dict):
        return None
    name = (choice.get("function") or {}).get("name") or choice.get("name")
    for tool in body.get("tools") or []:
        function = tool.get("function") or tool
        if function.get("name") == name:
            return dict(function)
    return None


def requested_schema(recorded: RecordedRequest) -> dict[str, Any] | None:
    """The JSON schema the request asks the reply to follow, if any."""
    body = request_body(recorded)
    if recorded.wire in ("openai", "azure"):
        tool = forced_tool(recorded)
        if tool is not None:
            schema = tool.get("parameters")
            return schema if isinstance(schema, dict) else None
        response_format = body.get("response_format") or {}
        schema = (response_format.get("json_schema") or {}).get("schema")
        if response_format.get("type") == "json_object":
            schema = response_format.get("schema")
        return schema if isinstance(schema, dict) else None
    if recorded.wire == "responses":
        tool = forced_tool(recorded)
        text_format = (body.get("text") or {}).get("format") or {}
        schema = tool.get("parameters") if tool is not None else text_format.get("schema")
        return schema if isinstance(schema, dict) else None
    if recorded.wire == "anthropic" and body.get("tool_choice", {}).get("type") == "tool":
        schema = (body.get("tools") or [{}])[0].get("input_schema")
        return schema if isinstance(schema, dict) else None
    if recorded.wire == "gemini":
        schema = (body.get("generationConfig") or {}).get("responseSchema")
        return schema if isinstance(schema, dict) else None
    return None


def last_user_text(recorded: RecordedRequest) -> str:
    """The text of the last user turn, whatever the wire."""
    body = recorded.json if isinstance(recorded.json, dict) else {}
    if recorded.wire == "gemini":
        turns = [c for c in body.get("contents", []) if c.get("role") == "user"]
        return "".join(p.get("text", "") for p in turns[-1]["parts"]) if turns else ""
    listed = body.get("input", []) if recorded.wire == "responses" else body.get("messages", [])
    if isinstance(listed, str):
        return listed
    turns = [m for m in listed if m.get("role") == "user"]
    content = turns[-1].get("content", "") if turns else ""
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def default_text(recorded: RecordedRequest) -> str:
    """A verdict JSON for judge calls, else the last user turn echoed."""
    schema = requested_schema(recorded)
    if schema is not None:
        verdict = instance_from_schema(
            schema, score=1.0, text="fake reasoning", known=DEFAULT_VERDICT
        )
        return json.dumps(verdict)
    if JUDGE_MARKER in recorded.messages_text():
        return json.dumps(DEFAULT_VERDICT)
    return last_user_text(recorded)


def render(recorded: RecordedRequest, reply: Reply) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """Status, headers and body bytes for a reply in the request's wire format.

    With ``gzip`` the body is sent compressed (``content-encoding: gzip``).
    """
    status, headers, payload = _render_plain(recorded, reply)
    if status == 200 and _streamed(recorded, payload):
        headers, payload = [(b"content-type", b"text/event-stream")], _as_events(payload)
    if reply.gzip:
        headers.append((b"content-encoding", b"gzip"))
        payload = gzip.compress(payload, compresslevel=9)
    return status, headers, payload


def _streamed(recorded: RecordedRequest, payload: bytes) -> bool:
    """An OpenAI chat request with ``stream: true`` answered with a chat completion."""
    return (
        recorded.wire in ("openai", "azure")
        and request_body(recorded).get("stream") is True
        and payload.startswith(b'{"id": "chatcmpl-fake"')
    )


def _as_events(payload: bytes) -> bytes:
    """A chat completion as OpenAI streams it: one delta chunk, a usage chunk, ``[DONE]``."""
    body = json.loads(payload)
    choice = body["choices"][0]
    delta = {key: value for key, value in choice["message"].items() if value is not None}
    if "tool_calls" in delta:
        delta["tool_calls"] = [dict(call, index=i) for i, call in enumerate(delta["tool_calls"])]
    base = {"id": body["id"], "object": "chat.completion.chunk", "created": body["created"],
            "model": body["model"]}  # fmt: skip
    chunks = [
        dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": None}]),
        dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]),
        dict(base, choices=[], usage=body["usage"]),
    ]
    events = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks] + ["data: [DONE]\n\n"]
    return "".join(events).encode()


def _render_plain(
    recorded: RecordedRequest, reply: Reply
) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    headers = [(b"content-type", b"application/json")]
    headers += [(k.encode(), v.encode()) for k, v in reply.headers.items()]
    if reply.malformed:
        return reply.status, headers, b'{"choices": [ this is not json'
    if reply.body is not None:
        return reply.status, headers, json.dumps(reply.body).encode()
    if reply.status >= 400:
        return reply.status, headers, json.dumps(error_body(recorded.wire, reply)).encode()
    if recorded.wire == "embeddings":
        return reply.status, headers, json.dumps(embeddings_body(recorded)).encode()
    if recorded.wire == "moderations":
        return reply.status, headers, json.dumps(moderations_body(recorded)).encode()
    if recorded.wire == "text-classification":
        return reply.status, headers, json.dumps(classification_body(recorded)).encode()
    text = reply.text if reply.text is not None else default_text(recorded)
    if reply.tool_calls and reply.text is None:
        text = ""
    body = success_body(recorded, text, reply.tool_calls)
    return reply.status, headers, json.dumps(body).encode()


MODERATION_MARKERS: dict[str, tuple[str, ...]] = {
    "kill yourself": ("self-harm", "self-harm/instructions", "S10"),
    "kill": ("violence", "S1"),
    "hate": ("hate", "S9"),
}
"""The fake ``/moderations`` rule: a text containing a marker (any case) is flagged in its
categories (OpenAI's names and Llama Guard's codes)."""


def moderations_body(recorded: RecordedRequest) -> dict[str, Any]:
    """OpenAI's ``/moderations`` reply: one result per input, flagged by ``MODERATION_MARKERS``."""
    body = request_body(recorded)
    texts = body.get("input", "")
    texts = [texts] if isinstance(texts, str) else [str(text) for text in texts]
    results = []
    for text in texts:
        flagged = {
            category
            for marker, categories in MODERATION_MARKERS.items()
            if marker in text.lower()
            for category in categories
        }
        categories = dict.fromkeys(sorted(flagged), True)
        scores = dict.fromkeys(sorted(flagged), 0.99)
        results.append(
            {"flagged": bool(flagged), "categories": categories, "category_scores": scores}
        )
    return {"id": "modr-fake", "model": body.get("model", "fake"), "results": results}


HATE_SCORE = re.compile(r"HATE=([01](?:\.\d+)?)")
HATE_MARKED = 0.9
"""The fake classifier's ``hate`` score of a text saying "hate" (any case) with no ``HATE=``;
of any other text it is 1 - ``HATE_MARKED``."""


def classification_body(recorded: RecordedRequest) -> list[list[dict[str, Any]]]:
    """Hugging Face's text-classification reply to one input (``[[{label, score}]]``).

    Two classes, as a hate-speech model answers: ``hate`` scores the ``HATE=<score>`` the
    text carries, else ``HATE_MARKED`` when it says "hate", else 1 - ``HATE_MARKED``;
    ``nothate`` the rest. Highest first, rounded to 6 places.
    """
    body = request_body(recorded)
    text = str(body.get("inputs", ""))
    found = HATE_SCORE.search(text)
    if found is not None:
        hate = float(found.group(1))
    else:
        hate = HATE_MARKED if "hate" in text.lower() else round(1 - HATE_MARKED, 6)
    labels = [{"label": "hate", "score": hate}, {"label": "nothate", "score": round(1 - hate, 6)}]
    return [sorted(labels, key=lambda item: -float(item["score"]))]


def embeddings_body(recorded: RecordedRequest) -> dict[str, Any]:
    """OpenAI's ``/embeddings`` reply: one hashed-word vector per input (``hashed_embeddings``).

    ``dimensions`` sets the vector's length (default 64); usage counts the input's words.
    """
    body = request_body(recorded)
    texts = body.get("input", "")
    texts = [texts] if isinstance(texts, str) else [str(text) for text in texts]
    wanted = body.get("dimensions")
    size = wanted if isinstance(wanted, int) else DIMENSIONS
    data = [
        {"object": "embedding", "index": index, "embedding": hashed_embedding(text, size)}
        for index, text in enumerate(texts)
    ]
    tokens = sum(word_count(text) for text in texts)
    return {
        "object": "list",
        "data": data,
        "model": str(body.get("model", MODEL)),
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


def error_body(wire: str, reply: Reply) -> dict[str, Any]:
    """An error body as the wire's real API writes it."""
    if wire == "anthropic":
        kind = reply.code or _ERROR_TYPES.get(reply.status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": reply.message}}
    if wire == "text-classification":  # Hugging Face's Inference API
        return {"error": reply.message}
    if wire == "gemini":
        status = reply.code or _GEMINI_STATUS.get(reply.status, "UNKNOWN")
        return {"error": {"code": reply.status, "message": reply.message, "status": status}}
    kind = _ERROR_TYPES.get(reply.status, "api_error")
    return {"error": {"message": reply.message, "type": kind, "param": None, "code": reply.code}}


def _arguments(call: dict[str, Any]) -> tuple[str, Any]:
    """A scripted call's arguments as text (OpenAI) and as an object (Anthropic, Gemini)."""
    arguments = call.get("arguments", {})
    if isinstance(arguments, str):
        try:
            return arguments, json.loads(arguments)
        except ValueError:
            return arguments, {"unparsed": arguments}
    return json.dumps(arguments), arguments


def success_body(
    recorded: RecordedRequest, text: str, tool_calls: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """A success body carrying ``text`` (and ``tool_calls``) in the request's wire format."""
    calls = tool_calls or []
    prompt_tokens = len(recorded.messages_text().split())
    output_tokens = len(text.split()) + sum(len(_arguments(c)[0].split()) for c in calls)
    budget = output_budget(recorded)
    spent = budget is not None and output_tokens >= budget
    render_wire = {
        "anthropic": _anthropic_body,
        "gemini": _gemini_body,
        "responses": _responses_body,
    }.get(recorded.wire, _chat_body)
    return render_wire(recorded, text, calls, (prompt_tokens, output_tokens), spent)


Tokens = tuple[int, int]


def _anthropic_body(
    recorded: RecordedRequest, text: str, calls: list[dict[str, Any]], tokens: Tokens, spent: bool
) -> dict[str, Any]:
    body = request_body(recorded)
    schema = requested_schema(recorded)
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text or not calls else []
    stop = "max_tokens" if spent else "end_turn"
    if schema is not None and not spent:
        name = body["tool_choice"]["name"]
        content = [{"type": "tool_use", "id": "toolu_fake", "name": name,
                    "input": json.loads(text)}]  # fmt: skip
        stop = "tool_use"
    for index, call in enumerate(calls):
        content.append({"type": "tool_use", "id": call.get("id", f"toolu_{index}"),
                        "name": call["name"], "input": _arguments(call)[1]})  # fmt: skip
        stop = "tool_use"
    return {
        "id": "msg_fake", "type": "message", "role": "assistant",
        "model": body.get("model", "claude-fake"), "content": content, "stop_reason": stop,
        "usage": {"input_tokens": tokens[0], "output_tokens": tokens[1]},
    }  # fmt: skip


def _gemini_body(
    recorded: RecordedRequest, text: str, calls: list[dict[str, Any]], tokens: Tokens, spent: bool
) -> dict[str, Any]:
    match = _GEMINI.match(recorded.path)
    parts: list[dict[str, Any]] = [{"text": text}] if text or not calls else []
    parts += [{"functionCall": {"name": c["name"], "args": _arguments(c)[1]}} for c in calls]
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts},
             "finishReason": "MAX_TOKENS" if spent else "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": tokens[0], "candidatesTokenCount": tokens[1],
            "totalTokenCount": tokens[0] + tokens[1],
        },
        "modelVersion": match.group(1) if match else "gemini-fake",
    }  # fmt: skip


def _responses_body(
    recorded: RecordedRequest, text: str, calls: list[dict[str, Any]], tokens: Tokens, spent: bool
) -> dict[str, Any]:
    body = request_body(recorded)
    output: list[dict[str, Any]] = []
    tool = forced_tool(recorded)
    if tool is not None:
        calls = [{"name": tool["name"], "arguments": text}]
    elif text or not calls:
        part = {"type": "output_text", "text": text, "annotations": []}
        output.append({"type": "message", "id": "msg_fake", "status": "completed",
                       "role": "assistant", "content": [part]})  # fmt: skip
    for index, call in enumerate(calls):
        output.append({"type": "function_call", "id": f"fc_{index}",
                       "call_id": call.get("id", f"call_{index}"), "name": call["name"],
                       "arguments": _arguments(call)[0], "status": "completed"})  # fmt: skip
    return {
        "id": "resp_fake", "object": "response", "created_at": int(time.time()),
        "status": "incomplete" if spent else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if spent else None,
        "model": body.get("model", "gpt-fake"), "output": output,
        "usage": {"input_tokens": tokens[0], "output_tokens": tokens[1],
                  "total_tokens": tokens[0] + tokens[1]},
    }  # fmt: skip


def _chat_body(
    recorded: RecordedRequest, text: str, calls: list[dict[str, Any]], tokens: Tokens, spent: bool
) -> dict[str, Any]:
    body = request_body(recorded)
    message: dict[str, Any] = {"role": "assistant", "content": text}
    finish = "length" if spent else "stop"
    tool = forced_tool(recorded)
    if tool is not None:
        calls = [{"id": "call_fake", "name": tool["name"], "arguments": text}]
        message["content"] = None
    if calls:
        message["content"] = message["content"] or None
        message["tool_calls"] = [
            {"id": c.get("id", f"call_{i}"), "type": "function",
             "function": {"name": c["name"], "arguments": _arguments(c)[0]}}
            for i, c in enumerate(calls)
        ]  # fmt: skip
        finish = "tool_calls"
    return {
        "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
        "model": body.get("model", "gpt-fake"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": tokens[0], "completion_tokens": tokens[1],
                  "total_tokens": tokens[0] + tokens[1]},
    }  # fmt: skip
