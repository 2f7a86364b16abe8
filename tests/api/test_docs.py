"""``/docs`` and ``/redoc`` load nothing from another host, keys or not."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from app.settings import Settings
from tests.conftest import ClientFactory

REFERENCE = re.compile(r"""(?:src|href|spec-url)\s*=\s*["']([^"']+)["']|url:\s*["']([^"']+)["']""")


def references(html: str) -> list[str]:
    return [next(group for group in match if group) for match in REFERENCE.findall(html)]


@pytest.mark.parametrize("keys", [[], ["a-key-of-16-chars"]], ids=["open", "with-keys"])
@pytest.mark.parametrize("page", ["/docs", "/redoc"])
async def test_docs_pages_and_their_assets_are_served_by_the_service(
    tmp_path: Path, make_client: ClientFactory, page: str, keys: list[str]
) -> None:
    settings = Settings(data_dir=tmp_path / "data", api_keys=keys, sample_run=False)
    async with make_client(settings) as client:
        response = await client.get(page)
        urls = references(response.text)
        assets = {url: await client.get(url) for url in urls}

    assert response.status_code == 200
    assert "//" not in response.text.replace("<!--", "")
    assert "/openapi.json" in urls
    assert any(url.endswith(".js") for url in urls)
    assert any(url.endswith("favicon.png") for url in urls)
    for url, asset in assets.items():
        assert asset.status_code == 200, url
        assert len(asset.content) > 1000, url


async def test_swagger_ui_opens_operations_ready_to_execute_without_the_validator_badge(
    client: httpx.AsyncClient,
) -> None:
    html = (await client.get("/docs")).text

    assert '"tryItOutEnabled": true' in html
    assert '"validatorUrl": null' in html


async def test_assets_outside_the_docs_folder_still_need_a_key(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    settings = Settings(data_dir=tmp_path / "data", api_keys=["a-key-of-16-chars"])
    async with make_client(settings) as client:
        assert (await client.get("/docs/assetsx")).status_code == 401
        assert (await client.get("/docs/other")).status_code == 401
