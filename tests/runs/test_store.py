"""RunStore against a real database (SQLite file; PostgreSQL too when reachable)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from sqlalchemy import text

from app.errors import IdempotencyConflict, InvalidRequest, RunNotFound, RunStateConflict
from app.evaluation.records import RoleAttempts, TargetUsage
from app.evaluators.results import EvaluatorResult
from app.providers.base import ProviderResponse, Usage
from app.runs.openai_evals.openai_store import OpenAIEvalStore
from app.runs.storage.cache import StoredResponseCache
from app.runs.storage.store import RunStore
from tests.runs.builders import make_cases, make_new_run, make_record


async def test_reopening_a_migrated_sqlite_file_keeps_its_runs(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'nested' / 'eval.db'}"
    first = await RunStore.open(url)
    run, _ = await first.create_run(make_new_run(), make_cases(2))
    await first.aclose()
    second = await RunStore.open(url)
    try:
        assert (await second.get_run(run.id)).total == 2
    finally:
        await second.aclose()


async def test_create_run_stores_a_queued_run_with_its_cases(store: RunStore) -> None:
    run, created = await store.create_run(make_new_run(), make_cases(3))
    assert created
    assert (run.status, run.total, run.done) == ("queued", 3, 0)
    assert await store.pending_case_seqs(run.id, after=-1, limit=10) == [0, 1, 2]
    case = await store.load_case(run.id, 1)
    assert case.eval_id == "case-1"
    assert json.loads(case.definition)["case"]["id"] == "case-1"
    assert await store.load_spec(run.id) == {
        "suite": {"dataset": "demo"},
        "files": {},
        "plan": {},
    }


async def test_same_idempotency_key_and_body_returns_the_same_run(store: RunStore) -> None:
    first, created = await store.create_run(make_new_run(), make_cases(1), idempotency=("k", "h"))
    again, created_again = await store.create_run(
        make_new_run(), make_cases(1), idempotency=("k", "h")
    )
    assert created
    assert not created_again
    assert again.id == first.id
    assert len((await store.list_runs(status=None, limit=10, cursor=None)).items) == 1


async def test_same_idempotency_key_with_another_body_is_a_conflict(store: RunStore) -> None:
    await store.create_run(make_new_run(), make_cases(1), idempotency=("k", "h1"))
    with pytest.raises(IdempotencyConflict):
        await store.create_run(make_new_run(), make_cases(1), idempotency=("k", "h2"))


async def test_a_case_result_cannot_be_stored_twice(store: RunStore) -> None:
    run, _ = await store.create_run(make_new_run(), make_cases(2))
    assert await store.record_result(run.id, 0, make_record("case-0"))
    assert not await store.record_result(run.id, 0, make_record("case-0", score=0.0))
    stored = await store.get_run(run.id)
    assert stored.done == 1
    records = [json.loads(r) async for r in store.iter_results(run.id)]
    assert [r["score"] for r in records] == [1.0]
    assert await store.pending_case_seqs(run.id, after=-1, limit=10) == [1]


async def test_records_are_read_with_their_case_numbers_and_one_by_number(
    store: RunStore,
) -> None:
    run, _ = await store.create_run(make_new_run(), make_cases(5))
    for seq in (0, 2, 3):
        await store.record_result(run.id, seq, make_record(f"case-{seq}"))
    await store.wait_for_writes()
    numbered = [
        (seq, json.loads(r)["eval_id"])
        async for seq, r in store.iter_numbered_results(run.id, batch_size=2)
    ]
    assert numbered == [(0, "case-0"), (2, "case-2"), (3, "case-3")]
    assert json.loads(await store.result_at(run.id, 2) or "{}")["eval_id"] == "case-2"
    assert await store.result_at(run.id, 1) is None  # not finished: not the next one's record
    assert await store.result_at(run.id, 4) is None


async def test_events_are_numbered_without_gaps_under_concurrent_writers(
    store: RunStore,
) -> None:
    run, _ = await store.create_run(make_new_run(), make_cases(30))
    await asyncio.gather(
        *(store.record_result(run.id, seq, make_record(f"case-{seq}")) for seq in range(30))
    )
    events = await store.events_after(run.id, 0, limit=1000)
    assert [event.seq for event in events] == list(range(1, 61))
    progress = [json.loads(e.data)["done"] for e in events if e.type == "progress"]
    assert progress == list(range(1, 31))
    assert {e.type for e in events[::2]} == {"case_completed"}
    assert [event.seq for event in await store.events_after(run.id, 58)] == [59, 60]


async def test_a_stored_record_reads_back_whole_with_its_two_events(store: RunStore) -> None:
    # The same texts on SQLite and on PostgreSQL (whose write path is one statement of its
    # own): the row's columns, NUL in text escaped and restored, the events' exact data.
    run, _ = await store.create_run(make_new_run(), make_cases(2))
    record = make_record("case-1", status="failed", score=0.25).model_copy(
        update={"candidate_answer": "a\x00b"}
    )
    assert await store.record_result(run.id, 1, record)
    assert await store.result_at(run.id, 1) == record.model_dump_json(by_alias=True)
    assert (await store.get_run(run.id)).done == 1
    assert await store.pending_case_seqs(run.id, after=-1, limit=10) == [0]
    completed, progress = await store.events_after(run.id, 0)
    assert (completed.seq, completed.type) == (1, "case_completed")
    assert completed.data == record.model_dump_json(by_alias=True)
    assert (progress.seq, progress.type) == (2, "progress")
    assert progress.data == json.dumps({"run_id": run.id, "done": 1, "total": 2})
    facts = await store.result_facts(run.id)
    assert [(status, score, times) for status, score, _, times in facts.outcomes] == [
        ("failed", 0.25, 1)
    ]
    assert (facts.candidate_input_tokens, facts.judge_output_tokens) == (10, 3)


async def test_finishing_a_run_adds_one_run_completed_event(store: RunStore) -> None:
    run, _ = await store.create_run(make_new_run(), make_cases(1))
    await store.mark_running(run.id)
    await store.record_result(run.id, 0, make_record("case-0"))
    assert await store.finish_run(run.id, "completed", {"total": 1})
    assert not await store.finish_run(run.id, "cancelled", {"total": 1})
    finished = await store.get_run(run.id)
    assert finished.status == "completed"
    assert finished.summary == {"total": 1}
    assert finished.started_at is not None
    assert finished.finished_at is not None
    last = (await store.events_after(run.id, 2))[-1]
    assert (last.seq, last.type) == (3, "run_completed")


async def test_runs_are_listed_newest_first_by_cursor_and_status(store: RunStore) -> None:
    ids = []
    for _ in range(5):
        run, _ = await store.create_run(make_new_run(), make_cases(1))
        ids.append(run.id)
    await store.finish_run(ids[1], "completed", {})
    first = await store.list_runs(status=None, limit=2, cursor=None)
    second = await store.list_runs(status=None, limit=2, cursor=first.next_cursor)
    third = await store.list_runs(status=None, limit=2, cursor=second.next_cursor)
    listed = [run.id for page in (first, second, third) for run in page.items]
    assert listed == list(reversed(ids))
    assert third.next_cursor is None
    completed = await store.list_runs(status="completed", limit=10, cursor=None)
    assert [run.id for run in completed.items] == [ids[1]]


async def test_a_cursor_not_issued_by_the_store_is_invalid(store: RunStore) -> None:
    with pytest.raises(InvalidRequest):
        await store.list_runs(status=None, limit=10, cursor="not-a-cursor")


async def test_results_page_in_case_order_and_filter_by_status(store: RunStore) -> None:
    run, _ = await store.create_run(make_new_run(), make_cases(5))
    for seq in (4, 0, 2, 1, 3):
        status = "error" if seq % 2 else "passed"
        await store.record_result(run.id, seq, make_record(f"case-{seq}", status=status))
    page = await store.list_results(run.id, status=None, limit=3, cursor=None)
    rest = await store.list_results(run.id, status=None, limit=3, cursor=page.next_cursor)
    ids = [json.loads(r)["eval_id"] for r in page.items + rest.items]
    assert ids == [f"case-{seq}" for seq in range(5)]
    assert rest.next_cursor is None
    errors = await store.list_results(run.id, status="error", limit=10, cursor=None)
    assert [json.loads(r)["eval_id"] for r in errors.items] == ["case-1", "case-3"]
    streamed = [json.loads(r)["eval_id"] async for r in store.iter_results(run.id, batch_size=2)]
    assert streamed == ids


async def test_retry_reopens_only_error_and_judge_error_cases(store: RunStore) -> None:
    run, _ = await store.create_run(make_new_run(), make_cases(3))
    await store.record_result(run.id, 0, make_record("case-0"))
    await store.record_result(run.id, 1, make_record("case-1", status="error", score=None))
    await store.record_result(run.id, 2, make_record("case-2", status="judge_error", score=None))
    with pytest.raises(RunStateConflict):
        await store.reopen_for_retry(run.id)
    await store.finish_run(run.id, "completed", {})
    assert await store.reopen_for_retry(run.id) == 2
    reopened = await store.get_run(run.id)
    assert (reopened.status, reopened.done, reopened.finished_at) == ("queued", 1, None)
    assert await store.pending_case_seqs(run.id, after=-1, limit=10) == [1, 2]
    assert await store.record_result(run.id, 1, make_record("case-1"))


async def test_only_finished_runs_can_be_deleted(store: RunStore) -> None:
    run, _ = await store.create_run(make_new_run(), make_cases(2), idempotency=("k", "h"))
    await store.record_result(run.id, 0, make_record("case-0"))
    with pytest.raises(RunStateConflict):
        await store.delete_run(run.id)
    await store.finish_run(run.id, "cancelled", {})
    await store.delete_run(run.id)
    with pytest.raises(RunNotFound):
        await store.get_run(run.id)
    assert await store.events_after(run.id, 0) == []
    with pytest.raises(RunNotFound):
        await store.delete_run(run.id)
    again, created = await store.create_run(make_new_run(), make_cases(1), idempotency=("k", "h"))
    assert created
    assert again.id != run.id


async def test_result_facts_carry_status_score_and_tokens(store: RunStore) -> None:
    run, _ = await store.create_run(make_new_run(), make_cases(2))
    await store.record_result(run.id, 0, make_record("case-0", score=0.5, status="failed"))
    await store.record_result(run.id, 1, make_record("case-1", score=None, status="error"))
    facts = await store.result_facts(run.id)
    assert sorted(facts.outcomes, key=str) == [("error", None, "[]", 1), ("failed", 0.5, "[]", 1)]
    assert (facts.candidate_input_tokens, facts.candidate_output_tokens) == (20, 10)
    assert (facts.judge_input_tokens, facts.judge_output_tokens) == (40, 6)


async def test_result_facts_count_results_that_share_an_outcome(store: RunStore) -> None:
    run, _ = await store.create_run(make_new_run(), make_cases(3))
    for seq in range(3):
        await store.record_result(run.id, seq, make_record(f"case-{seq}", score=1.0))
    facts = await store.result_facts(run.id)
    assert facts.outcomes == [("passed", 1.0, "[]", 3)]


async def test_response_cache_returns_a_stored_reply_marked_as_a_hit(store: RunStore) -> None:
    cache = StoredResponseCache(store)
    assert await cache.get("k") is None
    await cache.put("k", ProviderResponse(text="first", usage=Usage(input_tokens=3)))
    await cache.put("k", ProviderResponse(text="second"))
    hit = await cache.get("k")
    assert hit is not None
    assert (hit.text, hit.cached, hit.usage.input_tokens) == ("first", True, 3)


async def test_the_same_case_finished_twice_at_once_is_stored_once(store: RunStore) -> None:
    run, _ = await store.create_run(make_new_run(), make_cases(3))
    outcomes = await asyncio.gather(
        store.record_result(run.id, 0, make_record("case-0")),
        store.record_result(run.id, 1, make_record("case-1")),
        store.record_result(run.id, 0, make_record("case-0", score=0.0)),
        store.record_result(run.id, 1, make_record("case-1", score=0.0)),
    )
    assert list(outcomes) == [True, True, False, False]
    stored = await store.get_run(run.id)
    assert stored.done == 2
    assert [e.seq for e in await store.events_after(run.id, 0)] == [1, 2, 3, 4]


async def test_an_eval_runs_tally_is_counted_from_the_results_columns(store: RunStore) -> None:
    # The /v1 run object's counts, usage and per-criterion results, without a record read.
    run, _ = await store.create_run(make_new_run(), make_cases(4))
    exact = EvaluatorResult(name="exact", type="string_check", score=1.0, verdict="pass")
    unscored = EvaluatorResult(
        name="judge", type="label_model", score=None, verdict=None, status="judge_error"
    )
    outcomes = [
        make_record("case-0").model_copy(
            update={
                "evaluator_results": [exact.model_copy(update={"passed": True}), unscored],
                "attempts": RoleAttempts(candidate=2, judge=3),
            }
        ),
        make_record("case-1", status="failed", score=0.0).model_copy(
            update={
                "evaluator_results": [exact.model_copy(update={"passed": False, "score": 0.0})],
                "attempts": RoleAttempts(candidate=1, judge=1),
            }
        ),
        make_record("case-2", status="error", score=None),
    ]
    for seq, record in enumerate(outcomes):
        assert await store.record_result(run.id, seq, record)
    tally = await OpenAIEvalStore(store).tally(run.id)
    assert tally.statuses == {"passed": 1, "failed": 1, "error": 1}
    assert tally.graders == {"exact": (1, 1)}  # the judge that could not grade: neither


async def test_an_eval_runs_tally_splits_usage_by_target_and_keeps_older_results(
    store: RunStore,
) -> None:
    run, _ = await store.create_run(make_new_run(), make_cases(3))
    split = {
        "gpt": TargetUsage(requests=2, input_tokens=10, output_tokens=5),
        "judge-a": TargetUsage(requests=3, input_tokens=20, output_tokens=3),
    }
    one = make_record("case-0").model_copy(update={"usage_by_target": split})
    other = make_record("case-1").model_copy(
        update={"usage_by_target": {"judge-a": TargetUsage(requests=1, input_tokens=7)}}
    )
    older = make_record("case-2").model_copy(update={"attempts": RoleAttempts(candidate=1)})
    for seq, record in enumerate((one, other, older)):
        assert await store.record_result(run.id, seq, record)
    async with store.engine.begin() as connection:  # as stored before the column existed
        await connection.execute(text("UPDATE results SET target_usage = NULL WHERE case_seq = 2"))
    tally = await OpenAIEvalStore(store).tally(run.id)
    assert tally.targets == {"gpt": (2, 10, 5), "judge-a": (4, 27, 3)}
    assert tally.unattributed == {"candidate": (1, 10, 5), "judge": (0, 20, 3)}
