"""Typed models of an eval suite, its cases and its evaluator configurations.

Field names follow the AgentV eval file; the loader maps later AgentV spellings onto them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from app.formatting.messages import DEFAULT_GUIDELINE_PATTERNS, Message


class RubricItem(BaseModel):
    """One rubric check an ``llm_judge`` asks the judge to decide."""

    model_config = ConfigDict(frozen=True, extra="ignore")
    id: str
    description: str
    weight: float = Field(1.0, ge=0)
    required: bool = False


class EvaluatorConfig(BaseModel):
    """One evaluator of a case: ``{name, type, weight, ...type-specific keys}``.

    Known types: ``llm_judge`` (``prompt``, ``rubrics``, ``target``), ``contains``,
    ``regex``, ``equals``, ``is_json`` (``value``, ``negate``, ``schema``) and
    ``composite`` (``evaluators``: child configs, each with a ``weight``). Other keys
    are kept in ``model_extra`` for forward compatibility.
    """

    model_config = ConfigDict(frozen=True, extra="allow", populate_by_name=True)
    name: str
    type: str
    weight: float = Field(1.0, ge=0)
    prompt: str | None = None
    prompt_path: str | None = None
    rubrics: tuple[RubricItem, ...] = ()
    target: str | None = None
    value: Any = None
    negate: bool = False
    json_schema: dict[str, Any] | None = Field(None, alias="schema")
    evaluators: tuple[EvaluatorConfig, ...] = ()


class Thresholds(BaseModel):
    """Score thresholds for verdicts: ``pass`` at or above ``pass_``, else ``borderline``..."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)
    pass_: float = Field(0.8, alias="pass", ge=0, le=1)
    borderline: float = Field(0.6, ge=0, le=1)


class EvalCase(BaseModel):
    """One eval case, with its evaluators already resolved (case, else suite, else default)."""

    model_config = ConfigDict(frozen=True)
    id: str
    conversation_id: str | None = None
    expected_outcome: str
    note: str | None = None
    input_messages: tuple[Message, ...]
    expected_messages: tuple[Message, ...] = ()
    reference_answer: str = ""
    evaluators: tuple[EvaluatorConfig, ...] = ()


class EvalSuite(BaseModel):
    """A loaded, validated suite."""

    model_config = ConfigDict(frozen=True)
    description: str | None = None
    dataset: str = "default"
    target: str | None = None
    guideline_patterns: tuple[str, ...] = DEFAULT_GUIDELINE_PATTERNS
    thresholds: Thresholds = Thresholds()
    cases: tuple[EvalCase, ...]
    source_dir: str | None = Field(
        None, description="Folder of the suite file inside a workspace root, if named by path."
    )
