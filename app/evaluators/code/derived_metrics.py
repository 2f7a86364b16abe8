"""promptfoo's ``derivedMetrics``: values computed from a run's named scores, in its summary.

Measured on promptfoo 0.123.1 (docs/design.md, "Decisions: promptfoo's semantics"): a
metric's named score over a run (per prompt, that is per arm here) is the sum of score x
weight of every assertion naming it (so a weight-0 assertion adds nothing); each derived
metric is an expression over those sums and the derived metrics before it, and a result that
is not a finite number (``0 / 0``) is null. Expressions run in the embedded JavaScript engine
with ``Math``'s functions in scope (``sqrt(x)``, ``max(a, b)``); promptfoo reads them with
mathjs, whose arithmetic is JavaScript's (``^`` is not: write ``**`` for a power).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

from app.evaluators.code.js_engine import JsError, literal, run_script, run_script_waiting

IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
MATH_NAMES = (
    *("abs", "sqrt", "cbrt", "pow", "exp", "log", "log10", "log2", "min", "max"),
    *("floor", "ceil", "round", "sign", "trunc"),
)
DERIVED_TIMEOUT_MS = 500
"""Longest a run's derived metrics may take to compute, all of them."""


class DerivedMetrics(BaseModel):
    """A suite's ``derivedMetrics`` and where their inputs come from.

    Attributes:
        definitions: ``(name, expression)`` in the file's order.
        sources: Grader name -> ``(metric, weight)``: the graders whose scores make each
            metric's named score.
    """

    model_config = ConfigDict(frozen=True)

    definitions: tuple[tuple[str, str], ...]
    sources: dict[str, tuple[str, float]] = Field(default_factory=dict)


def named_sums(derived: DerivedMetrics, score_sums: Mapping[str, float]) -> dict[str, float]:
    """Each metric's named score: the sum of score x weight of the graders naming it."""
    sums = {metric: 0.0 for metric, _ in derived.sources.values()}
    for name, (metric, weight) in derived.sources.items():
        sums[metric] += score_sums.get(name, 0.0) * weight
    return sums


def script(definitions: tuple[tuple[str, str], ...], named: Mapping[str, float]) -> str:
    """The JavaScript that computes every derived metric from ``named`` (JSON of all)."""
    lines = [f"const {{{', '.join(MATH_NAMES)}}} = Math;", "const __out = {};"]
    lines += [f"let {name} = {literal(value)};" for name, value in named.items() if _usable(name)]
    for name, expression in definitions:
        key = literal(name)
        lines.append(f"__out[{key}] = ({expression}\n);")
        if _usable(name) and name not in named:
            lines.append(f"let {name} = __out[{key}];")
    lines.append(
        "JSON.stringify(Object.fromEntries(Object.entries(__out).map("
        "([k, v]) => [k, typeof v === 'number' && isFinite(v) ? v : null])))"
    )
    return "\n".join(lines)


def _usable(name: str) -> bool:
    return IDENTIFIER.fullmatch(name) is not None and name not in MATH_NAMES


def derived_values(
    derived: DerivedMetrics, score_sums: Mapping[str, float]
) -> dict[str, float | None]:
    """The named scores and the derived metrics of one arm (or run), promptfoo's way.

    Runs V8: call it from the engine's threads (``run_in_thread``), never the event loop.
    """
    named = named_sums(derived, score_sums)
    try:
        computed = run_script(
            script(derived.definitions, named), timeout_ms=DERIVED_TIMEOUT_MS, what="derivedMetrics"
        )
    except JsError:
        computed = None  # checked when the suite was read: only a limit can stop it here
    values: dict[str, float | None] = dict(named)
    if isinstance(computed, dict):
        values.update(
            {str(k): v if isinstance(v, int | float) else None for k, v in computed.items()}
        )
    return values


def definition_error(definitions: tuple[tuple[str, str], ...], metrics: set[str]) -> str | None:
    """Why the last of ``definitions`` cannot run, or None.

    A syntax error, or a name that is neither a metric nor a derived metric before it. Runs
    V8 and waits: only for callers off the event loop (suites are read in a thread).
    """
    try:
        run_script_waiting(
            script(definitions, dict.fromkeys(sorted(metrics), 1.0)),
            timeout_ms=DERIVED_TIMEOUT_MS,
            what="derivedMetrics",
        )
    except JsError as exc:
        return str(exc)
    return None
