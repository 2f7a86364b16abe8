"""Repeated trials of one case: pass@k, the spread of scores, and the one record they make.

pass@k is the unbiased estimator of Chen et al. (2021): with ``n`` trials of which ``c``
passed, ``1 - C(n - c, k) / C(n, k)``, the chance that at least one of ``k`` trials drawn
without replacement passes. It is given for k = 1..n (n up to 10), else for 1, 2, 5, 10, 20,
50 and n. The case's record is a representative trial's (its answer and graders) with the
strategy's outcome: ``pass_any`` the first passing trial (else the best), ``pass_all`` the
first failing one (else the last), ``mean`` the first trial with the mean score and the
verdict of that mean. Tokens, cost, latency and requests add up over every trial.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from app.evaluation.records import (
    ResultRecord,
    RoleCost,
    ScoreSpread,
    TargetUsage,
    TrialRun,
    TrialsSummary,
)
from app.evaluators.verdicts import Thresholds, status_for, verdict_for
from app.suites.model import Trials, TrialStrategy

_SPARSE_KS = (1, 2, 5, 10, 20, 50)


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of ``n`` trials with ``c`` passes (``k`` <= ``n``)."""
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def reported_ks(n: int) -> list[int]:
    """The k for which pass@k is reported."""
    if n <= 10:
        return list(range(1, n + 1))
    return sorted({k for k in _SPARSE_KS if k <= n} | {n})


def spread(scores: Sequence[float]) -> ScoreSpread:
    """Mean, sample standard deviation, min and max of ``scores``."""
    if not scores:
        return ScoreSpread()
    return ScoreSpread(
        mean=statistics.fmean(scores),
        std_dev=statistics.stdev(scores) if len(scores) > 1 else 0.0,
        min=min(scores),
        max=max(scores),
    )


def decided(strategy: TrialStrategy, records: Sequence[ResultRecord]) -> bool:
    """Whether an early exit may stop here: the strategy's outcome cannot change."""
    last = records[-1]
    if strategy == "pass_any":
        return last.status == "passed"
    return strategy == "pass_all" and last.status != "passed"


def _representative(strategy: TrialStrategy, records: Sequence[ResultRecord]) -> ResultRecord:
    passing = [r for r in records if r.status == "passed"]
    if strategy == "pass_any":
        if passing:
            return passing[0]
        graded = [r for r in records if r.score is not None]
        return max(graded, key=lambda r: r.score or 0.0) if graded else records[0]
    if strategy == "pass_all":
        return next((r for r in records if r.status != "passed"), records[-1])
    return records[0]


def _summed(records: Sequence[ResultRecord], chosen: ResultRecord) -> dict[str, object]:
    usage = chosen.usage.model_copy(deep=True)
    attempts = chosen.attempts.model_copy()
    latency = chosen.latency_ms.model_copy()
    cost = RoleCost()
    for role in ("candidate", "judge"):
        for field in ("input_tokens", "output_tokens"):
            total = sum(getattr(getattr(r.usage, role), field) for r in records)
            setattr(getattr(usage, role), field, total)
        setattr(attempts, role, sum(getattr(r.attempts, role) for r in records))
        times = [getattr(r.latency_ms, role) for r in records if getattr(r.latency_ms, role)]
        setattr(latency, role, round(sum(times), 3) if times else None)
        costs = [
            getattr(r.cost_usd, role) for r in records if getattr(r.cost_usd, role) is not None
        ]
        setattr(cost, role, sum(costs) if costs else None)
    by_target: dict[str, TargetUsage] = {}
    for record in records:
        for name, used in record.usage_by_target.items():
            by_target[name] = by_target[name].plus(used) if name in by_target else used
    return {
        "usage": usage,
        "usage_by_target": by_target,
        "attempts": attempts,
        "latency_ms": latency,
        "cost_usd": cost,
    }


def combine_trials(
    records: Sequence[ResultRecord], trials: Trials, thresholds: Thresholds
) -> ResultRecord:
    """The case's one record from its trials' records (see the module docstring)."""
    strategy = trials.strategy
    chosen = _representative(strategy, records)
    passed = sum(r.status == "passed" for r in records)
    scores = [r.score for r in records if r.score is not None]
    summary = TrialsSummary(
        requested=trials.count,
        count=len(records),
        strategy=strategy,
        passed=passed,
        pass_at_k={str(k): pass_at_k(len(records), passed, k) for k in reported_ks(len(records))},
        scores=spread(scores),
        runs=[
            TrialRun(
                trial=index,
                status=r.status,
                score=r.score,
                passed=r.status == "passed",
                candidate_answer=r.candidate_answer,
                error=r.error,
            )
            for index, r in enumerate(records, start=1)
        ],
    )
    update: dict[str, object] = {"trials": summary, **_summed(records, chosen)}
    if strategy == "mean" and scores and len(scores) == len(records):
        mean = statistics.fmean(scores)
        verdict = verdict_for(mean, thresholds)
        update |= {"score": mean, "verdict": verdict, "status": status_for(verdict)}
    return chosen.model_copy(update=update)
