"""The viewer's routes: page shells (public) and the fragments they fetch (with the key).

Fragments read through the services the JSON API uses (``RunService``, ``compare_runs``)
with the caller the API key identifies, so a key sees only its own runs here too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

from app.api.middleware.auth import CallerDep
from app.api.routes.runs import RunsDep
from app.api.ui import views
from app.api.ui.matrix import matrix_view
from app.api.ui.paths import ASSETS_PATH, FRAGMENTS_PATH, UI_PATH
from app.api.ui.render import render
from app.evaluation.arm_comparison import compare_arms
from app.services.compare import arm_outcomes, compare_runs

router = APIRouter(include_in_schema=False)
RUNS_PER_PAGE = 200
STATIC = Path(__file__).parent / "static"
Cursor = Annotated[str | None, Query()]
Filter = Annotated[str, Query(max_length=500)]


def _shell(request: Request, title: str, fragment: str) -> HTMLResponse:
    root = str(request.scope.get("root_path", ""))
    query = f"?{request.url.query}" if request.url.query else ""
    return render("shell.html", title=title, root=root, fragment=f"{root}{fragment}{query}")


@router.get(UI_PATH)
async def runs_page(request: Request) -> HTMLResponse:
    """The runs, newest first."""
    return _shell(request, "Runs", f"{FRAGMENTS_PATH}/runs")


@router.get(UI_PATH + "/")
async def runs_page_slash() -> RedirectResponse:
    """``/ui/`` is ``/ui``."""
    return RedirectResponse(UI_PATH)


@router.get(UI_PATH + "/runs/{run_id}")
async def run_page(request: Request, run_id: str) -> HTMLResponse:
    """One run: its summary and its cases."""
    return _shell(request, f"Run {run_id}", f"{FRAGMENTS_PATH}/runs/{quote(run_id, safe='')}")


@router.get(UI_PATH + "/runs/{run_id}/cases/{seq}")
async def case_page(request: Request, run_id: str, seq: int) -> HTMLResponse:
    """One case of a run."""
    fragment = f"{FRAGMENTS_PATH}/runs/{quote(run_id, safe='')}/cases/{seq}"
    return _shell(request, f"Case {seq} of {run_id}", fragment)


@router.get(UI_PATH + "/runs/{run_id}/matrix")
async def matrix_page(request: Request, run_id: str) -> HTMLResponse:
    """A run with arms: cases by arms."""
    fragment = f"{FRAGMENTS_PATH}/runs/{quote(run_id, safe='')}/matrix"
    return _shell(request, f"Matrix of {run_id}", fragment)


@router.get(UI_PATH + "/compare")
async def compare_page(request: Request) -> HTMLResponse:
    """Two runs compared."""
    return _shell(request, "Compare runs", f"{FRAGMENTS_PATH}/compare")


@router.get(FRAGMENTS_PATH + "/runs")
async def runs_fragment(
    request: Request, runs: RunsDep, caller: CallerDep, cursor: Cursor = None
) -> HTMLResponse:
    """The caller's runs, newest first."""
    page = await runs.list(status=None, limit=RUNS_PER_PAGE, cursor=cursor, caller=caller.id)
    return render("runs.html", page=page, root=request.scope.get("root_path", ""))


def case_query(
    status: Filter = "",
    verdict: Filter = "",
    missed: Filter = "",
    text: Filter = "",
    review: Filter = "",
    cases: Annotated[str, Query(max_length=50_000)] = "",
    sort: Filter = "seq",
    order: Filter = "",
    page: Annotated[int, Query(ge=0)] = 0,
) -> views.CaseQuery:
    """The run page's query of its cases (filters, order, page), as the address holds it."""
    picked = sorted({int(part) for part in cases.split(",") if part.strip().isdigit()})
    return views.CaseQuery(
        status=status,
        verdict=verdict,
        missed=missed,
        text=text,
        review=review if review in views.REVIEW_FILTERS else "",
        cases=tuple(picked),
        sort=sort if sort in views.SORT_KEYS else "seq",
        descending=order == "desc",
        page=page,
    )


