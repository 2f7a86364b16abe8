"""A dropped event stream: ``evalx`` resumes after the last event it saw, with no gap."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from app.cli.problems import EXIT_PASSED
from tests.cli.conftest import Evalx, SuiteFile
from tests.cli.proxy import cutting_proxy

pytestmark = pytest.mark.slow


def test_a_dropped_stream_is_resumed_without_gaps_or_repeats(
    service: str, suite_file: SuiteFile, evalx: Evalx, tmp_path: Path
) -> None:
    path = suite_file("big.yaml", cases=200)
    port = urlsplit(service).port
    assert port is not None
    # Each case_completed event carries its record (about 2 kB): cut a few dozen cases in.
    with cutting_proxy(port, cut_after=60_000) as proxy:
        result = evalx("run", str(path), "--server", f"http://127.0.0.1:{proxy.port}",
                       "--target", "good", "--json", "run.json")  # fmt: skip
    assert result.returncode == EXIT_PASSED, result.stderr
    assert proxy.cuts == 1
    # The first request asked from the start; the second resumed after the last event seen.
    assert len(proxy.resumed_from) == 2
    first, resumed = proxy.resumed_from
    assert first is None
    assert resumed is not None
    assert int(resumed) > 0
    said = re.search(r"event stream dropped \(\w+\); resuming after event (\d+)", result.stderr)
    assert said, result.stderr
    assert said[1] == resumed
    # Every case came through the two streams exactly once, and no record was fetched apart.
    assert "events: 200 cases received over 2 connections" in result.stderr
    assert "warning" not in result.stderr
    records = json.loads((tmp_path / "run.json").read_text())["records"]
    assert sorted(r["eval_id"] for r in records) == sorted(f"c{i}" for i in range(200))
