"""The run report: one self-contained HTML file (``GET /runs/{id}/report.html``, ``--html``).

The same figures as the run page (``views.run_view``) and, for every case, its conversation
as the candidate received it, its answer and every grader's result, in one file with its
stylesheet inlined: no script, no asset, nothing fetched, so it opens offline (a CI
artefact). The content security policy allows exactly that stylesheet (by its hash).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from markupsafe import Markup
from starlette.responses import HTMLResponse

from app.api.ui import views
from app.api.ui.render import environment
from app.schemas.runs import RunObject
from app.schemas.viewer import NumberedRecord

STATIC = Path(__file__).parent / "static"
REPORT_STYLESHEETS = ("ui.css", "report.css")


@dataclass(frozen=True)
class ReportCase:
    """One case of the report: its table row and its record."""

    row: views.CaseRow
    record: dict[str, Any]

    @property
    def anchor(self) -> str:
        """The id of its section in the page."""
        return f"case-{self.row.seq}"


@cache
def stylesheet() -> str:
    """The viewer's stylesheet and the report's additions, as one text."""
    return "\n".join((STATIC / name).read_text(encoding="utf-8") for name in REPORT_STYLESHEETS)


def content_security_policy() -> str:
    """Nothing but the inlined stylesheet and ``data:`` images: no script, no fetch."""
    digest = base64.b64encode(hashlib.sha256(stylesheet().encode("utf-8")).digest()).decode()
    return f"default-src 'none'; style-src 'sha256-{digest}'; img-src data:; base-uri 'none'"


def render_report(
    run: RunObject, rows: Sequence[NumberedRecord], *, viewer_url: str | None = None
) -> str:
    """The report of ``run`` over ``rows`` (every record of the run), as one HTML text.

    Args:
        run: The run object.
        rows: Its records with their case numbers.
        viewer_url: Where the run's page lives (a link back to it), if anywhere.
    """
    view = views.run_view(run, rows)
    cases = [ReportCase(views.case_row(row), row.record) for row in rows]
    return (
        environment()
        .get_template("report.html")
        .render(
            run=run,
            cases=cases,
            histogram=view["histogram"],
            verdicts=view["verdicts"],
            graders=view["graders"],
            latency=view["latency"],
            cost=view["cost"],
            judge_called=view["judge_called"],
            style=Markup(stylesheet()),
            viewer_url=viewer_url,
            turn_pieces=views.turn_pieces,
            grader_results=views.grader_results,
        )
    )


def report_response(
    run: RunObject, rows: Sequence[NumberedRecord], *, viewer_url: str | None = None
) -> HTMLResponse:
    """The report as an HTML response, under its own content security policy."""
    page = HTMLResponse(render_report(run, rows, viewer_url=viewer_url))
    page.headers["Content-Security-Policy"] = content_security_policy()
    page.headers["Cache-Control"] = "no-store"
    page.headers["Content-Disposition"] = f'inline; filename="{run.id}.html"'
    return page
