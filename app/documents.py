"""Parse request documents (JSON or YAML) safely, with bounded size, depth and expansion.

YAML aliases can describe a document far larger than its text (an "alias bomb"); the node
graph is measured before any Python object is built, and refused past ``MAX_NODES``.
"""

from __future__ import annotations

import json
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

from app.errors import BadRequest, FieldError

MAX_NODES = 200_000
MAX_DEPTH = 100


class DocumentError(BadRequest):
    """A document that does not parse, or parses into something too large or deep."""


def _position_error(message: str, line: int | None, column: int | None) -> DocumentError:
    where = f" at line {line}, column {column}" if line is not None else ""
    return DocumentError(
        f"{message}{where}",
        errors=[FieldError(path="", message=message, line=line, column=column)],
    )


def parse_json(raw: bytes | str) -> Any:
    """Parse JSON, reporting the line and column of a syntax error."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise _position_error(f"invalid JSON: {exc.msg}", exc.lineno, exc.colno) from exc
    except UnicodeDecodeError as exc:
        raise DocumentError("the body is not UTF-8 text") from exc
    except RecursionError as exc:
        raise DocumentError("the JSON document is nested too deeply") from exc


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


def compose_yaml(text: str) -> Node | None:
    """Compose a YAML document into its node graph (positions kept), checking its limits."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
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


def construct_yaml(node: Node | None) -> Any:
    """Build Python values from a composed (and measured) node graph."""
    if node is None:
        return None
    loader = yaml.SafeLoader("")
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
