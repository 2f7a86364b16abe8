"""Grader configurations: what a suite declares for each grader (evaluator) of a case.

Every eval file dialect is read into these models; nothing here knows which dialect a
grader came from. ``type`` is always the canonical name of ``app.evaluators.catalog``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

SCORE_POINTS = 10
"""A scored rubric criterion gets whole points from 0 to ``SCORE_POINTS`` (counted / 10)."""

RubricOperator = Literal["correctness", "contradiction"]


MAX_WEIGHT = 1_000_000.0
"""Largest weight a grader or rubric item may have (sums of weights must stay finite)."""


class ScoreRange(BaseModel):
    """One band of a scored criterion: the points ``low``..``high`` and the outcome earning them."""

    model_config = ConfigDict(frozen=True)
    low: int = Field(ge=0, le=SCORE_POINTS)
    high: int = Field(ge=0, le=SCORE_POINTS)
    outcome: str = Field(min_length=1)


class RubricItem(BaseModel):
    """One rubric criterion an ``llm_judge`` asks the judge about.

    A checklist criterion is met or not (1 or 0). A scored criterion has ``score_ranges``:
    bands covering 0-10 points, each with the outcome that earns it; the judge gives it whole
    points, which count as points / 10. ``min_score`` (0-1] is what a criterion must reach,
    and ``required`` (checklist criteria only) that it must be met: either unmet fails the
    case. ``operator`` says how the judge reads the outcome: ``correctness`` (the answer
    must support it) or ``contradiction`` (the answer must not contradict it).
    """

    model_config = ConfigDict(frozen=True, extra="allow")
    id: str
    description: str
    weight: float = Field(1.0, ge=0, le=MAX_WEIGHT, allow_inf_nan=False)
    required: bool = False
    score_ranges: tuple[ScoreRange, ...] = ()
    min_score: float | None = Field(None, gt=0, le=1)
    operator: RubricOperator | None = None

    @field_validator("score_ranges", mode="before")
    @classmethod
    def _bands(cls, value: Any) -> Any:
        """Bands from ``{"0": outcome, "4": outcome, ...}`` or ``[{score_range, outcome}]``.

        In the mapping, each key starts a band that ends where the next one begins.
        """
        if isinstance(value, dict):
            return _bands_of_mapping(value)
        if isinstance(value, list | tuple):
            return [_band_of_entry(entry) for entry in value]
        return value

    @field_validator("score_ranges", mode="after")
    @classmethod
    def _covering(cls, value: tuple[ScoreRange, ...]) -> tuple[ScoreRange, ...]:
        if value:
            _check_coverage(value)
        return value

    @model_validator(mode="after")
    def _gate(self) -> RubricItem:
        if self.score_ranges and self.required and self.min_score is None:
            raise ValueError(
                "'required' on a criterion with score_ranges: give 'min_score', the "
                "score (0-1] it must reach"
            )
        return self

    @property
    def scored(self) -> bool:
        """Whether the judge gives this criterion points (``score_ranges``), not met / unmet."""
        return bool(self.score_ranges)


def _bands_of_mapping(value: dict[Any, Any]) -> list[dict[str, Any]]:
    starts: dict[int, Any] = {}
    for key, outcome in value.items():
        point = _whole_point(key)
        if point is None:
            raise ValueError(
                f"score_ranges keys are whole points from 0 to {SCORE_POINTS}, not {key!r}"
            )
        starts[point] = outcome
    ordered = sorted(starts)
    if not ordered:
        raise ValueError("score_ranges needs bands: a mapping from each band's first point")
    if ordered[0] != 0:
        raise ValueError(f"score_ranges must start at 0, not at {ordered[0]}")
    ends = [*(start - 1 for start in ordered[1:]), SCORE_POINTS]
    return [
        {"low": start, "high": end, "outcome": starts[start]}
        for start, end in zip(ordered, ends, strict=True)
    ]


def _whole_point(key: Any) -> int | None:
    if isinstance(key, bool):
        return None
    if isinstance(key, int):
        point = key
    elif isinstance(key, str) and key.strip().isdigit():
        point = int(key)
    else:
        return None
    return point if 0 <= point <= SCORE_POINTS else None


def _band_of_entry(entry: Any) -> Any:
    """``{score_range: [low, high], outcome}`` as a ``ScoreRange``'s fields."""
    if not isinstance(entry, dict) or "score_range" not in entry:
        return entry  # a ScoreRange's own fields, or an error ScoreRange reports
    bounds = entry["score_range"]
    if not isinstance(bounds, list | tuple) or len(bounds) != 2:
        raise ValueError(f"score_range must be [low, high], not {bounds!r}")
    unknown = sorted(set(entry) - {"score_range", "outcome"})
    if unknown:
        raise ValueError(f"unknown keys of a score range: {', '.join(map(str, unknown))}")
    return {"low": bounds[0], "high": bounds[1], "outcome": entry.get("outcome")}


def _check_coverage(bands: tuple[ScoreRange, ...]) -> None:
    """Bands must not be empty, overlap or leave any point from 0 to 10 uncovered."""
    covered: dict[int, ScoreRange] = {}
    for band in bands:
        if band.low > band.high:
            raise ValueError(f"score range {band.low}-{band.high} ends before it starts")
        for point in range(band.low, band.high + 1):
            if point in covered:
                raise ValueError(f"score ranges overlap at {point} points")
            covered[point] = band
    missing = [point for point in range(SCORE_POINTS + 1) if point not in covered]
    if missing:
        listed = ", ".join(map(str, missing))
        raise ValueError(f"score_ranges must cover 0 to {SCORE_POINTS} points; missing: {listed}")


