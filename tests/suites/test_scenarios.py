"""promptfoo's ``scenarios`` (AgentV's July layout too), as promptfoo 0.123.1 expands them.

Measured on this very config with promptfoo's ``echo`` provider: rows first, each row's
vars under the test's, the row's asserts after ``defaultTest``'s and before the test's, the
test's description else the row's.
"""

from __future__ import annotations

from app.suites.loader import SuiteReport
from tests.suites.helpers import check, errors_by_path

CONFIG = """\
prompts:
  - "Translate '{{ phrase }}' to {{ language }}."
providers: [llm]
defaultTest:
  assert:
    - type: contains
      value: Translate
scenarios:
  - description: langs
    config:
      - id: spanish
        description: row description
        vars: {language: Spanish, phrase: overridden}
        assert:
          - type: contains
            value: Spanish
      - vars: {language: French}
    tests:
      - description: greeting
        vars: {phrase: hello}
        assert:
          - type: contains
            value: "{{ language }}"
      - vars: {phrase: thanks}
"""


def rows(report: SuiteReport) -> list[tuple[str, str | None, str, list[str | None]]]:
    assert report.valid, report.errors
    assert report.suite is not None
    return [
        (
            case.id,
            case.note,
            str(case.input_messages[0].content),
            [str(grader.value) for grader in case.evaluators],
        )
        for case in report.suite.cases
    ]


async def test_each_config_row_is_crossed_with_each_test_as_promptfoo_does() -> None:
    assert rows(await check(CONFIG)) == [
        (
            "spanish/test-1",
            "greeting",
            "Translate 'hello' to Spanish.",
            ["Translate", "Spanish", "Spanish"],
        ),
        (
            "spanish/test-2",
            "row description",
            "Translate 'thanks' to Spanish.",
            ["Translate", "Spanish"],
        ),
        (
            "scenario-1.2/test-1",
            "greeting",
            "Translate 'hello' to French.",
            ["Translate", "French"],
        ),
        ("scenario-1.2/test-2", None, "Translate 'thanks' to French.", ["Translate"]),
    ]


async def test_scenarios_may_come_from_files_named_by_a_glob() -> None:
    suite = """\
    prompts: ["Say {{ word }} in {{ language }}."]
    providers: [llm]
    scenarios:
      - file://scenarios/*.yaml
    """
    matrix = """\
    - config:
        - {id: es, vars: {language: Spanish, expected: hola}}
      tests:
        - id: hi
          vars: {word: hello}
          assert: [{type: equals, value: "{{ expected }}"}]
    """
    report = await check(suite, {"scenarios/matrix.yaml": matrix})
    assert rows(report) == [("es/hi", None, "Say hello in Spanish.", ["hola"])]


async def test_a_scenario_without_config_rows_is_an_error_naming_it() -> None:
    report = await check({"prompts": ["x"], "scenarios": [{"tests": [{"vars": {}}]}]})
    assert "must be a list of config rows" in errors_by_path(report)["scenarios[0].config"]
