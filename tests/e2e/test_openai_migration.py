"""The migration command between two real instances of the service (SQLite each).

The source stands in for OpenAI's Evals API: 4 evals (one with a ``python`` grader the
destination does not run), 5 finished runs of 100 items each (500 output items), two
uploaded files. A first copy was cut short (the destination holds one run with its first
30 items); the command carries the rest, the destination then serves the same evals, files,
runs and output items (same ids, same bodies, every object valid against OpenAI's
description), names what it could not carry, and a second invocation copies nothing.
"""

from __future__ import annotations

import io
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from rich.console import Console
from rich.progress import Progress

from scripts.migrate_openai_evals import Migration, main
from testkit.openai_spec import SpecValidator
from testkit.server import running_service

pytestmark = pytest.mark.slow
ITEMS = 100
CHECK = {
    "type": "string_check",
    "name": "exact",
    "input": "{{ sample.output_text }}",
    "reference": "{{ item.answer }}",
    "operation": "eq",
}
SIMILAR = {
    "type": "text_similarity",
    "name": "close",
    "input": "{{ sample.output_text }}",
    "reference": "{{ item.answer }}",
    "evaluation_metric": "fuzzy_match",
    "pass_threshold": 0.9,
}


def env(tmp_path: Path, name: str, **extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),  # noqa: TID251
        "EVAL_DATA_DIR": str(tmp_path / name),
        "EVAL_LOG_LEVEL": "WARNING",
        "EVAL_SAMPLE_RUN": "false",
        **extra,
    }


def rows(seed: int) -> list[dict[str, Any]]:
    return [
        {
            "item": {"question": f"q{seed}-{i}", "answer": f"a{i}"},
            "sample": {"output_text": f"a{i}" if (i + seed) % 3 else f"b{i}"},
        }
        for i in range(ITEMS)
    ]


def new_eval(client: httpx.Client, name: str, *criteria: dict[str, Any]) -> str:
    body = {
        "name": name,
        "metadata": {"team": name},
        "data_source_config": {"type": "custom", "item_schema": {"type": "object"}},
        "testing_criteria": list(criteria),
    }
    response = client.post("/v1/evals", json=body)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def upload(client: httpx.Client, seed: int) -> str:
    content = "\n".join(json.dumps(row) for row in rows(seed)).encode()
    answer = client.post(
        "/v1/files", files={"file": (f"set{seed}.jsonl", content)}, data={"purpose": "evals"}
    )
    return str(answer.json()["id"])


def start_run(client: httpx.Client, eval_id: str, source: dict[str, Any], name: str) -> str:
    body = {
        "name": name,
        "metadata": {"n": name},
        "data_source": {"type": "jsonl", "source": source},
    }
    return str(client.post(f"/v1/evals/{eval_id}/runs", json=body).json()["id"])


