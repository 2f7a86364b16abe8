"""Suite templates: Jinja2's sandbox over plain data, undefined names are errors."""

from __future__ import annotations

import gc
import string
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.suites.templates import (
    MAX_RENDERED_CHARS,
    TEMPLATE_SECONDS,
    TemplateProblem,
    namespace,
    render,
)
from tests.suites.helpers import check, errors_by_path

NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True).filter(
    lambda name: (
        name not in ("vars", "not", "and", "or", "in", "is", "if", "else", "true", "false", "none")
    )
)
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=200)


@given(NAMES, TEXT, st.booleans())
def test_a_variable_renders_as_written_with_or_without_spaces_and_vars(
    name: str, value: str, spaced: bool
) -> None:
    """Autoescape is off: ``<``, ``&`` and quotes come out unchanged."""
    placeholder = f"{{{{ {name} }}}}" if spaced else f"{{{{{name}}}}}"
    scope = namespace({name: value})
    assert render(f"[{placeholder}]", scope) == f"[{value}]"
    assert render(f"{{{{ vars.{name} }}}}", scope) == value


@given(st.text(alphabet=string.printable.replace("{", "")))
def test_text_without_template_syntax_is_unchanged(text: str) -> None:
    assert render(text, namespace({})) == text


@given(NAMES, st.dictionaries(NAMES, st.integers() | st.text(max_size=20), max_size=4))
def test_an_undefined_variable_is_an_error_naming_it(
    name: str, variables: dict[str, object]
) -> None:
    scope = namespace({key: value for key, value in variables.items() if key != name})
    with pytest.raises(TemplateProblem, match=f"undefined variable '{name}'"):
        render(f"Hello {{{{ {name} }}}}", scope)


@given(
    st.recursive(
        st.integers() | st.text(max_size=10),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAMES, inner, max_size=3),
        max_leaves=10,
    )
)
def test_dotted_paths_read_nested_data(value: object) -> None:
    scope = namespace({"outer": {"inner": value}})
    rendered = render("{{ outer.inner }}", scope)
    assert rendered == render("{{ vars.outer['inner'] }}", scope)


@pytest.mark.parametrize(
    "template",
    [
        "{{ name.__class__ }}",
        "{{ name.upper() }}",
        "{{ vars.items() }}",
        "{{ cycler }}",
        "{{ range(3) }}",
        "{{ lipsum() }}",
    ],
)
def test_no_python_object_is_reachable(template: str) -> None:
    with pytest.raises(TemplateProblem):
        render(template, namespace({"name": "x"}))


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("{% include 'x' %}", "'include' blocks are not allowed"),
        ("{% import 'x' as y %}", "'import' blocks are not allowed"),
        ("{% macro m() %}{% endmacro %}", "'macro' blocks are not allowed"),
        (
            "{% for a in xs %}{% for b in xs %}{% for c in xs %}{% for d in xs %}"
            "{% endfor %}{% endfor %}{% endfor %}{% endfor %}",
            "nested more than 3 deep",
        ),
        ("{% for a in xs recursive %}{{ loop(a) }}{% endfor %}", "recursive loops"),
        ("{{ 'a' * 100000000 }}", "over the size limit"),
        ("{{ 9 ** 9999 }}", "exponent"),
        ("{{ '%999999999s' % 'x' }}", "string formatting"),
        ("{{ xs | join('y' * 900000) }}", "over the size limit"),
        ("{{ x | center(10) }}", "No filter named 'center'"),
    ],
)
def test_refused_constructs_name_what_is_refused(template: str, message: str) -> None:
    with pytest.raises(TemplateProblem, match=message):
        render(template, namespace({"xs": ["a", "b"], "x": "x"}))


