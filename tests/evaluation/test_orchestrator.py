"""Running cases: isolation of failures, concurrency caps, cancellation, caching, regrading."""

from __future__ import annotations

import asyncio

import pytest

from app.evaluation.context import CaseContext, MemoryResponseCache
from app.evaluation.known_answers import KnownAnswer
from app.evaluation.orchestrator import evaluate_case, run_cases
from app.evaluation.plan import RunPlan
from app.evaluation.records import ResultRecord, TargetUsage, TokenUsage
from app.evaluators.base import EvaluatorOutcome
from app.evaluators.config import EvaluatorConfig
from app.evaluators.registry import EvaluatorRegistry, build_registry
from app.formatting import FormatOptions, format_prompt
from app.formatting.messages import FilePart, Message, Mode, TextPart
from app.providers.base import CallRole
from app.suites.model import EvalCase, FormattedCase, Trials
from tests.evaluators.fakes import FakeTargets, ScriptedTarget, make_case, verdict_json


def plan_for(target: str = "fake", **overrides: object) -> RunPlan:
    values: dict[str, object] = {"target": target, "judge_target": target, "max_concurrency": 4}
    values |= {"dataset": "ds", "judge_attempts": 3}
    values.update(overrides)
    return RunPlan(**values)  # type: ignore[arg-type]


def formatted(
    case: EvalCase, files: dict[str, str] | None = None, mode: Mode = "lm"
) -> FormattedCase:
    prompt = format_prompt(case.input_messages, files or {}, FormatOptions(mode=mode))
    return FormattedCase(case=case, prompt=prompt)


def context_with(*targets: ScriptedTarget, **kwargs: object) -> CaseContext:
    return CaseContext(providers=FakeTargets({t.name: t for t in targets}), **kwargs)  # type: ignore[arg-type]


async def collect(cases: list[EvalCase], plan: RunPlan, context: CaseContext) -> list[ResultRecord]:
    records: list[ResultRecord] = []

    async def keep(record: ResultRecord) -> None:
        records.append(record)

    await run_cases([formatted(case) for case in cases], plan, context, keep)
    return records


async def test_record_carries_request_answer_grade_usage_and_latency() -> None:
    target = ScriptedTarget(candidate="4")
    case = make_case("c1")
    record = await evaluate_case(formatted(case), plan_for(), context_with(target))
    assert record.status == "passed"
    assert record.score == 0.9
    assert record.verdict == "pass"
    assert record.dataset == "ds"
    assert record.candidate_answer == "4"
    assert record.target == record.judge_target == "fake"
    assert record.raw_request is not None
    assert record.raw_request.question == "What is 2+2?"
    assert record.evaluator_raw_request is not None
    assert record.reasoning == "llm_judge: fine"
    assert record.usage.candidate == TokenUsage(input_tokens=10, output_tokens=5)
    assert record.usage.judge == TokenUsage(input_tokens=10, output_tokens=5)
    assert record.latency_ms.candidate is not None
    assert record.latency_ms.judge is not None
    assert record.cached is None
    assert record.error is None
    wire = record.to_json_dict()
    assert wire["raw_request"]["chatPrompt"] == [{"role": "user", "content": "What is 2+2?"}]
    assert wire["evaluator_raw_request"]["userPrompt"].startswith("You are")


async def test_usage_by_target_splits_the_roles_totals_by_the_target_called() -> None:
    # The judge re-asked twice (unparseable replies), three trials: every call counted once.
    candidate = ScriptedTarget(name="cand")
    judge = ScriptedTarget(name="judge", judge_replies=["no json", "still none", verdict_json()])
    trials = Trials(count=3, strategy="mean")
    plan = plan_for("cand", judge_target="judge", trials=trials)
    record = await evaluate_case(formatted(make_case()), plan, context_with(candidate, judge))
    assert record.usage_by_target == {
        "cand": TargetUsage(requests=3, input_tokens=30, output_tokens=15),
        "judge": TargetUsage(requests=5, input_tokens=50, output_tokens=25),
    }
    assert record.attempts.candidate + record.attempts.judge == 8
    assert record.usage.candidate.input_tokens + record.usage.judge.input_tokens == 80
    # A regrade: the known answer's tokens stay the candidate target's, with no request.
    regraded = await evaluate_case(
        formatted(make_case()),
        plan_for("cand", judge_target="judge"),
        context_with(candidate, judge),
        known=KnownAnswer("known", usage=TokenUsage(input_tokens=7, output_tokens=3)),
    )
    assert regraded.usage_by_target["cand"] == TargetUsage(input_tokens=7, output_tokens=3)


async def test_candidate_error_is_isolated_to_its_case() -> None:
    target = ScriptedTarget(fail_cases=frozenset({"bad"}))
    cases = [make_case("ok1"), make_case("bad"), make_case("ok2")]
    records = await collect(cases, plan_for(), context_with(target))
    by_id = {record.eval_id: record for record in records}
    assert len(records) == 3
    assert by_id["bad"].status == "error"
    assert by_id["bad"].score is None
    assert "upstream 503" in (by_id["bad"].error or "")
    assert by_id["bad"].raw_request is not None
    assert by_id["ok1"].status == by_id["ok2"].status == "passed"


