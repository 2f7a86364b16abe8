"""The files the command writes: ``--json``, ``--junit``, ``--markdown``, ``--html``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.cli.client import ServiceClient
from app.cli.junit import junit_xml
from app.cli.markdown import comparison_markdown, run_markdown
from app.cli.records import Record


@dataclass(frozen=True)
class Outputs:
    """Where each report goes (None: not written)."""

    json: Path | None = None
    junit: Path | None = None
    markdown: Path | None = None
    html: Path | None = None


@dataclass(frozen=True)
class Links:
    """Where the viewer is, for the reports' links (None: nowhere a reader can reach)."""

    viewer: str | None

    def run(self, run_id: str) -> str | None:
        """The run's page."""
        return f"{self.viewer}/ui/runs/{run_id}" if self.viewer else None

    def compare(self, base: str, head: str) -> str | None:
        """The comparison page."""
        return f"{self.viewer}/ui/compare?base={base}&head={head}" if self.viewer else None


def _write(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")


async def write_run_outputs(
    outputs: Outputs,
    client: ServiceClient,
    run: dict[str, Any],
    records: list[Record],
    *,
    suite_name: str,
    passed_gate: bool,
    links: Links,
    comparison: dict[str, Any] | None,
) -> None:
    """Write every report asked for about ``run``."""
    if outputs.json:
        document = {"run": run, "records": records, "comparison": comparison}
        _write(outputs.json, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    if outputs.junit:
        _write(outputs.junit, junit_xml(run, records, suite_name))
    if outputs.markdown:
        base = comparison["base"]["id"] if comparison else None
        text = run_markdown(
            run,
            records,
            passed_gate=passed_gate,
            comparison=comparison,
            viewer_url=links.run(run["id"]),
            compare_url=links.compare(base, run["id"]) if base else None,
        )
        _write(outputs.markdown, text)
    if outputs.html:
        # Embedded, the service ends with the command: no link to a page nobody can open.
        html = await client.report_html(run["id"], viewer_link=links.viewer is not None)
        _write(outputs.html, html)


def write_comparison_outputs(
    outputs: Outputs, comparison: dict[str, Any], *, regressed: bool, links: Links
) -> None:
    """Write the comparison's JSON and Markdown when asked for."""
    if outputs.json:
        _write(outputs.json, json.dumps(comparison, indent=2, ensure_ascii=False) + "\n")
    if outputs.markdown:
        url = links.compare(comparison["base"]["id"], comparison["head"]["id"])
        _write(
            outputs.markdown, comparison_markdown(comparison, regressed=regressed, compare_url=url)
        )


def read_run_id(path: Path) -> str:
    """The run id a file holds: a ``--json`` report (its run), a run object, or a bare id."""
    text = path.read_text(encoding="utf-8").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return text.splitlines()[0].strip() if text else ""
    if isinstance(data, dict):
        run = data["run"] if isinstance(data.get("run"), dict) else data
        return str(run.get("id") or "")
    return str(data)
