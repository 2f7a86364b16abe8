r"""The embedded JavaScript engine: V8 through ``mini-racer``, with time and memory limits.

Suites' JavaScript (promptfoo's ``javascript`` asserts) and regular expressions written for
JavaScript (``regex`` graders of AgentV and promptfoo files) run here, in V8 itself, so they
mean what they mean in those tools: ``$`` not matching before a final newline, ASCII ``\d``
and ``\w``, JavaScript's flags and syntax. V8 embedded this way has no ``require``, no
``process``, no ``fetch``, no timers and no file system: a script can compute, nothing else.
Every run has a time limit (V8 stops it, even inside a backtracking regular expression) and
a heap limit. V8 runs in the engine's own worker threads (never on an event loop, where
mini-racer would bind to it): synchronous callers wait for the result (``regex_error``,
compiling only), async ones await it (``run_in_thread``).

Regular expressions share one context per thread (their code is fixed; only data goes in);
scripts get a fresh context each, closed afterwards, so nothing one leaves behind is seen
by the next.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from py_mini_racer import (
    JSEvalException,
    JSOOMException,
    JSPromise,
    JSTimeoutException,
    MiniRacer,
)

from app.evaluators.offload.cpu_process import lower_priority

ResultT = TypeVar("ResultT")

SCRIPT_TIMEOUT_MS = 2000
"""Longest a suite's script may run."""
REGEX_TIMEOUT_MS = 1000
"""Longest a regular expression may search one answer."""
MAX_HEAP_BYTES = 64 * 1024 * 1024
CLOSE_DELAY_SECONDS = 1.0
"""Most memory a script's context may hold."""

_local = threading.local()
_WORKERS = ThreadPoolExecutor(
    max_workers=4, thread_name_prefix="js-engine", initializer=lower_priority
)  # below the event loop's priority: a 1 s search must not slow other requests' answers


class JsError(ValueError):
    """A script (or pattern) that does not parse, throws, or passes its limits."""


def literal(value: Any) -> str:
    """``value`` as a JavaScript literal (its JSON)."""
    return json.dumps(value, ensure_ascii=False)


def _shared() -> MiniRacer:
    racer: MiniRacer | None = getattr(_local, "racer", None)
    if racer is None:
        racer = MiniRacer()
        _local.racer = racer
    return racer


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    lines = [line for line in text.splitlines() if line.strip()]
    message = next((line for line in lines if "Error" in line), lines[0] if lines else text)
    return message.strip()


def _eval(racer: MiniRacer, source: str, timeout_ms: int | None, *, what: str) -> Any:
    """Evaluate ``source``; ``timeout_ms`` None only for work bounded by its size."""
    try:
        return racer.eval(source, timeout=timeout_ms, max_memory=MAX_HEAP_BYTES)
    except JSTimeoutException:
        limit = f"{(timeout_ms or 0) / 1000:g}s"
        raise JsError(f"{what} took more than {limit} and was stopped") from None
    except JSOOMException:
        raise JsError(f"{what} used more than {MAX_HEAP_BYTES >> 20} MiB and was stopped") from None
    except JSEvalException as exc:
        raise JsError(f"{what} failed: {_first_line(exc)}") from None


def regex_error(pattern: str, flags: str = "") -> str | None:
    """Why ``pattern`` is not a JavaScript regular expression (with ``flags``), or None.

    Compiling takes time in proportion to the pattern: suites are loaded on the event loop,
    which waits for it.
    """
    return _WORKERS.submit(_compile_error, pattern, flags).result()


def _compile_error(pattern: str, flags: str) -> str | None:
    try:
        source = f"new RegExp({literal(pattern)}, {literal(flags)}); 0"
        _eval(_shared(), source, None, what="it")
    except JsError as exc:
        return str(exc).removeprefix("it failed: ")
    return None


def regex_test(pattern: str, flags: str, text: str) -> bool:
    """``new RegExp(pattern, flags).test(text)``, within ``REGEX_TIMEOUT_MS``."""
    source = f"new RegExp({literal(pattern)}, {literal(flags)}).test({literal(text)})"
    return bool(_eval(_shared(), source, REGEX_TIMEOUT_MS, what=f"/{pattern}/{flags}"))


def run_script(source: str, *, timeout_ms: int = SCRIPT_TIMEOUT_MS, what: str = "script") -> Any:
    """Evaluate ``source`` in a fresh context; its value, converted to JSON types.

    The script's last expression should be ``JSON.stringify(...)`` of what it returns: its
    text is parsed back here (``undefined`` becomes None).
    """
    racer = MiniRacer()
    try:
        result = _eval(racer, source, timeout_ms, what=what)
    except JsError:
        # V8 reports a stopped script to the context's loop a moment later: close after it.
        threading.Timer(CLOSE_DELAY_SECONDS, racer.close).start()
        raise
    racer.close()
    if not isinstance(result, str):
        return None
    return json.loads(result)


def run_awaited(source: str, *, timeout_ms: int = SCRIPT_TIMEOUT_MS, what: str) -> Any:
    """``run_script`` for a script whose value may be a Promise, awaited within the time limit.

    A Promise's value is the text the script's ``JSON.stringify`` made.
    """
    racer = MiniRacer()
    try:
        result = _eval(racer, source, timeout_ms, what=what)
        if isinstance(result, JSPromise):
            result = result.get(timeout=timeout_ms / 1000)
    except JSTimeoutException:
        threading.Timer(CLOSE_DELAY_SECONDS, racer.close).start()
        raise JsError(f"{what} took more than {timeout_ms / 1000:g}s and was stopped") from None
    except JsError:
        threading.Timer(CLOSE_DELAY_SECONDS, racer.close).start()
        raise
    racer.close()
    return json.loads(result) if isinstance(result, str) else None


def run_script_waiting(source: str, *, timeout_ms: int = SCRIPT_TIMEOUT_MS, what: str) -> Any:
    """``run_script`` in one of the engine's threads, waited for.

    Only for callers off the event loop (suites are read in a worker thread).
    """
    return _WORKERS.submit(run_script, source, timeout_ms=timeout_ms, what=what).result()


async def run_in_thread(call: Callable[..., ResultT], *args: Any) -> ResultT:
    """``call(*args)`` in one of the engine's threads: the event loop never waits on V8."""
    return await asyncio.get_running_loop().run_in_executor(_WORKERS, call, *args)
