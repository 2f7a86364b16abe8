"""Suite documents: YAML or JSON text parsed safely, with positions for error messages."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from app.errors import DocumentError
from app.suites.documents.parsing import compose_yaml, construct_yaml, parse_core_yaml, parse_json
from app.suites.files.case_files import CaseFileError, jsonl_cases

PROMPTFOO_KEYS = frozenset({"prompts", "providers", "defaultTest"})
"""Keys that mark promptfoo's layout, whose YAML is read with YAML 1.2's core schema."""
DocumentPath = tuple[str | int, ...]
"""A location in a document: mapping keys and list indices from the top."""


def render_path(path: Sequence[str | int]) -> str:
    """Write a document path the way authors read it: ``evalcases[3].input_messages[1].role``.

    A part ``@file`` names a file the suite reads cases from: ``tests@cases.jsonl[3].id``.
    """
    rendered = ""
    for part in path:
        if isinstance(part, int):
            rendered += f"[{part}]"
        elif part.startswith("@"):  # a file the suite names: tests@cases.jsonl[3]
            rendered += part
        else:
            rendered += f".{part}" if rendered else part
    return rendered


class NodePositions:
    """Finds the line and column (1-based) of a document path in a composed YAML graph."""

    def __init__(self, root: Node | None) -> None:
        """Keep the root node of the composed document."""
        self._root = root

    def locate(self, path: Sequence[str | int]) -> tuple[int, int] | None:
        """The position of ``path``, or of its nearest ancestor present in the document."""
        node = self._root
        if node is None:
            return None
        for part in path:
            child = _child(node, part)
            if child is None:
                break
            node = child
        mark = node.start_mark
        return mark.line + 1, mark.column + 1


def _child(node: Node, part: str | int) -> Node | None:
    if isinstance(node, SequenceNode) and isinstance(part, int):
        return node.value[part] if 0 <= part < len(node.value) else None
    if isinstance(node, MappingNode) and isinstance(part, str):
        for key, value in node.value:
            if isinstance(key, ScalarNode) and key.value == part:
                child: Node = value
                return child
    return None


@dataclass(frozen=True)
class SuiteDocument:
    """A parsed suite document.

    Attributes:
        data: The plain values (mappings, lists, scalars) of the document.
        positions: Where each path sits in the text (YAML only; None for JSON or objects).
        source_name: The suite file's name when it was given by path, else None.
    """

    data: Any
    positions: NodePositions | None = None
    source_name: str | None = None


def parse_suite_text(text: str, *, source_name: str | None = None) -> SuiteDocument:
    """Parse a suite given as YAML or JSON text.

    Text whose first non-blank character is ``{`` is read as JSON (or as JSONL, one case per
    line: a whole-file dataset), anything else as YAML (``safe_load`` semantics; alias
    expansion and nesting are bounded).

    Raises:
        DocumentError: The text does not parse; its ``errors`` carry the
            line and column of the syntax error.
    """
    if source_name is not None and source_name.lower().endswith(".jsonl"):
        try:
            return SuiteDocument(data=jsonl_cases(text), source_name=source_name)
        except CaseFileError as exc:
            raise DocumentError(f"invalid JSONL: {exc}") from None
    if text.lstrip().startswith("{"):
        try:
            return SuiteDocument(data=parse_json(text), source_name=source_name)
        except DocumentError as exc:
            if "Extra data" not in exc.detail:
                raise
            try:
                return SuiteDocument(data=jsonl_cases(text), source_name=source_name)
            except CaseFileError:
                raise exc from None
    node = compose_yaml(text)
    data = construct_yaml(node)
    if isinstance(data, dict) and PROMPTFOO_KEYS & data.keys():
        node, data = parse_core_yaml(text)  # promptfoo reads YAML 1.2's core schema
    return SuiteDocument(data=data, positions=NodePositions(node), source_name=source_name)