async def test_judge_provider_failure_is_judge_error() -> None:
    class FailingJudge(ScriptedTarget):
        async def complete(self, request):
            if request.role is CallRole.JUDGE:
                from app.providers.errors import ProviderTimeout

                raise ProviderTimeout("judge timed out", target=self.name)
            return await super().complete(request)

    target = FailingJudge()
    case = make_case()
    record = await evaluate_case(formatted(case), plan_for(), context_with(target))
    assert record.status == "judge_error"
    assert record.score is None
    assert "judge timed out" in (record.error or "")
    assert record.candidate_answer == "candidate answer"


async def test_unparseable_judge_makes_judge_error_with_raw_output() -> None:
    target = ScriptedTarget(judge_replies=["no json here"])
    case = make_case()
    record = await evaluate_case(formatted(case), plan_for(), context_with(target))
    assert record.status == "judge_error"
    assert record.score is None
    assert record.verdict is None
    assert record.evaluator_results[0].raw_output == "no json here"
    assert len(target.judge_requests()) == 3
    assert record.usage.judge.input_tokens == 30


async def test_unexpected_evaluator_failure_is_an_error_record() -> None:
    class Broken:
        async def evaluate(self, config, context) -> EvaluatorOutcome:
            raise RuntimeError("boom")

    registry = EvaluatorRegistry()
    registry.register("webhook", Broken())
    case = make_case(evaluators=(EvaluatorConfig(name="b", type="webhook"),))
    record = await evaluate_case(
        formatted(case), plan_for(), context_with(ScriptedTarget()), registry=registry
    )
    assert record.status == "error"
    assert "boom" in (record.error or "")


async def test_case_timeout_is_an_error_record() -> None:
    target = ScriptedTarget(delay=5)
    case = make_case()
    plan = plan_for(case_timeout_seconds=0.05)
    record = await evaluate_case(formatted(case), plan, context_with(target))
    assert record.status == "error"
    assert "timed out" in (record.error or "")


@pytest.mark.parametrize("limit", [1, 3])
async def test_concurrency_cap_holds(limit: int) -> None:
    target = ScriptedTarget(delay=0.01)
    cases = [make_case(f"c{i}") for i in range(9)]
    records = await collect(cases, plan_for(max_concurrency=limit), context_with(target))
    assert len(records) == 9
    assert target.peak == limit


async def test_records_arrive_as_cases_finish() -> None:
    def slow_for_first(request) -> str:
        return "answer"

    class Staggered(ScriptedTarget):
        async def complete(self, request):
            if request.case_id == "slow" and request.role is CallRole.CANDIDATE:
                await asyncio.sleep(0.05)
            return await super().complete(request)

    cases = [make_case("slow"), make_case("fast")]
    records = await collect(cases, plan_for(), context_with(Staggered()))
    assert [record.eval_id for record in records] == ["fast", "slow"]


async def test_cancelling_a_run_cancels_every_case() -> None:
    target = ScriptedTarget(delay=10, busy_at=3)
    cases = [make_case(f"c{i}") for i in range(6)]
    task = asyncio.create_task(collect(cases, plan_for(max_concurrency=3), context_with(target)))
    await target.busy.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert target.in_flight == 0
    assert asyncio.all_tasks() == {asyncio.current_task()}


async def test_failing_result_handler_stops_the_run() -> None:
    target = ScriptedTarget(delay=0.01)
    cases = [make_case(f"c{i}") for i in range(5)]

    async def explode(record: ResultRecord) -> None:
        raise OSError("disk full")

    with pytest.raises(ExceptionGroup):
        await run_cases(
            [formatted(case) for case in cases],
            plan_for(max_concurrency=1),
            context_with(target),
            explode,
        )
    assert target.in_flight == 0


async def test_regrading_skips_the_candidate_call() -> None:
    target = ScriptedTarget()
    case = make_case()
    record = await evaluate_case(
        formatted(case),
        plan_for(),
        context_with(target),
        known=KnownAnswer(
            "known answer", usage=TokenUsage(input_tokens=7, output_tokens=3), latency_ms=12.5
        ),
    )
    assert [r.role for r in target.requests] == [CallRole.JUDGE]
    assert "[[ ## candidate_answer ## ]]\nknown answer" in target.requests[0].question
    assert record.candidate_answer == "known answer"
    assert record.usage.candidate == TokenUsage(input_tokens=7, output_tokens=3)
    assert record.latency_ms.candidate == 12.5


async def test_a_given_output_is_graded_and_the_candidate_is_not_called() -> None:
    # promptfoo's providerOutput (measured: tests/conformance/promptfoo/provider_output.yaml)
    target = ScriptedTarget()
    case = make_case().model_copy(update={"given_output": "the given answer"})
    record = await evaluate_case(formatted(case), plan_for(), context_with(target))
    assert [r.role for r in target.requests] == [CallRole.JUDGE]
    assert "[[ ## candidate_answer ## ]]\nthe given answer" in target.requests[0].question
    assert record.candidate_answer == "the given answer"
    assert record.usage.candidate == TokenUsage()


