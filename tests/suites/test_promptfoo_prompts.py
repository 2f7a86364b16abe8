"""promptfoo's prompt files and template filters, as promptfoo 0.123.1 reads them (measured:
tests/conformance/promptfoo/prompt_split.yaml runs both tools)."""

from __future__ import annotations

import pytest

from app.suites.prompts_vars.prompts import split_prompts
from app.suites.templates import TemplateProblem, render
from tests.suites.helpers import check


def test_a_line_of_three_dashes_splits_a_prompt_file() -> None:
    text = "a {{x}}\n----\nb\n  ---  \nc---d\r\n---\r\n\n---\ne\n"
    assert split_prompts(text) == ["a {{x}}\n----\nb", "c---d", "e"]
    assert split_prompts("one prompt\n") == ["one prompt\n"]


async def test_each_part_of_a_split_prompt_file_is_a_prompt_of_every_test() -> None:
    report = await check(
        {"prompts": ["file://p.txt"], "tests": [{"vars": {"q": "Hi"}, "assert": ["y"]}]},
        files={"p.txt": "First {{ q }}\n---\nSecond {{ q }}\n"},
    )
    assert report.suite is not None, report.errors
    [case] = report.suite.cases
    inputs = {prompt: messages[-1].content for prompt, messages in case.prompt_inputs}
    assert inputs == {"prompt-1.1": "First Hi", "prompt-1.2": "Second Hi"}


def test_load_and_dump_are_json_parse_and_stringify() -> None:
    scope = {"cfg": '{"tone": "formal", "n": [1, 2.0]}', "s": 'a"b'}
    assert render("{{ (cfg | load).tone }}", scope) == "formal"
    assert (
        render("{{ cfg | load | dump }} {{ s | dump }}", scope)
        == '{"tone":"formal","n":[1,2]} "a\\"b"'
    )


@pytest.mark.parametrize("text", ["not json", "NaN"])
def test_load_of_text_that_is_not_json_is_an_error_naming_the_filter(text: str) -> None:
    with pytest.raises(TemplateProblem, match="the 'load' filter"):
        render("{{ v | load }}", {"v": text})


async def test_a_tests_prompts_choose_its_prompts_by_id_or_label() -> None:
    prompts = [{"id": "a", "label": "Alpha", "raw": "A {{ q }}"}, {"id": "b", "raw": "B {{ q }}"}]
    tests = [
        {"id": "one", "vars": {"q": "x"}, "prompts": ["Alpha"], "assert": ["y"]},
        {"id": "two", "vars": {"q": "x"}, "prompts": ["b", "a"], "assert": ["y"]},
        {"id": "all", "vars": {"q": "x"}, "assert": ["y"]},
    ]
    report = await check({"prompts": prompts, "tests": tests})
    assert report.suite is not None, report.errors
    arms = {case.id: [prompt for prompt, _ in case.prompt_inputs] for case in report.suite.cases}
    assert arms == {"one": ["a"], "two": ["a", "b"], "all": ["a", "b"]}
    unknown = await check({"prompts": prompts, "tests": [{**tests[0], "prompts": ["Gamma"]}]})
    assert "'Gamma' names no prompt of the suite (Alpha, a, b)" in str(unknown.errors)


async def test_a_prompt_glob_is_one_prompt_per_file_it_matches() -> None:
    files = {"prompt1.txt": "One {{ q }}", "prompt2.txt": "Two {{ q }}", "other.txt": "No"}
    tests = [{"vars": {"q": "x"}, "assert": ["y"]}]
    report = await check({"prompts": ["file://prompt*.txt"], "tests": tests}, files=files)
    assert report.suite is not None, report.errors
    [case] = report.suite.cases
    inputs = {prompt: messages[-1].content for prompt, messages in case.prompt_inputs}
    assert inputs == {"prompt1.txt": "One x", "prompt2.txt": "Two x"}
    none = await check({"prompts": ["file://nothing*.txt"], "tests": tests}, files=files)
    assert "file 'nothing*.txt': no file matches" in str(none.errors)


CHAT_HISTORY = """[
  {"role": "system", "content": {{ system | dump }}},
  {% for message in previous %}{% for role, content in message %}
    {"role": "{{ role }}", "content": {{ content | dump }}},
  {% endfor %}{% endfor %}
  {"role": "user", "content": "{{ q }} ({{ previous.length }})"}
]"""


async def test_a_json_chat_template_is_rendered_whole_then_parsed() -> None:
    # measured against promptfoo 0.123.1: tests/conformance/promptfoo/chat_template.yaml
    previous = [{"user": "Who?"}, {"assistant": 'Me, "Ada"'}]
    report = await check(
        {
            "prompts": ["file://chat.json"],
            "defaultTest": {"vars": {"system": "Be brief", "previous": previous}},
            "tests": [{"vars": {"q": "Why?"}}, {"vars": {"q": 'say "hi"'}}],
        },
        files={"chat.json": CHAT_HISTORY},
    )
    assert report.suite is not None, report.errors
    good, broken = report.suite.cases
    assert [(m.role, m.content) for m in good.input_messages] == [
        ("system", "Be brief"),
        ("user", "Who?"),
        ("assistant", 'Me, "Ada"'),
        ("user", "Why? (2)"),
    ]
    assert good.error is None
    assert broken.error is not None
    assert "is not valid JSON once rendered" in broken.error


async def test_a_prompt_reading_the_conversation_gets_none_on_its_first_test() -> None:
    # promptfoo fills it as the tests run (tests/api/test_promptfoo_sequential.py)
    report = await check(
        {"prompts": ["file://chat.json"], "tests": [{"vars": {"q": "x"}}]},
        files={
            "chat.json": '[{% for c in _conversation %}{}, {% endfor %}{"role": "user", '
            '"content": "{{ q }} {{ _conversation | length }}"}]'
        },
    )
    assert report.suite is not None, report.errors
    [case] = report.suite.cases
    assert [m.content for m in case.input_messages] == ["x 0"]
    assert case.sequence is not None


async def test_a_bare_file_name_is_that_file_and_an_unknown_one_is_text() -> None:
    # measured against promptfoo 0.123.1 on its nunjucks-custom-filters example: 2 prompts
    files = {"prompts.txt": "One {{ q }}\n---\nTwo {{ q }}"}
    tests = [{"vars": {"q": "x"}, "assert": ["y"]}]
    report = await check({"prompts": ["prompts.txt"], "tests": tests}, files=files)
    assert report.suite is not None, report.errors
    [case] = report.suite.cases
    assert [messages[-1].content for _, messages in case.prompt_inputs] == ["One x", "Two x"]
    text = await check({"prompts": ["notes.txt", "Say hi to {{ q }}"], "tests": tests})
    assert text.suite is not None, text.errors
    [case] = text.suite.cases
    assert [messages[-1].content for _, messages in case.prompt_inputs] == [
        "notes.txt",
        "Say hi to x",
    ]


async def test_custom_filters_are_refused_by_name_and_an_output_path_is_named() -> None:
    tests = [{"vars": {"q": "x"}, "assert": ["y"]}]
    refused = await check({"prompts": ["{{ q }}"], "filters": {"up": "./up.js"}, "tests": tests})
    assert "'filters' is not supported" in str(refused.errors)
    warned = await check({"prompts": ["{{ q }}"], "outputPath": "out.json", "tests": tests})
    assert warned.suite is not None, warned.errors
    assert any(w.startswith("outputPath: not read: results") for w in warned.warnings)
