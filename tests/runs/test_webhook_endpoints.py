"""Webhook endpoints registered through the API: secrets shown once, sealed at rest, scoped.

Deliveries go to a receiver on 127.0.0.1 and are checked with the Standard Webhooks verifier
from PyPI (``standardwebhooks``) and the OpenAI SDK's ``webhooks.unwrap``.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import secrets
from pathlib import Path
from typing import Any

import pytest
from openai import OpenAI
from pydantic import SecretStr
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine
from standardwebhooks.webhooks import Webhook

from app.runs.notify.webhook_secrets import SealedSecretError, SecretBox
from app.settings import Settings
from app.settings.webhooks import WebhookEndpoint
from testkit.webhook_receiver import Receiver, webhook_receiver
from tests.conftest import ClientFactory, wait_for_run
from tests.runs.test_webhooks import SECRET, SUITE, deliveries, start_eval_run

KEY = "operator-key-" + secrets.token_hex(24)
KEY_A, KEY_B = "caller-a-key-0123456789", "caller-b-key-9876543210"


def settings_for(tmp_path: Path, database_url: str, **extra: Any) -> Settings:
    values: dict[str, Any] = {
        "data_dir": tmp_path / "data",
        "database_url": database_url,
        "sample_run": False,
        "webhook_secrets_key": SecretStr(KEY),
        "webhook_allow_private": True,
        "webhook_retry_base_seconds": 0.1,
        **extra,
    }
    return Settings(**values)


async def stored_endpoint_rows(database_url: str) -> list[str]:
    """Every column of every ``webhook_endpoints`` row, as text."""
    engine = create_async_engine(database_url)
    try:
        async with engine.connect() as connection:
            rows = (await connection.execute(text("SELECT * FROM webhook_endpoints"))).all()
    finally:
        await engine.dispose()
    return [str(value) for row in rows for value in row]


def verify(receiver: Receiver, secret: str) -> list[dict[str, Any]]:
    sdk = OpenAI(api_key="unused", base_url="http://127.0.0.1:9/v1", webhook_secret=secret)
    events = []
    for got in receiver.received:
        event = Webhook(secret).verify(got.body, got.headers)
        if event["type"].startswith("eval.run."):
            assert sdk.webhooks.unwrap(got.body, got.headers).to_dict() == event
        events.append(event)
    return events


async def test_a_registered_endpoint_gets_signed_events_and_its_secret_is_shown_once(
    tmp_path: Path,
    database_url: str,
    make_client: ClientFactory,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    with webhook_receiver() as receiver:
        async with make_client(settings_for(tmp_path, database_url)) as client:
            created = await client.post(
                "/webhooks", json={"url": receiver.url, "description": "ci receiver"}
            )
            body = created.json()
            secret = body["secret"]
            eval_run = await start_eval_run(client)
            run = (await client.post("/runs", json={"suite": SUITE})).json()["id"]
            await wait_for_run(client, eval_run)
            await wait_for_run(client, run)
            listed = await deliveries(client, 2)
            endpoints = (await client.get("/webhooks")).text
            one = await client.get(f"/webhooks/{body['id']}")

    assert created.status_code == 201
    assert created.headers["location"] == f"/webhooks/{body['id']}"
    assert body["id"].startswith("we_")
    assert body["source"] == "api"
    assert secret.startswith("whsec_")
    assert len(base64.b64decode(secret[6:])) == 32
    events = {event["data"]["id"]: event["type"] for event in verify(receiver, secret)}
    assert events == {eval_run: "eval.run.succeeded", run: "run.succeeded"}
    assert {(d["endpoint"], d["status"]) for d in listed} == {(body["id"], "delivered")}
    # Never shown again, never stored or logged in the clear.
    assert one.json() == {k: v for k, v in body.items() if k != "secret"}
    assert secret not in endpoints
    assert body["id"] in endpoints
    stored = await stored_endpoint_rows(database_url)
    assert body["id"] in stored
    assert all(secret[6:] not in value for value in stored)
    assert secret not in caplog.text


async def test_a_given_secret_signs_and_is_never_echoed(
    tmp_path: Path, database_url: str, make_client: ClientFactory
) -> None:
    with webhook_receiver() as receiver:
        async with make_client(settings_for(tmp_path, database_url)) as client:
            events = ["eval.run.succeeded", "eval.run.failed"]
            request = {"url": receiver.url, "secret": SECRET, "events": events}
            created = (await client.post("/webhooks", json=request)).json()
            await wait_for_run(client, await start_eval_run(client))
            run = (await client.post("/runs", json={"suite": SUITE})).json()["id"]
            await wait_for_run(client, run)
            await deliveries(client, 1)

    assert created["secret"] is None
    assert created["events"] == events
    assert SECRET not in str(created)
    # Only the events it asked for: the /runs run's run.succeeded is not posted to it.
    assert [event["type"] for event in verify(receiver, SECRET)] == ["eval.run.succeeded"]


async def test_registration_without_the_key_is_refused_by_name(
    tmp_path: Path, database_url: str, make_client: ClientFactory
) -> None:
    settings = settings_for(tmp_path, database_url, webhook_secrets_key=None)
    async with make_client(settings) as client:
        response = await client.post("/webhooks", json={"url": "http://127.0.0.1:9/hooks"})
    assert response.status_code == 409
    assert response.json()["type"] == "/problems/webhook-registration-off"
    assert "EVAL_WEBHOOK_SECRETS_KEY" in response.json()["detail"]


@pytest.mark.parametrize(
    ("body", "field", "said"),
    [
        ({"url": "http://169.254.169.254/latest"}, "url", "169.254.169.254"),
        ({"url": "ftp://example.com/hooks"}, "url", "http(s)"),
        ({"url": "http://127.0.0.1:9/h", "secret": "whsec_c2hvcnQ="}, "secret", "24 bytes"),
        ({"url": "http://127.0.0.1:9/h", "events": ["eval.run.started"]}, "events", "started"),
    ],
)
async def test_bad_endpoints_are_422s_naming_the_field(
    tmp_path: Path,
    make_client: ClientFactory,
    body: dict[str, Any],
    field: str,
    said: str,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'hooks.db'}"
    async with make_client(settings_for(tmp_path, url)) as client:
        response = await client.post("/webhooks", json=body)
        listed = (await client.get("/webhooks")).json()
    assert response.status_code == 422
    problem = response.json()
    assert field in response.text, problem
    assert said in response.text, problem
    assert listed == {"endpoints": []}


async def test_private_addresses_need_the_setting_at_registration_too(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'hooks.db'}"
    settings = settings_for(tmp_path, url, webhook_allow_private=False)
    async with make_client(settings) as client:
        response = await client.post("/webhooks", json={"url": "http://127.0.0.1:9/hooks"})
    assert response.status_code == 422
    assert "not a public address" in response.json()["detail"]


async def test_endpoints_are_their_callers_and_deleted_ones_get_nothing(
    tmp_path: Path, database_url: str, make_client: ClientFactory
) -> None:
    as_b = {"Authorization": f"Bearer {KEY_B}"}
    settings = settings_for(
        tmp_path,
        database_url,
        api_keys=[SecretStr(KEY_A), SecretStr(KEY_B)],
        webhooks=[WebhookEndpoint(name="ops", url="http://127.0.0.1:9/ops", secret=SECRET)],
    )
    with webhook_receiver() as receiver:
        async with make_client(settings) as client:
            client.headers["Authorization"] = f"Bearer {KEY_A}"  # A unless said otherwise
            mine = await client.post("/webhooks", json={"url": receiver.url})
            ours = mine.json()
            theirs = (await client.get("/webhooks", headers=as_b)).json()
            peek = await client.get(f"/webhooks/{ours['id']}", headers=as_b)
            steal = await client.delete(f"/webhooks/{ours['id']}", headers=as_b)
            b_run = (await client.post("/runs", json={"suite": SUITE}, headers=as_b)).json()["id"]
            a_run = (await client.post("/runs", json={"suite": SUITE})).json()["id"]
            await wait_for_run(client, a_run)
            await deliveries(client, 1)  # A's run to A's endpoint (the operator's is down)
            settings_delete = await client.delete("/webhooks/ops")
            gone = await client.delete(f"/webhooks/{ours['id']}")
            after = (await client.get("/webhooks")).json()
            b_listed = (await client.get("/webhooks/deliveries", headers=as_b)).json()

    assert mine.status_code == 201
    # B sees the operator's endpoint only; A's is not B's to read or delete.
    assert [e["id"] for e in theirs["endpoints"]] == ["ops"]
    assert (peek.status_code, steal.status_code) == (404, 404)
    # A's endpoint got A's run only; B's run went to the operator's endpoint alone.
    assert [event["data"]["id"] for event in verify(receiver, ours["secret"])] == [a_run]
    assert {(d["run_id"], d["endpoint"]) for d in b_listed["deliveries"]} <= {(b_run, "ops")}
    assert settings_delete.status_code == 409
    assert "EVAL_WEBHOOKS" in settings_delete.text
    assert gone.status_code == 204
    assert [e["id"] for e in after["endpoints"]] == ["ops"]


def test_a_sealed_secret_opens_only_with_its_key_and_for_its_endpoint() -> None:
    box = SecretBox(KEY)
    sealed = box.seal(SECRET, "we_1")
    assert SECRET not in sealed
    assert sealed != box.seal(SECRET, "we_1")  # a fresh nonce
    assert box.open(sealed, "we_1") == SECRET
    with pytest.raises(SealedSecretError, match="EVAL_WEBHOOK_SECRETS_KEY"):
        SecretBox(KEY + "x").open(sealed, "we_1")
    with pytest.raises(SealedSecretError):
        box.open(sealed, "we_2")  # copied onto another endpoint's row


async def test_deliveries_to_a_deleted_endpoint_fail_by_name(
    tmp_path: Path, database_url: str, make_client: ClientFactory
) -> None:
    # Nothing listens on port 9: the first try fails, then the endpoint is deleted.
    settings = settings_for(tmp_path, database_url, webhook_retry_base_seconds=0.5)
    async with make_client(settings) as client:
        created = (await client.post("/webhooks", json={"url": "http://127.0.0.1:9/h"})).json()
        run = (await client.post("/runs", json={"suite": SUITE})).json()["id"]
        await wait_for_run(client, run)
        async with asyncio.timeout(20):
            while not (await client.get("/webhooks/deliveries")).json()["deliveries"]:  # noqa: ASYNC110
                await asyncio.sleep(0.05)
        await client.delete(f"/webhooks/{created['id']}")
        (failed,) = await deliveries(client, 1, status="failed")
    assert failed["endpoint"] == created["id"]
    assert "no longer configured" in failed["last_error"]
