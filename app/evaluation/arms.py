"""Arms: a run's target x prompt matrix, one arm per (target, prompt) it runs every case on.

A run with one target and one prompt has no arms (its records and summaries are as they
always were). A run given several targets (``targets: [...]`` in the request, or the suite's
own list) or a suite with several prompts runs each case once per arm (target x prompt);
every record names its arm, and summaries are per arm and overall.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field


class RunArm(BaseModel):
    """One arm of a run: the target (and prompt) its cases run on.

    Attributes:
        index: The arm's position in the run (0, 1, ...): how records and rows are keyed.
        target: The candidate target's name.
        prompt: The label of the prompt the arm uses, when the suite has several.
    """

    model_config = ConfigDict(frozen=True)

    index: int = Field(ge=0, description="The arm's position in the run (0, 1, ...).")
    target: str = Field(description="The candidate target of the arm.")
    prompt: str | None = Field(None, description="The prompt's label, when the arm has one.")

    @property
    def label(self) -> str:
        """How people read the arm: ``target``, or ``target / prompt``."""
        return self.target if self.prompt is None else f"{self.target} / {self.prompt}"


def arm_targets(
    names: list[str],
    prompts: Sequence[str] = (),
    target_prompts: Mapping[str, Sequence[str]] | None = None,
) -> tuple[RunArm, ...]:
    """The arms of a run on ``names`` x ``prompts``: target by target, prompt by prompt.

    ``target_prompts`` narrows a target to the prompts it names (promptfoo's provider
    ``prompts:``). A run on one target and at most one prompt has no arms.
    """
    distinct = list(dict.fromkeys(names))
    pairs = [
        (name, prompt)
        for name in distinct
        for prompt in (prompts or (None,))
        if prompt is None
        or not (target_prompts or {}).get(name)
        or prompt in (target_prompts or {})[name]
    ]
    if len(distinct) < 2 and not prompts:
        return ()
    return tuple(
        RunArm(index=index, target=name, prompt=prompt)
        for index, (name, prompt) in enumerate(pairs)
    )
