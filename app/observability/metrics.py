"""Prometheus metrics: one registry per app, so several apps (tests) never share counters.

Counters and histograms are updated as things happen (HTTP middleware, provider layer);
gauges of state that lives elsewhere are read at scrape time by ``StateCollector``:
the adaptive limiters from ``services.providers.describe()`` and runs and cases by status
from the store, each only when that part exists.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

logger = logging.getLogger("app.metrics")

HTTP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
PROVIDER_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0)
LIMITER_FIELDS = {
    "limit": "Current adaptive concurrency limit",
    "max_limit": "Configured concurrency ceiling",
    "in_flight": "Provider calls in flight",
    "waiting": "Provider calls waiting for a slot",
    "recent_429s": "429 answers in the last minute",
}


class StateCollector(Collector):
    """Gauges read at scrape time from the app's services (limiters; runs and cases)."""

    def __init__(self, services: Callable[[], object | None]) -> None:
        self._services = services
        self.status_counts: dict[str, Mapping[str, int]] = {}

    def collect(self) -> Iterator[Metric]:
        """Yield the limiter gauges and the last counts of runs and cases by status."""
        yield from self._limiter_metrics()
        for kind, counts in self.status_counts.items():
            family = GaugeMetricFamily(
                f"eval_{kind}", f"Stored {kind} by status", labels=["status"]
            )
            for status, count in sorted(counts.items()):
                family.add_metric([status], count)
            yield family

    def _limiter_metrics(self) -> Iterator[Metric]:
        providers = getattr(self._services(), "providers", None)
        describe = getattr(providers, "describe", None)
        if describe is None:
            return
        families = {
            field: GaugeMetricFamily(
                f"eval_provider_limiter_{field}", meaning, labels=["target", "role"]
            )
            for field, meaning in LIMITER_FIELDS.items()
        }
        for target, role, state in limiter_states(describe()):
            for field, family in families.items():
                if isinstance(state.get(field), int | float):
                    family.add_metric([target, role], float(state[field]))
        yield from families.values()


def _plain(value: Any) -> Any:
    """Pydantic models and dataclass-like objects as plain dicts and lists."""
    if hasattr(value, "model_dump"):
        return value.model_dump()
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def limiter_states(description: Any) -> list[tuple[str, str, dict[str, Any]]]:
    """Find every limiter snapshot (a mapping with ``limit`` and ``in_flight``) in a description.

    Each is labelled by the nearest enclosing ``name``/``target`` and by the key it sits
    under (the role, e.g. ``candidate`` or ``judge``; ``limiter`` alone reads as ``all``).
    """
    found: list[tuple[str, str, dict[str, Any]]] = []

    def walk(node: Any, target: str, key: str) -> None:
        if isinstance(node, Mapping):
            if "limit" in node and "in_flight" in node:
                role = str(node.get("role") or ("all" if key in ("", "limiter") else key))
                found.append((target, role, dict(node)))
                return
            name = node.get("name", node.get("target"))
            here = name if isinstance(name, str) else target
            for child_key, child in node.items():
                walk(child, here, str(child_key))
        elif isinstance(node, list):
            for child in node:
                walk(child, target, key)

    walk(_plain(description), "", "")
    return found


class Metrics:
    """The app's metrics and the recorder API the HTTP and provider layers call."""

    def __init__(self, services: Callable[[], object | None] = lambda: None) -> None:
        self.registry = CollectorRegistry()
        self.http_requests = Counter(
            "eval_http_requests",
            "HTTP requests by method, route template and status",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.http_duration = Histogram(
            "eval_http_request_duration_seconds",
            "HTTP request latency by method and route template",
            ["method", "route"],
            buckets=HTTP_BUCKETS,
            registry=self.registry,
        )
        self.http_in_flight = Gauge(
            "eval_http_requests_in_flight", "HTTP requests being served", registry=self.registry
        )
        self._add_provider_metrics()
        self.state = StateCollector(services)
        self.registry.register(self.state)

    def _add_provider_metrics(self) -> None:
        labels = ["target", "role"]
        self.provider_calls = Counter(
            "eval_provider_calls",
            "Provider calls by target, role and outcome (ok or the error kind)",
            [*labels, "outcome"],
            registry=self.registry,
        )
        self.provider_duration = Histogram(
            "eval_provider_call_duration_seconds",
            "Provider call latency (retries included) by target and role",
            labels,
            buckets=PROVIDER_BUCKETS,
            registry=self.registry,
        )
        self.provider_retries = Counter(
            "eval_provider_retries",
            "Provider attempts retried, by target, role and reason",
            [*labels, "reason"],
            registry=self.registry,
        )
        self.provider_rate_limited = Counter(
            "eval_provider_rate_limited",
            "429 answers from providers, by target and role",
            labels,
            registry=self.registry,
        )

    def record_http_request(self, method: str, route: str, status: int, seconds: float) -> None:
        """Count one HTTP request and observe its latency."""
        self.http_requests.labels(method, route, str(status)).inc()
        self.http_duration.labels(method, route).observe(seconds)

    def record_provider_call(self, target: str, role: str, outcome: str, seconds: float) -> None:
        """Count one finished provider call (``outcome``: ``ok`` or an error kind)."""
        self.provider_calls.labels(target, role, outcome).inc()
        self.provider_duration.labels(target, role).observe(seconds)

    def record_retry(self, target: str, role: str, reason: str) -> None:
        """Count one retried attempt (``reason``: e.g. ``rate_limited``, ``timeout``, ``5xx``)."""
        self.provider_retries.labels(target, role, reason).inc()

    def record_rate_limited(self, target: str, role: str) -> None:
        """Count one 429 answer from a provider."""
        self.provider_rate_limited.labels(target, role).inc()

    async def refresh(self, services: object | None) -> None:
        """Read runs and cases by status from the store, when it can tell them."""
        store = getattr(services, "store", None)
        try:
            self.state.status_counts = await status_counts(store)
        # A scrape must not fail with the database: the other metrics still matter.
        except Exception:
            logger.warning("could not count runs and cases by status", exc_info=True)
            self.state.status_counts = {}

    async def scrape(self, services: object | None) -> bytes:
        """Refresh the stored counts, then render the registry in the Prometheus text format."""
        await self.refresh(services)
        return generate_latest(self.registry)


async def status_counts(store: object) -> dict[str, Mapping[str, int]]:
    """Runs and cases by status: the store's own counters, else a query on its engine."""
    counters = {kind: getattr(store, f"count_{kind}_by_status", None) for kind in ("runs", "cases")}
    if all(counters.values()):
        return {kind: dict(await counter()) for kind, counter in counters.items() if counter}
    engine = getattr(store, "engine", None)
    if isinstance(engine, AsyncEngine):
        return await count_stored_statuses(engine)
    return {}


async def count_stored_statuses(engine: AsyncEngine) -> dict[str, Mapping[str, int]]:
    """Runs by status, and cases by result status (``pending`` when not yet run)."""
    # Imported here: the runs package is optional for this module (it may not be wired).
    from app.runs.tables import CaseRow, ResultRow, RunRow

    async with engine.connect() as connection:
        runs = await connection.execute(select(RunRow.status, func.count()).group_by(RunRow.status))
        results = await connection.execute(
            select(ResultRow.status, func.count()).group_by(ResultRow.status)
        )
        pending = await connection.scalar(
            select(func.count()).select_from(CaseRow).where(CaseRow.pending.is_(True))
        )
        cases = {str(status): int(count) for status, count in results.all()}
        cases["pending"] = int(pending or 0)
        return {"runs": {str(status): int(count) for status, count in runs.all()}, "cases": cases}
