"""Copy every eval, the files its runs read and each finished run (with its output items)
from an Evals API (OpenAI's, or any compatible server) into this service.

Objects keep their ids, so the copy is idempotent and resumable: an object already here is
left as it is (a second invocation copies nothing), and a run's output items continue after
those already copied. Runs become read-only historical runs. What cannot be carried (an eval
whose graders this service does not run, a run still in progress, a missing file...) is
named in the summary, and the exit status is 1 when there is any.

Usage:
    .venv/bin/python scripts/migrate_openai_evals.py \\
        --source-url https://api.openai.com/v1 --source-key "$OPENAI_API_KEY" \\
        --to-url http://localhost:8000 --to-key "$EVAL_API_KEY"

``--source-key``/``--to-key`` default to ``OPENAI_API_KEY``/``EVAL_API_KEY``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

PAGE = 100
FINAL = {"completed", "failed", "canceled"}


@dataclass
class Tally:
    """What one invocation did: objects copied now, already here, and not carried (named)."""

    copied: dict[str, int] = field(
        default_factory=lambda: {"evals": 0, "files": 0, "runs": 0, "output items": 0}
    )
    present: dict[str, int] = field(
        default_factory=lambda: {"evals": 0, "files": 0, "runs": 0, "output items": 0}
    )
    refused: list[tuple[str, str]] = field(default_factory=list)

    def count(self, kind: str, created: bool, amount: int = 1) -> None:
        (self.copied if created else self.present)[kind] += amount


class Refused(Exception):
    """The destination refused an object: its reason."""


def _reason(response: httpx.Response) -> str:
    try:
        error = response.json().get("error") or {}
        return str(error.get("message") or response.text)[:300]
    except ValueError:
        return f"HTTP {response.status_code}: {response.text[:200]}"


class Migration:
    """One copy from ``source`` (an Evals API) to ``target`` (this service)."""

    def __init__(
        self, source: httpx.Client, target: httpx.Client, progress: Progress, batch: int = PAGE
    ) -> None:
        self._source = source
        self._target = target
        self._progress = progress
        self._batch = batch
        self._files: set[str] = set()
        self.tally = Tally()

    def _get(self, path: str, **params: Any) -> Any:
        response = self._source.get(path, params=params)
        response.raise_for_status()
        return response.json()

    def _pages(self, path: str, **params: Any) -> Iterator[dict[str, Any]]:
        after: str | None = None
        while True:
            page = self._get(
                path, limit=PAGE, order="asc", **({"after": after} if after else {}), **params
            )
            yield from page["data"]
            if not page.get("has_more") or not page["data"]:
                return
            after = page.get("last_id") or page["data"][-1]["id"]

    def _write(self, path: str, body: Any, method: str = "PUT") -> dict[str, Any]:
        response = self._target.request(method, path, json=body)
        if response.status_code in (400, 404, 409, 413, 422):
            raise Refused(_reason(response))
        response.raise_for_status()
        answer: dict[str, Any] = response.json()
        return answer

    def run(self) -> Tally:
        """Copy everything; returns what was done."""
        evals = list(self._pages("evals"))
        task = self._progress.add_task("evals", total=len(evals))
        for source_eval in evals:
            self._eval(source_eval)
            self._progress.advance(task)
        return self.tally

    def _eval(self, source_eval: dict[str, Any]) -> None:
        eval_id = source_eval["id"]
        label = f"eval {eval_id} ({source_eval.get('name')})"
        try:
            answer = self._write(f"/v1/imports/evals/{eval_id}", source_eval)
        except Refused as exc:
            self.tally.refused.append((label, f"{exc}; its runs are not copied"))
            return
        self.tally.count("evals", answer["created"])
        for source_run in self._pages(f"evals/{eval_id}/runs"):
            self._run(eval_id, source_run)

    def _file(self, file_id: str, run_label: str) -> None:
        if file_id in self._files:
            return
        self._files.add(file_id)
        try:
            described = self._get(f"files/{file_id}")
            content = self._source.get(f"files/{file_id}/content")
            content.raise_for_status()
            answer = self._write(
                f"/v1/imports/files/{file_id}", {**described, "content": content.text}
            )
        except (Refused, httpx.HTTPStatusError) as exc:
            reason = _reason(exc.response) if isinstance(exc, httpx.HTTPStatusError) else str(exc)
            self.tally.refused.append((f"file {file_id} (read by {run_label})", reason))
            return
        self.tally.count("files", answer["created"])

    def _run(self, eval_id: str, source_run: dict[str, Any]) -> None:
        run_id = source_run["id"]
        label = f"run {run_id} ({source_run.get('name')}) of eval {eval_id}"
        if source_run.get("status") not in FINAL:
            status = source_run.get("status")
            self.tally.refused.append(
                (label, f"still {status} at the source; copy it once it ends")
            )
            return
        source = (source_run.get("data_source") or {}).get("source") or {}
        if source.get("type") == "file_id":
            self._file(str(source.get("id")), label)
        try:
            answer = self._write(f"/v1/imports/evals/{eval_id}/runs/{run_id}", source_run)
        except Refused as exc:
            self.tally.refused.append((label, str(exc)))
            return
        self.tally.count("runs", answer["created"])
        stored = int(answer.get("items_stored") or 0)
        self.tally.count("output items", False, stored)
        total = int((source_run.get("result_counts") or {}).get("total") or 0)
        if total and stored >= total:
            return  # every item is here already: nothing to read at the source
        task = self._progress.add_task(f"items of {run_id}", total=total or None, completed=stored)
        self._items(eval_id, run_id, label, stored, task)
        self._progress.remove_task(task)

    def _items(self, eval_id: str, run_id: str, label: str, stored: int, task: Any) -> None:
        batch: list[dict[str, Any]] = []
        position = 0
        start = stored
        for item in self._pages(f"evals/{eval_id}/runs/{run_id}/output_items"):
            position += 1
            if position <= stored:
                continue
            batch.append(item)
            if len(batch) >= self._batch:
                start = self._send(eval_id, run_id, label, start, batch, task)
                batch = []
        if batch:
            self._send(eval_id, run_id, label, start, batch, task)

    def _send(
        self,
        eval_id: str,
        run_id: str,
        label: str,
        start: int,
        batch: list[dict[str, Any]],
        task: Any,
    ) -> int:
        path = f"/v1/imports/evals/{eval_id}/runs/{run_id}/output_items"
        try:
            answer = self._write(path, {"start": start, "data": batch}, "POST")
        except Refused as exc:
            first, last = batch[0].get("id"), batch[-1].get("id")
            self.tally.refused.append((f"output items {first}..{last} of {label}", str(exc)))
            return start + len(batch)
        added = int(answer["items_stored"]) - start
        self.tally.count("output items", True, max(added, 0))
        self.tally.count("output items", False, len(batch) - max(added, 0))
        self._progress.advance(task, len(batch))
        return start + len(batch)


def report(tally: Tally, console: Console) -> None:
    """The summary: counts, then everything not carried, by name."""
    table = Table(title="Copied")
    table.add_column("object")
    table.add_column("copied now", justify="right")
    table.add_column("already here", justify="right")
    for kind in tally.copied:
        table.add_row(kind, str(tally.copied[kind]), str(tally.present[kind]))
    console.print(table)
    if not tally.refused:
        console.print("Everything was carried.")
        return
    refused = Table(title=f"Not carried ({len(tally.refused)})")
    refused.add_column("what")
    refused.add_column("why")
    for what, why in tally.refused:
        refused.add_row(what, why)
    console.print(refused)


def main(argv: Sequence[str] | None = None, console: Console | None = None) -> int:
    """Run the copy; 0 when everything was carried, 1 otherwise."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--source-url", required=True, help="The source's base URL, with /v1.")
    parser.add_argument("--source-key", default=os.environ.get("OPENAI_API_KEY", ""))  # noqa: TID251
    parser.add_argument("--to-url", required=True, help="This service's base URL.")
    parser.add_argument("--to-key", default=os.environ.get("EVAL_API_KEY", ""))  # noqa: TID251
    parser.add_argument("--batch", type=int, default=PAGE, help="Output items per request.")
    args = parser.parse_args(argv)
    console = console or Console(stderr=True)

    def client(url: str, key: str) -> httpx.Client:
        headers = {"authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=url.rstrip("/") + "/", headers=headers, timeout=60)

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with (
        client(args.source_url, args.source_key) as source,
        client(args.to_url, args.to_key) as target,
        Progress(*columns, console=console, transient=True) as progress,
    ):
        tally = Migration(source, target, progress, args.batch).run()
    report(tally, console)
    return 1 if tally.refused else 0


if __name__ == "__main__":
    sys.exit(main())
