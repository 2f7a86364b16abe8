"""``--junit FILE``: the run as JUnit XML, the test report format CI systems read.

One ``<testsuite>`` per arm (a run on one target has one: its target), one ``<testcase>``
per case: a case that did not pass is a ``<failure>`` (its score, verdict, misses and
reasoning), a case in ``error``/``judge_error`` an ``<error>``; the answer goes to
``<system-out>``. Characters XML cannot hold (control characters) are dropped.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any

from app.cli.records import ERROR_STATUSES, Record, by_arm, first_miss, number

# Characters XML 1.0 allows: tab, newline, carriage return and everything from space up,
# less the surrogates and U+FFFE/U+FFFF.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(value: Any) -> str:
    return _NOT_XML.sub("", str(value))


def _seconds(record: Record) -> float:
    latency = record.get("latency_ms") or {}
    return sum(float(v) for v in latency.values() if isinstance(v, int | float)) / 1000


def _grader_lines(record: Record) -> list[str]:
    lines = []
    for result in record.get("evaluator_results") or []:
        verdict = result.get("verdict") or result.get("status")
        lines.append(f"{result.get('name')} ({result.get('type')}): {verdict}, score "
                     f"{number(result.get('score'))}")  # fmt: skip
        if result.get("reasoning"):
            lines.append(f"  reasoning: {result['reasoning']}")
    return lines


def _outcome(record: Record) -> ET.Element | None:
    status = record.get("status")
    if status == "passed":
        return None
    if status in ERROR_STATUSES:
        element = ET.Element("error", message=_text(record.get("error") or status), type=status)
        element.text = _text("\n".join([str(record.get("error") or ""), *_grader_lines(record)]))
        return element
    verdict = record.get("verdict") or status
    message = f"score {number(record.get('score'))} ({verdict}): {first_miss(record)}"
    element = ET.Element("failure", message=_text(message.rstrip(": ")), type=str(status))
    body = [f"misses: {miss}" for miss in record.get("misses") or []]
    if record.get("reasoning"):
        body.append(f"reasoning: {record['reasoning']}")
    element.text = _text("\n".join([*body, *_grader_lines(record)]))
    return element


def junit_xml(run: dict[str, Any], records: Sequence[Record], suite_name: str) -> bytes:
    """The JUnit XML document of ``records`` of ``run`` (UTF-8, with its declaration)."""
    root = ET.Element("testsuites", name=_text(suite_name))
    totals: dict[str, float] = {"tests": 0, "failures": 0, "errors": 0, "time": 0.0}
    for arm, records_of_arm in by_arm(records).items():
        errors = sum(r.get("status") in ERROR_STATUSES for r in records_of_arm)
        failures = sum(r.get("status") not in ("passed", *ERROR_STATUSES) for r in records_of_arm)
        seconds = sum(map(_seconds, records_of_arm))
        suite = ET.SubElement(
            root, "testsuite", name=_text(f"{suite_name} [{arm}]"), tests=str(len(records_of_arm)),
            failures=str(failures), errors=str(errors), skipped="0", time=f"{seconds:.3f}",
            timestamp=str(run.get("created_at") or ""), id=str(run.get("id")),
        )  # fmt: skip
        properties = ET.SubElement(suite, "properties")
        for name in ("id", "status", "target", "judge_target"):
            ET.SubElement(properties, "property", name=f"run.{name}", value=_text(run.get(name)))
        for record in records_of_arm:
            case = ET.SubElement(
                suite, "testcase", name=_text(record.get("eval_id")),
                classname=_text(f"{record.get('dataset') or suite_name}.{arm}"),
                time=f"{_seconds(record):.3f}",
            )  # fmt: skip
            outcome = _outcome(record)
            if outcome is not None:
                case.append(outcome)
            if record.get("candidate_answer") is not None:
                ET.SubElement(case, "system-out").text = _text(record["candidate_answer"])
        totals["tests"] += len(records_of_arm)
        totals["failures"] += failures
        totals["errors"] += errors
        totals["time"] += seconds
    for name in ("tests", "failures", "errors"):
        root.set(name, str(int(totals[name])))
    root.set("time", f"{totals['time']:.3f}")
    ET.indent(root)
    document: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return document
