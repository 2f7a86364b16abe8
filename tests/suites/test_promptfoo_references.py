"""``$ref`` in promptfoo files (``assertionTemplates``), as promptfoo 0.123.1 dereferences them
(measured: tests/conformance/promptfoo/assertion_templates.yaml)."""

from __future__ import annotations

from typing import Any

from tests.suites.helpers import check, errors_by_path


def suite(*asserts: Any, **extra: Any) -> dict[str, Any]:
    return {
        "prompts": ["{{ q }}"],
        "providers": ["t"],
        "assertionTemplates": {"pirate": {"type": "icontains", "value": "arrr"}},
        "tests": [{"vars": {"q": "x"}, "assert": list(asserts)}],
        **extra,
    }


async def test_a_reference_is_the_template_and_keys_beside_it_win() -> None:
    report = await check(
        suite(
            {"$ref": "#/assertionTemplates/pirate"},
            {"$ref": "#/assertionTemplates/pirate", "value": "yo ho"},
        )
    )
    assert report.suite is not None, report.errors
    graders = report.suite.cases[0].evaluators
    assert [(grader.type, grader.value) for grader in graders] == [
        ("icontains", "arrr"),
        ("icontains", "yo ho"),
    ]


async def test_a_reference_outside_the_file_or_to_nothing_is_an_error_at_it() -> None:
    errors = errors_by_path(
        await check(suite({"$ref": "other.yaml#/x"}, {"$ref": "#/assertionTemplates/nope"}))
    )
    assert "only a reference inside the file" in errors["tests[0].assert[0].$ref"]
    assert "points at nothing" in errors["tests[0].assert[1].$ref"]


async def test_a_cycle_of_references_is_an_error_not_a_hang() -> None:
    document = suite({"$ref": "#/assertionTemplates/a"})
    document["assertionTemplates"] = {
        "a": {"$ref": "#/assertionTemplates/b"},
        "b": {"$ref": "#/assertionTemplates/a"},
    }
    report = await check(document)
    assert report.suite is None
    assert any("refers back to itself" in error.message for error in report.errors)


async def test_references_that_multiply_a_template_are_bounded() -> None:
    templates: dict[str, Any] = {"t0": {"type": "contains", "value": "x"}}
    for level in range(1, 12):
        templates[f"t{level}"] = [{"$ref": f"#/assertionTemplates/t{level - 1}"}] * 10
    document = suite({"$ref": "#/assertionTemplates/t11"})
    document["assertionTemplates"] = templates
    report = await check(document)
    assert report.suite is None
    assert any("expand the file past" in error.message for error in report.errors)
