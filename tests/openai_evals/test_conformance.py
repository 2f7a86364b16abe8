"""The SDK's scenarios against OpenAI's own description, on SQLite and PostgreSQL.

The official ``openai`` SDK (async client, in process over ASGI) is the client; every response
it gets is validated against OpenAI's published OpenAPI description (``spec_validator``: a
violation fails the test). The behaviours are OpenAI's: create answers 201, criteria carry
``id`` (``<name>-<uuid>``, kept when given), samples report the sampling parameters the run
sent, errored items are ``error`` and counted under ``errored``, ``total`` counts executed
items, one usage entry per model, an ``Idempotency-Key`` replays the same run, files list.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import openai
import pytest
from openai import AsyncOpenAI

from app.settings import Settings
from app.settings.targets import OpenAITarget
from testkit.fake_llm import FakeLLM
from testkit.openai_spec import SpecValidator
from tests.conftest import ClientFactory

ITEMS: list[dict[str, Any]] = [
    {"item": {"question": "Capital of France?", "answer": "Paris"}},
    {"item": {"question": "Largest planet?", "answer": "Jupiter"}},
    {"item": {"question": "Red planet?", "answer": "Mars"}},
]
ITEM_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"question": {"type": "string"}, "answer": {"type": "string"}},
    "required": ["question", "answer"],
}
CHECK = {
    "type": "string_check",
    "name": "exact",
    "input": "{{ sample.output_text }}",
    "reference": "{{ item.answer }}",
    "operation": "ilike",
}
JUDGE = {
    "type": "label_model",
    "name": "judged",
    "model": "gpt",
    "input": [{"role": "user", "content": "Right? {{ sample.output_text }}"}],
    "labels": ["correct", "incorrect"],
    "passing_labels": ["correct"],
}


@pytest.fixture
async def sdk(
    tmp_path: Path,
    database_url: str,
    make_client: ClientFactory,
    fake_llm: FakeLLM,
    spec_validator: SpecValidator,
) -> AsyncIterator[AsyncOpenAI]:
    settings = Settings(
        data_dir=tmp_path / "data",
        database_url=database_url,
        sample_run=False,
        targets=[
            OpenAITarget(name="gpt", provider="openai", base_url=f"{fake_llm.url}/v1", model="m")
        ],
    )
    async with make_client(settings) as http:
        http.event_hooks["response"].append(spec_validator.async_hook)
        yield AsyncOpenAI(
            base_url="http://testserver/v1",
            api_key="k",
            http_client=http,  # type: ignore[arg-type]  # typed for httpx2, takes httpx too
            max_retries=0,
        )
    assert spec_validator.checked > 0


async def finished(sdk: AsyncOpenAI, eval_id: str, run_id: str) -> Any:
    async with asyncio.timeout(30):
        while True:
            run = await sdk.evals.runs.retrieve(run_id, eval_id=eval_id)
            if run.status in {"completed", "failed", "canceled"}:
                return run
            await asyncio.sleep(0.05)


def completions(source: dict[str, Any], **params: Any) -> dict[str, Any]:
    return {
        "type": "completions",
        "model": "gpt",
        "input_messages": {
            "type": "template",
            "template": [{"role": "user", "content": "{{ item.question }}"}],
        },
        "sampling_params": params,
        "source": source,
    }


async def new_eval(sdk: AsyncOpenAI, *criteria: dict[str, Any]) -> Any:
    return await sdk.evals.create(
        name="quiz",
        data_source_config={"type": "custom", "item_schema": ITEM_SCHEMA},
        testing_criteria=list(criteria),  # type: ignore[arg-type]
    )


async def test_a_completions_run_reports_what_it_sent(sdk: AsyncOpenAI, fake_llm: FakeLLM) -> None:
    raw = await sdk.evals.with_raw_response.create(
        name="quiz",
        data_source_config={"type": "custom", "item_schema": ITEM_SCHEMA},
        testing_criteria=[CHECK, JUDGE],  # type: ignore[list-item]
    )
    assert raw.status_code == 201
    ev = raw.parse()
    ids = [str(c.to_dict()["id"]) for c in ev.testing_criteria]
    assert ids[0].startswith("exact-")
    assert ids[1].startswith("judged-")
    uploaded = await sdk.files.create(
        file=("quiz.jsonl", "\n".join(json.dumps(r) for r in ITEMS).encode()),
        purpose="evals",
    )
    created = await sdk.evals.runs.with_raw_response.create(
        ev.id,
        data_source=completions(  # type: ignore[arg-type]
            {"type": "file_id", "id": uploaded.id},
            temperature=0.2,
            top_p=0.9,
            seed=7,
            max_completions_tokens=64,
        ),
    )
    assert created.status_code == 201
    run = await finished(sdk, ev.id, created.parse().id)

    assert run.status == "completed"
    assert run.model == "gpt"
    counts = run.result_counts
    assert counts.total == counts.passed + counts.failed + counts.errored == 3
    assert {r.testing_criteria for r in run.per_testing_criteria_results} == set(ids)
    # The candidate and the judge are the same model: one usage entry.
    assert [u.model_name for u in run.per_model_usage] == ["gpt"]
    assert run.per_model_usage[0].invocation_count == 6
    candidate = [r.json for r in fake_llm.requests if "Right?" not in r.messages_text()]
    assert {(b["top_p"], b["seed"], b["temperature"]) for b in candidate} == {(0.9, 7, 0.2)}
    items = [item async for item in sdk.evals.runs.output_items.list(run.id, eval_id=ev.id)]
    assert len(items) == 3
    for item in items:
        sample = item.sample
        assert (sample.top_p, sample.seed, sample.temperature) == (0.9, 7, 0.2)
        assert sample.max_completion_tokens == 64
        assert sample.finish_reason == "stop"
        assert {r.name for r in item.results} == set(ids)


async def test_usage_is_one_entry_per_model_with_its_own_calls(
    tmp_path: Path,
    database_url: str,
    make_client: ClientFactory,
    fake_llm: FakeLLM,
    spec_validator: SpecValidator,
) -> None:
    # The candidate "gpt" also judges; two more judge models, one of them a mapped name.
    def target(name: str, model: str) -> OpenAITarget:
        return OpenAITarget(
            name=name, provider="openai", base_url=f"{fake_llm.url}/v1", model=model
        )

    settings = Settings(
        data_dir=tmp_path / "data",
        database_url=database_url,
        sample_run=False,
        targets=[target("gpt", "m"), target("judge-a", "ma"), target("judge-b", "mb")],
        openai_models={"o3-mini": "judge-b"},
    )
    judges = [
        JUDGE,
        {**JUDGE, "name": "second opinion", "model": "judge-a"},
        {**JUDGE, "name": "third opinion", "model": "o3-mini"},
        {**JUDGE, "name": "again", "model": "o3-mini"},  # the same model twice: one entry
    ]
    async with make_client(settings) as http:
        http.event_hooks["response"].append(spec_validator.async_hook)
        client: Any = http  # typed for httpx2, takes httpx too
        sdk = AsyncOpenAI(base_url="http://testserver/v1", api_key="k", http_client=client)
        ev = await new_eval(sdk, *judges)
        created = await sdk.evals.runs.create(
            ev.id,
            data_source=completions({"type": "file_content", "content": ITEMS}),  # type: ignore[arg-type]
        )
        run = await finished(sdk, ev.id, created.id)
    assert run.status == "completed"
    sent: dict[str, list[int]] = {}
    for request in fake_llm.requests:
        usage = request.usage or {}
        entry = sent.setdefault(request.json["model"], [0, 0, 0])
        entry[0] += 1
        entry[1] += usage.get("prompt_tokens", 0)
        entry[2] += usage.get("completion_tokens", 0)
    assert (sent["m"][0], sent["ma"][0], sent["mb"][0]) == (6, 3, 6)  # gpt: 3 asked, 3 judged
    usage = {
        u.model_name: [u.invocation_count, u.prompt_tokens, u.completion_tokens]
        for u in run.per_model_usage
    }
    assert usage == {"gpt": sent["m"], "judge-a": sent["ma"], "o3-mini": sent["mb"]}
    assert [u.model_name for u in run.per_model_usage] == ["gpt", "judge-a", "o3-mini"]
    for entry in run.per_model_usage:
        assert entry.total_tokens == entry.prompt_tokens + entry.completion_tokens > 0


async def test_unset_sampling_params_are_the_documented_defaults(sdk: AsyncOpenAI) -> None:
    ev = await new_eval(sdk, CHECK)
    run = await sdk.evals.runs.create(
        ev.id,
        data_source=completions({"type": "file_content", "content": ITEMS[:1]}),  # type: ignore[arg-type]
    )
    await finished(sdk, ev.id, run.id)
    (item,) = (await sdk.evals.runs.output_items.list(run.id, eval_id=ev.id)).data
    sample = item.sample
    assert (sample.temperature, sample.top_p, sample.seed, sample.max_completion_tokens) == (
        1.0,
        1.0,
        42,
        0,
    )


async def test_errored_items_are_errors_not_failures(sdk: AsyncOpenAI) -> None:
    broken = {**CHECK, "name": "broken", "reference": "{{ item.nowhere.deeper }}"}
    ev = await new_eval(sdk, broken)
    rows: list[Any] = [
        {"item": r["item"], "sample": {"output_text": r["item"]["answer"], "model": "mine"}}
        for r in ITEMS
    ]
    run = await sdk.evals.runs.create(
        ev.id,
        data_source={"type": "jsonl", "source": {"type": "file_content", "content": rows}},
    )
    run = await finished(sdk, ev.id, run.id)

    assert run.model == ""  # a jsonl run asks no model
    counts = run.result_counts
    assert (counts.total, counts.passed, counts.failed, counts.errored) == (3, 0, 0, 3)
    listed = sdk.evals.runs.output_items.list
    assert (await listed(run.id, eval_id=ev.id, status="fail")).data == []
    errored = (await listed(run.id, eval_id=ev.id, status="error")).data  # type: ignore[arg-type]
    assert [item.status for item in errored] == ["error"] * 3
    (result,) = errored[0].results
    assert (result.score, result.passed) == (0, False)
    assert errored[0].sample.model == "mine"


async def test_a_cancelled_run_counts_what_it_executed(sdk: AsyncOpenAI, fake_llm: FakeLLM) -> None:
    fake_llm.latency = 0.3
    ev = await new_eval(sdk, CHECK)
    rows = [ITEMS[i % 3] for i in range(24)]
    run = await sdk.evals.runs.create(
        ev.id,
        data_source=completions({"type": "file_content", "content": rows}),  # type: ignore[arg-type]
    )
    async with asyncio.timeout(20):
        while True:  # polling the API, as a caller does
            if (await sdk.evals.runs.retrieve(run.id, eval_id=ev.id)).result_counts.total >= 2:
                break
            await asyncio.sleep(0.05)
    await sdk.evals.runs.cancel(run.id, eval_id=ev.id)
    final = await finished(sdk, ev.id, run.id)
    items = [item async for item in sdk.evals.runs.output_items.list(run.id, eval_id=ev.id)]

    assert final.status == "canceled"
    assert 2 <= final.result_counts.total == len(items) < 24


async def test_an_idempotency_key_gives_back_the_same_run(sdk: AsyncOpenAI) -> None:
    ev = await new_eval(sdk, CHECK)
    source = {"type": "file_content", "content": ITEMS[:1]}
    headers = {"Idempotency-Key": "nightly-2026-11-27"}
    first = await sdk.evals.runs.create(
        ev.id,
        data_source=completions(source),  # type: ignore[arg-type]
        extra_headers=headers,
    )
    again = await sdk.evals.runs.create(
        ev.id,
        data_source=completions(source),  # type: ignore[arg-type]
        extra_headers=headers,
    )
    with pytest.raises(openai.ConflictError) as reused:
        await sdk.evals.runs.create(
            ev.id,
            data_source=completions(source, seed=1),  # type: ignore[arg-type]
            extra_headers=headers,
        )
    listed = (await sdk.evals.runs.list(ev.id)).data

    assert again.id == first.id
    assert [run.id for run in listed] == [first.id]
    assert "different request body" in reused.value.message


async def test_criteria_exported_from_openai_keep_their_ids(sdk: AsyncOpenAI) -> None:
    exported = {**CHECK, "id": "exact-2eaf2d8d-d649-4335-8148-9535a7ca73c2"}
    ev = await new_eval(sdk, exported)
    again = await sdk.evals.retrieve(ev.id)

    assert again.testing_criteria[0].to_dict()["id"] == exported["id"]
    with pytest.raises(openai.BadRequestError) as twice:
        await new_eval(sdk, exported, {**exported, "name": "other"})
    assert "ids must be unique" in twice.value.message


async def test_files_list_filters_orders_and_pages(sdk: AsyncOpenAI) -> None:
    empty = await sdk.files.list()
    assert (empty.data, empty.first_id, empty.last_id) == ([], "", "")  # type: ignore[attr-defined]
    ids = []
    for index in range(3):
        line = json.dumps(ITEMS[index]).encode()
        ids.append((await sdk.files.create(file=(f"{index}.jsonl", line), purpose="evals")).id)

    newest_first = [f.id async for f in sdk.files.list(limit=2)]
    oldest_first = [f.id async for f in sdk.files.list(order="asc", purpose="evals")]
    other = await sdk.files.list(purpose="fine-tune")

    assert newest_first == ids[::-1]
    assert oldest_first == ids
    assert other.data == []
    evals_page = await sdk.evals.list()
    assert evals_page.data == []
    assert evals_page.first_id == ""  # type: ignore[attr-defined]
