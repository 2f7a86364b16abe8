"""promptfoo's variables: ``file://`` values, list values expanded into tests, CSV
``__expected`` short forms and test ids across test files (measured against promptfoo
0.123.1: tests/conformance/promptfoo/vars_files.yaml and csv_expected.yaml)."""

from __future__ import annotations

import json
from typing import Any

from app.suites.files.case_files import expected_grader
from tests.suites.helpers import check, errors_by_path


def suite(*tests: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"prompts": ["Say {{ out }}"], "providers": ["t"], "tests": list(tests), **extra}


def questions(report: Any) -> list[str]:
    assert report.suite is not None, report.errors
    return [str(case.input_messages[-1].content) for case in report.suite.cases]


async def test_file_variables_are_read_as_promptfoo_reads_them() -> None:
    files = {
        "a.txt": "from a file\n",
        "d.json": '{"name": "Ada"}\n',
        "d.yaml": "name: Grace\n",
        "docs/1.md": "one\n",
        "docs/2.md": "two\n",
    }
    report = await check(
        suite(
            {"vars": {"out": "file://a.txt"}},
            {"vars": {"out": "file://d.json"}},
            {"vars": {"out": "{{ d.name }}", "d": "file://d.yaml"}},
            {"vars": {"out": "file://docs/*.md"}},
        ),
        files,
    )
    assert questions(report) == [
        "Say from a file",
        'Say {"name": "Ada"}',
        "Say Grace",
        "Say one",
        "Say two",
    ]


async def test_a_program_or_binary_file_as_a_variable_is_refused_by_name() -> None:
    report = await check(
        suite({"vars": {"out": "file://make.py"}}, {"vars": {"out": "file://a.mp3"}})
    )
    errors = errors_by_path(report)
    assert "a program (promptfoo runs it" in errors["tests[0].vars.out"]
    assert "'file://a.mp3' is not supported" in errors["tests[1].vars.out"]


async def test_list_variables_make_one_test_per_combination() -> None:
    report = await check(
        suite(
            {"vars": {"out": ["a", "b"], "n": [1, 2]}},
            {"vars": {"out": "{{ m[0].content }}", "m": [{"role": "user", "content": "kept"}]}},
        )
    )
    assert report.suite is not None, report.errors
    assert [case.id for case in report.suite.cases] == [
        "test-1.1", "test-1.2", "test-1.3", "test-1.4", "test-2",
    ]  # fmt: skip
    assert questions(report) == ["Say a", "Say a", "Say b", "Say b", "Say kept"]


async def test_a_list_expanding_into_too_many_tests_is_refused() -> None:
    report = await check(suite({"vars": {"a": list(range(40)), "b": list(range(40))}}))
    assert "more than 1000" in errors_by_path(report)["tests[0].vars"]


async def test_tests_from_several_files_get_ids_by_their_position_among_all() -> None:
    files = {
        "t1.yaml": json.dumps([{"vars": {"out": "x"}}]),
        "t2.yaml": json.dumps([{"vars": {"out": "y"}}]),
    }
    report = await check(suite(**{"tests": ["file://t1.yaml", "file://t2.yaml"]}), files)
    assert report.suite is not None, report.errors
    assert [case.id for case in report.suite.cases] == ["test-1", "test-2"]


def test_an_expected_column_naming_a_type_alone_is_that_grader() -> None:
    assert expected_grader("is-json") == {"type": "is-json"}
    assert expected_grader("not-is-json") == {"type": "not-is-json"}
    assert expected_grader("Hello") == {"type": "equals", "value": "Hello"}
    assert expected_grader("contains:x") == {"type": "contains", "value": "x"}


async def test_evaluate_options_give_the_concurrency_and_refuse_the_rest() -> None:
    report = await check(suite({"vars": {"out": "x"}}, evaluateOptions={"maxConcurrency": 2}))
    assert report.suite is not None, report.errors
    assert report.suite.max_concurrency == 2
    refused = await check(suite({"vars": {"out": "x"}}, evaluateOptions={"repeat": 3}))
    assert "only maxConcurrency" in errors_by_path(refused)["evaluateOptions.repeat"]


async def test_transform_vars_makes_the_variables_before_the_expansion() -> None:
    report = await check(
        suite(
            {"vars": {"name": ["a", "b"]}},
            {
                "vars": {"name": "c"},
                "options": {"transformVars": "const n = vars.name;\nreturn {out: n + '!'};"},
            },
            defaultTest={"options": {"transformVars": "({...vars, out: 'hi ' + vars.name})"}},
        )
    )
    assert questions(report) == ["Say hi a,b", "Say hi a,b", "Say c!"]
    broken = await check(suite({"vars": {}, "options": {"transformVars": "vars.missing.x"}}))
    assert "TypeError" in errors_by_path(broken)["tests[0].options.transformVars"]
    wrong = await check(suite({"vars": {}, "options": {"transformVars": "42"}}))
    assert "an object" in errors_by_path(wrong)["tests[0].options.transformVars"]


async def test_scenarios_cross_each_config_with_each_test_after_the_tests() -> None:
    # measured against promptfoo 0.123.1: tests/conformance/promptfoo/scenarios.yaml
    scenario = {
        "config": [{"vars": {"w": "a"}}, {"vars": {"w": "b"}}],
        "tests": [{"vars": {"out": "1{{ w }}"}}, {"vars": {"out": "2{{ w }}", "w": "own"}}],
    }
    report = await check(suite({"vars": {"out": "0"}}, scenarios=[scenario]))
    assert questions(report) == ["Say 0", "Say 1a", "Say 2own", "Say 1b", "Say 2own"]
    only = await check({"prompts": ["Say {{ out }}"], "scenarios": [scenario]})
    assert len(questions(only)) == 4


async def test_a_variable_that_is_no_template_is_kept_as_its_text() -> None:
    # measured against promptfoo 0.123.1: tests/conformance/promptfoo/var_not_template.yaml
    report = await check(suite({"vars": {"out": "see {{tq | a b }}"}}))
    assert report.suite is not None, report.errors
    assert questions(report) == ["Say see {{tq | a b }}"]
    assert any("kept as written" in warning for warning in report.warnings)


async def test_a_broken_block_in_a_variable_errs_its_test_and_broken_braces_stay() -> None:
    # measured against promptfoo 0.123.1: tests/conformance/promptfoo/var_not_template.yaml
    report = await check(
        suite(
            {"vars": {"out": "x {{tq | a b }} y"}},
            {"vars": {"out": "{% if %}"}},
            {"vars": {"out": "fine"}},
        )
    )
    assert report.suite is not None, report.errors
    kept, broken, fine = report.suite.cases
    assert kept.error is None
    assert str(kept.input_messages[-1].content) == "Say x {{tq | a b }} y"
    assert broken.error is not None
    assert "variable 'out'" in broken.error
    assert fine.error is None


async def test_a_variable_fills_the_names_it_has_and_keeps_an_undefined_one_as_written() -> None:
    # measured against promptfoo 0.123.1 (by the storeOutputAs branch): "x A {{ missing }}"
    report = await check(suite({"vars": {"a": "A", "out": "x {{a}} {{ missing }}"}}))
    assert report.suite is not None, report.errors
    assert questions(report) == ["Say x A {{ missing }}"]
    assert any("kept as written" in warning for warning in report.warnings)
