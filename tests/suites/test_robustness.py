"""Any document, in any dialect's words, gives a report: never an exception (never a 500)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.suites.helpers import check

SUITE_KEYS = [
    "evalcases", "tests", "prompts", "providers", "defaultTest", "default_test", "vars",
    "assertions", "assert", "input", "input_files", "execution", "target", "name", "imports",
    "thresholds", "guideline_patterns", "dataset", "metadata", "description", "workspace",
]  # fmt: skip
CASE_KEYS = [
    "id", "criteria", "outcome", "expected_outcome", "input", "input_messages", "vars",
    "assert", "assertions", "evaluators", "expected_output", "expected_messages", "rubrics",
    "threshold", "metadata", "description", "conversation_id", "execution", "input_files",
]  # fmt: skip
GRADER_TYPES = [
    "contains", "not-contains", "llm-rubric", "rubrics", "regex", "is-json", "composite",
    "code-grader", "equals", "assert-set", "nonsense", "llm_judge",
]  # fmt: skip
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from(["", "x", "{{ q }}", "${{ X }}", "file://a.jsonl", "[", "a.md"]),
)
GRADERS = st.one_of(
    st.text(max_size=5),
    st.fixed_dictionaries(
        {"type": st.sampled_from(GRADER_TYPES)},
        optional={"value": SCALARS | st.lists(SCALARS, max_size=2), "name": SCALARS},
    ),
)


def mapping(keys: list[str], values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.sampled_from(keys), values, max_size=5)


VALUES = st.recursive(
    SCALARS | st.lists(GRADERS, max_size=3),
    lambda inner: st.lists(inner, max_size=3) | mapping(CASE_KEYS, inner),
    max_leaves=12,
)
CASES = st.lists(mapping(CASE_KEYS, VALUES) | SCALARS, max_size=3)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mapping(SUITE_KEYS, VALUES | CASES))
async def test_any_document_gives_a_report(document: dict[str, Any]) -> None:
    report = await check(document)
    assert report.valid == (report.suite is not None and not report.errors)
    if report.suite is not None:
        assert report.dialect != "unknown"
