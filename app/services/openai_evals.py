"""The OpenAI Evals surface (``/v1``): evals, files, runs and output items over the engine.

A run is a durable run like any other: its cases are built from the data source
(``openai_cases``), its candidate is the target the ``model`` names, its graders are the
eval's testing criteria (``app.evaluation.openai_graders``), and it is stored, executed,
resumed and cancelled by the run store and supervisor.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any, TypeVar

import anyio.to_thread

from app.errors import FieldError, InvalidRequest, NotFound, RunStateConflict
from app.evaluation.context import CaseContext
from app.evaluation.openai_graders.checks import COSINE_MODEL, similarity_refusal
from app.evaluation.openai_graders.models import (
    GRADER,
    PythonGrader,
    TextSimilarityGrader,
    all_graders,
    model_graders,
)
from app.evaluation.openai_graders.python_grader import CODE_GRADERS_OFF
from app.evaluation.plan import RunPlan, embedding_targets
from app.evaluation.prepared import PreparedRun
from app.evaluators.checks.json_schemas import schema_problem
from app.providers.adapters.http import options_api, untaken_options
from app.providers.base import ModelOptions
from app.providers.errors import UnknownTarget
from app.providers.registry import ProviderRegistry
from app.runs.models import NewCase, NewRun
from app.runs.openai_evals.openai_imports import OpenAIImportStore
from app.runs.openai_evals.openai_store import OpenAIEvalStore, StoredEval, StoredEvalRun
from app.runs.spec import build_run_spec, case_definition
from app.runs.storage.store import RunStore
from app.runs.storage.store_base import utc_now
from app.runs.supervisor import RunScheduler
from app.schemas.openai_evals import (
    EvalCreateRequest,
    EvalDeleted,
    EvalObject,
    EvalRunDeleted,
    EvalRunObject,
    EvalUpdateRequest,
    FileContentSource,
    ListPage,
    OutputItem,
    RunCreateRequest,
    SamplingParams,
    SourceRow,
)
from app.schemas.openai_examples import (
    SAMPLE_EVAL_ID,
    SAMPLE_EVAL_RUN_ID,
    sample_eval_request,
    sample_run_request,
)
from app.services.openai_cases import (
    build_cases,
    check_count,
    check_items,
    invalid,
    rows_of_file,
)
from app.services.openai_files import OpenAIFiles
from app.services.openai_views import (
    ITEM_STATUSES,
    STORED_STATUSES,
    RunModels,
    Sampling,
    data_source_schema,
    eval_object,
    imported_run_object,
    output_item,
    output_item_id,
    output_item_seq,
    run_object,
)
from app.settings import Settings
from app.suites.model import FormattedCase

ItemT = TypeVar("ItemT")
_WIRE_NAMES = {"max_output_tokens": "max_completion_tokens"}


class OpenAIEvalService:
    """What each ``/v1/evals`` route calls (one method per route)."""

    def __init__(
        self,
        settings: Settings,
        runs: RunStore,
        supervisor: RunScheduler,
        providers: ProviderRegistry,
    ) -> None:
        self._settings = settings
        self._runs = runs
        self._store = OpenAIEvalStore(runs)
        self._imports = OpenAIImportStore(runs)
        self._supervisor = supervisor
        self._providers = providers
        self.files = OpenAIFiles(settings, self._store)

    # Evals --------------------------------------------------------------------------------

    def target_of(self, model: str, param: str) -> str:
        """The target a model name stands for (the mapping setting, else the same name).

        Raises:
            InvalidRequest: No such target (a 400 naming ``param``).
        """
        name = self._settings.openai_models.get(model, model)
        try:
            return self._providers.get(name).name
        except UnknownTarget as exc:
            raise InvalidRequest(
                f"{param}: model {model!r} is not configured here; {exc.detail}",
                errors=[FieldError(path=param, message=f"unknown model {model!r}")],
                extra={"code": "model_not_found"},
            ) from None

    def cosine_target(self, param: str) -> str:
        """The embeddings target of ``cosine`` graders.

        ``EVAL_OPENAI_MODELS``' target for ``text-embedding-3-large`` (the model OpenAI
        embeds with), else the first embeddings target configured.

        Raises:
            InvalidRequest: None (or the mapped target is not one): a 400 naming ``param``.
        """
        embedders = embedding_targets(self._providers)
        mapped = self._settings.openai_models.get(COSINE_MODEL)
        if mapped is None and embedders:
            return embedders[0]
        if mapped in embedders:
            return str(mapped)
        problem = (
            f"EVAL_OPENAI_MODELS maps {COSINE_MODEL!r} to {mapped!r}, which is not one"
            if mapped is not None
            else "none is configured (a target with api_format: embeddings)"
        )
        raise invalid(
            param,
            f"evaluation_metric 'cosine' needs an embeddings target and {problem}; "
            "or use fuzzy_match, bleu, gleu or rouge_*",
        )

    def _check_criteria(self, request: EvalCreateRequest) -> None:
        for index, criterion in enumerate(request.testing_criteria):
            for grader in all_graders(criterion):
                where = f"testing_criteria[{index}]"
                if isinstance(grader, PythonGrader) and not self._settings.code_graders:
                    raise invalid(where, CODE_GRADERS_OFF)
                if isinstance(grader, TextSimilarityGrader):
                    refusal = similarity_refusal(grader)
                    if refusal is not None:
                        raise invalid(f"{where}.evaluation_metric", refusal)
                    if grader.evaluation_metric == "cosine":
                        self.cosine_target(f"{where}.evaluation_metric")
            for grader in model_graders(criterion):
                self.target_of(grader.model, f"testing_criteria[{index}].model")
        names = [criterion.name for criterion in request.testing_criteria]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise invalid("testing_criteria", f"names must be unique; repeated: {duplicates}")
        ids = [criterion.id for criterion in request.testing_criteria if criterion.id]
        repeated = sorted({ident for ident in ids if ids.count(ident) > 1})
        if repeated:
            raise invalid("testing_criteria", f"ids must be unique; repeated: {repeated}")

    def new_eval(self, request: EvalCreateRequest, caller: str | None, eval_id: str) -> StoredEval:
        """The eval to store for ``request`` (criteria checked, ids given), not stored yet."""
        self._check_criteria(request)
        config = request.data_source_config
        problem = schema_problem(config.item_schema)  # no retrieval, meta-schema, no loop
        if problem is not None:
            raise invalid("data_source_config.item_schema", problem)
        now = utc_now()
        return StoredEval(
            id=eval_id,
            owner=caller,
            name=request.name or "eval",
            metadata=request.metadata or {},
            data_source_config={
                "type": "custom",
                "schema": data_source_schema(config.item_schema, config.include_sample_schema),
            },
            testing_criteria=[
                _with_id(c.model_dump(exclude_none=True)) for c in request.testing_criteria
            ],
            created_at=now,
            updated_at=now,
        )

    async def create_eval(self, request: EvalCreateRequest, caller: str | None) -> EvalObject:
        """Store an eval after checking its criteria can run here."""
        stored = self.new_eval(request, caller, f"eval_{uuid.uuid4().hex}")
        await self._store.create_eval(stored)
        return eval_object(stored)

    async def ensure_sample(self) -> None:
        """Create the sample file, eval and run (no owner) where missing.

        Replicas starting together create each once: the eval and file rows keep the first
        insert, the run is found under its reserved idempotency key (callers' have a ``:``).
        """
        await self.files.add_sample()
        try:
            stored_eval = await self._store.get_eval(SAMPLE_EVAL_ID, None)
        except NotFound:
            stored_eval = self.new_eval(sample_eval_request(), None, SAMPLE_EVAL_ID)
            await self._store.create_eval(stored_eval, exists_ok=True)
        try:
            await self._store.get_eval_run(SAMPLE_EVAL_ID, SAMPLE_EVAL_RUN_ID)
        except NotFound:
            key = (f"sample-run-{SAMPLE_EVAL_RUN_ID}", SAMPLE_EVAL_RUN_ID)
            await self._start_run(
                stored_eval, sample_run_request(), None, SAMPLE_EVAL_RUN_ID, idempotency=key
            )

    async def get_eval(self, eval_id: str, caller: str | None) -> EvalObject:
        """The eval."""
        return eval_object(await self._store.get_eval(eval_id, caller))

    async def list_evals(
        self, caller: str | None, *, after: str | None, limit: int, order: str, order_by: str
    ) -> ListPage[EvalObject]:
        """One page of the caller's evals."""
        evals, more = await self._store.list_evals(
            caller, after=after, limit=limit, order=order, order_by=order_by
        )
        return _page([eval_object(e) for e in evals], more)

    async def update_eval(
        self, eval_id: str, request: EvalUpdateRequest, caller: str | None
    ) -> EvalObject:
        """Rename the eval or replace its metadata."""
        stored = await self._store.update_eval(
            eval_id, caller, name=request.name, metadata=request.metadata
        )
        return eval_object(stored)

    async def delete_eval(self, eval_id: str, caller: str | None) -> EvalDeleted:
        """Remove the eval and its runs (running ones are cancelled first)."""
        await self._store.get_eval(eval_id, caller)
        for run_id in await self._store.eval_run_ids(eval_id):
            await self._remove_run(run_id)
        await self._store.delete_eval(eval_id)
        return EvalDeleted(eval_id=eval_id)

    # Runs ---------------------------------------------------------------------------------

    async def _rows(
        self, request: RunCreateRequest, caller: str | None
    ) -> tuple[list[SourceRow], str]:
        source = request.data_source.source
        if isinstance(source, FileContentSource):
            return list(source.content), "data_source.source.content"
        stored = await self.files.get_stored(source.id, caller, param="data_source.source.id")
        if stored.rows is not None:  # counted at upload: a file too large is not read again
            check_count(stored.rows, self._settings.max_cases_per_run)
        rows = await anyio.to_thread.run_sync(rows_of_file, stored.content, source.id)
        return rows, f"file {source.id!r} row"

    async def create_run(
        self,
        eval_id: str,
        request: RunCreateRequest,
        caller: str | None,
        base_url: str,
        idempotency_key: str | None = None,
    ) -> EvalRunObject:
        """Build the run's cases, store it as a durable run and start it.

        With an ``Idempotency-Key``, the same key and body give back the run they created
        (nothing is started again); the same key with another body is a 409.
        """
        stored_eval = await self._store.get_eval(eval_id, caller)
        idempotency = None
        if idempotency_key:
            body = json.dumps(
                [eval_id, request.model_dump(mode="json")], sort_keys=True, ensure_ascii=False
            )
            idempotency = (
                f"{caller or ''}:{idempotency_key}",
                hashlib.sha256(body.encode()).hexdigest(),
            )
            existing = await self._runs.run_for_key(*idempotency)
            if existing is not None:
                stored = await self._store.get_eval_run(eval_id, existing.id)
                return await self._view(stored_eval, stored, base_url)
        run_id = f"evalrun_{uuid.uuid4().hex}"
        stored = await self._start_run(
            stored_eval, request, caller, run_id, idempotency=idempotency
        )
        return await self._view(stored_eval, stored, base_url)

    async def _start_run(
        self,
        stored_eval: StoredEval,
        request: RunCreateRequest,
        caller: str | None,
        run_id: str,
        *,
        idempotency: tuple[str, str] | None = None,
    ) -> StoredEvalRun:
        source = request.data_source
        model = getattr(source, "model", None)
        target = self.target_of(model, "data_source.model") if model else self._any_target()
        params = getattr(source, "sampling_params", None)
        options = self._candidate_options(target, params) if params else ModelOptions()
        judges = self._judges(stored_eval.testing_criteria)
        rows, where = await self._rows(request, caller)
        item_schema = stored_eval.data_source_config["schema"]["properties"]["item"]

        def checked_cases() -> list[tuple[FormattedCase, str | None]]:
            """The rows checked and rendered (CPU only: in a worker thread)."""
            check_items(rows, item_schema, where)
            criteria, cap = stored_eval.testing_criteria, self._settings.max_cases_per_run
            return build_cases(request, rows, criteria, judges, cap)

        cases = await anyio.to_thread.run_sync(checked_cases)
        plan = RunPlan(
            target=target,
            judge_target=next((t for m, t in judges.items() if m != COSINE_MODEL), target),
            max_concurrency=self._settings.run_concurrency,
            judge_attempts=self._settings.judge_retries + 1,
            dataset=stored_eval.name,
            case_timeout_seconds=self._settings.case_timeout_seconds,
            candidate_options=options,
        )
        prepared = PreparedRun(plan=plan, context=CaseContext(providers=self._providers))
        spec = build_run_spec(prepared).model_copy(update={"graders": "openai"})
        new_run = NewRun(
            id=run_id,
            kind="evaluate",
            target=plan.target,
            judge_target=plan.judge_target,
            spec=spec.model_dump(mode="json", by_alias=True),
            owner=caller,
            name=stored_eval.name,
        )
        new_cases = (
            NewCase(eval_id=c.case.id, definition=case_definition(c), candidate_answer=answer)
            for c, answer in cases
        )
        info, created = await self._runs.create_run(new_run, new_cases, idempotency=idempotency)
        stored = StoredEvalRun(
            id=info.id,  # another request's run when it won the race for the same key
            eval_id=stored_eval.id,
            name=request.name or f"run of {stored_eval.name}",
            model=model or "",
            data_source=request.data_source.model_dump(mode="json", exclude_none=True),
            metadata=request.metadata or {},
            created_at=utc_now(),
        )
        await self._store.add_eval_run(stored, exists_ok=idempotency is not None)
        if created:
            self._supervisor.submit(run_id)
        return stored

    def sampling(self, stored: StoredEvalRun) -> Sampling:
        """What a run's samples report: the values given, else the target's, else defaults."""
        params = stored.data_source.get("sampling_params") or {}
        config = None
        if stored.model:
            name = self._settings.openai_models.get(stored.model, stored.model)
            try:
                config = self._providers.get(name).config
            except UnknownTarget:
                config = None  # the target was removed since: report what the run gave
        limits = [params.get(key) for key in ("max_completion_tokens", "max_completions_tokens")]
        limits += [params.get("max_tokens"), getattr(config, "max_output_tokens", None)]
        temperatures = [params.get("temperature"), getattr(config, "temperature", None)]
        defaults = Sampling()
        return Sampling(
            temperature=next((t for t in temperatures if t is not None), defaults.temperature),
            max_completion_tokens=next((n for n in limits if n is not None), 0),
            top_p=params["top_p"] if params.get("top_p") is not None else defaults.top_p,
            seed=params["seed"] if params.get("seed") is not None else defaults.seed,
        )

    def _candidate_options(self, target: str, params: SamplingParams) -> ModelOptions:
        """The run's candidate options; a parameter the target's API does not take is a 400."""
        param = "data_source.sampling_params"
        limits = {params.max_completion_tokens, params.max_completions_tokens, params.max_tokens}
        limits.discard(None)
        if len(limits) > 1:
            raise invalid(param, f"token limits disagree: {sorted(limits, key=str)}")
        options = ModelOptions(
            temperature=params.temperature,
            top_p=params.top_p,
            seed=params.seed,
            max_output_tokens=next(iter(limits), None),
            reasoning_effort=params.reasoning_effort,
        )
        provider = options_api(self._providers.get(target).config)
        refused = sorted(_WIRE_NAMES.get(k, k) for k in untaken_options(provider, options))
        if refused:
            raise invalid(
                f"{param}.{refused[0]}",
                f"target {target!r} ({provider}) does not take {', '.join(refused)}",
            )
        return options

    def _any_target(self) -> str:
        names = self._providers.names()
        return "default" if "default" in names else names[0]

    def _judges(self, criteria: list[dict[str, Any]]) -> dict[str, str]:
        judges = {}
        for index, criterion in enumerate(criteria):
            for grader in model_graders(GRADER.validate_python(criterion)):
                judges[grader.model] = self.target_of(
                    grader.model, f"testing_criteria[{index}].model"
                )
        cosine = [
            grader
            for criterion in criteria
            for grader in all_graders(GRADER.validate_python(criterion))
            if isinstance(grader, TextSimilarityGrader) and grader.evaluation_metric == "cosine"
        ]
        if cosine:  # the judge ``cosine`` graders embed with; never the run's judge
            judges[COSINE_MODEL] = self.cosine_target("testing_criteria")
        return judges

    async def _view(
        self, stored_eval: StoredEval, stored: StoredEvalRun, base_url: str
    ) -> EvalRunObject:
        report_url = f"{base_url.rstrip('/')}/runs/{stored.id}"
        if stored.imported is not None:
            return imported_run_object(stored, report_url)
        run = await self._runs.get_run(stored.id)
        tally = await self._store.tally(stored.id)
        models = self._run_models(stored, stored_eval)
        return run_object(run, stored, stored_eval.testing_criteria, models, tally, report_url)

    def _run_models(self, stored: StoredEvalRun, stored_eval: StoredEval) -> RunModels:
        judges = {
            grader.model
            for criterion in stored_eval.testing_criteria
            for grader in model_graders(GRADER.validate_python(criterion))
        }
        return RunModels(stored.model, tuple(sorted(judges)), self._settings.openai_models)

    async def get_run(
        self, eval_id: str, run_id: str, caller: str | None, base_url: str
    ) -> EvalRunObject:
        """The run, with counts of the items finished so far."""
        stored_eval = await self._store.get_eval(eval_id, caller)
        stored = await self._store.get_eval_run(eval_id, run_id)
        return await self._view(stored_eval, stored, base_url)

    async def list_runs(
        self,
        eval_id: str,
        caller: str | None,
        *,
        status: str | None,
        after: str | None,
        limit: int,
        order: str,
        base_url: str,
    ) -> ListPage[EvalRunObject]:
        """One page of the eval's runs."""
        stored_eval = await self._store.get_eval(eval_id, caller)
        statuses = [STORED_STATUSES[status]] if status else []
        runs, more = await self._store.list_eval_runs(
            eval_id, statuses=statuses, after=after, limit=limit, order=order
        )
        return _page([await self._view(stored_eval, run, base_url) for run in runs], more)

    async def cancel_run(
        self, eval_id: str, run_id: str, caller: str | None, base_url: str
    ) -> EvalRunObject:
        """Stop the run; items already graded are kept."""
        stored_eval = await self._store.get_eval(eval_id, caller)
        stored = await self._store.get_eval_run(eval_id, run_id)
        await self._supervisor.cancel(run_id)
        return await self._view(stored_eval, stored, base_url)

    async def delete_run(self, eval_id: str, run_id: str, caller: str | None) -> EvalRunDeleted:
        """Remove the run and its items (a running run is cancelled first)."""
        await self._store.get_eval(eval_id, caller)
        await self._store.get_eval_run(eval_id, run_id)
        await self._remove_run(run_id)
        return EvalRunDeleted(run_id=run_id)

    async def _remove_run(self, run_id: str) -> None:
        run = await self._runs.get_run(run_id)
        if not run.finished:
            await self._supervisor.cancel(run_id)
        try:
            await self._runs.delete_run(run_id)
        except RunStateConflict:
            await self._supervisor.cancel(run_id)
            await self._runs.delete_run(run_id)

    # Output items -------------------------------------------------------------------------

    async def list_output_items(
        self,
        eval_id: str,
        run_id: str,
        caller: str | None,
        *,
        status: str | None,
        after: str | None,
        limit: int,
        order: str,
    ) -> ListPage[OutputItem]:
        """One page of the run's finished items (``pass`` or ``fail`` only, if asked)."""
        await self._store.get_eval(eval_id, caller)
        stored = await self._store.get_eval_run(eval_id, run_id)
        if stored.imported is not None:
            bodies, more = await self._imports.items(
                run_id, status=status, after=after, limit=limit, order=order
            )
            return _page([OutputItem.model_validate(body) for body in bodies], more)
        statuses = ITEM_STATUSES.get(status or "", ())
        seq = None
        if after is not None:
            seq = output_item_seq(after)
            if seq is None:
                raise invalid("after", f"{after!r} is not an output item id of this run")
        outputs, more = await self._store.output_items(
            run_id, statuses=statuses, after=seq, limit=limit, order=order
        )
        sampling = self.sampling(stored)
        return _page([output_item(stored, o, sampling) for o in outputs], more)

    async def get_output_item(
        self, eval_id: str, run_id: str, item_id: str, caller: str | None
    ) -> OutputItem:
        """One finished item of the run."""
        await self._store.get_eval(eval_id, caller)
        stored = await self._store.get_eval_run(eval_id, run_id)
        if stored.imported is not None:
            body = await self._imports.item(run_id, item_id)
            if body is None:
                raise NotFound(f"run {run_id!r} has no output item with the id {item_id!r}")
            return OutputItem.model_validate(body)
        seq = output_item_seq(item_id)
        ours = seq is not None and output_item_id(run_id, seq) == item_id
        output = await self._store.output_item(run_id, seq) if ours and seq is not None else None
        if output is None:
            raise NotFound(f"run {run_id!r} has no output item with the id {item_id!r}")
        return output_item(stored, output, self.sampling(stored))


def _page(items: list[ItemT], more: bool) -> ListPage[ItemT]:
    ids = [str(getattr(item, "id", "")) for item in items]
    return ListPage[ItemT](
        data=items,
        first_id=ids[0] if ids else "",
        last_id=ids[-1] if ids else "",
        has_more=more,
    )


def _with_id(criterion: dict[str, Any]) -> dict[str, Any]:
    """The criterion with its ``id``: the one given, else ``<name>-<uuid>`` as OpenAI makes."""
    if criterion.get("id"):
        return criterion
    return {**criterion, "id": f"{criterion['name']}-{uuid.uuid4()}"}
