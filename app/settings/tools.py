"""Tool declarations as targets files and suites write them, read into one form (pure).

A tool is a function the candidate model may call: a name, a description and a JSON Schema of
its arguments (OpenAI's function-tool form). Files write tools in each API's spelling, and all
are read into ``ToolSpec``:

- OpenAI Chat: ``{type: function, function: {name, description, parameters, strict}}``
  (promptfoo's examples also write ``input_schema`` inside ``function``);
- OpenAI Responses: ``{type: function, name, description, parameters, strict}``;
- OpenAI's legacy ``functions`` and Anthropic: ``{name, description, parameters}`` or
  ``{name, description, input_schema}``;
- Gemini: ``{functionDeclarations: [{name, description, parameters}]}``, whose schemas may
  write Gemini's type names (``OBJECT``, ``STRING``: read as ``object``, ``string``).

A tool of another type (``web_search``, ``code_interpreter``, ``mcp``...) runs on the
provider's side: suites may declare it (``app.settings.hosted_tools``), targets files and
``/format`` may not (refused by name). ``tool_choice`` reads
OpenAI's (``auto``, ``none``, ``required``, ``{type: function, function: {name}}``),
Anthropic's (``{type: auto|any|tool|none, name}``) and Gemini's (``AUTO``, ``ANY``, ``NONE``)
spellings.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.settings.hosted_tools import HostedTool, hosted_tool

EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


class ToolSpec(BaseModel):
    """One function tool the candidate may call (OpenAI's function-tool form)."""

    model_config = ConfigDict(frozen=True)
    name: str = Field(min_length=1, examples=["get_weather"])
    description: str | None = Field(None, examples=["The current weather in a city."])
    parameters: dict[str, Any] = Field(
        default_factory=lambda: dict(EMPTY_PARAMETERS),
        description="JSON Schema of the call's arguments (an object).",
    )
    strict: bool | None = Field(None, description="OpenAI's strict mode for the arguments.")


class ToolChoice(BaseModel):
    """Whether and which tool the model must call: ``auto``, ``none``, ``required`` or one."""

    model_config = ConfigDict(frozen=True)
    mode: Literal["auto", "none", "required", "tool"] = "auto"
    name: str | None = Field(None, description="The tool that must be called (mode `tool`).")


class ToolsError(ValueError):
    """A tool declaration that cannot be read; the message names what is wrong."""


_GEMINI_TYPES = frozenset({"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"})


def json_schema_types(schema: Any) -> Any:
    """A Gemini ``Schema`` (``type: OBJECT``...) with JSON Schema's type names (lower case)."""
    if isinstance(schema, list):
        return [json_schema_types(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    fixed: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str) and value in _GEMINI_TYPES:
            fixed[key] = value.lower()
        elif key == "properties" and isinstance(value, dict):
            fixed[key] = {name: json_schema_types(item) for name, item in value.items()}
        elif isinstance(value, dict | list) and key not in ("enum", "default", "example"):
            fixed[key] = json_schema_types(value)
        else:
            fixed[key] = value
    return fixed


def _one_function(raw: dict[str, Any], where: str) -> ToolSpec:
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ToolsError(f"{where}: a function tool needs a 'name'")
    parameters = raw.get("parameters", raw.get("input_schema", raw.get("inputSchema")))
    if parameters is None:
        parameters = dict(EMPTY_PARAMETERS)
    if not isinstance(parameters, dict):
        raise ToolsError(f"{where}: 'parameters' of tool {name!r} must be a JSON Schema object")
    description = raw.get("description")
    if description is not None and not isinstance(description, str):
        raise ToolsError(f"{where}: 'description' of tool {name!r} must be text")
    strict = raw.get("strict")
    return ToolSpec(
        name=name,
        description=description,
        parameters=parameters,
        strict=strict if isinstance(strict, bool) else None,
    )


def read_tool(raw: Any, where: str = "tools") -> list[ToolSpec]:
    """The tools one declaration stands for (Gemini's groups several).

    Raises:
        ToolsError: not a function tool, or a malformed one (the message names it).
    """
    if not isinstance(raw, dict):
        raise ToolsError(f"{where}: a tool is a mapping, not {type(raw).__name__}")
    declarations = raw.get("functionDeclarations", raw.get("function_declarations"))
    if isinstance(declarations, list):
        return [_one_function(json_schema_types(item), f"{where}.functionDeclarations[{i}]")
                for i, item in enumerate(declarations) if isinstance(item, dict)]  # fmt: skip
    kind = raw.get("type", "function")
    if kind != "function" and not (kind == "custom" and "input_schema" in raw):
        raise ToolsError(
            f"{where}: tool type {kind!r} is not supported: only function tools (the suite "
            "gives their results) and the hosted tools a suite declares are sent"
        )
    function = raw.get("function")
    if isinstance(function, dict):
        return [_one_function(function, where)]
    return [_one_function(raw, where)]


def read_tools(
    raw: Any, where: str = "tools", *, hosted: list[HostedTool] | None = None
) -> tuple[ToolSpec, ...]:
    """A list of tool declarations read into ``ToolSpec``s (names unique).

    With ``hosted`` (a list), tools the provider runs itself are put there instead of refused.

    Raises:
        ToolsError: the first declaration that cannot be read, or a duplicate name.
    """
    if raw is None:
        return ()
    if isinstance(raw, dict):
        raw = [raw]
    if not isinstance(raw, list):
        raise ToolsError(f"{where}: must be a list of tools, not {type(raw).__name__}")
    tools: list[ToolSpec] = []
    for index, item in enumerate(raw):
        found = hosted_tool(item) if hosted is not None else None
        if found is not None and hosted is not None:
            hosted.append(found)
        else:
            tools += read_tool(item, f"{where}[{index}]")
    names = [tool.name for tool in tools]
    for name in names:
        if names.count(name) > 1:
            raise ToolsError(f"{where}: tool {name!r} is declared twice")
    return tuple(tools)


_MODES: dict[str, Literal["auto", "none", "required"]] = {
    "auto": "auto",
    "none": "none",
    "required": "required",
    "any": "required",
}


def read_tool_choice(raw: Any, where: str = "tool_choice") -> ToolChoice | None:
    """``tool_choice`` in OpenAI's, Anthropic's or Gemini's spelling.

    Raises:
        ToolsError: a value none of them writes.
    """
    if raw is None:
        return None
    if isinstance(raw, str):
        mode = _MODES.get(raw.strip().lower())
        if mode is None:
            raise ToolsError(f"{where}: {raw!r} is not auto, none, required or a tool")
        return ToolChoice(mode=mode)
    if isinstance(raw, dict):
        function = raw.get("function")
        name = function.get("name") if isinstance(function, dict) else raw.get("name")
        if isinstance(name, str) and name:
            return ToolChoice(mode="tool", name=name)
        kind = raw.get("type")
        if isinstance(kind, str) and kind.lower() in _MODES:
            return ToolChoice(mode=_MODES[kind.lower()])
    raise ToolsError(f"{where}: {raw!r} is not auto, none, required or a tool")


def merged_tools(*groups: tuple[ToolSpec, ...]) -> tuple[ToolSpec, ...]:
    """Tools of several places; a later group's tool replaces an earlier one of its name."""
    by_name: dict[str, ToolSpec] = {}
    for group in groups:
        for tool in group:
            by_name[tool.name] = tool
    return tuple(by_name.values())