CaseQueryDep = Annotated[views.CaseQuery, Depends(case_query)]


@router.get(FRAGMENTS_PATH + "/runs/{run_id}")
async def run_fragment(
    request: Request, run_id: str, runs: RunsDep, caller: CallerDep, query: CaseQueryDep
) -> HTMLResponse:
    """A run's summary and one page of the table of its cases (filtered and sorted here)."""
    run = await runs.get(run_id, caller.id)
    rows = await runs.numbered_records(run_id, caller.id)
    view = views.run_view(run, rows, query)
    return render(
        "run.html",
        root=request.scope.get("root_path", ""),
        review_filters=views.REVIEW_FILTERS,
        **view,
    )


@router.get(FRAGMENTS_PATH + "/runs/{run_id}/matrix")
async def matrix_fragment(
    request: Request,
    run_id: str,
    runs: RunsDep,
    caller: CallerDep,
    disagree: Filter = "",
    page: Annotated[int, Query(ge=0, le=2**31 - 1)] = 0,
) -> HTMLResponse:
    """One page of a run's matrix: its arms' headers and its cases' cells."""
    run = await runs.get(run_id, caller.id)
    rows = await runs.numbered_records(run_id, caller.id)
    arms = run.arms or []
    view = matrix_view(arms, rows, disagree=bool(disagree), page=page)
    pairs = compare_arms(arms, arm_outcomes(rows))
    return render(
        "matrix.html", run=run, pairs=pairs, root=request.scope.get("root_path", ""), **view
    )


@router.get(FRAGMENTS_PATH + "/runs/{run_id}/export.csv")
async def run_csv(run_id: str, runs: RunsDep, caller: CallerDep) -> PlainTextResponse:
    """The run's records as CSV, one row per case."""
    rows = await runs.numbered_records(run_id, caller.id)
    return PlainTextResponse(views.records_csv(rows), media_type="text/csv")


@router.get(FRAGMENTS_PATH + "/runs/{run_id}/cases/{seq}")
async def case_fragment(
    request: Request,
    run_id: str,
    seq: int,
    runs: RunsDep,
    caller: CallerDep,
    query: CaseQueryDep,
) -> HTMLResponse:
    """One case: what the candidate received, what the judge saw, every grader's result.

    Opened from a filtered or sorted case table (the review queue), its previous and next
    are the neighbours in that list, and its links keep the list's query.
    """
    detail = await runs.case(run_id, seq, caller.id)
    queue = None
    if query.link(page=0):
        queue = views.queue_step(await runs.numbered_records(run_id, caller.id), query, seq)
        detail = detail.model_copy(update={"previous": queue.previous, "next": queue.next})
    return render(
        "case.html",
        detail=detail,
        queue=queue,
        root=request.scope.get("root_path", ""),
        turn_pieces=views.turn_pieces,
        message_pieces=views.message_pieces,
        diff_lines=views.diff_lines,
        failing_reasons=views.failing_reasons,
    )


@router.get(FRAGMENTS_PATH + "/compare")
async def compare_fragment(
    request: Request,
    runs: RunsDep,
    caller: CallerDep,
    base: Annotated[str, Query()],
    head: Annotated[str, Query()],
) -> HTMLResponse:
    """``head`` against ``base``: regressions first, answers side by side, the paired test."""
    comparison = await compare_runs(runs, base, head, caller.id, with_answers=True)
    return render("compare.html", c=comparison, root=request.scope.get("root_path", ""))


def install_ui(app: FastAPI) -> None:
    """Serve the viewer under ``/ui``, its stylesheet and script under ``/ui/assets``."""
    app.mount(ASSETS_PATH, StaticFiles(directory=STATIC), name="ui-assets")
    app.include_router(router)
