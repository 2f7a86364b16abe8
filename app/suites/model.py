"""The suite model: every eval file dialect is read into these types.

Field names follow the AgentV eval file; each dialect's reader maps its own spellings onto
them, and nothing downstream knows which dialect a suite was written in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.evaluators.code.derived_metrics import DerivedMetrics
from app.evaluators.config import EvaluatorConfig
from app.evaluators.expected import ExpectedMessage
from app.evaluators.verdicts import Thresholds
from app.formatting.messages import DEFAULT_GUIDELINE_PATTERNS, FormattedPrompt, Message
from app.providers.base import ModelOptions
from app.suites.sequencing import SequenceStep
from app.suites.tool_use import ToolUse

TrialStrategy = Literal["pass_any", "pass_all", "mean"]
TurnAggregation = Literal["mean", "min", "max"]
OnTurnFailure = Literal["continue", "stop"]
MAX_CASE_ID_LENGTH = 500
"""Longest case id a suite may give (the runs database stores ids up to this length)."""


class Trials(BaseModel):
    """Run each case ``count`` times (AgentV's ``repeat``): how the trials make one result.

    Attributes:
        count: Trials per case (1: run once).
        strategy: ``pass_any`` (the case passes when a trial passes: pass@k), ``pass_all``
            (when every trial passes), ``mean`` (the mean score decides).
        early_exit: Stop once the strategy's outcome is known (a pass for ``pass_any``, a
            failure for ``pass_all``); pass@k then counts the trials run.
    """

    model_config = ConfigDict(frozen=True)
    count: int = Field(1, ge=1, le=100)
    strategy: TrialStrategy = "pass_any"
    early_exit: bool = False


class WorkspaceHook(BaseModel):
    """A program run on a case's workspace (AgentV's workspace hooks).

    Attributes:
        command: The program and its arguments; ``{{workspace_path}}`` in an argument is
            the case's workspace folder.
        cwd: The folder relative arguments resolve against, relative to the suite file as
            read and absolute once placed (the suite file's folder when not given).
        timeout_seconds: Time limit of one run.
        env: Environment variables the program gets (the service's own, never the
            suite's: ``node``'s start-up setting for an extension); ``{{workspace_path}}``
            in a value is the case's workspace folder.
        suite_env: The suite's own variables (an AgentV environment's ``env``): set inside
            the sandbox by ``env`` in front of the command, so that only the program sees
            them, never the sandbox's own tools.
    """

    model_config = ConfigDict(frozen=True)
    command: tuple[str, ...] = Field(min_length=1)
    cwd: str | None = None
    timeout_seconds: float = Field(60.0, gt=0, le=3600)
    env: tuple[tuple[str, str], ...] = ()
    suite_env: tuple[tuple[str, str], ...] = ()


class WorkspaceRepo(BaseModel):
    """A git repository checked out into each case's workspace (AgentV's workspace ``repos``).

    Attributes:
        path: Folder inside the workspace the repository goes to (relative, normalised).
        url: The repository's URL as the suite names it; None for a local repository.
        local: A local repository's folder, relative to the suite file as read and
            absolute once placed; None for a repository named by URL.
        source: Where it is cloned from, set once placed: the operator's local copy of
            ``url``, ``url`` itself (a remote the operator allows) or ``local``.
        ref: Branch, tag or commit to check out (the source's default branch when None).
        ancestor: Check out this many first-parent commits before ``ref``.
        depth: Clone only this many commits of history (all when None).
        filter: A partial clone filter, as git takes it (``blob:none``).
        sparse: Check out only these folders (all when empty).
    """

    model_config = ConfigDict(frozen=True)
    path: str = Field(min_length=1)
    url: str | None = None
    local: str | None = None
    source: str | None = None
    ref: str | None = None
    ancestor: int = Field(0, ge=0)
    depth: int | None = Field(None, ge=1)
    filter: str | None = None
    sparse: tuple[str, ...] = ()


AGENT_RULE_KINDS = ("skills", "hooks", "agents", "rules")
"""What AgentV's ``agentv:agent-rules`` extension stages or finds, in this order."""


class AgentRules(BaseModel):
    """AgentV's built-in ``agentv:agent-rules``: the agent's skills, hooks, agents and rules.

    Attributes:
        point: When it runs (``before_all`` or ``before_each``), after that point's hooks.
        staged: Per kind, folders or files of the suite copied into the case's folder under
            ``.agentv/agent-rules/<kind>/`` (relative to the suite file as read, absolute
            once placed); a kind not listed is found in the case's folder instead.
    """

    model_config = ConfigDict(frozen=True)
    point: Literal["before_all", "before_each"] = "before_all"
    staged: tuple[tuple[str, tuple[str, ...]], ...] = ()


class Workspace(BaseModel):
    """An agent workspace: each case (each trial of it) works in a fresh folder of its own.

    Attributes:
        template: Folder copied into each case's workspace, relative to the suite file as
            read and absolute once placed; None: the workspace starts empty.
        repos: Repositories checked out into the workspace after the template is copied
            and before the hooks run.
        before_all: Prepares the workspace every case starts from (run in each case's copy,
            before ``before_each``).
        before_each: Runs in the case's workspace before its candidate is called.
        after_each: Runs once the case is graded; a failure is logged, not the case's.
        extensions: AgentV's lifecycle extensions, ``(point, hook)`` with point
            ``before_all``, ``before_each`` or ``after_each``: each runs after that
            point's own hook, in order; ``after_all`` (promptfoo's): once per run.
        declared_as: The suite's key it was read from: ``workspace``, or ``environment``
            (AgentV's July layout, whose ``workdir`` is the template), for errors.
        agent_rules: AgentV's ``agentv:agent-rules`` extensions, in order.
    """

    model_config = ConfigDict(frozen=True)
    template: str | None = None
    repos: tuple[WorkspaceRepo, ...] = ()
    before_all: WorkspaceHook | None = None
    before_each: WorkspaceHook | None = None
    after_each: WorkspaceHook | None = None
    extensions: tuple[tuple[str, WorkspaceHook], ...] = ()
    declared_as: Literal["workspace", "environment"] = "workspace"
    agent_rules: tuple[AgentRules, ...] = ()

    def hooks(self) -> tuple[WorkspaceHook, ...]:
        """Every hook the workspace runs."""
        found = (self.before_all, self.before_each, self.after_each)
        own = tuple(hook for hook in found if hook is not None)
        return own + tuple(hook for _, hook in self.extensions)

    def at(self, point: str) -> tuple[WorkspaceHook, ...]:
        """The hooks run at ``point`` (``before_all``...), in order."""
        own: WorkspaceHook | None = getattr(self, point, None)  # after_all: extensions only
        extra = tuple(hook for name, hook in self.extensions if name == point)
        return ((own,) if own is not None else ()) + extra


class ConversationTurn(BaseModel):
    """One user turn of a live conversation: the candidate answers it, its graders grade that.

    Attributes:
        input_messages: What the user says on this turn (one or more messages).
        expected_messages: The turn's expected answer, for graders that compare with one.
        reference_answer: The expected answer's text.
        evaluators: The turn's graders (the default judge, against the case's criteria,
            when the turn gives none).
    """

    model_config = ConfigDict(frozen=True)
    input_messages: tuple[Message, ...] = Field(min_length=1)
    expected_messages: tuple[ExpectedMessage, ...] = ()
    reference_answer: str = ""
    evaluators: tuple[EvaluatorConfig, ...] = Field(min_length=1)


class Conversation(BaseModel):
    """A live conversation (AgentV's ``mode: conversation``): the candidate answers each turn.

    Attributes:
        turns: The user turns, in order; each sees the case's input, every earlier turn and
            the candidate's answers to them.
        aggregation: How the turns' scores (and the conversation-level grade, if any) make
            the case's score.
        on_turn_failure: ``stop``: a failed turn ends the conversation, the turns after it
            are not run (they score 0) and the case fails; ``continue``: every turn runs.
    """

    model_config = ConfigDict(frozen=True)
    turns: tuple[ConversationTurn, ...] = Field(min_length=1)
    aggregation: TurnAggregation = "mean"
    on_turn_failure: OnTurnFailure = "continue"


class EvalCase(BaseModel):
    """One eval case, with its graders already resolved (case, suite defaults, default judge).

    Attributes:
        expected_outcome: What a good answer achieves ('' for a case graded only by its
            graders).
        thresholds: The case's own verdict thresholds (a test's ``threshold``), else the
            suite's apply.
        trials: The case's own ``repeat``, else the suite's applies.
        metadata: Tags, metadata and other descriptive keys, kept as written.
        conversation: A live conversation's turns; then ``evaluators`` grade the whole
            conversation once its turns are done (none: only the turns are graded).
        graded: False for a promptfoo test with no assertions: it runs, its answer is kept,
            and it passes ungraded (as promptfoo reports it); no default judge grades it.
        missing_files: Files its input references that were found nowhere: the case runs
            as an ``error`` naming them, the other cases run (AgentV).
        given_output: The answer given with the case (a promptfoo test's ``providerOutput``):
            it is graded as the candidate's answer and the candidate is not called.
        scoring_function: promptfoo's ``assertScoringFunction``: the program that makes the
            case's result from its graders' (``evaluators.code.scoring_function``).
        error: Why the case cannot run, found while reading it (a promptfoo variable or
            prompt whose program failed): it runs as an ``error`` saying so, the other cases
            run (also a promptfoo JSON chat template that renders to no JSON for its
            variables); ``prompt_errors``: the same for each prompt's arm, by prompt id.
        only_targets: The suite's targets (arms) the case runs on (a promptfoo test's own
            ``providers``); empty: all of them.
    """

    model_config = ConfigDict(frozen=True)
    id: str
    conversation_id: str | None = None
    expected_outcome: str
    note: str | None = None
    input_messages: tuple[Message, ...]
    expected_messages: tuple[ExpectedMessage, ...] = ()
    reference_answer: str = ""
    evaluators: tuple[EvaluatorConfig, ...] = ()
    thresholds: Thresholds | None = None
    trials: Trials | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    conversation: Conversation | None = None
    tool_use: ToolUse | None = Field(
        None, description="Tools, canned tool results and structured output for the candidate."
    )
    graded: bool = True
    missing_files: tuple[str, ...] = ()
    given_output: str | None = None
    scoring_function: EvaluatorConfig | None = None
    error: str | None = None
    prompt_errors: tuple[tuple[str, str], ...] = ()
    only_targets: tuple[str, ...] = ()
    sequence: SequenceStep | None = Field(
        None,
        description=(
            "A promptfoo test that runs after the tests before it (their stored outputs, its "
            "conversation's earlier turns): what its input is rendered from then."
        ),
    )
    prompt_inputs: tuple[tuple[str, tuple[Message, ...]], ...] = Field(
        (),
        description=(
            "The input of each prompt the case runs with, by prompt id, when its suite has "
            "several (each prompt an arm); ``input_messages`` is the first one's."
        ),
    )

    def for_prompt(self, prompt: str) -> EvalCase | None:
        """The case as the arm of ``prompt`` runs it (None: the test does not use it)."""
        for prompt_id, messages in self.prompt_inputs:
            if prompt_id == prompt:
                error = dict(self.prompt_errors).get(prompt_id)
                update = {"input_messages": messages, "prompt_inputs": (), "error": error}
                return self.model_copy(update={**update, "prompt_errors": ()})
        return None

    def opening_messages(self) -> tuple[Message, ...]:
        """What the candidate is first given: the input, then a conversation's first turn."""
        if self.conversation is None:
            return self.input_messages
        return (*self.input_messages, *self.conversation.turns[0].input_messages)

    def all_graders(self) -> tuple[EvaluatorConfig, ...]:
        """The case's graders and, in a live conversation, every turn's."""
        turns = self.conversation.turns if self.conversation else ()
        return (*self.evaluators, *(grader for turn in turns for grader in turn.evaluators))

    def with_graders(self, change: Callable[[EvaluatorConfig], EvaluatorConfig]) -> EvalCase:
        """The case with ``change`` applied to each of its graders and its turns' graders.

        The case itself when ``change`` changed none (``change`` returns a grader it keeps).
        """

        def changed(graders: tuple[EvaluatorConfig, ...]) -> tuple[EvaluatorConfig, ...]:
            new = tuple(change(grader) for grader in graders)
            return graders if all(a is b for a, b in zip(new, graders, strict=True)) else new

        update: dict[str, Any] = {}
        if (graders := changed(self.evaluators)) is not self.evaluators:
            update["evaluators"] = graders
        if self.conversation is not None:
            turns = tuple(
                turn
                if (own := changed(turn.evaluators)) is turn.evaluators
                else turn.model_copy(update={"evaluators": own})
                for turn in self.conversation.turns
            )
            if any(a is not b for a, b in zip(turns, self.conversation.turns, strict=True)):
                update["conversation"] = self.conversation.model_copy(update={"turns": turns})
        return self.model_copy(update=update) if update else self


class EvalSuite(BaseModel):
    """A loaded, validated suite."""

    model_config = ConfigDict(frozen=True)
    description: str | None = None
    dataset: str = "default"
    target: str | None = None
    targets: tuple[str, ...] = Field(
        (), description="The suite's own list of targets: a run of one arm per target."
    )
    prompts: tuple[str, ...] = Field(
        (), description="The ids of the suite's prompts when it has several: one arm each."
    )
    target_prompts: dict[str, tuple[str, ...]] = Field(
        default_factory=dict,
        description="The prompts one target of ``targets`` runs (a provider's ``prompts``).",
    )
    target_tools: dict[str, ToolUse] = Field(
        default_factory=dict,
        description="Tools given with one target of ``targets`` (a provider's config): its arm's.",
    )
    target_options: dict[str, ModelOptions] = Field(
        default_factory=dict,
        description=(
            "Model settings of a target the suite names (a provider's config): its calls' "
            "options over the target's own."
        ),
    )
    guideline_patterns: tuple[str, ...] = DEFAULT_GUIDELINE_PATTERNS
    thresholds: Thresholds = Thresholds()
    trials: Trials = Trials()
    cases: tuple[EvalCase, ...]
    metadata: dict[str, Any] = Field(default_factory=dict)
    workspace: Workspace | None = None
    max_concurrency: int | None = Field(
        None, ge=1, description="Cases run at once (AgentV's evaluate_options.max_concurrency)."
    )
    system_prompt: str | None = Field(
        None,
        description=(
            "The system message of cases with no system turn (None: the target's, else the "
            'built-in default; "": none).'
        ),
    )
    budget_usd: float | None = Field(
        None, gt=0, description="Cost in US dollars after which the run starts no more cases."
    )
    source_dir: str | None = Field(
        None, description="Folder of the suite file inside a workspace root, if named by path."
    )
    derived_metrics: DerivedMetrics | None = Field(
        None, description="promptfoo's derivedMetrics: computed in the run's summary."
    )


class FormattedCase(BaseModel):
    """A case and the prompt its candidate is given, formatted once when the suite is loaded.

    What ``/validate`` shows is this prompt; ``/evaluate`` and durable runs send it.
    """

    model_config = ConfigDict(frozen=True)
    case: EvalCase
    prompt: FormattedPrompt
