"""Optional API keys: 401 problems, open public routes, and the caller's stable id."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI, Request

from app.api.middleware.auth import CallerDep, get_caller
from app.errors import ApiKeysFileError, Unauthorized
from app.main import create_app
from app.settings import Settings
from tests.conftest import ClientFactory

KEY_A = "key-a-0123456789"
KEY_B = "key-b-9876543210"
FORMAT_BODY = {"input_messages": [{"role": "user", "content": "hi"}]}


def caller_id(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def app_with_whoami(settings: Settings) -> FastAPI:
    application = create_app(settings)

    @application.get("/test/whoami")
    async def whoami(caller: CallerDep) -> dict[str, str | None]:
        return {"id": caller.id}

    return application


@pytest.fixture
async def keyed(tmp_path: Path, make_client: ClientFactory) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(data_dir=tmp_path / "data", api_keys=[KEY_A, KEY_B])
    async with make_client(app_with_whoami(settings)) as http:
        yield http


@pytest.fixture
async def open_client(
    tmp_path: Path, make_client: ClientFactory
) -> AsyncIterator[httpx.AsyncClient]:
    async with make_client(app_with_whoami(Settings(data_dir=tmp_path / "data"))) as http:
        yield http


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def test_without_keys_configured_every_route_is_open_and_the_caller_has_no_id(
    open_client: httpx.AsyncClient,
) -> None:
    assert (await open_client.post("/format", json=FORMAT_BODY)).status_code == 200
    assert (await open_client.get("/test/whoami")).json() == {"id": None}


async def test_a_missing_key_is_a_401_problem_with_a_bearer_challenge(
    keyed: httpx.AsyncClient,
) -> None:
    response = await keyed.post("/format", json=FORMAT_BODY)

    assert response.status_code == 401
    assert response.headers["content-type"] == "application/problem+json"
    assert response.headers["www-authenticate"].startswith("Bearer")
    problem = response.json()
    assert problem["type"] == "/problems/unauthorized"
    assert problem["status"] == 401
    assert "Authorization: Bearer" in problem["detail"]


@pytest.mark.parametrize(
    "authorization",
    [f"Bearer {KEY_A}x", f"Basic {KEY_A}", KEY_A, "Bearer ", f"bearer {KEY_A[:-1]}"],
    ids=["wrong-key", "wrong-scheme", "no-scheme", "empty-token", "prefix-of-a-key"],
)
async def test_a_wrong_key_is_a_401_problem_that_never_echoes_the_key(
    keyed: httpx.AsyncClient, authorization: str
) -> None:
    response = await keyed.post(
        "/format", json=FORMAT_BODY, headers={"Authorization": authorization}
    )

    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert KEY_A not in response.text


async def test_unknown_routes_need_a_key_too(keyed: httpx.AsyncClient) -> None:
    assert (await keyed.get("/no/such/route")).status_code == 401
    assert (await keyed.get("/no/such/route", headers=bearer(KEY_A))).status_code == 404


@pytest.mark.parametrize(
    "path",
    [
        "/healthz",
        "/readyz",
        "/metrics",
        "/openapi.json",
        "/docs",
        "/redoc",
        "/docs/assets/swagger-ui-bundle.js",
    ],
)
async def test_public_routes_need_no_key(keyed: httpx.AsyncClient, path: str) -> None:
    assert (await keyed.get(path)).status_code == 200


async def test_a_valid_key_passes_and_the_caller_id_is_a_stable_digest_prefix(
    keyed: httpx.AsyncClient,
) -> None:
    response = await keyed.post("/format", json=FORMAT_BODY, headers=bearer(KEY_A))
    first = (await keyed.get("/test/whoami", headers=bearer(KEY_A))).json()
    again = (await keyed.get("/test/whoami", headers=bearer(KEY_A))).json()
    other = (await keyed.get("/test/whoami", headers=bearer(KEY_B))).json()

    assert response.status_code == 200
    assert first == again == {"id": caller_id(KEY_A)}
    assert other == {"id": caller_id(KEY_B)}


async def test_keys_can_come_from_a_file_of_sha256_digests(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    digest = hashlib.sha256(KEY_A.encode()).hexdigest()
    keys_file = tmp_path / "keys.txt"
    keys_file.write_text(f"# ci robot\n{digest}  -\n\n{digest.upper()} # same key again\n")
    settings = Settings(data_dir=tmp_path / "data", api_keys_file=keys_file)

    async with make_client(app_with_whoami(settings)) as http:
        assert (await http.get("/test/whoami")).status_code == 401
        response = await http.get("/test/whoami", headers=bearer(KEY_A))
        assert response.json() == {"id": caller_id(KEY_A)}


@pytest.mark.parametrize(
    ("content", "message"),
    [("not-a-digest\n", "line 1"), (None, "cannot read")],
    ids=["bad-line", "missing-file"],
)
def test_an_unusable_keys_file_stops_the_app_from_starting(
    tmp_path: Path, content: str | None, message: str
) -> None:
    keys_file = tmp_path / "keys.txt"
    if content is not None:
        keys_file.write_text(content)

    with pytest.raises(ApiKeysFileError, match=message):
        create_app(Settings(data_dir=tmp_path / "data", api_keys_file=keys_file))


def test_keys_never_appear_in_the_settings_repr() -> None:
    assert KEY_A not in repr(Settings(api_keys=[KEY_A]))


def test_a_route_added_to_the_app_declares_bearer_security_in_openapi(tmp_path: Path) -> None:
    application = create_app(Settings(data_dir=tmp_path / "data"))

    @application.get("/test/whoami", operation_id="whoami")
    async def whoami(caller: CallerDep) -> dict[str, str | None]:
        return {"id": caller.id}

    document = application.openapi()
    schemes = document["components"]["securitySchemes"]
    (name,) = [name for name, scheme in schemes.items() if scheme.get("scheme") == "bearer"]
    assert document["paths"]["/test/whoami"]["get"]["security"] == [{name: []}]


async def test_caller_dep_fails_closed_when_no_caller_was_established() -> None:
    request = Request({"type": "http", "method": "GET", "path": "/healthz", "headers": []})

    with pytest.raises(Unauthorized):
        await get_caller(request)


async def test_metrics_can_be_made_to_need_a_key(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    settings = Settings(data_dir=tmp_path / "data", api_keys=[KEY_A], metrics_require_key=True)
    async with make_client(settings) as client:
        refused = await client.get("/metrics")
        allowed = await client.get("/metrics", headers=bearer(KEY_A))
        health = await client.get("/healthz")
        document = (await client.get("/openapi.json")).json()
    assert refused.status_code == 401
    assert refused.headers["content-type"] == "application/problem+json"
    assert allowed.status_code == 200
    assert "eval_http_requests_total" in allowed.text
    assert health.status_code == 200
    assert document["paths"]["/metrics"]["get"]["security"]
    assert "security" not in document["paths"]["/healthz"]["get"]
