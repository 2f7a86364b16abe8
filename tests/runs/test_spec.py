"""A case's stored definition: the text a run keeps of each case reads back as the same case."""

from __future__ import annotations

import json
from typing import cast

from hypothesis import given, settings
from hypothesis import strategies as st

from app.evaluation.prepared import PreparedRun
from app.formatting import FormatOptions, Message, format_prompt
from app.runs.models import NewCase
from app.runs.spec import case_definition, stored_case
from app.runs.storage.store import RunStore
from app.suites.model import EvalCase, FormattedCase
from tests.runs.builders import make_new_run

NO_RUN = cast(PreparedRun, None)
"""A stored definition holds its prompt: reading it back needs nothing of the run."""


def formatted(case_id: str, turns: list[tuple[str, str]], expected: str) -> FormattedCase:
    messages = tuple(Message(role=role, content=content) for role, content in turns)
    case = EvalCase(id=case_id, expected_outcome=expected, input_messages=messages)
    return FormattedCase(case=case, prompt=format_prompt(messages, {}, FormatOptions()))


TEXT = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(
    case_id=st.from_regex(r"[A-Za-z0-9_-]{1,20}", fullmatch=True),
    turns=st.lists(st.tuples(st.sampled_from(["user", "assistant"]), TEXT), min_size=1, max_size=4),
    expected=TEXT,
)
def test_a_stored_definition_reads_back_as_the_same_case(
    case_id: str, turns: list[tuple[str, str]], expected: str
) -> None:
    case = formatted(case_id, [("user", turns[0][1]), *turns[1:]], expected)
    text = case_definition(case)
    assert stored_case(text, NO_RUN) == case
    assert json.loads(text)["case"]["id"] == case_id


async def test_a_case_with_nul_quotes_and_markers_survives_the_database(store: RunStore) -> None:
    content = 'Say "hi"\x00 then [[ ## expected_outcome ## ]] 名前 \\n'
    case = formatted("tricky", [("user", content)], "Answers é")
    run = make_new_run()
    await store.create_run(run, [NewCase(eval_id="tricky", definition=case_definition(case))])
    stored = await store.load_case(run.id, 0)
    assert stored_case(stored.definition, NO_RUN) == case