async def test_response_cache_serves_the_second_run_and_marks_records() -> None:
    target = ScriptedTarget()
    cache = MemoryResponseCache()
    case = make_case()
    context = context_with(target, cache=cache)
    plan = plan_for(use_cache=True)
    first = await evaluate_case(formatted(case), plan, context)
    second = await evaluate_case(formatted(case), plan, context)
    assert len(target.requests) == 2
    assert first.cached == {"candidate": False, "judge": False}
    assert second.cached == {"candidate": True, "judge": True}
    assert second.score == first.score


async def test_provider_errors_are_not_cached() -> None:
    target = ScriptedTarget(fail_cases=frozenset({"c1"}))
    cache = MemoryResponseCache()
    case = make_case("c1")
    context = context_with(target, cache=cache)
    plan = plan_for(use_cache=True)
    await evaluate_case(formatted(case), plan, context)
    await evaluate_case(formatted(case), plan, context)
    assert len(target.requests) == 2


async def test_the_candidate_and_the_judge_get_the_prepared_question() -> None:
    target = ScriptedTarget(kind="agent")
    message = Message(role="user", content=[TextPart(value="Review"), FilePart(value="src/a.py")])
    case = formatted(make_case(messages=(message,)), {"src/a.py": "print(1)"}, mode="agent")
    record = await evaluate_case(case, plan_for(mode="agent"), context_with(target))
    assert record.raw_request is not None
    assert record.raw_request.question == 'Review\n\n<file: path="src/a.py">'
    assert target.requests[0].question == record.raw_request.question
    assert f"[[ ## question ## ]]\n{record.raw_request.question}\n" in target.requests[1].question


async def test_several_evaluators_combine_by_weight() -> None:
    target = ScriptedTarget(candidate="It is 4", judge_replies=[verdict_json(0.4)])
    evaluators = (
        EvaluatorConfig(name="has4", type="contains", value="4", weight=1),
        EvaluatorConfig(name="judge", type="llm_judge", weight=1),
    )
    case = make_case(evaluators=evaluators)
    record = await evaluate_case(formatted(case), plan_for(), context_with(target))
    assert record.score == pytest.approx(0.7)
    assert record.status == "borderline"
    assert record.reasoning == "has4: answer contains '4' | judge: fine"
    assert record.hits == ["answer contains '4'", "covers the point"]
    assert [r.name for r in record.evaluator_results] == ["has4", "judge"]


async def test_unmet_required_rubric_fails_the_case_whatever_the_score() -> None:
    from app.evaluators.config import RubricItem

    reply = (
        '{"checks": [{"id": "a", "satisfied": false, "reasoning": ""},'
        ' {"id": "b", "satisfied": true, "reasoning": ""}], "reasoning": "r"}'
    )
    target = ScriptedTarget(judge_replies=[reply])
    rubrics = (
        RubricItem(id="a", description="A", required=True),
        RubricItem(id="b", description="B", weight=9),
    )
    case = make_case(evaluators=(EvaluatorConfig(name="r", type="llm_judge", rubrics=rubrics),))
    record = await evaluate_case(formatted(case), plan_for(), context_with(target))
    assert record.score == pytest.approx(0.9)
    assert record.verdict == "fail"
    assert record.status == "failed"


def test_registry_is_reusable() -> None:
    assert set(build_registry().types) >= {
        "llm_judge",
        "contains",
        "regex",
        "equals",
        "is_json",
        "composite",
    }


async def test_a_failing_required_grader_fails_the_case_whatever_the_score() -> None:
    graders = (
        EvaluatorConfig(name="json", type="is_json", required=True),
        EvaluatorConfig(name="four", type="contains", value="4", weight=9),
    )
    record = await evaluate_case(
        formatted(make_case(evaluators=graders)),
        plan_for(),
        context_with(ScriptedTarget(candidate="about 4")),
    )
    assert record.score == 0.0  # AgentV: a required grader below its mark zeroes the case
    assert (record.verdict, record.status) == ("fail", "failed")
    assert [result.score for result in record.evaluator_results] == [0.0, 1.0]


async def test_a_required_grader_passes_at_its_own_min_score() -> None:
    grader = EvaluatorConfig(name="four", type="contains", value="4", required=True, min_score=1)
    record = await evaluate_case(
        formatted(make_case(evaluators=(grader,))),
        plan_for(),
        context_with(ScriptedTarget(candidate="4")),
    )
    assert record.verdict == "pass"


async def test_a_cases_own_pass_mark_decides_its_verdict() -> None:
    from app.evaluators.verdicts import Thresholds

    graders = (
        EvaluatorConfig(name="four", type="contains", value="4"),
        EvaluatorConfig(name="five", type="contains", value="5"),
    )
    strict = make_case(evaluators=graders).model_copy(
        update={"thresholds": Thresholds.model_validate({"pass": 0.5, "borderline": 0.4})}
    )
    record = await evaluate_case(
        formatted(strict), plan_for(), context_with(ScriptedTarget(candidate="4"))
    )
    assert (record.score, record.verdict) == (0.5, "pass")