def wait_finished(client: httpx.Client, eval_id: str, run_id: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if client.get(f"/v1/evals/{eval_id}/runs/{run_id}").json()["status"] == "completed":
            return
        time.sleep(0.1)
    raise TimeoutError(run_id)


def everything(client: httpx.Client, path: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    params: dict[str, Any] = {"limit": 100, "order": "asc"}
    while True:
        page = client.get(path, params=params).json()
        found.extend(page["data"])
        if not page["has_more"]:
            return found
        params["after"] = page["last_id"]


def populate(source: httpx.Client) -> dict[str, list[str]]:
    """Evals and their runs at the source: {eval id: [run ids]}."""
    plain = new_eval(source, "plain", CHECK)
    blended = new_eval(source, "blended", CHECK, SIMILAR)
    similar = new_eval(source, "similar", SIMILAR)
    new_eval(
        source, "coded", {"type": "python", "name": "p", "source": "def grade(s, i): return 1"}
    )
    files = [upload(source, 1), upload(source, 2)]
    runs = {
        plain: [
            start_run(source, plain, {"type": "file_id", "id": files[0]}, "p1"),
            start_run(source, plain, {"type": "file_content", "content": rows(3)}, "p2"),
        ],
        blended: [
            start_run(source, blended, {"type": "file_id", "id": files[1]}, "b1"),
            start_run(source, blended, {"type": "file_id", "id": files[0]}, "b2"),
        ],
        similar: [start_run(source, similar, {"type": "file_content", "content": rows(5)}, "s1")],
    }
    for eval_id, run_ids in runs.items():
        for run_id in run_ids:
            wait_finished(source, eval_id, run_id)
    return runs


@pytest.fixture
def instances(tmp_path: Path) -> Iterator[tuple[str, str]]:
    with (
        running_service(env(tmp_path, "source", EVAL_CODE_GRADERS="true")) as (source, _),
        running_service(env(tmp_path, "destination")) as (destination, _),
    ):
        yield source, destination


def copy_quietly(source_url: str, destination_url: str) -> Any:
    with (
        httpx.Client(base_url=f"{source_url}/v1/") as source,
        httpx.Client(base_url=destination_url) as target,
        Progress(console=Console(file=io.StringIO())) as progress,
    ):
        return Migration(source, target, progress, batch=40).run()


def test_the_command_carries_everything_once_and_names_what_it_cannot(
    instances: tuple[str, str], spec_validator: SpecValidator
) -> None:
    source_url, destination_url = instances
    with (
        httpx.Client(base_url=source_url, timeout=30) as source,
        httpx.Client(
            base_url=destination_url,
            timeout=30,
            event_hooks={"response": [spec_validator.sync_hook]},
        ) as destination,
    ):
        runs = populate(source)
        # A first copy cut short: one eval, one of its runs and the run's first 30 items.
        eval_id, run_id = next(iter(runs)), runs[next(iter(runs))][1]
        source_eval = source.get(f"/v1/evals/{eval_id}").json()
        source_run = source.get(f"/v1/evals/{eval_id}/runs/{run_id}").json()
        first = everything(source, f"/v1/evals/{eval_id}/runs/{run_id}/output_items")[:30]
        destination.put(f"/v1/imports/evals/{eval_id}", json=source_eval).raise_for_status()
        destination.put(f"/v1/imports/evals/{eval_id}/runs/{run_id}", json=source_run)
        batch = {"start": 0, "data": first}
        destination.post(f"/v1/imports/evals/{eval_id}/runs/{run_id}/output_items", json=batch)

        output = io.StringIO()
        status = main(
            ["--source-url", f"{source_url}/v1", "--to-url", destination_url],
            console=Console(file=output, width=200),
        )
        again = copy_quietly(source_url, destination_url)

        source_evals = everything(source, "/v1/evals")
        copied_evals = everything(destination, "/v1/evals")
        pairs = []
        for ev, run_ids in runs.items():
            for rid in run_ids:
                path = f"/v1/evals/{ev}/runs/{rid}"
                pairs.append(
                    (
                        (source.get(path).json(), everything(source, f"{path}/output_items")),
                        (
                            destination.get(path).json(),
                            everything(destination, f"{path}/output_items"),
                        ),
                    )
                )
        file_ids = {p[0][0]["data_source"]["source"].get("id") for p in pairs} - {None}
        files = {
            f: (
                source.get(f"/v1/files/{f}/content").text,
                destination.get(f"/v1/files/{f}/content").text,
            )
            for f in file_ids
        }

    text = output.getvalue()
    assert status == 1
    assert "coded" in text
    assert "EVAL_CODE_GRADERS" in text
    coded = next(e for e in source_evals if e["name"] == "coded")
    # Ordered by creation time: to the second here, as the source's objects say it.
    by_id = sorted((e for e in source_evals if e["id"] != coded["id"]), key=lambda e: e["id"])
    assert by_id == sorted(copied_evals, key=lambda e: e["id"])
    assert sum(len(items) for (_, items), _ in pairs) == 500
    for (source_run_object, source_items), (copied_run, copied_items) in pairs:
        assert copied_items == source_items
        for key in ("id", "status", "name", "model", "created_at", "metadata", "data_source",
                    "result_counts", "per_testing_criteria_results"):  # fmt: skip
            assert copied_run[key] == source_run_object[key], key
    assert len(files) == 2
    assert all(mine == theirs for mine, theirs in files.values())
    assert again.copied == {"evals": 0, "files": 0, "runs": 0, "output items": 0}
    assert again.present == {"evals": 3, "files": 2, "runs": 5, "output items": 500}
    assert [what for what, _ in again.refused] == [f"eval {coded['id']} (coded)"]
