"""A test's own ``providers`` names the suite's providers it runs on, matched as promptfoo
0.123.1 matches them (measured: tests/conformance/promptfoo/test_providers.yaml)."""

from __future__ import annotations

from typing import Any

import pytest

from app.suites.prompts_vars.test_providers import ProviderName
from tests.suites.helpers import check, errors_by_path

FAST = ProviderName("fast", "openai:chat:gpt-4o", "fast")
PLAIN = ProviderName("openai:gpt-4o-mini", "openai:gpt-4o-mini", None)


@pytest.mark.parametrize(
    ("name", "fast", "plain"),
    [
        ("fast", True, False),
        ("openai:chat:gpt-4o", True, False),
        ("openai:gpt-4o-mini", False, True),
        ("openai:*", True, True),
        ("fa*", True, False),
        ("openai", True, True),
        ("openai:chat", True, False),
        ("gpt-4o", False, False),
        ("openai:gpt", False, False),
    ],
)
def test_a_name_matches_a_label_an_id_a_wildcard_or_a_legacy_prefix(
    name: str, fast: bool, plain: bool
) -> None:
    assert (FAST.matches(name), PLAIN.matches(name)) == (fast, plain)


def suite(*tests: dict[str, Any]) -> dict[str, Any]:
    return {
        "prompts": ["{{ q }}"],
        "providers": [{"id": "openai:chat:gpt-4o", "label": "fast"}, "openai:gpt-4o-mini"],
        "tests": list(tests),
    }


async def test_the_case_names_the_targets_of_the_providers_it_matches() -> None:
    report = await check(
        suite({"vars": {"q": "a"}, "providers": ["openai:*"]}, {"vars": {"q": "b"}})
    )
    assert report.suite is not None, report.errors
    assert [case.only_targets for case in report.suite.cases] == [
        ("fast", "openai:gpt-4o-mini"),
        (),
    ]


async def test_a_name_that_matches_no_provider_is_an_error_as_in_promptfoo() -> None:
    errors = errors_by_path(
        await check(suite({"vars": {"q": "a"}, "providers": ["fast", "gpt-4o"]}, {"providers": 3}))
    )
    assert "'gpt-4o' names no provider of the suite" in errors["tests[0].providers[1]"]
    assert "must list provider labels or ids" in errors["tests[1].providers"]
