"""The grader objects of OpenAI's Evals API (``testing_criteria``), as the API writes them.

Every key is declared: a key this service does not know is refused (``extra="forbid"``),
so nothing a caller sends is dropped. Message contents are text (a string, an
``input_text``/``output_text`` part, or a list of them); images and audio are refused.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator, model_validator

from app.evaluation.openai_graders.formula import FormulaError, formula_names, parse_formula

SIMILARITY_METRICS = (
    "cosine",
    "fuzzy_match",
    "bleu",
    "gleu",
    "meteor",
    "rouge_1",
    "rouge_2",
    "rouge_3",
    "rouge_4",
    "rouge_5",
    "rouge_l",
)
SimilarityMetric = Literal[
    "cosine",
    "fuzzy_match",
    "bleu",
    "gleu",
    "meteor",
    "rouge_1",
    "rouge_2",
    "rouge_3",
    "rouge_4",
    "rouge_5",
    "rouge_l",
]


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Criterion(_Wire):
    """A grader object: an eval's testing criteria carry an ``id`` (``<name>-<uuid>``).

    An eval created here gets one; one given (criteria exported from OpenAI) is kept.
    """

    id: str | None = Field(None, min_length=1, max_length=300)


class TextPart(_Wire):
    """A text part of a message: ``{type: input_text | output_text, text}``."""

    type: Literal["input_text", "output_text"]
    text: str


class GraderMessage(_Wire):
    """One message a model grader sends its model (a template)."""

    role: Literal["user", "assistant", "system", "developer"]
    content: str | TextPart | list[TextPart]
    type: Literal["message"] | None = None

    def texts(self) -> list[str]:
        """The message's text templates, in order."""
        if isinstance(self.content, str):
            return [self.content]
        parts = self.content if isinstance(self.content, list) else [self.content]
        return [part.text for part in parts]


class StringCheckGrader(_Criterion):
    """Compares ``input`` with ``reference``: ``eq``, ``ne``, ``like`` (contains), ``ilike``."""

    type: Literal["string_check"]
    name: str
    input: str
    reference: str
    operation: Literal["eq", "ne", "like", "ilike"]


class TextSimilarityGrader(_Criterion):
    """Scores ``input`` against ``reference`` with ``evaluation_metric``."""

    type: Literal["text_similarity"]
    name: str
    input: str
    reference: str
    evaluation_metric: SimilarityMetric
    pass_threshold: float | None = None


class SamplingParams(_Wire):
    """A model grader's sampling parameters."""

    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, gt=0, le=1)
    seed: int | None = None
    max_completions_tokens: int | None = Field(None, ge=1)
    reasoning_effort: str | None = None


class LabelModelGrader(_Criterion):
    """Asks ``model`` for one of ``labels``; passes when it is one of ``passing_labels``."""

    type: Literal["label_model"]
    name: str
    model: str
    input: list[GraderMessage] = Field(min_length=1)
    labels: list[str] = Field(min_length=1)
    passing_labels: list[str] = Field(min_length=1)

    @model_validator(mode="after")
    def _passing_are_labels(self) -> LabelModelGrader:
        unknown = [label for label in self.passing_labels if label not in self.labels]
        if unknown:
            raise ValueError(f"passing_labels {unknown} are not among labels {self.labels}")
        return self


class ScoreModelGrader(_Criterion):
    """Asks ``model`` for a score in ``range``; passes at ``pass_threshold``."""

    type: Literal["score_model"]
    name: str
    model: str
    input: list[GraderMessage] = Field(min_length=1)
    range: tuple[float, float] = (0.0, 1.0)
    pass_threshold: float | None = None
    sampling_params: SamplingParams | None = None

    @field_validator("range")
    @classmethod
    def _ordered(cls, value: tuple[float, float]) -> tuple[float, float]:
        if value[0] >= value[1]:
            raise ValueError(f"range {list(value)} must be [low, high] with low < high")
        return value

    @property
    def threshold(self) -> float:
        """The pass mark: ``pass_threshold``, else the middle of the range."""
        low, high = self.range
        return self.pass_threshold if self.pass_threshold is not None else (low + high) / 2


class PythonGrader(_Criterion):
    """``source`` defines ``grade(sample, item) -> float``; run only when code graders are on."""

    type: Literal["python"]
    name: str
    source: str = Field(min_length=1, max_length=100_000)
    image_tag: str | None = None
    pass_threshold: float | None = None


SubGrader = Annotated[
    StringCheckGrader | TextSimilarityGrader | LabelModelGrader | ScoreModelGrader | PythonGrader,
    Field(discriminator="type"),
]


class MultiGrader(_Criterion):
    """Combines its ``graders``' scores with the formula ``calculate_output``."""

    type: Literal["multi"]
    name: str
    graders: dict[str, SubGrader] = Field(min_length=1)
    calculate_output: str
    pass_threshold: float | None = None

    @field_validator("graders", mode="before")
    @classmethod
    def _single(cls, value: Any) -> Any:
        # The SDK's type allows one grader object; it is keyed by its own name.
        if isinstance(value, dict) and isinstance(value.get("type"), str):
            return {str(value.get("name", "grader")): value}
        return value

    @model_validator(mode="after")
    def _formula_names_graders(self) -> MultiGrader:
        try:
            names = formula_names(parse_formula(self.calculate_output))
        except FormulaError as exc:
            raise ValueError(f"calculate_output: {exc}") from None
        unknown = sorted(names - set(self.graders))
        if unknown:
            raise ValueError(f"calculate_output names {unknown}, not keys of graders")
        return self


Grader = Annotated[
    StringCheckGrader
    | TextSimilarityGrader
    | LabelModelGrader
    | ScoreModelGrader
    | PythonGrader
    | MultiGrader,
    Field(discriminator="type"),
]
GRADER: TypeAdapter[Grader] = TypeAdapter(Grader)
ModelGrader = LabelModelGrader | ScoreModelGrader


def model_graders(grader: Grader) -> list[ModelGrader]:
    """The model graders in ``grader`` (itself, or a multi grader's)."""
    if isinstance(grader, MultiGrader):
        return [
            g for g in grader.graders.values() if isinstance(g, LabelModelGrader | ScoreModelGrader)
        ]
    return [grader] if isinstance(grader, LabelModelGrader | ScoreModelGrader) else []


def all_graders(grader: Grader) -> list[Grader]:
    """``grader`` and, for a multi grader, each of its graders."""
    if isinstance(grader, MultiGrader):
        return [grader, *grader.graders.values()]
    return [grader]
