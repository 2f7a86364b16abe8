"""``derivedMetrics`` of a promptfoo file: ``[{name, value}]``.

Each value is an expression over the file's metric names (the ``metric`` of its asserts) and
the derived metrics before it. Read here and checked by running each expression once in the
embedded JavaScript engine: a syntax error or a name that is no metric is an error at its
``value`` (promptfoo reports it as 0 when the eval ends). The values are computed in the
run's summary (``app.evaluators.code.derived_metrics``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.evaluators.code.derived_metrics import DerivedMetrics, definition_error
from app.suites.documents.findings import Findings, describe
from app.suites.model import EvalCase

KEY = "derivedMetrics"
MAX_DERIVED = 100
"""Most derived metrics one file may define."""


def read_derived(
    document: Mapping[str, Any], cases: Sequence[EvalCase], findings: Findings
) -> DerivedMetrics | None:
    """The file's derived metrics with the graders that feed them; None without any."""
    raw = document.get(KEY)
    if raw is None:
        return None
    if not isinstance(raw, list) or not raw or len(raw) > MAX_DERIVED:
        findings.error((KEY,), f"must be a list of 1 to {MAX_DERIVED} {{name, value}} entries")
        return None
    sources = metric_sources(cases)
    metrics = {metric for metric, _ in sources.values()}
    definitions: list[tuple[str, str]] = []
    for index, item in enumerate(raw):
        name = item.get("name") if isinstance(item, dict) else None
        value = item.get("value") if isinstance(item, dict) else None
        if not isinstance(name, str) or not name.strip():
            findings.error((KEY, index, "name"), f"must name the metric, not {describe(name)}")
            continue
        if not isinstance(value, str) or not value.strip():
            findings.error(
                (KEY, index, "value"),
                f"must be an expression over the metrics (a function is read only from "
                f"JavaScript configs, which this service does not run), not {describe(value)}",
            )
            continue
        if any(name == seen for seen, _ in definitions):
            findings.error((KEY, index, "name"), f"a second derived metric named {name!r}")
            continue
        problem = definition_error((*definitions, (name, value)), metrics)
        if problem is not None:
            known = ", ".join(sorted(metrics | {seen for seen, _ in definitions})) or "none"
            findings.error((KEY, index, "value"), f"{problem} (metrics here: {known})")
            continue
        definitions.append((name, value))
    return DerivedMetrics(definitions=tuple(definitions), sources=sources)


def metric_sources(cases: Sequence[EvalCase]) -> dict[str, tuple[str, float]]:
    """Grader name -> ``(metric, weight)`` of every grader that names a metric."""
    sources: dict[str, tuple[str, float]] = {}
    for case in cases:
        for grader in case.evaluators:
            if grader.metric is not None:
                sources.setdefault(grader.name, (grader.metric, grader.weight))
    return sources
