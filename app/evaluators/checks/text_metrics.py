"""Text similarity metrics, each in [0, 1], computed by well-kept libraries. PURE: no I/O.

One small module for every surface that grades text against a reference: the ``bleu``,
``gleu``, ``rouge_n`` and ``levenshtein`` graders, and OpenAI Evals' ``text_similarity``
metric names (``METRICS``). Nothing here downloads data:

- ``bleu``: sacreBLEU's sentence BLEU (13a tokenizer, exponential smoothing) / 100;
- ``gleu``: NLTK's sentence GLEU (Google BLEU) over whitespace tokens;
- ``rouge_1`` .. ``rouge_5``, ``rouge_l``: the ``rouge-score`` package's F-measure, with the
  Porter stemmer (an algorithm, no data files);
- ``fuzzy_match``: RapidFuzz's normalised Indel similarity (``fuzz.ratio`` / 100);
- ``levenshtein_distance``: RapidFuzz's edit distance (a count, not a score).

``promptfoo_bleu`` and ``promptfoo_rouge_1`` are BLEU and ROUGE-1 as promptfoo computes them
(measured against it): BLEU over lower-cased whitespace tokens, clipped 1- to 4-gram
precisions (the best reference for each order), orders the candidate is too short for left
out, a precision of 0 counted as 1e-7, the brevity penalty against the closest reference
length (the shorter on a tie); ROUGE-1 as the F1 of unigrams of lower-cased Treebank tokens,
without stemming.

``meteor`` needs the WordNet corpus, which NLTK downloads at run time: it is not available
offline and raises ``MetricUnavailable``. Libraries are imported on first use (they take
about half a second to load).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

ROUGE_VARIANTS = ("rouge_1", "rouge_2", "rouge_3", "rouge_4", "rouge_5", "rouge_l")
UNAVAILABLE_OFFLINE = {"meteor": "METEOR needs the WordNet corpus, which is not available offline"}


class MetricUnavailable(ValueError):
    """A metric this service cannot compute (it would need data it does not have)."""


def bleu(candidate: str, references: Sequence[str]) -> float:
    """Sentence BLEU of ``candidate`` against ``references``, in [0, 1]."""
    import sacrebleu

    return float(sacrebleu.sentence_bleu(candidate, list(references)).score) / 100


def _ngrams(words: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def promptfoo_bleu(candidate: str, references: Sequence[str]) -> float:
    """BLEU as promptfoo computes it (see the module's description), in [0, 1]."""
    if not candidate.strip():
        return 0.0
    words = candidate.lower().split()
    refs = [reference.lower().split() for reference in references]
    closest = min((len(ref) for ref in refs), key=lambda size: (abs(size - len(words)), size))
    logs: list[float] = []
    for n in range(1, 5):
        grams = _ngrams(words, n)
        total = sum(grams.values())
        if not total:
            continue
        clipped = max(
            sum(min(count, _ngrams(ref, n)[gram]) for gram, count in grams.items()) for ref in refs
        )
        logs.append(math.log(clipped / total or 1e-7))
    if not logs:
        return 0.0
    penalty = 1.0 if len(words) > closest else math.exp(1 - closest / len(words))
    return penalty * math.exp(sum(logs) / len(logs))


def promptfoo_rouge_1(candidate: str, reference: str) -> float:
    """ROUGE-1 F1 as promptfoo computes it: lower-cased Treebank unigrams, no stemming."""
    from nltk.tokenize import TreebankWordTokenizer

    tokenizer = TreebankWordTokenizer()
    mine = Counter(tokenizer.tokenize(candidate.lower()))
    theirs = Counter(tokenizer.tokenize(reference.lower()))
    overlap = sum((mine & theirs).values())
    if not overlap:
        return 0.0
    precision = overlap / sum(mine.values())
    recall = overlap / sum(theirs.values())
    return 2 * precision * recall / (precision + recall)


def gleu(candidate: str, references: Sequence[str]) -> float:
    """Sentence GLEU (Google BLEU, 1- to 4-grams) over whitespace tokens, in [0, 1]."""
    from nltk.translate.gleu_score import sentence_gleu

    tokens = candidate.split()
    refs = [reference.split() for reference in references]
    if not tokens or not any(refs):
        return 1.0 if not tokens and not any(refs) else 0.0
    return float(sentence_gleu(refs, tokens))


def _rouge_type(variant: str) -> str:
    """The ``rouge-score`` name of a variant: ``rouge1`` .. ``rouge5``, ``rougeL``."""
    return "rougeL" if variant == "rouge_l" else variant.replace("_", "")


@cache
def _rouge_scorer(variant: str) -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer([_rouge_type(variant)], use_stemmer=True)


def rouge(candidate: str, reference: str, variant: str = "rouge_1") -> float:
    """ROUGE F-measure (``rouge_1`` .. ``rouge_5``, ``rouge_l``), in [0, 1]."""
    if variant not in ROUGE_VARIANTS:
        raise ValueError(f"unknown ROUGE variant {variant!r} ({', '.join(ROUGE_VARIANTS)})")
    scores = _rouge_scorer(variant).score(reference, candidate)
    return float(scores[_rouge_type(variant)].fmeasure)


def fuzzy_match(candidate: str, reference: str) -> float:
    """Normalised Indel similarity of the two texts, in [0, 1] (1: identical)."""
    from rapidfuzz import fuzz

    return float(fuzz.ratio(candidate, reference)) / 100


def levenshtein_distance(candidate: str, reference: str) -> int:
    """Characters to insert, delete or substitute to turn one text into the other."""
    from rapidfuzz.distance import Levenshtein

    return int(Levenshtein.distance(candidate, reference))


def _rouge_metric(variant: str) -> Callable[[str, str], float]:
    return lambda candidate, reference: rouge(candidate, reference, variant)


METRICS: dict[str, Callable[[str, str], float]] = {
    "fuzzy_match": fuzzy_match,
    "bleu": lambda candidate, reference: bleu(candidate, [reference]),
    "gleu": lambda candidate, reference: gleu(candidate, [reference]),
    **{variant: _rouge_metric(variant) for variant in ROUGE_VARIANTS},
}
"""OpenAI Evals ``text_similarity`` metrics by name: ``(candidate, reference) -> score``."""


def similarity(metric: str, candidate: str, reference: str) -> float:
    """The ``text_similarity`` score of ``metric``; raises for one not available here.

    Raises:
        MetricUnavailable: ``meteor`` (needs WordNet data, not available offline).
        ValueError: An unknown metric name.
    """
    if metric in UNAVAILABLE_OFFLINE:
        raise MetricUnavailable(UNAVAILABLE_OFFLINE[metric])
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r} ({', '.join(METRICS)})")
    return METRICS[metric](candidate, reference)