def test_a_rendered_text_over_the_cap_is_refused() -> None:
    big = "x" * (MAX_RENDERED_CHARS // 2 + 1)
    with pytest.raises(TemplateProblem, match="renders more than"):
        render("{{ big }}{{ big }}", namespace({"big": big}))


def test_environment_is_never_readable() -> None:
    with pytest.raises(TemplateProblem, match="environment variables are not available"):
        render("{{ env.HOME }}", namespace({}))


def test_objects_render_as_json() -> None:
    assert render("{{ v }}", namespace({"v": {"a": [1, "é"]}})) == '{"a": [1, "é"]}'


async def test_undefined_variable_in_a_case_is_located_at_its_field() -> None:
    report = await check(
        {"tests": [{"id": "a", "vars": {"x": 1}, "criteria": "About {{ y }}", "input": "{{ x }}"}]}
    )
    assert errors_by_path(report) == {
        "tests[0].criteria": "undefined variable 'y' (give it in vars)"
    }


async def test_cases_without_vars_keep_braces_as_written_in_agentv_2026() -> None:
    report = await check({"tests": [{"id": "a", "criteria": "x", "input": "Print {{ name }}"}]})
    assert report.valid, report.errors
    assert report.suite is not None
    assert report.suite.cases[0].input_messages[0].content == "Print {{ name }}"


async def test_2025_judge_prompts_are_used_as_written() -> None:
    judge = {"type": "llm_judge", "prompt": "{{ candidate_answer }} vs {{ output }}"}
    report = await check(
        {"evalcases": [{"id": "a", "outcome": "x", "input": "Hi", "evaluators": [judge]}]}
    )
    assert report.suite is not None
    assert report.suite.cases[0].evaluators[0].prompt == "{{ candidate_answer }} vs {{ output }}"


async def test_vars_make_a_cases_fields_templates_in_any_agentv_file() -> None:
    report = await check(
        {"evalcases": [{"id": "a", "outcome": "x", "input": "{{ y }}", "vars": {"y": "z"}}]}
    )
    assert report.suite is not None
    assert report.suite.cases[0].input_messages[0].content == "z"


async def test_judge_prompts_keep_the_judges_names_in_either_generations_words() -> None:
    report = await check(
        {
            "tests": [
                {
                    "id": "a",
                    "vars": {"tone": "warm"},
                    "criteria": "x",
                    "input": "Hi",
                    "assertions": [
                        {
                            "type": "llm-grader",
                            "prompt": "Is {{ output }} {{ tone }}? Task: {{ input }}; "
                            "goal {{ criteria }}; ref {{ expected_output }}.",
                        }
                    ],
                }
            ]
        }
    )
    assert report.valid, report.errors
    assert report.suite is not None
    assert report.suite.cases[0].evaluators[0].prompt == (
        "Is {{ candidate_answer }} warm? Task: {{ question }}; goal {{ expected_outcome }}; "
        "ref {{ reference_answer }}."
    )


async def test_a_judge_prompt_naming_what_only_agentv_provides_is_refused() -> None:
    report = await check(
        {
            "tests": [
                {
                    "id": "a",
                    "criteria": "x",
                    "input": "Hi",
                    "assertions": [{"type": "llm-grader", "prompt": "{{ output }} {{ trace }}"}],
                }
            ]
        }
    )
    message = errors_by_path(report)["tests[0].assertions[0].prompt"]
    assert "'{{ trace }}' is filled by AgentV at run time" in message


DOUBLINGS = "".join("{% set s = s ~ s %}" for _ in range(30))
LIST_DOUBLINGS = "".join("{% set l = l + l %}" for _ in range(30))
NESTED_DOUBLINGS = "".join("{% set a = [a, a] %}" for _ in range(40))


@pytest.mark.parametrize(
    ("template", "message"),
    [
        # The probes: each held the process for seconds or took hundreds of MB.
        ("{{ (((9**64)**64)**64)**64 }}", "over the limit of 10000 bits"),
        ("{% set n = (3 ** 64) ** 64 %}{{ n * n * n }}", "\\* would compute a number"),
        ("{% set s = 'abcdefgh' %}" + DOUBLINGS + "{{ s|length }}", "joining with ~"),
        ("{% set l = [1, 2] %}" + LIST_DOUBLINGS + "{{ l|length }}", "\\+ would build"),
        ("{% set a = 'abcdefgh' %}" + NESTED_DOUBLINGS + "{{ a }}", "writing out a value"),
        ("{% set a = 'abcdefgh' %}" + NESTED_DOUBLINGS + "{{ a|tojson }}", "'tojson' filter"),
        ("{% set a = 'abcdefgh' %}" + NESTED_DOUBLINGS + "{{ a|join }}", "join"),
        ("{% set a = 'abcdefgh' %}" + NESTED_DOUBLINGS + "{{ a ~ '' }}", "joining with ~"),
        ("{{ ([1] * 1000000)|sort|first }}", "at most 100000 items"),
        (
            "{% set l = [1] * 20000 %}{% for x in l %}{% set y = l|sort %}{% endfor %}",
            "took more than 1s",
        ),
    ],
)
def test_template_cost_is_bounded(template: str, message: str) -> None:
    # The bound is the render's, not the test process's: at the end of a whole-suite run its
    # heap is large, and a full collection over it during the render took seconds; frozen,
    # the collector passes over what earlier tests left and sees only what the render makes.
    gc.collect()
    gc.freeze()
    started = time.monotonic()
    try:
        with pytest.raises(TemplateProblem, match=message):
            render(template, namespace({}))
    finally:
        gc.unfreeze()
    # The stall bound: a refused template gives up within its time limit (plus one step).
    assert time.monotonic() - started < TEMPLATE_SECONDS + 2


def test_ordinary_arithmetic_and_joins_still_render() -> None:
    template = (
        "{{ 2 ** 64 }} {{ 3 * 4 }} {{ 'a' ~ n }} {{ xs + ['c'] }} {{ 7 // 2 - 1 }} {{ 1 / 4 }}"
    )
    assert render(template, namespace({"n": 1, "xs": ["a", "b"]})) == (
        '18446744073709551616 12 a1 ["a", "b", "c"] 2 0.25'
    )
