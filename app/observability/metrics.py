"""Prometheus metrics: one registry per app, so several apps (tests) never share counters.

Counters and histograms are updated as things happen (HTTP middleware, provider layer, the
queue's worker); gauges of state that lives elsewhere are read at scrape time by
``StateCollector`` from the sources ``Metrics.watch`` was given: the targets' limiters, and
runs, cases and (PostgreSQL) the queue's case jobs by status from the store, and whether
each long-lived database link is up (``app.observability.links``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping
from typing import Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from app.observability.links import Links
from app.providers.limiter import LimiterState

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


class LimiterSource(Protocol):
    """Where limiter state is read (the provider registry)."""

    def limiter_states(self) -> Iterable[tuple[str, str, LimiterState]]:
        """``(target, role, state)`` of every limiter."""
        ...


class StatusSource(Protocol):
    """Where runs and cases are counted by status (the runs store)."""

    async def count_by_status(self) -> dict[str, dict[str, int]]:
        """``{"runs": {status: n}, "cases": {status: n}}``."""
        ...


class StateCollector(Collector):
    """Gauges read at scrape time: the limiters, and the last counts of runs and cases."""

    def __init__(self) -> None:
        self.limiters: LimiterSource | None = None
        self.links: Links | None = None
        self.status_counts: Mapping[str, Mapping[str, int]] = {}

    def collect(self) -> Iterator[Metric]:
        """Yield the limiter gauges, the links' states and the last counts by status."""
        yield from self._limiter_metrics()
        yield from self._link_metrics()
        for kind, counts in self.status_counts.items():
            family = GaugeMetricFamily(
                f"eval_{kind}", f"Stored {kind} by status", labels=["status"]
            )
            for status, count in sorted(counts.items()):
                family.add_metric([status], count)
            yield family

    def _link_metrics(self) -> Iterator[Metric]:
        if self.links is None:
            return
        up = GaugeMetricFamily(
            "eval_database_link_up",
            "Whether a long-lived database connection or loop works (1) or is down (0)",
            labels=["link"],
        )
        failures = CounterMetricFamily(
            "eval_database_link_failures",
            "Times a long-lived database connection or loop went down",
            labels=["link"],
        )
        for name, state in sorted(self.links.states().items()):
            up.add_metric([name], 1.0 if state.up else 0.0)
            failures.add_metric([name], state.failures)
        yield up
        yield failures

    def _limiter_metrics(self) -> Iterator[Metric]:
        if self.limiters is None:
            return
        families = {
            field: GaugeMetricFamily(
                f"eval_provider_limiter_{field}", meaning, labels=["target", "role"]
            )
            for field, meaning in LIMITER_FIELDS.items()
        }
        for target, role, state in self.limiters.limiter_states():
            values = state.model_dump()
            for field, family in families.items():
                family.add_metric([target, role], float(values[field]))
        yield from families.values()


class Metrics:
    """The app's metrics and the recorder API the HTTP and provider layers call."""

    def __init__(self) -> None:
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
        self.cases_claimed = Counter(
            "eval_worker_cases_claimed",
            "Cases (jobs of the queue) claimed, by worker process",
            ["worker"],
            registry=self.registry,
        )
        self.cases_finished = Counter(
            "eval_worker_cases_finished",
            "Claimed cases ended, by worker process and outcome "
            "(stored, skipped, cancelled, requeued)",
            ["worker", "outcome"],
            registry=self.registry,
        )
        self.state = StateCollector()
        self.statuses: StatusSource | None = None
        self.registry.register(self.state)
        self._call_series: dict[tuple[str, str, str], tuple[Counter, Histogram]] = {}
        """Labelled series of provider calls by (target, role, outcome): every provider call
        records into them, and ``labels()`` costs more than the recording itself."""

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
        key = (target, role, outcome)
        series = self._call_series.get(key)
        if series is None:
            series = self._call_series[key] = (
                self.provider_calls.labels(target, role, outcome),
                self.provider_duration.labels(target, role),
            )
        calls, duration = series
        calls.inc()
        duration.observe(seconds)

    def record_retry(self, target: str, role: str, reason: str) -> None:
        """Count one retried attempt (``reason``: e.g. ``rate_limited``, ``timeout``, ``5xx``)."""
        self.provider_retries.labels(target, role, reason).inc()

    def record_rate_limited(self, target: str, role: str) -> None:
        """Count one 429 answer from a provider."""
        self.provider_rate_limited.labels(target, role).inc()

    def record_case_claimed(self, worker: str) -> None:
        """Count one case claimed by ``worker`` (a job of the queue)."""
        self.cases_claimed.labels(worker).inc()

    def record_case_finished(self, worker: str, outcome: str) -> None:
        """Count one claimed case that ended (``stored``, ``skipped``, ``cancelled``...)."""
        self.cases_finished.labels(worker, outcome).inc()

    def watch(
        self, *, limiters: LimiterSource, statuses: StatusSource, links: Links | None = None
    ) -> None:
        """Read limiter state, stored counts and links' states from these at each scrape."""
        self.state.limiters = limiters
        self.state.links = links
        self.statuses = statuses

    async def scrape(self) -> bytes:
        """Refresh the stored counts, then render the registry in the Prometheus text format."""
        try:
            self.state.status_counts = (
                await self.statuses.count_by_status() if self.statuses is not None else {}
            )
        # A scrape must not fail with the database: the other metrics still matter.
        except Exception:
            logger.warning("could not count runs and cases by status", exc_info=True)
            self.state.status_counts = {}
        return generate_latest(self.registry)
