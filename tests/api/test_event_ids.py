"""``Last-Event-ID`` values the service never sent: the whole stream, never an aborted one."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.settings import Settings
from tests.api.test_runs import sse_events, suite_with
from tests.conftest import ClientFactory, wait_for_run


@pytest.mark.parametrize(
    "header",
    # b"\xb2" is read as latin-1 "²", a digit to str.isdigit but not to int().
    [b"99999999999999999999999", str(2**63).encode(), b"-1", b"\xb2", b"1.5", b"abc"],
)
async def test_a_last_event_id_never_sent_replays_the_stream_from_its_start(
    header: bytes, tmp_path: Path, make_client: ClientFactory, database_url: str
) -> None:
    settings = Settings(data_dir=tmp_path / "data", database_url=database_url, sample_run=False)
    async with make_client(settings) as client:
        run_id = (await client.post("/runs", json={"suite": suite_with(2)})).json()["id"]
        await wait_for_run(client, run_id)
        full = await client.get(f"/runs/{run_id}/events")
        response = await client.get(f"/runs/{run_id}/events", headers={b"Last-Event-ID": header})
    assert response.status_code == 200
    events = sse_events(response.text)
    assert events == sse_events(full.text)
    assert events[-1]["event"] == "run_completed"
