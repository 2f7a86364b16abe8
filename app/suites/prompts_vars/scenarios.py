"""promptfoo's ``scenarios`` (AgentV's July layout too): config rows crossed with tests.

Measured with promptfoo 0.123.1: each scenario ``{description, config: [...], tests:
[...]}`` gives one test per config row and test, rows first. A generated test is the row
with the test over it (``{**row, **test}``), its ``vars`` the row's with the test's over
them, and its ``assert`` the row's followed by the test's (``defaultTest`` still comes
first, as for every test). A scenario without ``tests`` gives one test per row. A
``scenarios`` item may be ``file://`` a YAML file (or glob) holding a list of scenarios.
The generated test's id is ``<row id>/<test id>``, each defaulting to its place
(``scenario-1.2`` for the second row of the first scenario, ``test-3``), since promptfoo's
tests need no ids and the service's cases do.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import Findings, describe
from app.suites.files.sources import Sources

SCENARIO_KEYS = frozenset({"description", "config", "tests"})


def scenario_tests(
    document: Mapping[str, Any], sources: Sources, findings: Findings
) -> Iterator[tuple[DocumentPath, Any]]:
    """``(path, raw test)`` of every test the suite's ``scenarios`` generate."""
    scenarios = document.get("scenarios")
    if scenarios is None:
        return
    if not isinstance(scenarios, list):
        findings.error(("scenarios",), f"must be a list of scenarios, not {describe(scenarios)}")
        return
    number = 0
    for index, item in enumerate(scenarios):
        where: DocumentPath = ("scenarios", index)
        if isinstance(item, str):
            listed = sources.cases.get(where)
            if listed is None:
                findings.error(where, f"must be a scenario or 'file://...', not {item!r}")
                continue
        else:
            listed = [(where, item)]
        for path, scenario in listed:
            number += 1
            yield from _expanded(scenario, path, number, findings)


def _expanded(
    scenario: Any, path: DocumentPath, number: int, findings: Findings
) -> Iterator[tuple[DocumentPath, Any]]:
    if not isinstance(scenario, dict):
        findings.error(path, f"a scenario must be a mapping, not {describe(scenario)}")
        return
    for key in sorted(set(scenario) - SCENARIO_KEYS):
        findings.warn((*path, key), "unknown key, ignored")
    rows = scenario.get("config")
    tests = scenario.get("tests", [{}])
    if not isinstance(rows, list) or not rows:
        findings.error((*path, "config"), f"must be a list of config rows, not {describe(rows)}")
        return
    if not isinstance(tests, list):
        findings.error((*path, "tests"), f"must be a list of tests, not {describe(tests)}")
        return
    for row_index, row in enumerate(rows):
        row_path = (*path, "config", row_index)
        if not isinstance(row, dict):
            findings.error(row_path, f"a config row must be a mapping, not {describe(row)}")
            continue
        row_id = row.get("id", f"scenario-{number}.{row_index + 1}")
        for test_index, test in enumerate(tests):
            test_path = (*path, "tests", test_index)
            if not isinstance(test, dict):
                findings.error(test_path, f"a test must be a mapping, not {describe(test)}")
                continue
            test_id = test.get("id", f"test-{test_index + 1}")
            yield test_path, _merged(row, test, f"{row_id}/{test_id}", row_path, findings)


def _merged(
    row: Mapping[str, Any],
    test: Mapping[str, Any],
    test_id: str,
    row_path: DocumentPath,
    findings: Findings,
) -> dict[str, Any]:
    merged = {**row, **test, "id": test_id}
    row_vars, test_vars = row.get("vars", {}), test.get("vars", {})
    if isinstance(row_vars, dict) and isinstance(test_vars, dict):
        merged["vars"] = {**row_vars, **test_vars}
    elif not isinstance(row_vars, dict):
        findings.error((*row_path, "vars"), f"must be a mapping, not {describe(row_vars)}")
    row_assert, test_assert = row.get("assert"), test.get("assert")
    if isinstance(row_assert, list) and isinstance(test_assert, list):
        merged["assert"] = [*row_assert, *test_assert]
    elif row_assert is not None and test_assert is None:
        merged["assert"] = row_assert
    return merged
