"""The ``/v1`` ``python`` grader runs in the sandbox: its source sees no secret, reaches nothing.

Its source comes with the eval (``POST /v1/evals``), so it is the most exposed program the
service runs: on the unconfined runner it read the service's keys from
``/proc/$PPID/environ``, connected out and wrote files.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlsplit

from tests.security.conftest import SECRET, Service

PROBE = """
def grade(sample, item):
    import os, socket
    failed = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if {secret!r}.encode() in open(f"/proc/{{pid}}/environ", "rb").read():
                    failed |= 1
            except OSError:
                pass
    try:
        open(f"/proc/{{os.getppid()}}/environ", "rb").read()
        failed |= 2
    except OSError:
        pass
    try:
        socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
        failed |= 4
    except OSError:
        pass
    try:
        open({data!r} + "/written-by-a-grader", "w").write("x")
        failed |= 8
    except OSError:
        pass
    if {secret!r} in str(os.environ):
        failed |= 16
    return failed
"""


def _scores(service: Service, criteria: list[dict[str, Any]]) -> dict[str, float]:
    """Run one row through an eval with ``criteria``; each criterion's score by name."""
    created = service.post(
        "/v1/evals",
        {
            "name": "python graders",
            "data_source_config": {"type": "custom", "item_schema": {"type": "object"}},
            "testing_criteria": criteria,
        },
    )
    assert created.status_code in (200, 201), created.text
    eval_id = created.json()["id"]
    names = {criterion["id"]: criterion["name"] for criterion in created.json()["testing_criteria"]}
    rows = [{"item": {}, "sample": {"output_text": "hello"}}]
    source = {"type": "jsonl", "source": {"type": "file_content", "content": rows}}
    run = service.post(f"/v1/evals/{eval_id}/runs", {"data_source": source})
    assert run.status_code in (200, 201), run.text
    run_id = run.json()["id"]
    deadline = time.monotonic() + 60
    path = f"/v1/evals/{eval_id}/runs/{run_id}"
    while service.get(path)["status"] not in ("completed", "failed"):
        assert time.monotonic() < deadline, "the run did not finish"
        time.sleep(0.1)
    items = service.get(f"{path}/output_items")["data"]
    return {names.get(r["name"], r["name"]): r["score"] for r in items[0]["results"]}


def test_a_v1_python_grader_scores_and_its_source_reaches_nothing(service: Service) -> None:
    port = urlsplit(service.url).port
    probe = PROBE.format(secret=SECRET, port=port, data=str(service.data))
    scores = _scores(
        service,
        [
            {"type": "python", "name": "benign", "source": "def grade(s, i): return 1"},
            {"type": "python", "name": "probe", "source": probe, "pass_threshold": 0},
        ],
    )
    assert scores["benign"] == 1
    # 0: no secret in any /proc or in its environment, no parent's environ, no connection to
    # the service, nothing written in the data folder (each a bit of the score otherwise).
    assert scores["probe"] == 0
    assert not (service.data / "written-by-a-grader").exists()
