"""Request bodies as each API documents them: the fake server answers 400 to any other.

JSON Schemas of the request bodies the adapters send, written from each API's reference
(OpenAI Chat Completions and Responses: OpenAI's OpenAPI description; Anthropic Messages and
Gemini ``generateContent``: their API references), for the parts this service sends: messages
and their roles, tool declarations, tool choices, tool calls and their results, structured
output, and images (Chat ``image_url`` parts, Responses ``input_image``, Anthropic ``image``
blocks, Gemini ``inlineData``/``fileData``). Beyond the schemas, what the APIs check across
fields: a tool result answers a call made in the turn before it (OpenAI ``tool_call_id``,
Anthropic ``tool_use_id``, Responses ``call_id``), and Anthropic and Gemini turns alternate.
"""

from __future__ import annotations

import itertools
from typing import Any

import jsonschema

_NAME = {"type": "string", "pattern": "^[a-zA-Z0-9_.:-]{1,64}$"}
_GEMINI_NAME = {"type": "string", "pattern": "^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$"}
_OBJECT = {"type": "object"}
_TEXT_OR_PARTS = {"anyOf": [{"type": "string"}, {"type": "array"}]}
_DETAIL = {"enum": ["auto", "low", "high"]}
_CHAT_PART = {"type": "object", "required": ["type"], "oneOf": [
    {"properties": {"type": {"const": "text"}, "text": {"type": "string"}}, "required": ["text"]},
    {"properties": {"type": {"const": "refusal"}, "refusal": {"type": "string"}},
     "required": ["refusal"]},
    {"properties": {"type": {"const": "image_url"}, "image_url": {
        "type": "object", "required": ["url"], "additionalProperties": False,
        "properties": {"url": {"type": "string", "pattern": "^(https?://|data:image/)"},
                       "detail": _DETAIL}}},
     "required": ["image_url"], "additionalProperties": False},
]}  # fmt: skip
"""A Chat Completions content part: text, refusal, or an image by URL or data URI."""
_CHAT_CONTENT = {"anyOf": [{"type": "string"}, {"type": "array", "items": _CHAT_PART}]}
_INPUT_PART = {"type": "object", "required": ["type"], "oneOf": [
    {"properties": {"type": {"enum": ["input_text", "output_text"]},
                    "text": {"type": "string"}}, "required": ["text"]},
    {"properties": {"type": {"const": "input_image"},
                    "image_url": {"type": "string", "pattern": "^(https?://|data:image/)"},
                    "detail": {"enum": ["auto", "low", "high", "original"]}},
     "required": ["image_url", "detail"]},
]}  # fmt: skip
"""A Responses input message's content part: text, or an image (``detail`` required)."""

OPENAI_CHAT: dict[str, Any] = {
    "type": "object",
    "required": ["messages"],
    "properties": {
        "model": {"type": "string"},
        "messages": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/message"}},
        "tools": {"type": "array", "items": {"$ref": "#/$defs/tool"}},
        "tool_choice": {
            "anyOf": [
                {"enum": ["none", "auto", "required"]},
                {"type": "object", "required": ["type", "function"], "additionalProperties": False,
                 "properties": {"type": {"const": "function"},
                                "function": {"type": "object", "required": ["name"],
                                             "properties": {"name": {"type": "string"}}}}},
            ]
        },
        "response_format": {
            "type": "object", "required": ["type"],
            "properties": {"type": {"enum": ["text", "json_object", "json_schema"]}},
        },
        "reasoning_effort": {"enum": ["none", "minimal", "low", "medium", "high", "xhigh"]},
        # legacy function calling (deprecated in the spec, still taken)
        "functions": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/function"}},
        "function_call": {
            "anyOf": [
                {"enum": ["none", "auto"]},
                {"type": "object", "required": ["name"], "additionalProperties": False,
                 "properties": {"name": {"type": "string"}}},
            ]
        },
    },
    "$defs": {
        "function": {
            "type": "object", "required": ["name"], "additionalProperties": False,
            "properties": {"name": _NAME, "description": {"type": "string"},
                           "parameters": _OBJECT, "strict": {"type": ["boolean", "null"]}},
        },
        "tool": {
            "type": "object", "required": ["type", "function"], "additionalProperties": False,
            "properties": {
                "type": {"const": "function"},
                "function": {
                    "type": "object", "required": ["name"], "additionalProperties": False,
                    "properties": {"name": _NAME, "description": {"type": "string"},
                                   "parameters": _OBJECT, "strict": {"type": ["boolean", "null"]}},
                },
            },
        },
        "call": {
            "type": "object", "required": ["id", "type", "function"],
            "properties": {
                "id": {"type": "string"}, "type": {"const": "function"},
                "function": {"type": "object", "required": ["name", "arguments"],
                             "properties": {"name": {"type": "string"},
                                            "arguments": {"type": "string"}}},
            },
        },
        "message": {
            "type": "object", "required": ["role"],
            "properties": {"role": {"enum": ["system", "developer", "user", "assistant", "tool",
                                             "function"]}},
            "allOf": [
                {"if": {"properties": {"role": {"const": "tool"}}},
                 "then": {"required": ["tool_call_id", "content"]}},
                {"if": {"properties": {"role": {"const": "function"}}},
                 "then": {"required": ["name", "content"]}},
                {"if": {"properties": {"role": {"const": "assistant"}}},
                 "then": {"properties": {"content": {"anyOf": [_CHAT_CONTENT, {"type": "null"}]},
                                         "tool_calls": {"type": "array", "minItems": 1,
                                                        "items": {"$ref": "#/$defs/call"}}}},
                 "else": {"required": ["content"], "properties": {"content": _CHAT_CONTENT}}},
            ],
        },
    },
}  # fmt: skip

