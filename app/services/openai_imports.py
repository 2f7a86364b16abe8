"""Imports from another Evals API (OpenAI's, or any compatible one): the migration's far end.

Evals, files and finished runs keep the source's ids, so a second import of the same object
changes nothing (``created: false``) and references to them keep working. An eval must be
one this service can run (its criteria are checked as on create); a run must be finished at
the source and becomes a read-only historical run whose object and output items are the
source's, brought to the shapes of OpenAI's description (a null the description does not
allow becomes its documented default).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.errors import NotFound
from app.runs.openai_evals.openai_imports import FINAL_STATUSES, OpenAIImportStore, created_at
from app.runs.openai_evals.openai_store import OpenAIEvalStore, StoredEvalRun, StoredFile
from app.runs.spec import PlanSpec, RunSpec
from app.runs.storage.store import RunStore
from app.schemas.openai_evals import (
    CustomDataSourceConfig,
    EvalCreateRequest,
    EvalObject,
    EvalRunObject,
    FileObject,
    OutputItem,
)
from app.services.openai_cases import invalid, rows_of_file
from app.services.openai_evals import OpenAIEvalService
from app.services.openai_files import PURPOSES, file_object
from app.services.openai_views import Sampling, eval_object, imported_run_object


class Imported(BaseModel):
    """The answer to an import: the object here, and whether this call created it."""

    created: bool
    items_stored: int = Field(0, description="Output items of the run stored so far.")


class ImportedEval(Imported):
    """An imported eval."""

    eval: EvalObject


class ImportedFile(Imported):
    """An imported file."""

    file: FileObject


class ImportedRun(Imported):
    """An imported run."""

    run: EvalRunObject


class FileImport(BaseModel):
    """A file as the source describes it, with its content."""

    model_config = ConfigDict(extra="ignore")
    filename: str = Field(max_length=500)
    purpose: str
    created_at: int = 0
    content: str


class ItemsImport(BaseModel):
    """A batch of the source's output items, in the source's order from ``start``."""

    start: int = Field(ge=0)
    data: list[dict[str, Any]] = Field(max_length=1000)


def _item(source: dict[str, Any], eval_id: str, run_id: str) -> dict[str, Any]:
    """A source output item as this service serves it (the description's shapes)."""
    sample = dict(source.get("sample") or {})
    defaults = dataclasses.asdict(Sampling())
    for key, default in {
        **defaults,
        "model": "",
        "input": [],
        "output": [],
        "finish_reason": "stop",
    }.items():
        if sample.get(key) is None:
            sample[key] = default
    usage = dict(sample.get("usage") or {})
    for key in ("prompt_tokens", "completion_tokens", "total_tokens", "cached_tokens"):
        usage[key] = usage.get(key) or 0
    sample["usage"] = usage
    sample["input"] = [_turn(m) for m in sample["input"]]
    sample["output"] = [_turn(m) for m in sample["output"]]
    results = [
        {
            **r,
            "type": r.get("type") or "",
            "score": r.get("score") or 0.0,
            "passed": bool(r.get("passed")),
        }
        for r in source.get("results") or []
    ]
    if len(str(source.get("id"))) > 200:
        raise ValueError("the id is longer than 200 characters")
    status = source.get("status")
    item = OutputItem.model_validate(
        {
            **source,
            "eval_id": eval_id,
            "run_id": run_id,
            "status": status if status in ("pass", "fail", "error") else "fail",
            "datasource_item": source.get("datasource_item") or {},
            "results": results,
            "sample": sample,
        }
    )
    return item.model_dump(mode="json")


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _turn(message: dict[str, Any]) -> dict[str, str]:
    content = message.get("content")
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return {"role": str(message.get("role") or ""), "content": text}


class OpenAIImportService:
    """What the ``/v1/imports`` routes call."""

    def __init__(self, evals: OpenAIEvalService, runs: RunStore) -> None:
        self._evals = evals
        self._store = OpenAIEvalStore(runs)
        self._imports = OpenAIImportStore(runs)

    async def import_eval(
        self, eval_id: str, source: dict[str, Any], caller: str | None
    ) -> ImportedEval:
        """Store the source's eval under its id (checked as a new eval would be)."""
        try:
            existing = await self._store.get_eval(eval_id, caller)
        except NotFound:
            existing = None
        if existing is not None:
            return ImportedEval(created=False, eval=eval_object(existing))
        config = _mapping(source.get("data_source_config"))
        if config.get("type") != "custom":
            raise invalid(
                "data_source_config.type",
                f"{config.get('type')!r} data sources are not served here (only 'custom')",
            )
        properties = _mapping(_mapping(config.get("schema")).get("properties"))
        try:
            request = EvalCreateRequest(
                name=source.get("name"),
                metadata=source.get("metadata") or {},
                data_source_config=CustomDataSourceConfig(
                    type="custom",
                    item_schema=properties.get("item") or {"type": "object"},
                    include_sample_schema="sample" in properties,
                ),
                testing_criteria=source.get("testing_criteria") or [],
            )
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(p) for p in error["loc"])
            raise invalid(where, error["msg"]) from None
        stored = self._evals.new_eval(request, caller, eval_id)
        stored = dataclasses.replace(
            stored, created_at=created_at(source), updated_at=created_at(source)
        )
        created = await self._store.create_eval(stored, exists_ok=True)
        return ImportedEval(
            created=created, eval=eval_object(await self._store.get_eval(eval_id, caller))
        )

    async def import_file(
        self, file_id: str, source: FileImport, caller: str | None
    ) -> ImportedFile:
        """Store the source's file under its id (its rows checked as on upload)."""
        try:
            return ImportedFile(created=False, file=await self._evals.files.get(file_id, caller))
        except NotFound:
            pass
        if source.purpose not in PURPOSES:
            raise invalid("purpose", f"{source.purpose!r} files are not served here; only 'evals'")
        rows_of_file(source.content, file_id)
        stored = StoredFile(
            id=file_id,
            owner=caller,
            filename=source.filename,
            purpose=source.purpose,
            bytes=len(source.content.encode()),
            content=source.content,
            created_at=created_at(source.model_dump()),
        )
        created = await self._store.add_file(stored, exists_ok=True)
        return ImportedFile(created=created, file=file_object(stored))

    async def import_run(
        self, eval_id: str, run_id: str, source: dict[str, Any], caller: str | None, base_url: str
    ) -> ImportedRun:
        """Store the source's finished run as a read-only historical run of the eval.

        A run of that id already here (imported or not) is left as it is.
        """
        await self._store.get_eval(eval_id, caller)
        try:
            await self._store.get_eval_run(eval_id, run_id)
        except NotFound:
            pass
        else:
            return ImportedRun(
                created=False,
                run=await self._evals.get_run(eval_id, run_id, caller, base_url),
                items_stored=await self._imports.item_count(run_id),
            )
        status = source.get("status")
        if status not in FINAL_STATUSES:
            raise invalid("status", f"the run is {status!r} at the source; import it once it ends")
        data_source = source.get("data_source") or source.get("run_data_source") or {}
        stored = StoredEvalRun(
            id=run_id,
            eval_id=eval_id,
            name=str(source.get("name") or run_id)[:500],
            model=str(source.get("model") or "")[:200],
            data_source=data_source if isinstance(data_source, dict) else {},
            metadata=source.get("metadata") or {},
            created_at=created_at(source),
            imported=source,
        )
        try:  # the object it will be served as: refused now, by name, if it cannot be
            imported_run_object(stored, base_url)
        except ValidationError as exc:
            error = exc.errors()[0]
            raise invalid(".".join(str(p) for p in error["loc"]), error["msg"]) from None
        target = stored.model or "imported"
        spec = RunSpec(
            suite={"dataset": stored.name, "imported": True},
            plan=PlanSpec(target=target, judge_target=target, max_concurrency=1, judge_attempts=1),
            graders="openai",
        ).model_dump_json(by_alias=True)
        created = await self._imports.add_run(stored, caller, spec)
        return ImportedRun(
            created=created,
            run=await self._evals.get_run(eval_id, run_id, caller, base_url),
            items_stored=await self._imports.item_count(run_id),
        )

    async def import_items(
        self, eval_id: str, run_id: str, batch: ItemsImport, caller: str | None
    ) -> Imported:
        """Store a batch of the run's output items (those already stored are skipped)."""
        await self._store.get_eval(eval_id, caller)
        stored = await self._store.get_eval_run(eval_id, run_id)
        if stored.imported is None and batch.data:
            raise invalid("run_id", f"run {run_id!r} was not imported; its items are its own")
        items = []
        for index, source in enumerate(batch.data):
            try:
                items.append(_item(source, eval_id, run_id))
            except ValidationError as exc:
                error = exc.errors()[0]
                where = ".".join(str(p) for p in error["loc"])
                raise invalid(f"data[{index}].{where}", error["msg"]) from None
            except (TypeError, ValueError, AttributeError):
                raise invalid(f"data[{index}]", "not an output item object") from None
        added = await self._imports.add_items(run_id, batch.start, items)
        return Imported(created=added > 0, items_stored=await self._imports.item_count(run_id))
