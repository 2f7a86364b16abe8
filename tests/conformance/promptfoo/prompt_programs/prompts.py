"""Prompts made by Python functions (prompt_programs.yaml): promptfoo's context."""


def text(context):
    return f"REPLY:py {context['vars']['topic']}:END"


def chat(context):
    return [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": f"REPLY:chat {context['vars']['topic']}:END"},
    ]


def wrapped(context):
    return {"prompt": f"REPLY:wrapped {context['vars']['topic']}:END"}


def broken(context):
    raise ValueError("no prompt today")
