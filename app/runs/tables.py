"""Database tables of durable runs (SQLAlchemy 2 declarative models).

Large documents (suite, records, event payloads) are stored as JSON text so that SQLite and
PostgreSQL hold them the same way; the columns that queries filter or aggregate on
(status, score, tokens) are real columns. Free text that comes from callers or providers is
``SafeText``: PostgreSQL text cannot hold NUL, so such a value is stored escaped and read
back as it was.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from app.suites.model import MAX_CASE_ID_LENGTH

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


# A noncharacter: marks a value stored as a JSON string (any value holding NUL, or starting
# with the mark itself, so that reading back is exact).
ESCAPED_MARK = "\ufdd0"


def escape_text(value: str) -> str:
    """``value`` as PostgreSQL can store it (unchanged unless it holds NUL or starts marked)."""
    if "\x00" in value or value.startswith(ESCAPED_MARK):
        return ESCAPED_MARK + json.dumps(value)
    return value


def unescape_text(value: str) -> str:
    """The value ``escape_text`` was given."""
    if value.startswith(ESCAPED_MARK):
        restored: str = json.loads(value[len(ESCAPED_MARK) :])
        return restored
    return value


class SafeText(TypeDecorator[str]):
    """Text of any content, NUL included: escaped on write, restored on read."""

    impl: type[String] = Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:  # noqa: ARG002
        """Escape a value on its way into the database."""
        return escape_text(value) if isinstance(value, str) else value

    def process_result_value(self, value: Any, dialect: Dialect) -> Any:  # noqa: ARG002
        """Restore a value read from the database."""
        return unescape_text(value) if isinstance(value, str) else value


class SafeString(SafeText):
    """A ``SafeText`` stored in a ``VARCHAR`` column (ids and names)."""

    impl = String
    cache_ok = True


class Base(DeclarativeBase):
    """Declarative base with constraint names that migrations can refer to."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class RunRow(Base):
    """One run: what to execute (``spec``), where it stands, and counters."""

    __tablename__ = "runs"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16), default="evaluate")
    status: Mapped[str] = mapped_column(String(16), index=True)
    parent_run_id: Mapped[str | None] = mapped_column(String(40), nullable=True)
    owner: Mapped[str | None] = mapped_column(
        String(64), nullable=True, doc="Id of the API key that created the run."
    )
    target: Mapped[str] = mapped_column(String(200))
    judge_target: Mapped[str | None] = mapped_column(String(200), nullable=True)
    name: Mapped[str | None] = mapped_column(
        SafeString(500), nullable=True, doc="The suite's name (its dataset) or the eval's."
    )
    spec: Mapped[str] = mapped_column(Text, doc="JSON: suite without cases, files, plan.")
    arms: Mapped[str | None] = mapped_column(
        Text, nullable=True, doc="JSON list of the run's arms (null: a run on one target)."
    )
    total: Mapped[int] = mapped_column(Integer, default=0)
    done: Mapped[int] = mapped_column(Integer, default=0)
    event_seq: Mapped[int] = mapped_column(BigInteger, default=0)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    summary: Mapped[str | None] = mapped_column(Text, nullable=True)
    error: Mapped[str | None] = mapped_column(SafeText, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    __table_args__ = (
        Index("ix_runs_created_at_id", "created_at", "id"),
        Index("ix_runs_owner_status", "owner", "status"),
    )


class RunTagRow(Base):
    """A tag a person or CI put on a run (``main``, ``release-2.1``): runs are found by tag."""

    __tablename__ = "run_tags"

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    tag: Mapped[str] = mapped_column(String(100), primary_key=True)

    __table_args__ = (Index("ix_run_tags_tag", "tag"),)


class CaseRow(Base):
    """One case of a run: its definition and whether it still has to run."""

    __tablename__ = "cases"

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    eval_id: Mapped[str] = mapped_column(SafeString(MAX_CASE_ID_LENGTH))
    definition: Mapped[str] = mapped_column(Text, doc="JSON of the EvalCase.")
    candidate_answer: Mapped[str | None] = mapped_column(SafeText, nullable=True)
    candidate_output: Mapped[str | None] = mapped_column(
        Text,
        nullable=True,
        doc="JSON {turns: answers, file_changes} of a regraded case's earlier record, if any.",
    )
    pending: Mapped[bool] = mapped_column(Boolean, default=True)
    arm: Mapped[int | None] = mapped_column(
        Integer, nullable=True, doc="The arm the case runs on (null: a run on one target)."
    )

    __table_args__ = (Index("ix_cases_run_id_pending_seq", "run_id", "pending", "seq"),)


class ReviewRow(Base):
    """A person's verdict on one case of a run, kept beside the graders' result."""

    __tablename__ = "reviews"

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    verdict: Mapped[str] = mapped_column(String(16))
    score: Mapped[float | None] = mapped_column(Float, nullable=True)
    comment: Mapped[str | None] = mapped_column(SafeText, nullable=True)
    reviewer: Mapped[str | None] = mapped_column(String(64), nullable=True)
    reviewed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ResultRow(Base):
    """The result record of one finished case; stored at most once per case."""

    __tablename__ = "results"

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    case_seq: Mapped[int] = mapped_column(Integer)
    eval_id: Mapped[str] = mapped_column(SafeString(MAX_CASE_ID_LENGTH))
    status: Mapped[str] = mapped_column(String(16))
    score: Mapped[float | None] = mapped_column(Float, nullable=True)
    candidate_input_tokens: Mapped[int] = mapped_column(Integer, default=0)
    candidate_output_tokens: Mapped[int] = mapped_column(Integer, default=0)
    judge_input_tokens: Mapped[int] = mapped_column(Integer, default=0)
    judge_output_tokens: Mapped[int] = mapped_column(Integer, default=0)
    candidate_calls: Mapped[int] = mapped_column(
        Integer, default=0, server_default="0", doc="Requests the candidate was sent (attempts)."
    )
    judge_calls: Mapped[int] = mapped_column(
        Integer, default=0, server_default="0", doc="Requests the judges were sent (attempts)."
    )
    candidate_answer: Mapped[str | None] = mapped_column(SafeText, nullable=True)
    record: Mapped[str] = mapped_column(Text, doc="JSON of the ResultRecord.")
    graders: Mapped[str | None] = mapped_column(
        Text, nullable=True, doc="JSON of [name, type, passed, score] per grader (summaries)."
    )
    cost_usd: Mapped[float | None] = mapped_column(
        Float, nullable=True, doc="What the case's calls cost (every role), when known."
    )
    arm: Mapped[int | None] = mapped_column(
        Integer, nullable=True, doc="The arm of the record (null: a run on one target)."
    )
    target_usage: Mapped[str | None] = mapped_column(
        Text,
        nullable=True,
        doc="JSON of {target: [requests, input tokens, output tokens]} (null: stored before).",
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    __table_args__ = (
        UniqueConstraint("run_id", "case_seq", name="uq_results_run_id_case_seq"),
        Index("ix_results_run_id_status_case_seq", "run_id", "status", "case_seq"),
    )


class EventRow(Base):
    """One server-sent event of a run; ``seq`` increases by one per event within a run."""

    __tablename__ = "events"

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    seq: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    type: Mapped[str] = mapped_column(String(32))
    data: Mapped[str] = mapped_column(Text, doc="JSON payload of the event.")


class IdempotencyKeyRow(Base):
    """An ``Idempotency-Key`` already used, with a hash of the body it came with."""

    __tablename__ = "idempotency_keys"

    key: Mapped[str] = mapped_column(String(300), primary_key=True)
    body_hash: Mapped[str] = mapped_column(String(64))
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class RateBucketRow(Base):
    """A caller's request-rate bucket, shared by every replica on PostgreSQL."""

    __tablename__ = "rate_buckets"

    key: Mapped[str] = mapped_column(String(300), primary_key=True)
    tokens: Mapped[float] = mapped_column(Float)
    granted: Mapped[bool] = mapped_column(Boolean, doc="Whether the last request got a token.")
    updated: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class CachedResponseRow(Base):
    """A provider reply stored under the hash of the exact request that produced it."""

    __tablename__ = "response_cache"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    response: Mapped[str] = mapped_column(Text, doc="JSON of the ProviderResponse.")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class FleetLimitRow(Base):
    """A concurrency limit shared by every worker on the database (PostgreSQL only).

    ``key`` names what is limited: a target's role (``target:<name>:<role>``) or a run
    (``run:<id>``). ``current_limit`` is the adaptive limit in force (halved on a 429, raised after
    ``successes`` in a row), never above ``max_limit``.
    """

    __tablename__ = "fleet_limits"

    key: Mapped[str] = mapped_column(String(300), primary_key=True)
    current_limit: Mapped[int] = mapped_column(Integer)
    max_limit: Mapped[int] = mapped_column(Integer)
    successes: Mapped[int] = mapped_column(Integer, default=0)
    rate_limited_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class FleetSlotRow(Base):
    """One slot of a fleet-wide limit, free or held by a worker until ``expires_at``."""

    __tablename__ = "fleet_slots"

    key: Mapped[str] = mapped_column(
        ForeignKey("fleet_limits.key", ondelete="CASCADE"), primary_key=True
    )
    slot: Mapped[int] = mapped_column(Integer, primary_key=True)
    holder: Mapped[str | None] = mapped_column(String(200), nullable=True)
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    __table_args__ = (Index("ix_fleet_slots_holder", "holder"),)


# The OpenAI Evals surface (/v1): evals, uploaded files, and which runs belong to an eval.


class OpenAIEvalRow(Base):
    """An eval of the OpenAI Evals surface: its data source config and testing criteria."""

    __tablename__ = "openai_evals"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    owner: Mapped[str | None] = mapped_column(String(64), nullable=True)
    name: Mapped[str] = mapped_column(SafeString(500))
    metadata_json: Mapped[str] = mapped_column(Text, doc="JSON of the eval's metadata.")
    data_source_config: Mapped[str] = mapped_column(Text, doc="JSON, as the API returns it.")
    testing_criteria: Mapped[str] = mapped_column(Text, doc="JSON list of grader objects.")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    __table_args__ = (Index("ix_openai_evals_owner_created_at", "owner", "created_at"),)


class OpenAIEvalRunRow(Base):
    """A run of an eval: the durable run of the same id, and what the API returns of it."""

    __tablename__ = "openai_eval_runs"

    id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    eval_id: Mapped[str] = mapped_column(ForeignKey("openai_evals.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(SafeString(500))
    model: Mapped[str] = mapped_column(SafeString(200))
    data_source: Mapped[str] = mapped_column(Text, doc="JSON of the run's data source.")
    metadata_json: Mapped[str] = mapped_column(Text, doc="JSON of the run's metadata.")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    imported: Mapped[str | None] = mapped_column(
        Text, nullable=True, doc="JSON of the source's run object of an imported run."
    )

    __table_args__ = (Index("ix_openai_eval_runs_eval_id_created_at", "eval_id", "created_at"),)


class OpenAIImportedItemRow(Base):
    """An output item of an imported run, as the source API gave it (served verbatim)."""

    __tablename__ = "openai_imported_items"

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, doc="Position in the source.")
    item_id: Mapped[str] = mapped_column(String(200), doc="The source's output item id.")
    status: Mapped[str] = mapped_column(String(16))
    body: Mapped[str] = mapped_column(SafeText, doc="JSON of the source's output item.")

    __table_args__ = (
        UniqueConstraint("run_id", "item_id", name="uq_openai_imported_items_run_id_item_id"),
    )


class OpenAIFileRow(Base):
    """A file uploaded with ``purpose=evals`` (JSONL rows of ``{item, sample?}``)."""

    __tablename__ = "openai_files"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    owner: Mapped[str | None] = mapped_column(String(64), nullable=True)
    filename: Mapped[str] = mapped_column(SafeString(500))
    purpose: Mapped[str] = mapped_column(String(32))
    bytes: Mapped[int] = mapped_column(Integer)
    content: Mapped[str] = mapped_column(SafeText)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    rows: Mapped[int | None] = mapped_column(Integer, nullable=True)
    """Its rows, counted when it was checked (None: stored before they were counted)."""


class WebhookDeliveryRow(Base):
    """One event to post to one webhook endpoint, until it is delivered or given up.

    Written in the transaction that finishes the run, so no finished run misses its event;
    the delivery loop of any process claims due rows (``claimed_until``) and records each try.
    """

    __tablename__ = "webhook_deliveries"

    id: Mapped[str] = mapped_column(String(40), primary_key=True, doc="`webhook-id` (msg_...).")
    endpoint: Mapped[str] = mapped_column(String(100), doc="The endpoint's name (settings).")
    event_id: Mapped[str] = mapped_column(String(40))
    event_type: Mapped[str] = mapped_column(String(40))
    run_id: Mapped[str] = mapped_column(String(64))
    owner: Mapped[str | None] = mapped_column(String(64), nullable=True)
    payload: Mapped[str] = mapped_column(Text, doc="The exact JSON body posted, every try.")
    status: Mapped[str] = mapped_column(String(16), doc="pending, delivered or failed.")
    attempts: Mapped[int] = mapped_column(Integer)
    next_attempt_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    claimed_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    last_status_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    last_error: Mapped[str | None] = mapped_column(SafeString(500), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    delivered_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    __table_args__ = (
        Index("ix_webhook_deliveries_status_next_attempt_at", "status", "next_attempt_at"),
        Index("ix_webhook_deliveries_created_at_id", "created_at", "id"),
    )


class WebhookEndpointRow(Base):
    """A webhook endpoint registered through the API (those of ``EVAL_WEBHOOKS`` are settings).

    It gets the events of its owner's runs (every run when authentication is off). Its
    signing secret is kept only sealed (``app.runs.notify.webhook_secrets``), never in the clear.
    """

    __tablename__ = "webhook_endpoints"

    id: Mapped[str] = mapped_column(String(40), primary_key=True, doc="we_... (deliveries' name).")
    owner: Mapped[str | None] = mapped_column(String(64), nullable=True)
    url: Mapped[str] = mapped_column(SafeString(2000))
    description: Mapped[str | None] = mapped_column(SafeString(500), nullable=True)
    events: Mapped[str] = mapped_column(String(500), doc="JSON list of the event types it gets.")
    sealed_secret: Mapped[str] = mapped_column(String(200), doc="AES-GCM sealed, never clear.")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    __table_args__ = (Index("ix_webhook_endpoints_owner", "owner"),)
