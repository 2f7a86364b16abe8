"""Every operation in the OpenAPI document, fed generated inputs, never answers 5xx."""

from __future__ import annotations

import tempfile
from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings

from app.main import create_app
from app.settings import Settings

# The schema is read when the module is collected, so the app (and its data folder) must
# exist then; the folder lives as long as the test session.
_DATA = tempfile.TemporaryDirectory(prefix="eval-schemathesis-")
schema = schemathesis.openapi.from_asgi(
    "/openapi.json", create_app(Settings(data_dir=Path(_DATA.name)))
)


@schema.parametrize()
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
def test_generated_requests_never_get_a_server_error(case) -> None:
    response = case.call()
    assert response.status_code < 500, (case.method, case.path, response.text[:300])
