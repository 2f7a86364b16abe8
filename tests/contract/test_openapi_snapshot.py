"""The committed OpenAPI document matches the app."""

from __future__ import annotations

from scripts.export_openapi import TARGET, render


def test_openapi_document_is_current() -> None:
    assert TARGET.read_text(encoding="utf-8") == render(), (
        "openapi/openapi.json is stale: run `.venv/bin/python scripts/export_openapi.py`"
    )


def test_format_route_documents_examples_and_problems() -> None:
    import json

    document = json.loads(render())
    operation = document["paths"]["/format"]["post"]
    examples = operation["requestBody"]["content"]["application/json"]["examples"]
    assert len(examples) >= 3
    assert "application/yaml" in operation["requestBody"]["content"]
    assert {"400", "413", "415", "422"} <= set(operation["responses"])
