"""CORS: off by default; on for the configured origins, preflight answered before auth."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
from asgi_lifespan import LifespanManager

from app.main import create_app
from app.settings import Settings

ORIGIN = "https://dashboard.example.com"
PREFLIGHT = {
    "Origin": ORIGIN,
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "authorization, content-type",
}


async def serve(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    application = create_app(settings)
    async with LifespanManager(application):
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            yield http


async def test_cors_is_off_by_default(tmp_path: Path) -> None:
    async for http in serve(Settings(data_dir=tmp_path / "data")):
        simple = await http.get("/healthz", headers={"Origin": ORIGIN})
        preflight = await http.options("/format", headers=PREFLIGHT)

        assert "access-control-allow-origin" not in simple.headers
        assert "access-control-allow-origin" not in preflight.headers


async def test_configured_origins_are_allowed_and_preflight_needs_no_key(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", cors_origins=ORIGIN, api_keys=["k" * 20])
    async for http in serve(settings):
        preflight = await http.options("/format", headers=PREFLIGHT)
        refused = await http.post("/format", json={}, headers={"Origin": ORIGIN})
        stranger = await http.get("/healthz", headers={"Origin": "https://evil.example"})

        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == ORIGIN
        assert refused.status_code == 401
        assert refused.headers["access-control-allow-origin"] == ORIGIN
        assert "x-request-id" in refused.headers["access-control-expose-headers"].lower()
        assert "access-control-allow-origin" not in stranger.headers
