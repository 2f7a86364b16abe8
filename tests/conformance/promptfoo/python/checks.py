"""File asserts of python.yaml (read by both tools)."""

import json


def get_assert(output, context):
    return "world" in output


def scored(output, context):
    return len(output) / 20


def graded(output, context):
    wanted = context["config"].get("word", "")
    return {"pass": wanted in output, "score": 0.7, "reason": f"looked for {wanted}"}


def graded_underscore(output, context):
    return {"pass_": False, "score": 0.1, "reason": "pass_ spelled as Python allows"}


def with_vars(output, context):
    return context["vars"]["expected"] in output and "REPLY" in context["prompt"]


def broken(output, context):
    raise ValueError("this grader is broken")


def json_output(output, context):
    return json.loads(output)["age"] > 30
