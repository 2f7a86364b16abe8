"""What promptfoo's tests that read earlier tests are read as, and what is refused by name
(run over HTTP in tests/api/test_promptfoo_sequential.py)."""

from __future__ import annotations

from typing import Any

from app.formatting.messages import Message
from app.suites.prompts_vars.sequential import conversation_turn, render_step, step_prompt
from app.suites.sequencing import StepPrompt
from tests.suites.helpers import check, errors_by_path


def storing(**options: Any) -> dict[str, Any]:
    return {
        "prompts": ["Say {{ q }}"],
        "tests": [
            {"vars": {"q": "one"}, "options": {"storeOutputAs": "first", **options}},
            {"vars": {"q": "two {{ first }}"}},
        ],
    }


async def test_every_case_of_a_suite_that_stores_an_output_carries_its_step() -> None:
    report = await check(storing())
    assert report.suite is not None, report.errors
    first, second = report.suite.cases
    assert first.sequence is not None
    assert first.sequence.store_as == "first"
    assert second.sequence is not None
    assert second.sequence.store_as is None
    prompt = step_prompt(second.sequence, None)
    made = render_step(second.sequence, prompt, {"first": "1"}, [])
    assert not isinstance(made, str)
    assert [m.content for m in made] == ["Say two 1"]


async def test_a_suite_without_either_runs_as_before() -> None:
    report = await check({"prompts": ["Say {{ q }}"], "tests": [{"vars": {"q": "x"}}]})
    assert report.suite is not None
    assert report.suite.cases[0].sequence is None


async def test_a_stored_output_must_be_named_by_a_string() -> None:
    errors = errors_by_path(await check(storing() | {"tests": [{"options": {"storeOutputAs": 3}}]}))
    assert "must be a variable name" in errors["tests[0].options.storeOutputAs"]


async def test_a_stored_output_transformed_by_a_file_is_refused_by_name() -> None:
    report = await check(storing(transform="file://t.js"), files={"t.js": "module.exports=x=>x"})
    errors = errors_by_path(report)
    assert "transformed by inline code only" in errors["tests[0].options.transform"]


async def test_a_suite_whose_tests_run_in_order_without_prompts_is_refused_by_name() -> None:
    document = storing() | {"prompts": None}
    document["tests"] = [{**test, "input": "hi"} for test in document["tests"]]
    errors = errors_by_path(await check(document))
    assert "storeOutputAs and _conversation fill prompts" in errors["tests[0]"]


def test_a_turn_of_a_chat_prompt_is_its_messages_and_its_last_content() -> None:
    # measured: tests/conformance/promptfoo/conversation.yaml
    messages = (Message(role="system", content="s"), Message(role="user", content="q"))
    chat = StepPrompt(id="c", text="[...]", chat_template=True)
    assert conversation_turn(chat, messages, "a") == {
        "prompt": [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}],
        "input": "q",
        "output": "a",
    }
    text = StepPrompt(id="t", text="{{ q }}")
    assert conversation_turn(text, messages[1:], "a") == {
        "prompt": "q",
        "input": "q",
        "output": "a",
    }


async def test_a_variable_made_by_a_program_in_such_a_suite_is_refused_by_name() -> None:
    document = storing()
    document["tests"][1]["vars"] = {"q": "file://make.py"}
    report = await check(document, files={"make.py": "def get_var(*a):\n    return {}\n"})
    errors = errors_by_path(report)
    assert "made by a program in a suite whose tests run in order" in errors["tests[1].vars.q"]
