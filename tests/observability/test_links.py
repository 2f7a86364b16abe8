"""The state of long-lived database links: each outage counted once, shown in the metrics."""

from __future__ import annotations

from app.observability.links import Backoff, Links
from app.observability.metrics import Metrics
from tests.observability.test_metrics import samples


def test_an_outage_is_counted_once_however_many_attempts_fail_during_it() -> None:
    links = Links()
    links.up("case_queue")
    for _ in range(3):
        links.down("case_queue", ConnectionRefusedError())
    links.down("case_queue", TimeoutError())
    state = links.states()["case_queue"]
    assert (state.up, state.failures, state.error) == (False, 1, "TimeoutError")
    links.up("case_queue")
    links.down("case_queue", "connection lost")
    assert links.states()["case_queue"].failures == 2
    assert links.checks()["case_queue"].endswith(": connection lost, reconnecting")


async def test_metrics_show_whether_each_link_is_up_and_how_often_it_went_down() -> None:
    links = Links()
    links.up("case_queue")
    links.down("fleet_listener", "connection lost")
    metrics = Metrics()
    metrics.state.links = links

    found = samples(await metrics.scrape())

    assert found[("eval_database_link_up", (("link", "case_queue"),))] == 1
    assert found[("eval_database_link_up", (("link", "fleet_listener"),))] == 0
    assert found[("eval_database_link_failures_total", (("link", "fleet_listener"),))] == 1
    assert found[("eval_database_link_failures_total", (("link", "case_queue"),))] == 0


def test_backoff_doubles_up_to_its_ceiling_and_starts_over_after_a_success() -> None:
    backoff = Backoff(first=1.0, ceiling=5.0)
    delays = [backoff.delay() for _ in range(5)]
    for delay, nominal in zip(delays, [1, 2, 4, 5, 5], strict=True):
        assert nominal * 0.8 <= delay <= nominal * 1.2
    backoff.reset()
    assert backoff.delay() <= 1.2