RESPONSES: dict[str, Any] = {
    "type": "object",
    "required": ["model", "input"],
    "properties": {
        "model": {"type": "string"},
        "instructions": {"type": ["string", "null"]},
        "input": {"anyOf": [{"type": "string"},
                            {"type": "array", "items": {"$ref": "#/$defs/item"}}]},
        "tools": {"type": "array", "items": {"anyOf": [{
            "type": "object", "required": ["type", "name", "strict", "parameters"],
            "properties": {"type": {"const": "function"}, "name": _NAME,
                           "description": {"type": ["string", "null"]},
                           "parameters": {"type": ["object", "null"]},
                           "strict": {"type": ["boolean", "null"]}},
        }, {  # built-in tools the API runs itself
            "type": "object", "required": ["type"],
            "properties": {"type": {"enum": [
                "web_search", "web_search_preview", "web_search_preview_2025_03_11",
                "file_search", "code_interpreter", "image_generation", "computer_use_preview",
            ]}},
        }, {
            "type": "object", "required": ["type", "server_label"],
            "properties": {"type": {"const": "mcp"}, "server_label": {"type": "string"},
                           "server_url": {"type": "string"}},
        }]}},
        "tool_choice": {"anyOf": [
            {"enum": ["none", "auto", "required"]},
            {"type": "object", "required": ["type", "name"],
             "properties": {"type": {"const": "function"}, "name": {"type": "string"}}},
        ]},
        "reasoning": {"type": "object", "properties": {
            "effort": {"enum": ["none", "minimal", "low", "medium", "high", "xhigh"]}}},
        "text": {"type": "object", "properties": {"format": {
            "type": "object", "required": ["type"],
            "properties": {"type": {"enum": ["text", "json_object", "json_schema"]}},
            "if": {"properties": {"type": {"const": "json_schema"}}},
            "then": {"required": ["name", "schema"]},
        }}},
        "max_output_tokens": {"type": "integer", "minimum": 16},
        "store": {"type": "boolean"},
    },
    "not": {"required": ["messages"]},
    "$defs": {
        "item": {"anyOf": [
            {"type": "object", "required": ["role", "content"],
             "properties": {"type": {"const": "message"},
                            "role": {"enum": ["user", "assistant", "system", "developer"]},
                            "content": {"anyOf": [{"type": "string"}, {
                                "type": "array", "items": _INPUT_PART}]}}},
            {"type": "object", "required": ["type", "call_id", "name", "arguments"],
             "properties": {"type": {"const": "function_call"}, "call_id": {"type": "string"},
                            "name": {"type": "string"}, "arguments": {"type": "string"}}},
            {"type": "object", "required": ["type", "call_id", "output"],
             "properties": {"type": {"const": "function_call_output"},
                            "call_id": {"type": "string"}, "output": _TEXT_OR_PARTS}},
        ]},
    },
}  # fmt: skip

