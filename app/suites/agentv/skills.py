"""Agent Skills ``evals.json`` (``{skill_name, evals: [...]}``) as an AgentV 2026 suite.

Read as AgentV 4.42.4 reads and runs it (measured with the conformance harness and its
``agentv convert``): each eval is a test with ``id`` its id as text, ``input`` one user
turn holding ``prompt``, ``criteria`` and ``expected_output`` (an assistant turn) from
``expected_output``, and each ``assertions`` string a judge named ``assertion-N`` whose
question is that string; an eval with neither is graded by the default judge alone, as
AgentV does (no criteria, no expected answer). ``files`` (files the skill's agent finds in
its workspace) and ``should_trigger`` are not graded by AgentV either: they stay on the
test, so the reader warns that each is ignored rather than dropping them unsaid. The
result is read by the AgentV 2026 reader, so every check of that dialect applies.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CONVERTED = frozenset({"id", "prompt", "expected_output", "assertions"})


def is_skill_evals(document: Any) -> bool:
    """Whether ``document`` is an Agent Skills ``evals.json`` (``skill_name`` and ``evals``)."""
    return isinstance(document, Mapping) and "skill_name" in document and "evals" in document


def skill_evals_suite(document: Mapping[str, Any]) -> dict[str, Any]:
    """The AgentV 2026 suite an ``evals.json`` stands for (values kept as written).

    A value of the wrong kind is passed through unchanged, so the AgentV reader's error
    names it (``tests[i].input`` for a ``prompt`` that is not text, and so on).
    """
    skill = document.get("skill_name")
    evals = document.get("evals")
    suite: dict[str, Any] = {
        key: value for key, value in document.items() if key not in ("skill_name", "evals")
    }
    if isinstance(skill, str):
        suite.setdefault("description", f"Evals for {skill} skill")
    suite["tests"] = (
        [_test(item) if isinstance(item, dict) else item for item in evals]
        if isinstance(evals, list)
        else evals
    )
    return suite


def _test(item: Mapping[str, Any]) -> dict[str, Any]:
    # Keys not converted stay, so the reader warns about each (``files``, ``should_trigger``).
    test: dict[str, Any] = {key: value for key, value in item.items() if key not in CONVERTED}
    identifier = item.get("id")
    test["id"] = str(identifier) if isinstance(identifier, int | str) else identifier
    prompt = item.get("prompt")
    if prompt is not None:
        test["input"] = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
    expected = item.get("expected_output")
    if expected is not None:
        test["criteria"] = expected
        test["expected_output"] = [{"role": "assistant", "content": expected}]
    elif not item.get("assertions"):
        # Nothing to grade against: AgentV runs its default judge on the answer alone.
        test["expected_output"] = []
    assertions = item.get("assertions", [])
    if isinstance(assertions, list):
        if assertions:
            test["assertions"] = [
                {"name": f"assertion-{number}", "type": "llm-grader", "prompt": text}
                for number, text in enumerate(assertions, 1)
            ]
    else:
        test["assertions"] = assertions  # the reader's error names it
    return test
