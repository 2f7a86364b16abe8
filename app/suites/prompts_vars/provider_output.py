"""A promptfoo test's ``providerOutput``: the answer its graders grade, the target not called.

promptfoo grades the given output as the provider's and skips the call when the value is
set and not empty (an empty one calls the provider). Only text is read here: an output that
is a mapping or a list would reach promptfoo's graders as an object, which this service's
answers never are, so it is refused by name rather than graded as its JSON text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import Findings, describe


def read_provider_output(
    raw: Mapping[str, Any], path: DocumentPath, conversation: bool, findings: Findings
) -> str | None:
    """The test's given answer (None: the target answers it)."""
    value = raw.get("providerOutput")
    where = (*path, "providerOutput")
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        findings.error(where, f"only a text output is supported, not {describe(value)}")
        return None
    if conversation:
        findings.error(where, "a live conversation's turns are answered by the target")
        return None
    return value