ANTHROPIC: dict[str, Any] = {
    "type": "object",
    "required": ["model", "max_tokens", "messages"],
    "properties": {
        "model": {"type": "string"},
        "max_tokens": {"type": "integer", "minimum": 1},
        "system": _TEXT_OR_PARTS,
        "messages": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["role", "content"], "additionalProperties": False,
            "properties": {"role": {"enum": ["user", "assistant"]},
                           "content": {"anyOf": [{"type": "string"}, {
                               "type": "array", "minItems": 1,
                               "items": {"$ref": "#/$defs/block"}}]}},
        }},
        "tools": {"type": "array", "items": {"anyOf": [{
            "type": "object", "required": ["name", "input_schema"], "additionalProperties": False,
            "properties": {"name": {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,128}$"},
                           "description": {"type": "string"},
                           "input_schema": {"type": "object", "required": ["type"],
                                            "properties": {"type": {"const": "object"}}},
                           "cache_control": _OBJECT, "strict": {"type": "boolean"}},
        }, {  # server tools, versioned by date
            "type": "object", "required": ["type", "name"],
            "properties": {"type": {"type": "string",
                                    "pattern": "^(web_search|web_fetch|code_execution)_[0-9]{8}$"},
                           "name": {"type": "string"}},
        }]}},
        "tool_choice": {"type": "object", "required": ["type"],
                        "properties": {"type": {"enum": ["auto", "any", "tool", "none"]},
                                       "name": {"type": "string"},
                                       "disable_parallel_tool_use": {"type": "boolean"}},
                        "if": {"properties": {"type": {"const": "tool"}}},
                        "then": {"required": ["name"]}},
    },
    "$defs": {
        "block": {"type": "object", "required": ["type"], "oneOf": [
            {"properties": {"type": {"const": "text"}, "text": {"type": "string"}},
             "required": ["text"]},
            {"properties": {"type": {"const": "tool_use"}, "id": {"type": "string"},
                            "name": {"type": "string"}, "input": _OBJECT},
             "required": ["id", "name", "input"]},
            {"properties": {"type": {"const": "tool_result"}, "tool_use_id": {"type": "string"},
                            "content": _TEXT_OR_PARTS, "is_error": {"type": "boolean"}},
             "required": ["tool_use_id"]},
            {"properties": {"type": {"const": "image"}, "source": {"oneOf": [
                {"type": "object", "required": ["type", "media_type", "data"],
                 "additionalProperties": False,
                 "properties": {"type": {"const": "base64"}, "data": {"type": "string"},
                                "media_type": {"enum": ["image/jpeg", "image/png", "image/gif",
                                                        "image/webp"]}}},
                {"type": "object", "required": ["type", "url"], "additionalProperties": False,
                 "properties": {"type": {"const": "url"},
                                "url": {"type": "string", "pattern": "^https?://"}}},
            ]}}, "required": ["source"]},
            {"properties": {"type": {"enum": ["document", "thinking"]}}},
        ]},
    },
}  # fmt: skip

GEMINI: dict[str, Any] = {
    "type": "object",
    "required": ["contents"],
    "properties": {
        "systemInstruction": {"type": "object", "required": ["parts"]},
        "contents": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["parts"],
            "properties": {"role": {"enum": ["user", "model"]},
                           "parts": {"type": "array", "minItems": 1,
                                     "items": {"$ref": "#/$defs/part"}}},
        }},
        "tools": {"type": "array", "items": {"type": "object", "properties": {
            "functionDeclarations": {"type": "array", "items": {
                "type": "object", "required": ["name"], "additionalProperties": False,
                "properties": {"name": _GEMINI_NAME,
                               "description": {"type": "string"},
                               "parameters": _OBJECT, "parametersJsonSchema": _OBJECT},
            }}}}},
        "toolConfig": {"type": "object", "properties": {"functionCallingConfig": {
            "type": "object", "required": ["mode"],
            "properties": {"mode": {"enum": ["AUTO", "ANY", "NONE", "VALIDATED"]},
                           "allowedFunctionNames": {"type": "array",
                                                    "items": {"type": "string"}}},
        }}},
        "generationConfig": _OBJECT,
    },
    "$defs": {
        "part": {"type": "object", "minProperties": 1, "oneOf": [
            {"required": ["text"]},
            {"required": ["functionCall"], "properties": {"functionCall": {
                "type": "object", "required": ["name"],
                "properties": {"name": {"type": "string"}, "args": _OBJECT,
                               "id": {"type": "string"}}}}},
            {"required": ["functionResponse"], "properties": {"functionResponse": {
                "type": "object", "required": ["name", "response"],
                "properties": {"name": {"type": "string"}, "response": _OBJECT,
                               "id": {"type": "string"}}}}},
            {"required": ["inlineData"], "properties": {"inlineData": {
                "type": "object", "required": ["mimeType", "data"], "additionalProperties": False,
                "properties": {"mimeType": {"type": "string"}, "data": {"type": "string"}}}}},
            {"required": ["fileData"], "properties": {"fileData": {
                "type": "object", "required": ["fileUri"], "additionalProperties": False,
                "properties": {"mimeType": {"type": "string"}, "fileUri": {"type": "string"}}}}},
        ]},
    },
}  # fmt: skip

