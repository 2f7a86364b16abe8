"""Scoring functions of scoring_function.yaml, in Python."""


def func(named_scores, context):
    """The default name: passes when more than half the asserts passed."""
    results = context["componentResults"]
    passed = sum(1 for result in results if result["pass"])
    share = passed / len(results)
    return {"pass": share > 0.5, "score": share, "reason": f"{passed} of {len(results)} passed"}


def weighted_fluency(named_scores, context):
    """Only the fluency metric counts; its value is the weighted mean of its asserts."""
    fluency = named_scores.get("fluency", 0)
    return {"pass": fluency >= 0.7, "score": fluency, "reason": f"fluency {fluency}"}


def not_a_result(named_scores, context):
    return {"pass": True}
