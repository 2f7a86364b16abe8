"""The evaluator seam: what an evaluator is given, what it returns, and the protocol."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from app.evaluators.config import EvaluatorConfig
from app.evaluators.expected import ExpectedMessage
from app.evaluators.offload.cpu import CpuBudget
from app.evaluators.results import EvaluatorRawRequest, EvaluatorResult
from app.evaluators.verdicts import Thresholds
from app.formatting.messages import Message
from app.providers.base import ProviderRequest, ProviderResponse, ToolCall
from app.settings.tools import ToolSpec

if TYPE_CHECKING:
    from app.evaluators.code.programs import ProgramRunner


class CaseView(Protocol):
    """What evaluators read of an eval case (``app.suites``' ``EvalCase`` satisfies it)."""

    @property
    def id(self) -> str:
        """The case id."""
        ...

    @property
    def expected_outcome(self) -> str:
        """What a good answer achieves."""
        ...

    @property
    def reference_answer(self) -> str:
        """A reference answer ('' when none)."""
        ...

    @property
    def input_messages(self) -> tuple[Message, ...]:
        """The conversation the candidate was given."""
        ...

    @property
    def expected_messages(self) -> tuple[ExpectedMessage, ...]:
        """The expected reply messages, if the case gives them."""
        ...

    @property
    def metadata(self) -> Mapping[str, Any]:
        """Tags, metadata and other descriptive keys of the case, as written."""
        ...


class JudgeClient(Protocol):
    """A judge target as evaluators see it: a name and one call (limits and retries inside)."""

    @property
    def name(self) -> str:
        """The target's configured name."""
        ...

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Ask the judge; raises ``ProviderError`` once the provider's retries are spent."""
        ...


class ProgramTargets(Protocol):
    """A code grader program's way to the targets (``app.providers.access.target_proxy``)."""

    def serving(self, url: str) -> AbstractAsyncContextManager[tuple[dict[str, str], Path]]:
        """Open it for the block: yields the program's variables and the proxy's socket.

        The variables name ``url``, which the sandbox forwards to the socket.
        """
        ...

    def facts(self) -> dict[str, int]:
        """What the record keeps: ``{call_count, max_calls}``."""
        ...


class OpenProgramTargets(Protocol):
    """Makes a ``ProgramTargets`` for one program run (``TargetProxy``'s constructor)."""

    def __call__(
        self,
        judge: JudgeClient,
        *,
        max_calls: int,
        case_id: str,
        resolve: Callable[[str], JudgeClient] | None = None,
        target_names: Sequence[str] = (),
    ) -> ProgramTargets:
        """A proxy to ``judge`` (and the targets ``resolve`` finds by name)."""
        ...


@dataclass(frozen=True)
class CandidateRun:
    """What is known of the candidate's call besides its answer (metric graders read it).

    Attributes:
        latency_ms: Time the candidate call took, retries included (as in the record).
        input_tokens / output_tokens: Tokens the candidate's calls used.
        cost_usd: What the call cost, when the target reports it.
        duration_ms: How long an agent says it worked (else ``latency_ms`` stands in).
        llm_calls: Model calls an agent reports (an API target: one per call).
        tool_calls: Tool calls the target reports, in order.
        finish_reason: Why the model stopped, normalised (``app.providers.finish_reasons``).
        tools: The function tools the candidate was offered (the target's and the case's).
        content: The answer's parts, when an agent gave them as blocks with files in them
            (``{type: text, text}``, ``{type: file, path, media_type}``); judges with
            ``preprocessors`` grade their text (``evaluators.preprocess``).
    """

    latency_ms: float | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    duration_ms: float | None = None
    llm_calls: int | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    tools: tuple[ToolSpec, ...] = ()
    content: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class EvaluationContext:
    """Everything an evaluator may read about one case and its candidate answer.

    Attributes:
        case: The eval case.
        question: The very ``question`` the candidate was given.
        candidate_answer: The candidate's reply text.
        reference_answer: The case's reference answer ('' when none).
        expected_outcome: What a good answer achieves.
        judge: The run's judge target.
        thresholds: Score thresholds for verdicts.
        resolve_judge: Finds another judge target by name (an evaluator's ``target``).
        judge_attempts: Judge calls per evaluator before a reply is declared unparseable.
        candidate: The candidate call's metrics and reported tool calls.
        programs: Runs code graders' programs; None when the operator has not enabled them.
        target_names: The configured targets a code grader's program may name.
        program_targets: Opens a code grader program's way to the targets; None: no way.
        workspace_path: The case's workspace folder, when the suite has a workspace.
        file_changes: What the candidate changed in the workspace (a unified diff).
        cpu: What the case's CPU-heavy checks (regex, JSON Schema) have left to spend.
        embedding_targets: The configured embeddings targets (``similar`` embeds with one).
        moderation_targets: The configured moderation targets (``moderation`` uses one).
        classifier_targets: The configured classifier targets (``classifier`` uses one).
        answer_value: The answer as a transform made it, when that is not text (a promptfoo
            ``transform`` returning an object); ``candidate_answer`` is then its JSON, and
            ``javascript`` asserts see the value itself as ``output``.
    """

    case: CaseView
    question: str
    candidate_answer: str
    judge: JudgeClient
    judge_attempts: int
    thresholds: Thresholds = field(default_factory=Thresholds)
    resolve_judge: Callable[[str], JudgeClient] | None = None
    candidate: CandidateRun = field(default_factory=CandidateRun)
    programs: ProgramRunner | None = None
    target_names: tuple[str, ...] = ()
    program_targets: OpenProgramTargets | None = None
    workspace_path: str | None = None
    file_changes: str | None = None
    cpu: CpuBudget = field(default_factory=CpuBudget)
    embedding_targets: tuple[str, ...] = ()
    moderation_targets: tuple[str, ...] = ()
    classifier_targets: tuple[str, ...] = ()
    answer_value: Any = None

    @property
    def reference_answer(self) -> str:
        """The case's reference answer ('' when none)."""
        return self.case.reference_answer

    @property
    def expected_outcome(self) -> str:
        """The case's expected outcome."""
        return self.case.expected_outcome

    def judge_for(self, config: EvaluatorConfig) -> JudgeClient:
        """The judge an evaluator uses: its own ``target`` if set, else the run's judge."""
        if config.target and config.target != self.judge.name and self.resolve_judge:
            return self.resolve_judge(config.target)
        return self.judge


@dataclass(frozen=True)
class EvaluatorOutcome:
    """One evaluator's result plus what the case record needs from it.

    Attributes:
        result: The evaluator's entry in ``evaluator_results``.
        raw_request: The judge prompts, when the evaluator called a judge.
        forces_fail: An unmet required rubric: the case fails whatever the score.
        pass_mark: The evaluator's own pass mark for this result (a ``threshold``
            aggregator's share), used when the grader gives no ``threshold``.
        own_mark: The result was judged by the grader's own pass mark, not the case's (set
            by the registry).
        gate_failed: A ``required`` grader under its mark: the case scores 0 (AgentV).
    """

    result: EvaluatorResult
    raw_request: EvaluatorRawRequest | None = None
    forces_fail: bool = False
    pass_mark: float | None = None
    own_mark: bool = False
    gate_failed: bool = False


class Evaluator(Protocol):
    """Grades one candidate answer according to one evaluator configuration."""

    async def evaluate(
        self, config: EvaluatorConfig, context: EvaluationContext
    ) -> EvaluatorOutcome:
        """Grade ``context.candidate_answer``; raise only for a broken configuration."""
        ...


class EvaluatorRunner(Protocol):
    """Runs any configured evaluator by its type (the registry; composites use it)."""

    async def run(self, config: EvaluatorConfig, context: EvaluationContext) -> EvaluatorOutcome:
        """Run the evaluator of ``config.type``; a broken configuration gives an ``error``."""
        ...
