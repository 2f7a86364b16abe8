"""promptfoo's variables made by programs (``file://load_var.py``), run in the sandbox while
the suite is read, per test and prompt (measured on promptfoo 0.123.1 by
tests/conformance/promptfoo/var_programs.yaml); refused by name without code graders."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from app.evaluators.code.programs import ProgramRunner
from app.suites.loader import SuiteReport, check_suite
from tests.suites.helpers import errors_by_path, source
from tests.suites.test_reference_matrices import EXAMPLES

PROGRAMS = Path(__file__).resolve().parents[1] / "conformance/promptfoo/var_programs"


async def read(root: Path, *tests: dict[str, Any], enabled: bool = True) -> SuiteReport:
    prompts = ["First: {{sys}} / {{q}}", "Second: {{sys}}"]
    return await load(root, PROGRAMS, {"prompts": prompts, "tests": list(tests)}, enabled)


async def load(root: Path, programs: Path, suite: dict[str, Any], enabled: bool) -> SuiteReport:
    """The suite read from a root holding ``programs``' folder, code graders on or off."""
    folder = root / "evals"
    shutil.copytree(programs, folder / programs.name, dirs_exist_ok=True)
    (folder / "promptfooconfig.yaml").write_text(json.dumps({"providers": ["t"], **suite}))
    return await check_suite(
        "evals/promptfooconfig.yaml",
        file_source=source(roots=[root]),
        code_graders=enabled,
        programs=ProgramRunner(roots=(root,)) if enabled else None,
    )


def py(role: Any, q: str = "hi") -> dict[str, Any]:
    return {"vars": {"role": role, "q": q, "sys": "file://var_programs/load_var.py"}}


async def test_a_program_makes_the_variable_for_each_test_and_prompt(tmp_path: Path) -> None:
    js = {"vars": {"role": "ops", "q": "hey", "sys": "file://var_programs/load_var.js"}}
    report = await read(tmp_path, py("support"), py(["a", "b"]), js)
    assert report.suite is not None, report.errors
    asked = [
        [str(messages[-1].content) for _, messages in case.prompt_inputs]
        for case in report.suite.cases
    ]
    assert asked == [
        ["First: sys as support for First / hi", "Second: sys as support for Second"],
        ["First: sys as a for First / hi", "Second: sys as a for Second"],
        ["First: sys as b for First / hi", "Second: sys as b for Second"],
        ["First: js sys ops / hey", "Second: js sys ops"],
    ]


async def test_a_test_whose_program_gives_no_output_runs_as_an_error(tmp_path: Path) -> None:
    report = await read(tmp_path, py("bad"), py("plain"), py("fine"))
    assert report.suite is not None, report.errors
    errors = [case.error or "" for case in report.suite.cases]
    assert "returned an error: no such role for sys" in errors[0]
    assert "did not return any output" in errors[1]
    assert errors[2] == ""


async def test_without_code_graders_a_program_variable_is_refused_by_name(tmp_path: Path) -> None:
    errors = errors_by_path(await read(tmp_path, py("support"), enabled=False))
    assert "runs only with code graders enabled" in errors["tests[0].vars.sys"]


async def test_promptfoos_config_dynamic_var_example_loads() -> None:
    if not EXAMPLES.is_dir():
        return
    report = await check_suite(
        "config-dynamic-var/promptfooconfig.yaml",
        file_source=source(roots=[EXAMPLES]),
        code_graders=True,
        programs=ProgramRunner(roots=(EXAMPLES,)),
    )
    assert report.suite is not None, report.errors
    # its program file is a stand-in without get_var: each test runs as an error saying so
    assert all("get_var" in (case.error or "") for case in report.suite.cases)


PROMPTS = Path(__file__).resolve().parents[1] / "conformance/promptfoo/prompt_programs"


async def read_prompts(root: Path, prompts: list[str], *, enabled: bool = True) -> SuiteReport:
    suite = {"prompts": prompts, "tests": [{"vars": {"topic": "cats"}}]}
    return await load(root, PROMPTS, suite, enabled)


async def test_programs_make_prompts_as_promptfoo_calls_them(tmp_path: Path) -> None:
    files = ["script.py", "prompts.py:text", "prompts.py:chat", "prompts.py:wrapped"]
    files += ["prompts.js", "named.js:shout"]
    report = await read_prompts(tmp_path, [f"file://prompt_programs/{f}" for f in files])
    assert report.suite is not None, report.errors
    [case] = report.suite.cases
    made = [[(m.role, m.content) for m in messages] for _, messages in case.prompt_inputs]
    assert made == [
        [("user", "REPLY:script cats:END")],
        [("user", "REPLY:py cats:END")],
        [("system", "Answer briefly."), ("user", "REPLY:chat cats:END")],
        [("user", "REPLY:wrapped cats:END")],
        [("user", "REPLY:js cats:END")],
        [("user", "REPLY:CATS:END")],
    ]
    assert case.error is None


async def test_a_prompt_program_that_fails_makes_the_test_an_error_with_it(
    tmp_path: Path,
) -> None:
    broken = "file://prompt_programs/prompts.py:broken"
    report = await read_prompts(tmp_path, [broken])
    assert report.suite is not None, report.errors
    assert "no prompt today" in (report.suite.cases[0].error or "")
    report = await read_prompts(tmp_path, ["file://prompt_programs/prompts.js", broken])
    assert report.suite is not None, report.errors
    [case] = report.suite.cases
    fine, failed = (case.for_prompt(prompt) for prompt in report.suite.prompts)
    assert fine is not None
    assert fine.error is None
    assert failed is not None
    assert "no prompt today" in (failed.error or "")


async def test_without_code_graders_a_prompt_program_is_refused_by_name(tmp_path: Path) -> None:
    report = await read_prompts(tmp_path, ["file://prompt_programs/prompts.js"], enabled=False)
    assert "a prompt made by a program" in errors_by_path(report)["prompts[0]"]
