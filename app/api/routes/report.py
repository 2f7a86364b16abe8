"""``GET /runs/{id}/report.html``: a run as one self-contained HTML file (the CLI's ``--html``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from app.api.middleware.auth import CallerDep
from app.api.openapi_docs.run_docs import RunId
from app.api.problems import problem_responses
from app.api.routes.runs import RunsDep
from app.api.ui.paths import UI_PATH
from app.api.ui.report import report_response

router = APIRouter(prefix="/runs", tags=["runs"])


@router.get(
    "/{run_id}/report.html",
    operation_id="get_run_report",
    summary="A run's report: one HTML file that opens offline",
    response_class=HTMLResponse,
    responses={
        **problem_responses(404),
        200: {"content": {"text/html": {"schema": {"type": "string"}}}},
    },
)
async def run_report(
    run_id: RunId,
    request: Request,
    runs: RunsDep,
    caller: CallerDep,
    viewer_link: Annotated[
        bool, Query(description="Link back to the run's page in the viewer (`/ui`).")
    ] = True,
) -> HTMLResponse:
    """The run's summary, histogram, case table and each case's conversation, answer, graders.

    One file with no script and no external asset: an export of the viewer's run page (a
    CI artefact that opens offline). The command-line client's `--html` writes this file.
    """
    run = await runs.get(run_id, caller.id)
    rows = await runs.numbered_records(run_id, caller.id)
    viewer = f"{str(request.base_url).rstrip('/')}{UI_PATH}/runs/{run_id}"
    return report_response(run, rows, viewer_url=viewer if viewer_link else None)
