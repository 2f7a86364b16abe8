"""Calls made for several records at once (a select-best comparison), shared among them.

One judge call compares the answers of every arm of a test, so it is no one arm's: each
record it settled takes an equal share of its tokens, requests, time and cost. Whole numbers
are split as evenly as they go, the remainder to the earliest records (arm order), so the
run's totals, ``usage_by_target`` and each arm's spending add up to what was actually sent.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.evaluation.context import CallLedger
from app.evaluation.records import (
    ResultRecord,
    RoleAttempts,
    RoleCost,
    RoleLatency,
    RoleUsage,
    TargetUsage,
    TokenUsage,
)
from app.providers.base import CallRole


def split(total: int, parts: int) -> list[int]:
    """``total`` in ``parts`` whole shares, as even as they go, the larger ones first."""
    base, extra = divmod(total, parts)
    return [base + (1 if index < extra else 0) for index in range(parts)]


def _divided(value: float | None, parts: int) -> float | None:
    return None if value is None else value / parts


def with_shares(records: list[ResultRecord], ledger: CallLedger) -> list[ResultRecord]:
    """Each record with its share of the calls ``ledger`` counted (records in arm order)."""
    shared = [_Counts.of(record) for record in records]
    for role in CallRole:
        _share_role(ledger, role, shared)
    for target, used in ledger.targets.items():
        _share_target(target, used, shared)
    return [
        record.model_copy(update=counts.update())
        for record, counts in zip(records, shared, strict=True)
    ]


@dataclass
class _Counts:
    """A record's counts of calls, copied to take the shares."""

    usage: RoleUsage
    attempts: RoleAttempts
    latency: RoleLatency
    cost: RoleCost
    targets: dict[str, TargetUsage]

    @classmethod
    def of(cls, record: ResultRecord) -> _Counts:
        return cls(
            record.usage.model_copy(deep=True),
            record.attempts.model_copy(),
            record.latency_ms.model_copy(),
            record.cost_usd.model_copy(),
            dict(record.usage_by_target),
        )

    def update(self) -> dict[str, object]:
        return {
            "usage": self.usage,
            "attempts": self.attempts,
            "latency_ms": self.latency,
            "cost_usd": self.cost,
            "usage_by_target": self.targets,
        }


def _share_role(ledger: CallLedger, role: CallRole, shared: list[_Counts]) -> None:
    parts = len(shared)
    tokens: TokenUsage = getattr(ledger.usage, role.value)
    pieces = zip(
        split(tokens.input_tokens, parts),
        split(tokens.output_tokens, parts),
        split(getattr(ledger.attempts, role.value), parts),
        strict=True,
    )
    spent = _divided(getattr(ledger.latency, role.value), parts)
    paid = _divided(getattr(ledger.cost, role.value), parts)
    for counts, (input_tokens, output_tokens, requests) in zip(shared, pieces, strict=True):
        mine: TokenUsage = getattr(counts.usage, role.value)
        mine.input_tokens += input_tokens
        mine.output_tokens += output_tokens
        setattr(counts.attempts, role.value, getattr(counts.attempts, role.value) + requests)
        if spent is not None:
            latency = (getattr(counts.latency, role.value) or 0.0) + spent
            setattr(counts.latency, role.value, round(latency, 3))
        if paid is not None:
            setattr(counts.cost, role.value, (getattr(counts.cost, role.value) or 0.0) + paid)


def _share_target(target: str, used: TargetUsage, shared: list[_Counts]) -> None:
    parts = len(shared)
    pieces = zip(
        split(used.requests, parts),
        split(used.input_tokens, parts),
        split(used.output_tokens, parts),
        strict=True,
    )
    for counts, (requests, input_tokens, output_tokens) in zip(shared, pieces, strict=True):
        if not (requests or input_tokens or output_tokens):
            continue  # a record whose share is nothing does not name the target
        share = TargetUsage(
            requests=requests, input_tokens=input_tokens, output_tokens=output_tokens
        )
        known = counts.targets.get(target)
        counts.targets[target] = share if known is None else known.plus(share)
