"""Grader configurations: what a suite declares for each grader (evaluator) of a case.

Every eval file dialect is read into these models; nothing here knows which dialect a
grader came from. ``type`` is always the canonical name of ``app.evaluators.catalog``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class RubricItem(BaseModel):
    """One rubric check an ``llm_judge`` asks the judge to decide.

    Keys this service does not read yet (``score_ranges``, ``operator``, ``min_score``) are
    kept in ``model_extra``; the suite reader refuses them until they run.
    """

    model_config = ConfigDict(frozen=True, extra="allow")
    id: str
    description: str
    weight: float = Field(1.0, ge=0)
    required: bool = False


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
        rubrics: Rubric items of a judge.
        target: The judge target of a model-graded grader.
        json_schema: The JSON Schema of ``is_json``/``contains_json`` (key ``schema``).
        evaluators: Children of a ``composite``.
        aggregator: How a ``composite`` combines its children.
        command / cwd: The program of a code grader (argv, no shell) and its folder.

    Every other key the file gives is kept as written in ``model_extra`` (for example a
    ``tool_trajectory``'s ``mode`` and ``expected``, or a code grader's configuration).
    """

    model_config = ConfigDict(frozen=True, extra="allow", populate_by_name=True)
    name: str
    type: str
    weight: float = Field(1.0, ge=0)
    negate: bool = False
    required: bool = False
    min_score: float | None = Field(None, ge=0, le=1)
    threshold: float | None = None
    value: Any = None
    prompt: str | None = None
    prompt_path: str | None = None
    rubrics: tuple[RubricItem, ...] = ()
    target: str | None = None
    json_schema: dict[str, Any] | None = Field(None, alias="schema")
    evaluators: tuple[EvaluatorConfig, ...] = ()
    aggregator: AggregatorConfig | None = None
    command: tuple[str, ...] = ()
    cwd: str | None = None


DEFAULT_EVALUATOR = EvaluatorConfig(name="llm_judge", type="llm_judge")
"""The evaluator of a case that names none."""
