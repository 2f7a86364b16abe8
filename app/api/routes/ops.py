"""Operations routes: readiness and Prometheus metrics (``/healthz`` is in ``health``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST

from app.api.dependencies import OptionalServicesDep
from app.api.problems import problem_responses
from app.observability.metrics import Metrics
from app.observability.readiness import Readiness, assess_readiness

router = APIRouter(tags=["operations"])


async def get_metrics(request: Request) -> Metrics:
    """The app's metrics registry and recorder."""
    metrics: Metrics = request.app.state.metrics
    return metrics


MetricsDep = Annotated[Metrics, Depends(get_metrics)]


@router.get(
    "/readyz",
    operation_id="readyz",
    summary="The service can take work: database reachable and migrated, targets loaded",
    responses=problem_responses(503),
)
async def readyz(services: OptionalServicesDep) -> Readiness:
    """Answer 200 when every dependency is ready, else a 503 problem naming the failed checks."""
    if services is None:
        return await assess_readiness(None)
    return await assess_readiness(services.store, services.links)


@router.get(
    "/metrics",
    operation_id="metrics",
    summary="Prometheus metrics in the text exposition format",
    response_class=Response,
    responses={200: {"content": {CONTENT_TYPE_LATEST: {"example": "eval_http_requests_total"}}}},
)
async def metrics(metrics: MetricsDep) -> Response:
    """HTTP, provider, limiter, run and case metrics."""
    return Response(await metrics.scrape(), media_type=CONTENT_TYPE_LATEST)
