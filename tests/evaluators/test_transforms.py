"""promptfoo's output transforms (``options.transform``, an assert's ``transform``): inline in
the embedded JavaScript engine, ``file://`` programs in the sandbox.

The verdicts were measured against promptfoo 0.123.1 (tests/conformance/promptfoo/transform.yaml
and transform_default.yaml run both tools); these pin the contract without promptfoo.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.evaluators.base import EvaluationContext
from app.evaluators.code.programs import ProgramRunner
from app.evaluators.registry import EVALUATORS
from app.evaluators.results import EvaluatorResult
from app.suites.loader import SuiteReport, check_suite
from tests.evaluators.fakes import ScriptedTarget
from tests.suites.helpers import check, errors_by_path, source

TRANSFORMS_JS = """\
module.exports = (output, context) => `${output.toUpperCase()}|${context.vars.word}`;
module.exports.broken = () => { throw new Error('broken on purpose'); };
"""
TRANSFORMS_PY = """\
def get_transform(output, context):
    return {"words": output.split(), "word": context["vars"]["word"]}
"""


def one(kind: str, value: str, transform: str) -> dict[str, Any]:
    return {"assert": [{"type": kind, "value": value, "transform": transform}]}


async def read(root: Path, test: dict[str, Any], *, enabled: bool = True) -> SuiteReport:
    suite = {
        "prompts": ["Say {{word}}"],
        "providers": ["t"],
        "tests": [{"vars": {"word": "hello"}, **test}],
    }
    (root / "evals").mkdir(exist_ok=True)
    (root / "evals" / "transforms.js").write_text(TRANSFORMS_JS)
    (root / "evals" / "transforms.py").write_text(TRANSFORMS_PY)
    (root / "evals" / "promptfooconfig.yaml").write_text(json.dumps(suite))
    return await check_suite(
        "evals/promptfooconfig.yaml", file_source=source(roots=[root]), code_graders=enabled
    )


async def grade(root: Path, test: dict[str, Any], answer: str) -> list[EvaluatorResult]:
    report = await read(root, test)
    assert report.suite is not None, report.errors
    case = report.suite.cases[0]
    context = EvaluationContext(
        case=case,
        question="Say hello",
        candidate_answer=answer,
        judge=ScriptedTarget(),
        judge_attempts=1,
        programs=ProgramRunner(roots=(root,)),
    )
    return [(await EVALUATORS.run(grader, context)).result for grader in case.evaluators]


@pytest.mark.parametrize(
    ("test", "answer", "passed"),
    [
        (one("equals", "hi", "output.trim()"), " hi ", [True]),
        ({"assert": [{"type": "equals", "value": "hi"}]}, " hi ", [False]),
        (
            {
                "options": {"transform": "JSON.parse(output)"},
                "assert": [
                    {"type": "javascript", "value": "output.n === 2"},
                    {"type": "equals", "value": "2", "transform": "output.n"},
                    {"type": "contains", "value": '"n":2'},
                    {"type": "contains-any", "value": ["b", "z"], "transform": "output.list"},
                ],
            },
            '{"n": 2, "list": ["a", "b"]}',
            [True, True, True, True],
        ),
        (
            one("equals", "hi-hello", "output + '-' + context.vars.word"),
            "hi",
            [True],
        ),
        (
            one("equals", "2", "const n = output.length;\nreturn n;"),
            "ab",
            [True],
        ),
        (
            one("equals", "HI|hello", "file://transforms.js"),
            "hi",
            [True],
        ),
        (
            one("javascript", "output.words.length === 2 && output.word === 'hello'",
                "file://transforms.py"),
            "a b",
            [True],
        ),
    ],
)  # fmt: skip
async def test_graders_read_the_answer_as_transforms_make_it(
    tmp_path: Path, test: dict[str, Any], answer: str, passed: list[bool]
) -> None:
    results = await grade(tmp_path, test, answer)
    assert [result.passed for result in results] == passed, [r.reasoning for r in results]


@pytest.mark.parametrize(
    ("transform", "reason"),
    [
        ("JSON.parse(output).x", "SyntaxError"),
        ("file://transforms.js:broken", "broken on purpose"),
    ],
)
async def test_a_transform_that_throws_makes_the_grader_an_error_naming_it(
    tmp_path: Path, transform: str, reason: str
) -> None:
    test = {"assert": [{"type": "equals", "value": "x", "transform": transform}]}
    [result] = await grade(tmp_path, test, "not json")
    assert (result.status, result.passed) == ("error", None)
    assert "the transform" in (result.reasoning or "")
    assert reason in (result.reasoning or "")


async def test_the_tests_own_transform_replaces_the_default_one() -> None:
    document = {
        "prompts": ["{{ q }}"],
        "defaultTest": {"options": {"transform": "output.trim()"}},
        "tests": [
            {"vars": {"q": "x"}, "assert": [{"type": "equals", "value": "x"}]},
            {
                "vars": {"q": "y"},
                "options": {"transform": "output.toUpperCase()"},
                "assert": [{"type": "equals", "value": "Y", "transform": "output + '!'"}],
            },
        ],
    }
    report = await check(document)
    assert report.suite is not None, report.errors
    transforms = [[g.transforms for g in case.evaluators] for case in report.suite.cases]
    assert transforms == [[("output.trim()",)], [("output.toUpperCase()", "output + '!'")]]


async def test_transform_files_need_code_graders_and_other_files_are_refused(
    tmp_path: Path,
) -> None:
    test: dict[str, Any] = {
        "assert": [{"type": "equals", "value": "x", "transform": "file://transforms.js"}]
    }
    report = await read(tmp_path, test, enabled=False)
    assert "code graders are not enabled" in errors_by_path(report)["tests[0]"]
    test = {
        "options": {"transform": "file://t.rb"},
        "assert": [{"type": "equals", "value": "x"}],
    }
    report = await read(tmp_path, test)
    assert "a transform file is JavaScript" in errors_by_path(report)["tests[0].options.transform"]
