"""promptfoo tests whose input depends on the tests before them (the data a case carries).

promptfoo 0.123.1 runs a config in test order, one cell at a time, whatever its concurrency,
as soon as one test has ``options.storeOutputAs`` or one prompt reads ``_conversation``. Such
a suite's cases each carry a ``SequenceStep``: what is needed to render its input again once
the earlier tests have answered (``app.suites.prompts_vars.sequential`` renders it,
``app.evaluation.sequential`` runs the cases in order). Plain data, so that a durable run's
stored cases hold it too.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class StepPrompt(BaseModel):
    """One prompt of the suite, as written: its text (or messages) and how it is read."""

    model_config = ConfigDict(frozen=True)
    id: str
    text: str | None = None
    messages: list[Any] | None = None
    chat_template: bool = False
    reads_conversation: bool = False
    """Whether it reads ``_conversation`` (promptfoo fills it only for such prompts)."""


class SequenceStep(BaseModel):
    """A test of a suite whose tests run in order, and what its input is made of.

    Attributes:
        variables: The test's variables before rendering (defaults under its own).
        prompts: The prompts the test runs with (by id; the arm's is picked).
        store_as: ``options.storeOutputAs``: the variable its output is stored as.
        transform: The test's inline output transform (the stored output is its value).
        conversation: ``metadata.conversationId`` (None: the suite's one unnamed thread).
        path: Where the test is in the suite (for the errors of a later rendering).
    """

    model_config = ConfigDict(frozen=True)
    variables: dict[str, Any] = Field(default_factory=dict)
    prompts: tuple[StepPrompt, ...] = ()
    store_as: str | None = None
    transform: str | None = None
    conversation: str | None = None
    path: tuple[str | int, ...] = ()