EMBEDDINGS: dict[str, Any] = {
    "type": "object",
    "required": ["model", "input"],
    "properties": {
        "model": {"type": "string", "minLength": 1},
        "input": {"oneOf": [
            {"type": "string", "minLength": 1},
            {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}},
        ]},
        "encoding_format": {"enum": ["float", "base64"]},
        "dimensions": {"type": "integer", "minimum": 1},
        "user": {"type": "string"},
    },
    "additionalProperties": False,
}  # fmt: skip
"""OpenAI's ``POST /embeddings`` body (it refuses an empty input)."""

SHAPES: dict[str, dict[str, Any]] = {
    "openai": OPENAI_CHAT,
    "embeddings": EMBEDDINGS,
    "azure": OPENAI_CHAT,
    "responses": RESPONSES,
    "anthropic": ANTHROPIC,
    "gemini": GEMINI,
}
_VALIDATORS = {wire: jsonschema.Draft202012Validator(shape) for wire, shape in SHAPES.items()}


def _path(error: jsonschema.ValidationError) -> str:
    return "/".join(str(part) for part in error.absolute_path) or "(body)"


def shape_problems(wire: str, body: Any) -> list[str]:
    """What is wrong with a request body of ``wire``, as the API would refuse it (none: ok)."""
    validator = _VALIDATORS.get(wire)
    if validator is None:
        return []
    problems = [f"{_path(e)}: {e.message}" for e in validator.iter_errors(body)]
    if problems or not isinstance(body, dict):
        return problems
    return _pairing_problems(wire, body)


def _pairing_problems(wire: str, body: dict[str, Any]) -> list[str]:
    """Tool results that answer no call of the turn before, and turns that do not alternate."""
    if wire in ("openai", "azure"):
        return _openai_pairs(body["messages"])
    if wire == "responses" and isinstance(body["input"], list):
        made = {i["call_id"] for i in body["input"] if i.get("type") == "function_call"}
        answers = [i for i in body["input"] if i.get("type") == "function_call_output"]
        return [f"input: no function_call with call_id {i['call_id']!r}"
                for i in answers if i["call_id"] not in made]  # fmt: skip
    if wire == "anthropic":
        return _anthropic_pairs(body["messages"])
    if wire == "gemini":
        roles = [c.get("role", "user") for c in body["contents"]]
        if any(a == b for a, b in itertools.pairwise(roles)):
            return ["contents: roles must alternate between user and model"]
    return []


def _openai_pairs(messages: list[dict[str, Any]]) -> list[str]:
    open_ids: set[str] = set()
    called: str | None = None  # a legacy function_call's name
    problems = []
    for index, message in enumerate(messages):
        if message["role"] == "assistant":
            open_ids = {call["id"] for call in message.get("tool_calls") or ()}
            called = (message.get("function_call") or {}).get("name")
        elif message["role"] == "tool":
            if message["tool_call_id"] not in open_ids:
                problems.append(f"messages/{index}: tool message answers no preceding tool call")
        elif message["role"] == "function":
            if message["name"] != called:
                problems.append(f"messages/{index}: function message answers no function_call")
            called = None
        else:
            open_ids, called = set(), None
    return problems


def _anthropic_pairs(messages: list[dict[str, Any]]) -> list[str]:
    problems = []
    roles = [m["role"] for m in messages]
    if roles[0] != "user" or any(a == b for a, b in itertools.pairwise(roles)):
        problems.append("messages: roles must alternate, starting with user")
    previous: set[str] = set()
    for index, message in enumerate(messages):
        blocks = message["content"] if isinstance(message["content"], list) else []
        for block in blocks:
            if block["type"] == "tool_result" and block["tool_use_id"] not in previous:
                problems.append(f"messages/{index}: tool_result answers no tool_use just before")
        previous = {b["id"] for b in blocks if b["type"] == "tool_use"}
    return problems
