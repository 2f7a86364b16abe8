"""A durable run's cases that read earlier cases (promptfoo's ``storeOutputAs``, ``_conversation``).

Such a run's rows are in promptfoo's order (test by test, arm by arm) and its plan runs one
case at a time per arm (``plan.in_order``). Before a case runs, every case before it must
have its record: the case waits for them, then replays their stored cases and records in
order (``app.evaluation.sequential.replayed``) and renders its input from what they left.
Everything it reads is in the database, so a case run by another worker, or again after a
restart, sees what a case of ``/evaluate`` sees.
"""

from __future__ import annotations

import asyncio

from app.evaluation.prepared import PreparedRun
from app.evaluation.records import ResultRecord
from app.evaluation.sequential import replayed
from app.runs.models import StoredCase
from app.runs.spec import stored_case
from app.runs.storage.store import RunStore
from app.suites.model import FormattedCase

POLL_SECONDS = 0.05
"""How often a case waiting for the cases before it looks for their records."""
LOAD_BATCH = 200


async def in_sequence(
    store: RunStore,
    run_id: str,
    case: StoredCase,
    run: PreparedRun,
    formatted: FormattedCase,
) -> FormattedCase:
    """The case with its input made from the records of the cases before it (waiting for them).

    ``run`` is the whole run (its arms' runs included).
    """
    earlier = await _stored_before(store, run_id, case.seq)
    records = await _records_before(store, run_id, case.seq, len(earlier))
    history = []
    for before in earlier:
        arm_run = run.for_arm(before.arm)
        history.append((stored_case(before.definition, arm_run), arm_run.plan, records[before.seq]))
    sequence = await replayed(history, run.files)
    return sequence.ready(formatted, run.for_arm(case.arm).plan, run.files)


async def wait_for_earlier(store: RunStore, run_id: str, seq: int) -> None:
    """Wait until every case before ``seq`` has its record.

    A case of the task queue waits here before it takes a slot of its run's limit: holding
    the run's one slot while waiting for an earlier case would keep that case from running.
    """
    earlier = await _stored_before(store, run_id, seq)
    await _records_before(store, run_id, seq, len(earlier))


async def _stored_before(store: RunStore, run_id: str, seq: int) -> list[StoredCase]:
    """The run's cases before position ``seq``, in order."""
    found: list[StoredCase] = []
    for start in range(0, seq, LOAD_BATCH):
        keys = [(run_id, number) for number in range(start, min(seq, start + LOAD_BATCH))]
        found.extend(await store.load_cases(keys))
    return sorted(found, key=lambda stored: stored.seq)


async def _records_before(
    store: RunStore, run_id: str, seq: int, count: int
) -> dict[int, ResultRecord]:
    """The records of the ``count`` cases before ``seq``, once they all have one."""
    await store.wait_for_writes()  # this process's own records, handed over uncommitted
    while True:
        texts: dict[int, str] = {}
        async for number, text in store.iter_numbered_results(run_id):
            if number < seq:  # read to the end: the reader closes its own session
                texts[number] = text
        if len(texts) >= count:
            return {
                number: ResultRecord.model_validate_json(text) for number, text in texts.items()
            }
        await asyncio.sleep(POLL_SECONDS)
        await store.wait_for_writes()
