"""A run's finished cases stored by one PostgreSQL statement (the fleet's hot write path).

The statement does what the portable path (``records_store``) does in a transaction of four
statements: it locks the run row, marks the cases done (only those still pending count),
advances the run's counters, and inserts the results and their two events each. As one
statement it commits on its own: a batch costs one round trip to the database instead of
six (with BEGIN and COMMIT), and the writer keeps its connection from batch to batch instead
of checking one out, which pings the server in three more. On a busy event loop every round
trip waits for the loop, and a finished case holds its run slot until its record commits.

The run row is locked first, as in the portable path: writers of one run queue on it, so
event numbers are committed in order and two writers of one case cannot deadlock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from app.runs.tables import escape_text

STORE_RESULTS = """
WITH run AS (
    SELECT id FROM runs WHERE id = $1 FOR UPDATE
), marked AS (
    UPDATE cases SET pending = false
    WHERE run_id = (SELECT id FROM run) AND pending AND seq = ANY($2::integer[])
    RETURNING seq
), given AS (
    SELECT * FROM unnest($2::integer[], $3::text[], $4::text[], $5::float8[], $6::integer[],
        $7::integer[], $8::integer[], $9::integer[], $10::integer[], $11::integer[],
        $12::text[], $13::text[], $14::text[], $15::timestamptz[], $16::float8[],
        $17::integer[], $18::text[], $19::text[])
        AS g(seq, eval_id, status, score, candidate_in, candidate_out, judge_in, judge_out,
            candidate_calls, judge_calls, answer, record, graders, created_at, cost_usd, arm,
            target_usage, arm_json)
), fresh AS (
    SELECT given.*, row_number() OVER (ORDER BY given.seq) AS n
    FROM given JOIN marked USING (seq)
), counted AS (
    UPDATE runs SET done = done + (SELECT count(*) FROM fresh),
        event_seq = event_seq + 2 * (SELECT count(*) FROM fresh)
    WHERE id = $1 AND EXISTS (SELECT 1 FROM fresh)
    RETURNING done - (SELECT count(*) FROM fresh) AS first_done, total,
        event_seq - 2 * (SELECT count(*) FROM fresh) AS first_event, done >= total AS complete
), stored AS (
    INSERT INTO results (run_id, case_seq, eval_id, status, score, candidate_input_tokens,
        candidate_output_tokens, judge_input_tokens, judge_output_tokens, candidate_calls,
        judge_calls, candidate_answer, record, graders, created_at, cost_usd, arm,
        target_usage)
    SELECT $1, seq, eval_id, status, score, candidate_in, candidate_out, judge_in, judge_out,
        candidate_calls, judge_calls, answer, record, graders, created_at, cost_usd, arm,
        target_usage
    FROM fresh
), logged AS (
    INSERT INTO events (run_id, seq, type, data)
    SELECT $1, c.first_event + 2 * f.n - 1, 'case_completed', f.record
    FROM fresh f CROSS JOIN counted c
    UNION ALL
    SELECT $1, c.first_event + 2 * f.n, 'progress',
        format('{"run_id": %s, "done": %s, "total": %s%s}', to_json($1::text),
            c.first_done + f.n, c.total, COALESCE(', "arm": ' || f.arm_json, ''))
    FROM fresh f CROSS JOIN counted c
)
SELECT ARRAY(SELECT seq FROM marked) AS seqs,
    COALESCE((SELECT complete FROM counted), false) AS complete
"""
"""``$1`` the run, then one array per column of ``results``, one element per result, then
the JSON of each result's arm for its ``progress`` event (null for a run on one target)."""


@dataclass(frozen=True)
class StoredBatch:
    """What one statement stored: the cases still pending, and whether they ended the run."""

    seqs: frozenset[int]
    complete: bool


async def store_run_results(
    connection: AsyncConnection,
    run_id: str,
    results: Sequence[dict[str, Any]],
    arms: Sequence[str | None],
) -> StoredBatch:
    """Store one run's results (``results`` rows' values, each case once, at least one).

    ``arms``: per result, the JSON of its arm, which its ``progress`` event carries.

    ``connection`` must be in autocommit mode: the statement is its own transaction.
    """
    columns = zip(
        *(
            (
                values["case_seq"],
                escape_text(values["eval_id"]),
                values["status"],
                values["score"],
                values["candidate_input_tokens"],
                values["candidate_output_tokens"],
                values["judge_input_tokens"],
                values["judge_output_tokens"],
                values["candidate_calls"],
                values["judge_calls"],
                _escaped(values["candidate_answer"]),
                values["record"],
                values["graders"],
                values["created_at"],
                values["cost_usd"],
                values["arm"],
                values["target_usage"],
                arm,
            )
            for values, arm in zip(results, arms, strict=True)
        ),
        strict=True,
    )
    result = await connection.exec_driver_sql(STORE_RESULTS, (run_id, *map(list, columns)))
    row = result.one()
    return StoredBatch(seqs=frozenset(row.seqs), complete=bool(row.complete))


def _escaped(value: str | None) -> str | None:
    return escape_text(value) if value is not None else None
