"""Request and response models of the OpenAI Evals surface (``/v1``), in OpenAI's wire shape.

Requests refuse keys this service does not honour (``extra="forbid"``): a data source or
a sampling parameter it would not apply is an error naming it, never dropped. Responses
follow the objects of OpenAI's API reference (``eval``, ``eval.run``,
``eval.run.output_item``, ``file``, ``list``).
"""

from __future__ import annotations

from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from app.evaluation.openai_graders.models import Grader, GraderMessage

Metadata = dict[str, str]
Order = Literal["asc", "desc"]
ItemT = TypeVar("ItemT")


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CustomDataSourceConfig(_Request):
    """The items' JSON Schema; ``include_sample_schema`` when runs generate a sample."""

    type: Literal["custom"]
    item_schema: dict[str, Any]
    include_sample_schema: bool = False


class EvalCreateRequest(_Request):
    """``POST /v1/evals``."""

    name: str | None = Field(None, max_length=500)
    metadata: Metadata | None = None
    data_source_config: CustomDataSourceConfig
    testing_criteria: list[Grader] = Field(min_length=1, max_length=50)


class EvalUpdateRequest(_Request):
    """``POST /v1/evals/{eval_id}``: rename, or replace the metadata."""

    name: str | None = Field(None, max_length=500)
    metadata: Metadata | None = None


class SourceRow(_Request):
    """One row of a data source: the item, and for JSONL runs an already generated sample."""

    item: dict[str, Any]
    sample: dict[str, Any] | None = None


class FileContentSource(_Request):
    """Rows given in the request."""

    type: Literal["file_content"]
    content: list[SourceRow] = Field(min_length=1)


class FileIdSource(_Request):
    """Rows of a file uploaded with ``purpose=evals``."""

    type: Literal["file_id"]
    id: str


Source = Annotated[FileContentSource | FileIdSource, Field(discriminator="type")]


class TemplateMessages(_Request):
    """Messages rendered per item: ``{{item.x}}`` references."""

    type: Literal["template"]
    template: list[GraderMessage] = Field(min_length=1)


class ItemReference(_Request):
    """The messages are in the item: ``item.<key>`` names a list of ``{role, content}``."""

    type: Literal["item_reference"]
    item_reference: str


InputMessages = Annotated[TemplateMessages | ItemReference, Field(discriminator="type")]


class SamplingParams(_Request):
    """The candidate's sampling parameters this service applies (others are refused).

    ``max_completion_tokens`` (the SDK's name), ``max_completions_tokens`` (the API
    reference's) and ``max_tokens`` are one limit: give one, or equal values.
    """

    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, ge=0, le=1)
    seed: int | None = None
    max_completion_tokens: int | None = Field(None, ge=1)
    max_completions_tokens: int | None = Field(None, ge=1)
    max_tokens: int | None = Field(None, ge=1)
    reasoning_effort: Literal["none", "minimal", "low", "medium", "high", "xhigh"] | None = None
    tools: list[dict[str, Any]] | None = Field(
        None, description="Function tools the model may call (any API's spelling)."
    )
    response_format: dict[str, Any] | None = Field(
        None, description="Structured output (Chat's form): `{type: json_schema, json_schema}`."
    )
    text: dict[str, Any] | None = Field(
        None, description="Structured output (Responses' form): `{format: {type, name, schema}}`."
    )


class JsonlDataSource(_Request):
    """Grade given rows (their ``sample`` is the output); no model is called."""

    type: Literal["jsonl"]
    source: Source


class CompletionsDataSource(_Request):
    """Ask ``model`` (a target) for each item, then grade its answer."""

    type: Literal["completions"]
    source: Source
    input_messages: InputMessages
    model: str
    sampling_params: SamplingParams | None = None


class ResponsesDataSource(_Request):
    """Ask ``model`` (a target) for each item as the Responses API is asked, then grade it.

    The target's own wire is used (``api_format: responses`` for the Responses API).
    """

    type: Literal["responses"]
    source: Source
    input_messages: InputMessages
    model: str
    sampling_params: SamplingParams | None = None


DataSource = Annotated[
    JsonlDataSource | CompletionsDataSource | ResponsesDataSource, Field(discriminator="type")
]


