"""Parse a judge's reply into a verdict or a reason it is unscored. PURE: no I/O.

A reply is read as strict JSON first; failing that, as the JSON object inside a fenced code
block, or as the one JSON object written somewhere in prose. The object must then follow the
contract exactly (a number ``score`` in [0, 1]; ``hits`` and ``misses`` arrays of strings;
``reasoning`` a string). Nothing here raises on bad model output and nothing falls back to a
default grade: a reply that does not satisfy the contract is ``Unscored`` with the reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictStr,
    ValidationError,
    field_validator,
)

from app.evaluators.config import SCORE_POINTS

MAX_LISTED = 4
"""Hits and misses kept per verdict (the contract asks the judge for at most 4 each)."""
MAX_REPLY_CHARS = 200_000
"""Longer replies are not searched for a JSON object (a judge verdict is short)."""

MAX_DECODE_TRIES = 256
"""Positions in prose tried as the start of a JSON object (bounds the work on odd replies)."""

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()
ModelT = TypeVar("ModelT", bound=BaseModel)


@dataclass(frozen=True)
class Unscored:
    """A judge reply that gives no grade, and why."""

    reason: str


def _keep_listed(values: list[str]) -> list[str]:
    return [value.strip() for value in values if value.strip()][:MAX_LISTED]


class JudgeVerdict(BaseModel):
    """A judge's grade: ``score`` in [0, 1], hits, misses and reasoning."""

    model_config = ConfigDict(frozen=True, extra="ignore")
    score: float = Field(ge=0, le=1, strict=True, allow_inf_nan=False)
    hits: list[StrictStr] = Field(default_factory=list)
    misses: list[StrictStr] = Field(default_factory=list)
    reasoning: StrictStr = ""

    @field_validator("score", mode="before")
    @classmethod
    def _number_not_bool(cls, value: Any) -> Any:
        """JSON ``true`` is not a score (pydantic would read it as 1)."""
        if isinstance(value, bool):
            raise ValueError("score must be a number, not a boolean")
        if isinstance(value, int):
            return float(value)
        return value

    @field_validator("hits", "misses", mode="after")
    @classmethod
    def _drop_blank(cls, values: list[str]) -> list[str]:
        return _keep_listed(values)


class RubricCheck(BaseModel):
    """The judge's decision on one rubric item."""

    model_config = ConfigDict(frozen=True, extra="ignore")
    id: StrictStr
    satisfied: StrictBool
    reasoning: StrictStr = ""


class RubricScore(BaseModel):
    """The judge's points (0-10, whole) for one scored rubric item."""

    model_config = ConfigDict(frozen=True, extra="ignore")
    id: StrictStr
    score: int = Field(ge=0, le=SCORE_POINTS, strict=True)
    reasoning: StrictStr = ""

    @field_validator("score", mode="before")
    @classmethod
    def _whole_number(cls, value: Any) -> Any:
        """``7.0`` is 7 points; ``true`` and ``7.5`` are not points."""
        if isinstance(value, bool):
            raise ValueError("score must be whole points, not a boolean")
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return value


class RubricChecks(BaseModel):
    """A judge's reply to a rubric: a check per checklist id, points per scored id, reasoning."""

    model_config = ConfigDict(frozen=True, extra="ignore")
    checks: list[RubricCheck] = Field(default_factory=list)
    scores: list[RubricScore] = Field(default_factory=list)
    reasoning: StrictStr = ""


def _json_objects(text: str) -> Iterator[Any]:
    """Every top-level JSON value that starts at a ``{`` in ``text``, in order."""
    position = text.find("{")
    tries = 0
    while position != -1 and tries < MAX_DECODE_TRIES:
        tries += 1
        try:
            value, end = _DECODER.raw_decode(text, position)
        except RecursionError:
            return
        except json.JSONDecodeError:
            position = text.find("{", position + 1)
            continue
        yield value
        position = text.find("{", end)


def _candidates(text: str) -> Iterator[Any]:
    """JSON values the reply may hold, best first: whole reply, fenced blocks, prose."""
    try:
        yield json.loads(text)
        return
    except (json.JSONDecodeError, RecursionError):
        pass
    fenced = [block.strip() for block in _FENCE.findall(text)]
    for block in fenced:
        try:
            yield json.loads(block)
        except (json.JSONDecodeError, RecursionError):
            continue
    if not fenced:
        yield from _json_objects(text)


def _describe(error: ValidationError) -> str:
    first = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in first["loc"]) or "reply"
    return f"{where}: {first['msg']}"


def parse_json_reply(
    text: str, model: type[ModelT], check: Callable[[ModelT], str | None] | None = None
) -> ModelT | Unscored:
    """The one JSON object in ``text`` that validates as ``model`` (and passes ``check``).

    Args:
        text: The judge's raw reply.
        model: The contract the object must follow.
        check: Further validation; returns a reason when the object is not acceptable.

    Returns:
        The validated object, or ``Unscored`` when no object or several different ones
        satisfy the contract.
    """
    stripped = text.strip()
    if not stripped:
        return Unscored("the judge's reply is empty")
    if len(stripped) > MAX_REPLY_CHARS:
        return Unscored(f"the judge's reply is longer than {MAX_REPLY_CHARS} characters")
    accepted: list[ModelT] = []
    reasons: list[str] = []
    for candidate in _candidates(stripped):
        parsed = _validate(candidate, model, check)
        if isinstance(parsed, Unscored):
            reasons.append(parsed.reason)
        elif parsed not in accepted:
            accepted.append(parsed)
    if len(accepted) == 1:
        return accepted[0]
    if accepted:
        return Unscored(f"the reply holds {len(accepted)} different verdicts")
    if reasons:
        return Unscored(f"the reply does not follow the contract: {reasons[0]}")
    return Unscored("the reply holds no JSON object")


def _validate(
    candidate: Any, model: type[ModelT], check: Callable[[ModelT], str | None] | None
) -> ModelT | Unscored:
    if not isinstance(candidate, dict):
        return Unscored("the JSON value is not an object")
    try:
        parsed = model.model_validate(candidate)
    except ValidationError as exc:
        return Unscored(_describe(exc))
    problem = check(parsed) if check else None
    return Unscored(problem) if problem else parsed


def parse_verdict(text: str) -> JudgeVerdict | Unscored:
    """A judge's ``{score, hits, misses, reasoning}`` reply, or why it gives no grade."""
    return parse_json_reply(text, JudgeVerdict)


def parse_rubric_checks(
    text: str, checked_ids: tuple[str, ...], scored_ids: tuple[str, ...] = ()
) -> RubricChecks | Unscored:
    """A judge's rubric reply; each id answered once, no other id.

    Checklist ids are answered in ``checks``, scored ids (``score_ranges``) in ``scores``.
    """

    def check(reply: RubricChecks) -> str | None:
        return _answered_once(
            "checks", [item.id for item in reply.checks], checked_ids
        ) or _answered_once("scores", [item.id for item in reply.scores], scored_ids)

    return parse_json_reply(text, RubricChecks, check)


def _answered_once(field: str, seen: list[str], ids: tuple[str, ...]) -> str | None:
    unknown = sorted(set(seen) - set(ids))
    if unknown:
        return f"{field} name unknown rubric ids: {', '.join(unknown)}"
    missing = [rubric_id for rubric_id in ids if rubric_id not in seen]
    if missing:
        return f"{field} are missing for rubric ids: {', '.join(missing)}"
    if len(seen) != len(set(seen)):
        return f"a rubric id is in {field} more than once"
    return None
