"""promptfoo's Python file transforms: get_transform by default, or a named function."""


def get_transform(output, context):
    return output.lower() + "|" + context["vars"]["tag"]


def as_object(output, context):
    return {"words": output.split(), "count": len(output.split())}
