"""The service's HTTP API as the command uses it: runs, their events, results, comparisons."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

from app.cli.problems import ClientError, problem_message
from app.cli.sse import Event, parse_events

USER_AGENT = "evalx/0.1"
# Reads wait as long as a stream may stay silent between the server's 15 s pings.
TIMEOUT = httpx.Timeout(30.0, read=60.0)


class ServiceClient:
    """One server (base URL and optional API key) over one connection pool."""

    def __init__(self, base_url: str, key: str | None = None) -> None:
        """Talk to ``base_url`` sending ``key`` as the bearer token when given."""
        headers = {"user-agent": USER_AGENT}
        if key:
            headers["authorization"] = f"Bearer {key}"
        self.base_url = base_url.rstrip("/")
        self._http = httpx.AsyncClient(base_url=self.base_url, headers=headers, timeout=TIMEOUT)

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    async def _call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = await self._http.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            raise ClientError(f"cannot reach {self.base_url}: {exc!r}") from exc
        if response.status_code >= 400:
            raise ClientError(problem_message(response))
        return response

    async def submit(self, body: Mapping[str, Any], idempotency_key: str | None) -> dict[str, Any]:
        """``POST /runs``: the new (or, for a repeated idempotency key, the same) run."""
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        response = await self._call("POST", "/runs", json=dict(body), headers=headers)
        run: dict[str, Any] = response.json()
        return run

    async def run(self, run_id: str) -> dict[str, Any]:
        """``GET /runs/{id}``."""
        run: dict[str, Any] = (await self._call("GET", f"/runs/{run_id}")).json()
        return run

    async def runs(self, **filters: str | int | None) -> list[dict[str, Any]]:
        """``GET /runs``: the first page of runs, newest first, passing ``filters``."""
        params = {name: value for name, value in filters.items() if value is not None}
        found: list[dict[str, Any]] = (await self._call("GET", "/runs", params=params)).json()[
            "runs"
        ]
        return found

    async def cancel(self, run_id: str) -> dict[str, Any]:
        """``POST /runs/{id}/cancel``."""
        run: dict[str, Any] = (await self._call("POST", f"/runs/{run_id}/cancel")).json()
        return run

    async def records(self, run_id: str) -> list[dict[str, Any]]:
        """Every record of the run, in case order (the JSONL export)."""
        response = await self._call(
            "GET", f"/runs/{run_id}/results", headers={"accept": "application/x-ndjson"}
        )
        return [json.loads(line) for line in response.text.splitlines() if line.strip()]

    async def compare(self, base: str, head: str) -> dict[str, Any]:
        """``GET /runs/compare``: ``head`` against ``base``."""
        response = await self._call("GET", "/runs/compare", params={"base": base, "head": head})
        comparison: dict[str, Any] = response.json()
        return comparison

    async def report_html(self, run_id: str, *, viewer_link: bool) -> str:
        """``GET /runs/{id}/report.html``: the run's self-contained HTML report."""
        params = {"viewer_link": str(viewer_link).lower()}
        return (await self._call("GET", f"/runs/{run_id}/report.html", params=params)).text

    async def events(self, run_id: str, last_event_id: str | None) -> AsyncIterator[Event]:
        """The run's events after ``last_event_id``, until the server ends the stream.

        Raises:
            ClientError: The server refused the request (not a dropped connection:
                ``httpx.TransportError`` is left to the caller, which reconnects).
        """
        headers = {"accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        async with self._http.stream("GET", f"/runs/{run_id}/events", headers=headers) as response:
            if response.status_code >= 400:
                await response.aread()
                raise ClientError(problem_message(response))
            async for event in parse_events(response.aiter_lines()):
                yield event
