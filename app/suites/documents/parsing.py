"""Parse request documents (JSON or YAML) safely, with bounded size, depth and expansion.

YAML aliases can describe a document far larger than its text (an "alias bomb"); the node
graph is measured before any Python object is built, and refused past ``MAX_NODES``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

from app.errors import DocumentError, FieldError

MAX_NODES = 1_000_000
MAX_DEPTH = 100
# Structural indicators a YAML text may hold; parsing costs ~10 us per value even in C.
MAX_YAML_INDICATORS = 250_000
# libyaml (C) when PyYAML was built with it: about ten times faster, same marks and errors.
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_SURROGATE = re.compile("[\ud800-\udfff]")


def _position_error(message: str, line: int | None, column: int | None) -> DocumentError:
    where = f" at line {line}, column {column}" if line is not None else ""
    return DocumentError(
        f"{message}{where}",
        errors=[FieldError(path="", message=message, line=line, column=column)],
    )


def _lone_surrogate(value: Any, path: str) -> tuple[str, str] | None:
    """The path and text of the first string (key or value) holding a lone surrogate."""
    if isinstance(value, str):
        return (path, value) if _SURROGATE.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and _SURROGATE.search(key):
                return where, key
            found = _lone_surrogate(item, where)
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _lone_surrogate(item, f"{path}[{index}]")
            if found:
                return found
    return None


def refuse_lone_surrogates(document: Any) -> Any:
    r"""The document, unless one of its strings holds a lone surrogate (``"\ud800"``).

    A JSON escape can spell such a code point, but it is not a character: no text holding
    one can be stored, compared or sent on. (YAML parsers refuse the escape themselves.)

    Raises:
        DocumentError: A string holds a lone surrogate (its path and escaped value named).
    """
    found = _lone_surrogate(document, "")
    if found is None:
        return document
    path, text = found
    shown = json.dumps(text[:80])
    message = f"{shown} holds a lone surrogate, which is not a Unicode character"
    where = f"{path}: " if path else ""
    raise DocumentError(f"{where}{message}", errors=[FieldError(path=path, message=message)])


def _no_constant(name: str) -> Any:
    raise DocumentError(f"invalid JSON: {name} is not a JSON number (JSON has no NaN or Infinity)")


def parse_json(raw: bytes | str) -> Any:
    """Parse JSON, reporting the line and column of a syntax error; refuse lone surrogates.

    ``NaN`` and ``Infinity``, which Python's reader takes, are refused: they are not JSON.
    """
    try:
        document = json.loads(raw, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise _position_error(f"invalid JSON: {exc.msg}", exc.lineno, exc.colno) from exc
    except UnicodeDecodeError as exc:
        raise DocumentError("the body is not UTF-8 text") from exc
    except RecursionError as exc:
        raise DocumentError("the JSON document is nested too deeply") from exc
    # Only an escape can spell a surrogate: UTF-8 bytes cannot.
    escaped = b"\\u" in raw if isinstance(raw, bytes) else "\\u" in raw
    return refuse_lone_surrogates(document) if escaped else document


def _measure(node: Node) -> None:
    """Refuse a node graph whose expanded size or depth is over the limits."""
    sizes: dict[int, int] = {}

    def size(current: Node, depth: int) -> int:
        if depth > MAX_DEPTH:
            raise DocumentError(f"the YAML document is nested deeper than {MAX_DEPTH} levels")
        known = sizes.get(id(current))
        if known is not None:
            return known
        total = 1
        if isinstance(current, SequenceNode):
            total += sum(size(child, depth + 1) for child in current.value)
        elif isinstance(current, MappingNode):
            total += sum(
                size(key, depth + 1) + size(value, depth + 1) for key, value in current.value
            )
        if total > MAX_NODES:
            raise DocumentError(
                f"the YAML document expands to more than {MAX_NODES} values (aliases included)"
            )
        sizes[id(current)] = total
        return total

    size(node, 0)


_FLOW_START = (yaml.FlowSequenceStartToken, yaml.FlowMappingStartToken)
_FLOW_END = (yaml.FlowSequenceEndToken, yaml.FlowMappingEndToken)


def refuse_deep_flow_nesting(text: str) -> None:
    """Refuse ``[[[[...`` nesting before PyYAML's parser spends quadratic time on it.

    YAML scanners re-check every open flow level for each token, so deep ``[``/``{``
    nesting costs time quadratic in its depth. This scan stops at the first level past
    ``MAX_DEPTH``; text with fewer brackets than that cannot nest so deep and is not scanned.

    Raises:
        DocumentError: Flow collections are nested deeper than ``MAX_DEPTH``.
    """
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return
    depth = 0
    try:
        for token in yaml.scan(text, Loader=_LOADER):
            if isinstance(token, _FLOW_START):
                depth += 1
                if depth > MAX_DEPTH:
                    _raise_too_deep(token.start_mark)
            elif isinstance(token, _FLOW_END):
                depth -= 1
    except yaml.YAMLError:
        return  # a syntax error: compose_yaml reports it with its position


def _raise_too_deep(mark: Any) -> None:
    message = f"the YAML document is nested deeper than {MAX_DEPTH} levels"
    line, column = mark.line + 1, mark.column + 1
    raise DocumentError(
        message, errors=[FieldError(path="", message=message, line=line, column=column)]
    )


def non_finite_numbers(document: Any, path: tuple[str | int, ...] = ()) -> Iterator[Any]:
    """``(path, value)`` of every NaN or infinite number in a parsed document (YAML's ``.nan``)."""
    if isinstance(document, float) and not math.isfinite(document):
        yield path, document
    elif isinstance(document, dict):
        for key, item in document.items():
            yield from non_finite_numbers(item, (*path, str(key)))
    elif isinstance(document, list):
        for index, item in enumerate(document):
            yield from non_finite_numbers(item, (*path, index))


def refuse_too_many_values(text: str) -> None:
    """Refuse, before parsing, a text with more structural indicators than we parse."""
    indicators = sum(text.count(mark) for mark in ("\n", ",", "[", "{", ": ", "- "))
    if indicators > MAX_YAML_INDICATORS:
        raise DocumentError(
            f"the YAML document has more than {MAX_YAML_INDICATORS} values; send JSON or "
            "split the suite"
        )


def compose_yaml(text: str, *, loader: Any = None) -> Node | None:
    """Compose a YAML document into its node graph (positions kept), checking its limits."""
    refuse_too_many_values(text)
    refuse_deep_flow_nesting(text)
    loader = (loader or _LOADER)(text)
    try:
        node: Node | None = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        column = mark.column + 1 if mark else None
        raise _position_error(f"invalid YAML: {exc.problem or exc}", line, column) from exc
    except yaml.YAMLError as exc:
        raise DocumentError(f"invalid YAML: {exc}") from exc
    except RecursionError as exc:
        raise DocumentError("the YAML document is nested too deeply") from exc
    finally:
        loader.dispose()
    if node is not None:
        _measure(node)
    return node


def construct_yaml(node: Node | None, *, loader: Any = None) -> Any:
    """Build Python values from a composed (and measured) node graph."""
    if node is None:
        return None
    loader = (loader or _LOADER)("")
    try:
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        raise DocumentError(f"invalid YAML: {exc}") from exc
    finally:
        loader.dispose()


def parse_yaml(raw: bytes | str) -> Any:
    """Parse one YAML document safely (``safe_load`` semantics, bounded expansion)."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DocumentError("the body is not UTF-8 text") from exc
    return construct_yaml(compose_yaml(raw))


class _CoreResolver(yaml.resolver.BaseResolver):
    """YAML 1.2's core schema, as promptfoo's reader (js-yaml 4) applies it to plain scalars.

    ``yes``/``no``/``on``/``off`` stay text, ``12:30`` stays text (no base 60), ``017`` is
    seventeen (octal is ``0o17``), ``1_000`` stays text; timestamps are text too.
    """


_CoreResolver.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_CoreResolver.add_implicit_resolver(
    "tag:yaml.org,2002:int",
    re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
    list("-+0123456789"),
)
_CoreResolver.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+0123456789."),
)
_CoreResolver.add_implicit_resolver(
    "tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""]
)
_CoreResolver.add_implicit_resolver("tag:yaml.org,2002:merge", re.compile(r"^(?:<<)$"), ["<"])


class _CoreConstructor(yaml.constructor.SafeConstructor):
    """Numbers as YAML 1.2 core reads them; a whole float is an integer, as in JavaScript."""

    def construct_yaml_int(self, node: Node) -> int:
        text = str(self.construct_scalar(node))  # type: ignore[arg-type]
        if text.startswith("0o"):
            return int(text[2:], 8)
        if text.startswith("0x"):
            return int(text[2:], 16)
        return int(text)

    def construct_yaml_float(self, node: Node) -> float | int:
        text = str(self.construct_scalar(node)).lower()  # type: ignore[arg-type]
        if text.lstrip("+-") == ".inf":
            return float("-inf") if text.startswith("-") else float("inf")
        if text == ".nan":
            return float("nan")
        number = float(text)
        return int(number) if number.is_integer() and abs(number) < 2**53 else number


_CoreConstructor.add_constructor("tag:yaml.org,2002:int", _CoreConstructor.construct_yaml_int)  # type: ignore[type-var]
_CoreConstructor.add_constructor(  # type: ignore[type-var]
    "tag:yaml.org,2002:float", _CoreConstructor.construct_yaml_float
)


class CoreLoader(
    yaml.reader.Reader,
    yaml.scanner.Scanner,
    yaml.parser.Parser,
    yaml.composer.Composer,
    _CoreConstructor,
    _CoreResolver,
):
    """A safe loader reading YAML 1.2's core schema (promptfoo's reading)."""

    def __init__(self, stream: str) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        yaml.composer.Composer.__init__(self)
        _CoreConstructor.__init__(self)
        _CoreResolver.__init__(self)


def parse_core_yaml(text: str) -> tuple[Node | None, Any]:
    """The node graph and values of a YAML text read with YAML 1.2's core schema (bounded)."""
    node = compose_yaml(text, loader=CoreLoader)
    return node, construct_yaml(node, loader=CoreLoader)
