"""What the results viewer (``/ui``) reads that the JSON API has no model for."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class NumberedRecord(BaseModel):
    """A result record with the number of its case in the run (0-based, in suite order)."""

    seq: int
    record: dict[str, Any]


class CaseDetail(BaseModel):
    """One case of a run: what was stored for it, its record if it has one, its neighbours."""

    run_id: str
    seq: int
    total: int = Field(description="Cases in the run.")
    definition: dict[str, Any] = Field(description="The stored case and its formatted prompt.")
    record: dict[str, Any] | None = Field(None, description="None while the case has not run.")
    previous: int | None = None
    next: int | None = None
