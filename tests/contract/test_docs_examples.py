"""Every example of the OpenAPI document succeeds on a fresh server, as Swagger UI sends it."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from app.schemas.openai_examples import SAMPLE_EVAL_RUN_ID
from app.schemas.runs import SAMPLE_RUN_ID
from app.settings import Settings
from tests.conftest import ClientFactory, wait_for_run
from tests.contract.prefilled import (
    FRESH_SERVER_REFUSALS,
    ExampleRequest,
    example_requests,
    operations,
)

pytestmark = pytest.mark.usefixtures("sample_runs")  # a fresh server's sample runs

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


async def send(client: httpx.AsyncClient, request: ExampleRequest) -> httpx.Response:
    headers = {"content-type": request.content_type} if request.content_type else {}
    return await client.request(
        request.method, request.path, content=request.content, headers=headers
    )


def succeeded(response: httpx.Response) -> bool:
    """Below 400, and neither an invalid suite nor a case that errored."""
    if response.status_code >= 400:
        return False
    if response.headers.get("content-type") != "application/json":
        return True
    body = response.json()
    results = body.get("results", []) if isinstance(body, dict) else []
    return body.get("valid", True) is True and all(r.get("status") != "error" for r in results)


@pytest.mark.parametrize("roots", [[], [EXAMPLES]], ids=["no-workspace-root", "examples-root"])
async def test_every_example_succeeds_on_a_fresh_server(
    tmp_path: Path, make_client: ClientFactory, roots: list[Path]
) -> None:
    settings = Settings(data_dir=tmp_path / "data", workspace_roots=roots)
    async with make_client(settings) as client:
        document = (await client.get("/openapi.json")).json()
        await wait_for_run(client, SAMPLE_RUN_ID)
        await wait_for_run(client, SAMPLE_EVAL_RUN_ID)
        requests = example_requests(document, every_example=True)
        answers = [(request, await send(client, request)) for request in requests]

    failures = [
        f"{r}: {a.status_code} {a.text[:300]}"
        for r, a in answers
        if not succeeded(a) and a.status_code != FRESH_SERVER_REFUSALS.get(r.operation_id)
    ]
    refused = {r.operation_id for r, a in answers if not succeeded(a)}
    assert refused <= set(FRESH_SERVER_REFUSALS), refused
    assert not failures
    assert {r.operation_id for r, _ in answers} == {
        op["operationId"] for _, _, op in operations(document)
    }
    assert len(answers) > len(document["paths"])


async def test_exactly_the_operations_declaring_security_need_a_key(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    settings = Settings(data_dir=tmp_path / "data", api_keys=["a-key-of-16-chars"])
    async with make_client(settings) as client:
        document = (await client.get("/openapi.json")).json()
        secured = {op["operationId"] for _, _, op in operations(document) if "security" in op}
        refused = set()
        for request in example_requests(document, every_example=False):
            if (await send(client, request)).status_code == 401:
                refused.add(request.operation_id)

    assert refused == secured
    assert secured >= {"format", "validate_suite", "evaluate", "list_targets", "create_run"}
    assert not secured & {"healthz", "readyz", "metrics"}


async def test_the_regrade_example_names_a_real_judge(client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    body = document["paths"]["/runs/{run_id}/regrade"]["post"]["requestBody"]["content"]
    examples = body["application/json"]["examples"]
    assert all(e["value"].get("judge_target", "default") == "default" for e in examples.values())
