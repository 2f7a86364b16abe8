"""``similar``'s measures, verdicts and list rules, and its embeddings target, unit by unit."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.evaluators.config import EvaluatorConfig
from app.evaluators.judges.embedding_similarity import (
    Compared,
    compared,
    embedding_problems,
    pick,
    vector_measure,
)


def test_measures_of_two_vectors() -> None:
    assert vector_measure("cosine", [1.0, 0.0], [2.0, 0.0]) == pytest.approx(1.0)
    assert vector_measure("cosine", [1.0, 0.0], [0.0, 0.0]) == 0.0  # a zero vector: 0, as promptfoo
    assert vector_measure("dot", [1.0, 2.0], [3.0, 4.0]) == 11.0
    assert vector_measure("euclidean", [0.0, 0.0], [3.0, 4.0]) == 5.0
    with pytest.raises(ValueError, match="different lengths"):
        vector_measure("cosine", [1.0], [1.0, 0.0])


@given(
    similarity=st.floats(-1, 1, allow_nan=False),
    threshold=st.floats(-1, 1, allow_nan=False),
    measure=st.sampled_from(["cosine", "dot", "euclidean"]),
)
def test_not_similar_passes_where_similar_fails_but_at_the_threshold(
    similarity: float, threshold: float, measure: str
) -> None:
    found = abs(similarity) if measure == "euclidean" else similarity
    plain, negated = (
        compared(measure, found, threshold, False),
        compared(measure, found, threshold, True),
    )
    if abs(found - threshold) > 1e-12:
        assert plain.passed != negated.passed
    at_threshold = [compared(measure, abs(threshold), abs(threshold), n) for n in (False, True)]
    assert all(result.passed for result in at_threshold)  # both inclusive, as promptfoo
    assert negated.score == pytest.approx(1 - plain.score)


def test_a_list_passes_on_any_value_and_a_negated_one_on_every_value() -> None:
    low, high, mid = (
        Compared(s, s, p, f"{s}") for s, p in ((0.2, False), (0.9, True), (0.5, False))
    )
    assert pick([low, high, mid], negate=False) is high
    assert pick([low, mid], negate=False) is mid  # none passes: the best score
    passing = [Compared(0.3, 0.7, True, "a"), Compared(0.4, 0.6, True, "b")]
    assert pick(passing, negate=True).line == "b"  # every value passes: the lowest score
    assert pick([*passing, Compared(0.9, 0.1, False, "c")], negate=True).line == "c"


def test_a_grader_without_an_embeddings_target_is_named() -> None:
    plain = EvaluatorConfig(name="close", type="similar", value="x")
    named = plain.model_copy(update={"name": "named", "target": "gpt"})
    inner = EvaluatorConfig(name="all", type="composite", evaluators=(plain,))
    assert embedding_problems([plain, inner], ["embed"]) == []
    assert embedding_problems([plain, named, inner], []) == [
        "evaluator 'close' (similar) needs an embeddings target and none is configured: add "
        "a target with api_format: embeddings (docs/providers.md, 'Embeddings targets')",
        "evaluator 'named' (similar): target 'gpt' is not an embeddings target (embeddings "
        "targets: none is configured)",
    ]


async def test_the_reader_maps_providers_and_measures_to_similar_graders() -> None:
    from tests.suites.helpers import check

    test = {
        "vars": {"q": "Hi"},
        "options": {"provider": {"text": "judge", "embedding": {"id": "embed-a"}}},
        "assert": [
            {"type": "similar:dot", "value": "x"},
            {"type": "not-similar", "value": ["x", "y"], "provider": "embed-b"},
            {"type": "llm-rubric", "value": "good"},
        ],
    }
    report = await check({"prompts": ["{{ q }}"], "tests": [test]})
    assert report.suite is not None, report.errors
    graders = report.suite.cases[0].evaluators
    found = [(g.type, g.target, (g.model_extra or {}).get("measure"), g.negate) for g in graders]
    assert found == [
        ("similar", "embed-a", "dot", False),
        ("similar", "embed-b", None, True),
        ("llm_judge", "judge", None, False),
    ]
    test["options"] = {"provider": {"embedding": 5}}
    bad = await check({"prompts": ["{{ q }}"], "tests": [test]})
    assert [(e.path, e.message) for e in bad.errors] == [
        ("tests[0].options.provider.embedding",
         "must name an embeddings target (a string or {id}), not a number"),
    ]  # fmt: skip
