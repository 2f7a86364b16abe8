"""Webhooks: finished runs posted to a receiver on 127.0.0.1, signed, retried, listed.

Signatures are checked with the Standard Webhooks verifier from PyPI (``standardwebhooks``)
and with the OpenAI SDK's own ``webhooks.unwrap`` (what OpenAI's webhook users call).
"""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
from pathlib import Path
from typing import Any

import httpx
import pytest
from openai import OpenAI
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from app.schemas.openai_examples import EVAL_EXAMPLE, SAMPLE_ITEMS
from app.settings import Settings
from app.settings.webhooks import WebhookEndpoint
from testkit.webhook_receiver import Receiver, webhook_receiver
from tests.conftest import ClientFactory, wait_for_run

SECRET = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
SUITE = {
    "dataset": "hooks",
    "evalcases": [
        {
            "id": "c1",
            "expected_outcome": "Paris",
            "input_messages": [{"role": "user", "content": "Q?"}],
        }
    ],
}


def settings_for(tmp_path: Path, database_url: str, url: str, **extra: Any) -> Settings:
    values: dict[str, Any] = {
        "data_dir": tmp_path / "data",
        "database_url": database_url,
        "sample_run": False,
        "webhooks": [WebhookEndpoint(name="ci", url=url, secret=SECRET)],
        "webhook_allow_private": True,
        "webhook_retry_base_seconds": 0.1,
        **extra,
    }
    return Settings(**values)


async def deliveries(client: httpx.AsyncClient, count: int, **params: str) -> list[dict[str, Any]]:
    """The deliveries page once it lists ``count`` settled deliveries."""
    async with asyncio.timeout(20):
        while True:
            page = (await client.get("/webhooks/deliveries", params=params)).json()
            settled = [d for d in page["deliveries"] if d["status"] != "pending"]
            if len(settled) >= count:
                return list(page["deliveries"])
            await asyncio.sleep(0.05)


async def start_eval_run(client: httpx.AsyncClient) -> str:
    eval_id = (await client.post("/v1/evals", json=EVAL_EXAMPLE)).json()["id"]
    source = {"type": "file_content", "content": SAMPLE_ITEMS}
    body = {"data_source": {"type": "jsonl", "source": source}}
    return str((await client.post(f"/v1/evals/{eval_id}/runs", json=body)).json()["id"])


def verified(receiver: Receiver) -> list[dict[str, Any]]:
    """Every body the receiver got, each checked by both verifiers."""
    events = []
    sdk = OpenAI(api_key="unused", base_url="http://127.0.0.1:9/v1", webhook_secret=SECRET)
    for got in receiver.received:
        event = Webhook(SECRET).verify(got.body, got.headers)
        if event["type"].startswith("eval.run."):
            unwrapped = sdk.webhooks.unwrap(got.body, got.headers).to_dict()
            assert unwrapped == event
        events.append(event)
    return events


async def test_finished_runs_are_posted_signed_with_openais_event_names(
    tmp_path: Path, database_url: str, make_client: ClientFactory
) -> None:
    with webhook_receiver() as receiver:
        async with make_client(settings_for(tmp_path, database_url, receiver.url)) as client:
            eval_run = await start_eval_run(client)
            run = (await client.post("/runs", json={"suite": SUITE})).json()["id"]
            await wait_for_run(client, eval_run)
            await wait_for_run(client, run)
            listed = await deliveries(client, 2)
            endpoints = (await client.get("/webhooks")).json()

    events = {event["data"]["id"]: event for event in verified(receiver)}
    assert events[eval_run]["type"] == "eval.run.succeeded"
    assert events[run]["type"] == "run.succeeded"
    assert all(e["object"] == "event" and e["id"].startswith("evt_") for e in events.values())
    assert {(d["run_id"], d["status"], d["attempts"]) for d in listed} == {
        (eval_run, "delivered", 1),
        (run, "delivered", 1),
    }
    assert endpoints == {
        "endpoints": [
            {
                "id": "ci",
                "source": "settings",
                "url": receiver.url,
                "events": list(WebhookEndpoint.model_fields["events"].default),
                "description": None,
                "created_at": None,
            }
        ]
    }
    assert SECRET not in json.dumps(endpoints)


async def test_a_forged_or_replayed_body_fails_verification(
    tmp_path: Path, database_url: str, make_client: ClientFactory
) -> None:
    with webhook_receiver() as receiver:
        async with make_client(settings_for(tmp_path, database_url, receiver.url)) as client:
            await wait_for_run(client, await start_eval_run(client))
            await deliveries(client, 1)

    (got,) = receiver.received
    with pytest.raises(WebhookVerificationError):
        Webhook(SECRET).verify(got.body.replace(b"succeeded", b"failed"), got.headers)
    other = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
    with pytest.raises(WebhookVerificationError):
        Webhook(other).verify(got.body, got.headers)


async def test_a_receiver_down_for_a_while_gets_the_event_once_it_recovers(
    tmp_path: Path, database_url: str, make_client: ClientFactory
) -> None:
    with webhook_receiver() as receiver:
        receiver.fail_next = 3
        async with make_client(settings_for(tmp_path, database_url, receiver.url)) as client:
            cancelled = (await client.post("/runs", json={"suite": SUITE})).json()["id"]
            await client.post(f"/runs/{cancelled}/cancel")
            await wait_for_run(client, cancelled)
            (delivery,) = await deliveries(client, 1)

    assert receiver.answered == [503, 503, 503, 200]
    assert (delivery["status"], delivery["attempts"], delivery["last_status_code"]) == (
        "delivered",
        4,
        200,
    )
    ids = {got.headers["webhook-id"] for got in receiver.received}
    assert ids == {delivery["id"]}  # the same message id on every try
    event = verified(receiver)[-1]
    assert event["type"] in {"run.canceled", "run.succeeded"}


async def test_private_addresses_are_refused_without_the_setting(
    tmp_path: Path, database_url: str, make_client: ClientFactory
) -> None:
    with webhook_receiver() as receiver:
        settings = settings_for(
            tmp_path,
            database_url,
            receiver.url,
            webhook_allow_private=False,
            webhook_max_attempts=2,
        )
        async with make_client(settings) as client:
            await wait_for_run(client, await start_eval_run(client))
            (delivery,) = await deliveries(client, 1, status="failed")

    assert receiver.received == []
    assert delivery["attempts"] == 2
    assert "127.0.0.1" in delivery["last_error"]
    assert "not a public address" in delivery["last_error"]
