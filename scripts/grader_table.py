"""Write the table of grader types (docs/evaluation.md) from the catalog and the registry.

Usage: .venv/bin/python scripts/grader_table.py [--write]
Without ``--write`` the table is printed; a test checks docs/evaluation.md holds the current one.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from app.evaluators.catalog import COMMON_KEYS
from app.evaluators.registry import EVALUATORS, GATE_OPTIONS, runnable_catalog

DOC = Path(__file__).resolve().parent.parent / "docs" / "evaluation.md"
NEEDS_BY_FAMILY = {
    "deterministic": "the answer",
    "model": "a judge target (the run's, or the grader's `target`)",
    "metric": "a reference: `value` or the case's expected output",
    "structure": "child graders",
    "code": "`EVAL_CODE_GRADERS=true` and a suite file under a workspace root",
    "agent": "a target that reports tool calls",
}
NEEDS = {
    "field_accuracy": "a JSON answer and the case's expected output",
    "latency": "the candidate call's time (always recorded)",
    "cost": "a target that reports cost (`cost_usd`) or has `pricing`",
    "execution_metrics": "tokens and time (always recorded); tool and model calls, cost as "
    "the target reports them",
    "tool_trajectory": "a target that reports tool calls (mock `tool_calls`, a CLI agent's JSON)",
    "moderation": "a moderation target (`api_format: moderation`; the grader's `provider`, "
    "else the first)",
    "ruby": "`EVAL_CODE_GRADERS=true`, a suite file under a workspace root and `ruby` in the "
    "sandbox's runtime",
    "classifier": "a classifier target (`provider: huggingface`; the grader's `provider`, the "
    "test's `options.provider`, else the first)",
}
"""What a grader type needs to run, beyond its own options (the family's, unless listed)."""
START = "<!-- grader-table:start -->"
END = "<!-- grader-table:end -->"


def _keys(keys: frozenset[str]) -> str:
    return ", ".join(f"`{key}`" for key in sorted(keys)) or "-"


def grader_table() -> str:
    """The Markdown table: every grader type, its aliases, options, needs, and whether it runs."""
    lines = [
        "| type | also written | what it checks | runs | options | needs |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for entry, runs in runnable_catalog():
        aliases = ", ".join(f"`{alias}`" for alias in entry.aliases) or "-"
        honoured = _keys(EVALUATORS.honours(entry.name) - GATE_OPTIONS) if runs else "-"
        status = "yes" if runs else "no (refused)"
        needs = NEEDS.get(entry.name, NEEDS_BY_FAMILY[entry.family]) if runs else "-"
        lines.append(
            f"| `{entry.name}` | {aliases} | {entry.summary} | {status} | {honoured} | {needs} |"
        )
    common = _keys(COMMON_KEYS | GATE_OPTIONS)
    return "\n".join(lines) + f"\n\nEvery grader that runs also honours {common}.\n"


def doc_with_table(text: str) -> str:
    """``text`` with the current table between the markers."""
    head, found_start, rest = text.partition(START)
    _old, found_end, tail = rest.partition(END)
    if not (found_start and found_end):
        raise SystemExit(f"docs/evaluation.md needs the markers {START} and {END}")
    return f"{head}{START}\n{grader_table()}{END}{tail}"


def main() -> int:
    """Print the table, or write it into docs/evaluation.md with ``--write``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite docs/evaluation.md's table")
    if not parser.parse_args().write:
        print(grader_table(), end="")
        return 0
    DOC.write_text(doc_with_table(DOC.read_text(encoding="utf-8")), encoding="utf-8")
    print("wrote the grader table into docs/evaluation.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
