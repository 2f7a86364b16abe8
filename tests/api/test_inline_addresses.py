"""Inline targets: every spelling of an address is resolved, checked, and the call pinned to it.

Only loopback spellings are used; the metadata address is refused before any connection.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from app.providers.access import addresses
from app.settings import Settings
from testkit.fake_llm import FakeLLM
from tests.api.test_inline_targets import KEY, SUITE, inline, private_access
from tests.conftest import ClientFactory

LOOPBACK_SPELLINGS = [
    "0x7f000001",
    "0x7f.0x0.0x0.0x1",
    "0x7f.1",
    "0177.0.0.1",
    "127.000.000.001",
    "2130706433",
    "127.1",
    "[::ffff:127.0.0.1]",
]
# 169.254.169.254 spelled as the attack did; resolved without any lookup, never connected to.
METADATA_SPELLINGS = ["0xa9fea9fe", "0xa9.0xfe.0xa9.0xfe", "2852039166", "169.254.43518"]


def _url(host: str, fake_llm: FakeLLM) -> str:
    return f"http://{host}:{fake_llm.url.rsplit(':', 1)[1]}"


@pytest.mark.parametrize("host", LOOPBACK_SPELLINGS)
async def test_loopback_spellings_are_refused_without_private_access(
    host: str, tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    settings = Settings(data_dir=tmp_path / "data", allow_inline_targets=True)
    async with make_client(settings) as client:
        target = inline(_url(host, fake_llm))
        response = await client.post(
            "/evaluate", json={"suite": SUITE, "targets": [target], "target": "mine"}
        )
    assert response.status_code == 422, response.text
    assert response.json()["type"].endswith("inline-target-refused")
    assert KEY not in response.text
    assert fake_llm.requests == []


@pytest.mark.parametrize("host", METADATA_SPELLINGS)
async def test_metadata_spellings_are_refused_even_with_private_access(
    host: str, tmp_path: Path, make_client: ClientFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_connection(*args: object, **kwargs: object) -> None:
        raise AssertionError("a refused inline target must not connect")

    monkeypatch.setattr(socket.socket, "connect", no_connection)
    monkeypatch.setattr(socket.socket, "connect_ex", no_connection)
    async with make_client(private_access(tmp_path)) as client:
        target = inline(f"http://{host}")
        response = await client.post(
            "/evaluate", json={"suite": SUITE, "targets": [target], "target": "mine"}
        )
    assert response.status_code == 422, response.text
    assert "169.254.169.254" in response.json()["detail"]
    assert "link-local" in response.json()["detail"]


@pytest.mark.parametrize("host", ["0x7f.1", "2130706433", "0x7f000001", "127.1"])
async def test_legacy_spellings_are_refused_by_name_even_with_private_access(
    host: str, tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    async with make_client(private_access(tmp_path)) as client:
        target = inline(_url(host, fake_llm))
        response = await client.post(
            "/evaluate", json={"suite": SUITE, "targets": [target], "target": "mine"}
        )
    assert response.status_code == 422, response.text
    assert f"{host!r} is a legacy spelling of 127.0.0.1" in response.json()["detail"]
    assert fake_llm.requests == []


async def test_the_call_goes_to_the_address_checked_not_a_second_lookup(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name that answers loopback when checked and metadata later still reaches loopback."""
    answers = iter(["127.0.0.1", "169.254.169.254", "169.254.169.254", "169.254.169.254"])
    looked_up: list[str] = []

    async def rebinding(host: str, port: int) -> list[tuple[socket.AddressFamily, str]]:
        looked_up.append(host)
        return [(socket.AF_INET, next(answers))]

    monkeypatch.setattr(addresses, "lookup", rebinding)
    async with make_client(private_access(tmp_path)) as client:
        target = inline(_url("rebind.invalid", fake_llm))
        response = await client.post(
            "/evaluate", json={"suite": SUITE, "targets": [target], "target": "mine"}
        )
    assert response.status_code == 200, response.text
    assert response.json()["results"][0]["status"] != "error", response.text
    assert looked_up == ["rebind.invalid"]
    assert fake_llm.requests[0].headers["host"].startswith("rebind.invalid:")