class TargetAccess(BaseModel):
    """A code grader's access to the targets while its program runs (``target_proxy``)."""

    model_config = ConfigDict(frozen=True)
    max_calls: int = Field(50, ge=0, description="Calls the program may make in all.")


class PromptProgram(BaseModel):
    """A judge prompt written by a program: it reads the case as JSON, prints the prompt."""

    model_config = ConfigDict(frozen=True)
    command: tuple[str, ...] = Field(min_length=1)
    config: Any = None


class Preprocessor(BaseModel):
    """A program that turns one kind of file in an answer into text for a judge (AgentV).

    ``type`` is a media type (``xlsx`` read as its media type); the program reads
    ``{path, original_path, media_type}`` as JSON and prints the file's text.
    """

    model_config = ConfigDict(frozen=True)
    type: str = Field(min_length=1)
    command: tuple[str, ...] = Field(min_length=1)


class AggregatorConfig(BaseModel):
    """How a ``composite`` combines its children: ``{type, weights?, threshold?, ...}``.

    ``type`` is canonical (``catalog.AGGREGATOR_TYPES``). ``weighted_average`` weights are
    also applied to the children's own ``weight`` when the suite is read.
    """

    model_config = ConfigDict(frozen=True, extra="allow")
    type: str
    weights: dict[str, float] = Field(default_factory=dict)
    threshold: float | None = None
    prompt: str | None = None
    prompt_path: str | None = None
    command: tuple[str, ...] = ()


class EvaluatorConfig(BaseModel):
    """One grader of a case: ``{name, type, weight, ...}``.

    Attributes:
        name: Unique within its list (generated from the type when the file gives none).
        type: The canonical type name (``catalog.GRADER_TYPES``).
        weight: Share in the case's weighted mean score.
        negate: Invert the outcome (``negate: true`` or promptfoo's ``not-`` prefix).
        required: The case fails when this grader fails (``min_score``: its own floor).
        threshold: The grader's own pass mark (metric limits for ``latency``/``cost``).
        value: The expected value of deterministic checks (a string or a list).
        prompt / prompt_path: A judge prompt template, inline or read from a file.
        prompt_program: A judge prompt a program prints (runs like a code grader, in ``cwd``).
        rubrics: Rubric items of a judge.
        target: The judge target of a model-graded grader.
        json_schema: The JSON Schema of ``is_json``/``contains_json`` (key ``schema``).
        evaluators: Children of a ``composite``.
        aggregator: How a ``composite`` combines its children.
        command / cwd: The program of a code grader (argv, no shell) and its folder (also the
            folder of a ``prompt_program``).
        target_access: A code grader's calls to targets (its ``target``: ``{max_calls}``).
        preprocessors: A judge's programs for files in the answer, by media type (run like
            a code grader, in ``cwd``; ``evaluators.preprocess``).
        transforms: promptfoo's output transforms, applied in order before the grader reads
            the answer (the test's ``options.transform``, then the assert's ``transform``):
            inline JavaScript (run in the embedded engine) or ``file://x.js|x.py[:function]``
            (run in the sandbox, placed like code graders); ``evaluators.transforms``.
        metric: The ``metric`` the file names (promptfoo's named score; a suite's
            ``derivedMetrics`` read the sums of these).
        semantics: ``promptfoo``: the grader follows promptfoo's rules (text compared as
            JavaScript does: never trimmed, case folded with ``toLowerCase``, JSON as
            ``JSON.parse`` reads it; a weight-0 grader always passes); ``default``: this
            service's (and AgentV's).

    Every other key the file gives is kept as written in ``model_extra`` (for example a
    ``tool_trajectory``'s ``mode`` and ``expected``, or a code grader's configuration).
    """

    model_config = ConfigDict(frozen=True, extra="allow", populate_by_name=True)
    name: str
    type: str
    weight: float = Field(1.0, ge=0, le=MAX_WEIGHT, allow_inf_nan=False)
    negate: bool = False
    required: bool = False
    min_score: float | None = Field(None, ge=0, le=1)
    threshold: float | None = Field(None, allow_inf_nan=False)
    value: Any = None
    prompt: str | None = None
    prompt_path: str | None = None
    prompt_program: PromptProgram | None = None
    rubrics: tuple[RubricItem, ...] = ()
    target: str | None = None
    json_schema: dict[str, Any] | None = Field(None, alias="schema")
    evaluators: tuple[EvaluatorConfig, ...] = ()
    aggregator: AggregatorConfig | None = None
    command: tuple[str, ...] = ()
    cwd: str | None = None
    target_access: TargetAccess | None = None
    preprocessors: tuple[Preprocessor, ...] = ()
    semantics: Literal["default", "promptfoo"] = "default"
    transforms: tuple[str, ...] = ()
    metric: str | None = None


DEFAULT_EVALUATOR = EvaluatorConfig(name="llm_judge", type="llm_judge")
"""The evaluator of a case that names none."""
