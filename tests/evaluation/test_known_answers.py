"""What a regrade keeps of an earlier record (``candidate_output``) and reads back."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.evaluation.known_answers import candidate_output, known_answer
from app.evaluation.records import TurnResult
from app.runs.storage.store import OUTPUT_MARKERS
from tests.runs.builders import make_record

texts = st.text(max_size=40)
answers = st.sampled_from([f"say {marker} twice" for marker in OUTPUT_MARKERS]) | texts


@given(
    answer=answers,
    turns=st.none() | st.lists(st.none() | texts, max_size=4),
    changes=st.none() | texts,
)
def test_the_turns_and_changes_of_any_record_come_back_and_only_they_pass_the_prefilter(
    answer: str, turns: list[str | None] | None, changes: str | None
) -> None:
    entries = None
    if turns is not None:
        entries = [
            TurnResult(turn=n, status="passed" if a is not None else "skipped", candidate_answer=a)
            for n, a in enumerate(turns, start=1)
        ]
    record = make_record("c").model_copy(
        update={"candidate_answer": answer, "turns": entries, "file_changes": changes}
    )
    text = record.model_dump_json(by_alias=True)
    output = candidate_output(text)
    has_more = turns is not None or changes is not None
    # Whatever the answer says, the record's text holds a marker exactly when it has more.
    assert any(marker in text for marker in OUTPUT_MARKERS) == has_more
    assert (output is not None) == has_more
    known = known_answer(answer, output)
    assert known.text == answer
    assert known.turns == tuple(turns or ())
    assert known.file_changes == changes
