"""A webhook delivery survives kill -9 of the service between two tries.

The receiver is down (nothing listens on its port) when the run finishes, so the first try
fails and the delivery waits for its retry; the service is killed with SIGKILL in between,
the receiver comes up, and the restarted service delivers the same message (same
``webhook-id``), verified with the Standard Webhooks verifier.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from standardwebhooks.webhooks import Webhook

from testkit.server import free_port, running_service
from testkit.webhook_receiver import webhook_receiver

pytestmark = pytest.mark.slow
SECRET = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
SUITE = {
    "dataset": "hooks",
    "evalcases": [
        {"id": "c1", "expected_outcome": "x", "input_messages": [{"role": "user", "content": "Q?"}]}
    ],
}


def delivery_when(url: str, predicate: Any, timeout: float = 30.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        page = httpx.get(f"{url}/webhooks/deliveries", timeout=5).json()
        matching = [d for d in page["deliveries"] if predicate(d)]
        if matching:
            return dict(matching[0])
        time.sleep(0.1)
    raise TimeoutError(f"no delivery got there: {page}")


@pytest.mark.parametrize("source", ["settings", "api"])
def test_a_delivery_pending_at_kill_9_is_delivered_after_restart(
    tmp_path: Path, source: str
) -> None:
    # The endpoint is configured (EVAL_WEBHOOKS), or registered through the API (a row, its
    # secret sealed with EVAL_WEBHOOK_SECRETS_KEY, read back by the restarted process).
    port = free_port()
    hook_url = f"http://127.0.0.1:{port}/hooks"
    env = {
        "PATH": os.environ.get("PATH", ""),  # noqa: TID251
        "EVAL_DATA_DIR": str(tmp_path / "data"),
        "EVAL_LOG_LEVEL": "WARNING",
        "EVAL_SAMPLE_RUN": "false",
        "EVAL_WEBHOOK_ALLOW_PRIVATE": "true",
        "EVAL_WEBHOOK_RETRY_BASE_SECONDS": "2",
    }
    if source == "settings":
        env["EVAL_WEBHOOKS"] = json.dumps([{"name": "ci", "url": hook_url, "secret": SECRET}])
    else:
        env["EVAL_WEBHOOK_SECRETS_KEY"] = base64.b64encode(secrets.token_bytes(32)).decode()
    with running_service(env) as (url, process):
        if source == "api":
            registered = httpx.post(
                f"{url}/webhooks", json={"url": hook_url, "secret": SECRET}, timeout=10
            )
            assert registered.status_code == 201, registered.text
        run_id = httpx.post(f"{url}/runs", json={"suite": SUITE}, timeout=10).json()["id"]
        failed_once = delivery_when(url, lambda d: d["run_id"] == run_id and d["attempts"] >= 1)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=20)
    assert failed_once["status"] == "pending"
    assert "ClientConnectorError" in failed_once["last_error"]

    with webhook_receiver(port) as receiver, running_service(env) as (url, _):
        delivered = delivery_when(url, lambda d: d["status"] == "delivered")

    (got,) = receiver.received
    event = Webhook(SECRET).verify(got.body, got.headers)
    assert (event["type"], event["data"]["id"]) == ("run.succeeded", run_id)
    assert got.headers["webhook-id"] == delivered["id"] == failed_once["id"]
    assert delivered["attempts"] >= 2