class RunCreateRequest(_Request):
    """``POST /v1/evals/{eval_id}/runs``."""

    name: str | None = Field(None, max_length=500)
    metadata: Metadata | None = None
    data_source: DataSource


class EvalObject(BaseModel):
    """An eval."""

    object: Literal["eval"] = "eval"
    id: str
    name: str
    created_at: int
    metadata: Metadata
    data_source_config: dict[str, Any] = Field(
        description="`{type: custom, schema}`: the JSON Schema of `item` (and `sample`)."
    )
    testing_criteria: list[dict[str, Any]]


class ListPage(BaseModel, Generic[ItemT]):
    """One page of a list: follow ``last_id`` as ``after`` while ``has_more``."""

    object: Literal["list"] = "list"
    data: list[ItemT]
    first_id: str = Field(description="Empty on an empty page.")
    last_id: str = Field(description="Empty on an empty page.")
    has_more: bool


class EvalDeleted(BaseModel):
    """The answer to deleting an eval."""

    object: Literal["eval.deleted"] = "eval.deleted"
    deleted: bool = True
    eval_id: str


class ApiError(BaseModel):
    """Why a run or a sample failed."""

    code: str
    message: str


class ResultCounts(BaseModel):
    """Items by outcome."""

    total: int
    passed: int
    failed: int
    errored: int


class ModelUsage(BaseModel):
    """Tokens one model used in the run."""

    model_name: str
    invocation_count: int
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cached_tokens: int = 0


class CriterionResult(BaseModel):
    """Items each testing criterion passed and failed."""

    testing_criteria: str
    passed: int
    failed: int


RunStatus = Literal["queued", "in_progress", "completed", "canceled", "failed"]


class EvalRunObject(BaseModel):
    """A run of an eval (a durable run of the service: ``report_url`` shows it)."""

    object: Literal["eval.run"] = "eval.run"
    id: str
    eval_id: str
    name: str
    model: str = Field(description="The model asked; empty for a `jsonl` run (none is).")
    status: RunStatus
    created_at: int
    metadata: Metadata
    data_source: dict[str, Any]
    result_counts: ResultCounts
    per_model_usage: list[ModelUsage]
    per_testing_criteria_results: list[CriterionResult]
    error: ApiError | None
    report_url: str


class EvalRunDeleted(BaseModel):
    """The answer to deleting a run."""

    object: Literal["eval.run.deleted"] = "eval.run.deleted"
    deleted: bool = True
    run_id: str


class GraderResult(BaseModel):
    """One testing criterion's outcome on an item."""

    name: str = Field(description="The testing criterion's id (`<name>-<uuid>`).")
    type: str
    score: float = Field(description="0 when the grader could not grade (`error` says why).")
    passed: bool
    sample: dict[str, Any] | None = None
    error: str | None = None


class SampleUsage(BaseModel):
    """The candidate's tokens for an item."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cached_tokens: int = 0


class ChatTurn(BaseModel):
    """A message of a sample."""

    role: str
    content: str


class Sample(BaseModel):
    """What the candidate was asked and answered."""

    model: str
    input: list[ChatTurn]
    output: list[ChatTurn]
    usage: SampleUsage
    error: ApiError | None
    finish_reason: str = Field(description="`stop`, or `error` when the item errored.")
    temperature: float
    max_completion_tokens: int = Field(description="0 when no limit was sent.")
    top_p: float
    seed: int


class OutputItem(BaseModel):
    """One item of a run: its data, the sample, and each testing criterion's result."""

    object: Literal["eval.run.output_item"] = "eval.run.output_item"
    id: str
    eval_id: str
    run_id: str
    created_at: int
    status: Literal["pass", "fail", "error"]
    datasource_item_id: int
    datasource_item: dict[str, Any]
    results: list[GraderResult]
    sample: Sample


class FileObject(BaseModel):
    """An uploaded file."""

    object: Literal["file"] = "file"
    id: str
    bytes: int
    created_at: int
    filename: str
    purpose: str
    status: Literal["processed"] = "processed"


class FileDeleted(BaseModel):
    """The answer to deleting a file."""

    object: Literal["file"] = "file"
    id: str
    deleted: bool = True
