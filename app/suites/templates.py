"""``{{ var }}`` templates in suites, rendered by Jinja2's sandboxed environment.

Templates see plain data only: the case's variables (JSON values) at the top level and
under ``vars``. Attribute and item access read mapping keys and list indices, nothing of
Python (no methods, no dunder names), autoescape is off, and an undefined name is an error
naming it. What a template may do is bounded, because suites come from requests: no
``include``/``import``/``extends``, no macros or call blocks, loops nested at most
``MAX_LOOP_DEPTH`` deep and never recursive (every pass checks the deadline), no ``range``,
a short list of filters, ``*``/``**`` and string-building filters checked before they run,
and every rendered text capped in size.

Two readings are nunjucks' (promptfoo's engine, measured on promptfoo 0.123.1):
``{% for key, value in mapping %}`` walks the mapping's pairs, and ``.length`` of a list or
a text is its length.
"""

from __future__ import annotations

import functools
import json
import math
import re
import time
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from functools import lru_cache
from typing import Any

import jinja2
import jinja2.runtime
from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.nodes import EvalContext
from jinja2.sandbox import ImmutableSandboxedEnvironment

from app.suites.template_env import REQUEST_ENV

MAX_RENDERED_CHARS = 1_000_000
"""Largest text one template may render (about the size of a large prompt); also the
largest string, and the most items of a list, a template may build on the way."""
MAX_INTEGER_BITS = 10_000
"""Largest whole number a template may compute (about 3,000 digits): ``9**64**64`` is not."""
MAX_SORTED_ITEMS = 100_000
"""Most items ``sort``, ``unique``, ``min``, ``max``, ``sum`` and ``list`` take at once (each
item may cost a Python call: one filter must stay well within ``TEMPLATE_SECONDS``)."""
TEMPLATE_SECONDS = 1.0
"""Longest one template may take to render: every operation, filter, lookup and loop pass
checks it."""
MAX_LOOP_DEPTH = 3
"""Deepest loops may nest (a chat history of messages of role/content pairs needs two)."""
_LOOP_FIELDS = frozenset({"index", "index0", "revindex", "revindex0", "first", "last", "length"})
"""What a loop's ``loop`` tells (nunjucks' names)."""
_LOOP_ITEMS = "_loop_items"
"""The filter every loop's sequence goes through (``_walk`` adds it): pairs, deadline."""

_DEADLINE: ContextVar[float] = ContextVar("template_deadline", default=float("inf"))

_SAFE_FILTERS = frozenset(
    {"abs", "capitalize", "count", "d", "default", "first", "float", "int", "last", "length"}
    | {"list", "lower", "max", "min", "round", "sort", "string", "sum", "title", "tojson"}
    | {"trim", "unique", "upper"}
)
_FORBIDDEN_NODES: tuple[type[nodes.Node], ...] = (
    nodes.Macro,
    nodes.CallBlock,
    nodes.Include,
    nodes.Import,
    nodes.FromImport,
    nodes.Extends,
    nodes.Block,
)
_SINGLE_VARIABLE = re.compile(r"\s*\{\{\s*(?:vars\.)?([A-Za-z_][A-Za-z0-9_]*)\s*\}\}\s*")
_PLACEHOLDER = re.compile(r"\{\{|\{%")
AGENTV_RUNTIME_NAMES = frozenset({"trace", "output_messages"})
"""Names AgentV fills in judge prompts at run time that this service does not provide."""


class TemplateProblem(Exception):
    """A template that cannot be rendered: undefined variable, syntax, or a refused construct."""


class UndefinedVariable(TemplateProblem):
    """A template that names a variable the case does not define."""


class TemplateSyntaxProblem(TemplateProblem):
    """A text that does not parse as a template."""


def _size(value: Any) -> int:
    return len(value) if isinstance(value, str | list | tuple) else 0


def _tick() -> None:
    if time.monotonic() > _DEADLINE.get():
        raise SecurityError(f"the template took more than {TEMPLATE_SECONDS:g}s to render")


def _too_big(what: str) -> SecurityError:
    return SecurityError(
        f"{what} would build a value over the size limit of {MAX_RENDERED_CHARS} characters "
        "or items"
    )


def _text_size(value: Any, limit: int = MAX_RENDERED_CHARS) -> int:
    """About how many characters ``value`` is as text, counted up to just past ``limit``.

    Lists and mappings may hold one value many times (``[a, a]``): written out, they grow
    exponentially with nesting, so their size is counted before ``str`` or JSON writes them.
    """
    total, stack = 0, [value]
    while stack and total <= limit:
        current = stack.pop()
        total += len(current) + 2 if isinstance(current, str) else 2
        if isinstance(current, dict):
            stack.extend(current.keys())
            stack.extend(current.values())
        elif isinstance(current, list | tuple):
            stack.extend(current)
        elif isinstance(current, int) and not isinstance(current, bool):
            total += current.bit_length() // 3
    return total


def _as_text(value: Any) -> str:
    if _text_size(value) > MAX_RENDERED_CHARS:
        raise _too_big("writing out a value")
    return str(value)


def _checked_join(values: Any, separator: str = "") -> str:
    _tick()
    items = list(values)
    if _text_size(items) + len(separator) * len(items) > MAX_RENDERED_CHARS:
        raise _too_big("join")
    return separator.join(str(item) for item in items)


def _checked_replace(text: str, old: str, new: str, count: int | None = None) -> str:
    _tick()
    occurrences = text.count(old) if old else len(text) + 1
    if len(text) + occurrences * len(new) > MAX_RENDERED_CHARS:
        raise _too_big("replace")
    return text.replace(old, new, -1 if count is None else count)


_PASSED = (jinja2.Environment, EvalContext, jinja2.runtime.Context)
"""What Jinja passes a filter before its value (``pass_environment`` and the like)."""


def _checked_filter(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` checking the render deadline first (and the size of what it writes)."""
    writes = name in ("string", "tojson", "dump")
    per_item = name in ("sort", "unique", "min", "max", "sum", "list")

    @functools.wraps(function)
    def checked(*args: Any, **kwargs: Any) -> Any:
        _tick()
        value = next((a for a in args if not isinstance(a, _PASSED)), None)
        if per_item and _size(value) > MAX_SORTED_ITEMS:
            raise SecurityError(
                f"the {name!r} filter takes at most {MAX_SORTED_ITEMS} items, not {_size(value)}"
            )
        if (
            writes
            and args
            and _text_size(args[0] if name in ("string", "dump") else args[-1]) > MAX_RENDERED_CHARS
        ):
            raise _too_big(f"the {name!r} filter")
        return function(*args, **kwargs)

    return checked


def _integer_bits(operator: str, left: Any, right: Any) -> int:
    """About how many bits a whole-number result of ``left operator right`` has."""
    if not (isinstance(left, int) and isinstance(right, int)):
        return 0
    if operator == "**":
        return left.bit_length() * abs(right) if abs(left) > 1 else 1
    if operator == "*":
        return left.bit_length() + right.bit_length()
    return 0


def _binop_refusal(operator: str, left: Any, right: Any) -> SecurityError | None:
    """Why ``left operator right`` may not run (its result would be too big), if it may not."""
    if operator == "%" and isinstance(left, str):
        return SecurityError("string formatting with % is not allowed")
    if operator == "**" and (abs(right) > 64 if isinstance(right, int | float) else True):
        return SecurityError("the exponent of ** is over the limit of 64")
    if _integer_bits(operator, left, right) > MAX_INTEGER_BITS:
        return SecurityError(
            f"{operator} would compute a number over the limit of {MAX_INTEGER_BITS} bits"
        )
    if operator == "+" and _size(left) + _size(right) > MAX_RENDERED_CHARS:
        return _too_big("+")
    if operator == "*" and max(
        _size(left) * abs(right) if isinstance(right, int) else 0,
        _size(right) * abs(left) if isinstance(left, int) else 0,
    ) > (MAX_RENDERED_CHARS):
        return _too_big("repetition with *")
    return None


class _CheckedCodeGenerator(CodeGenerator):
    """Compiles ``a ~ b`` to a size-checked join (Jinja's own would build any size)."""

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        """``environment.checked_concat((a, b, ...))``."""
        self.write("environment.checked_concat((")
        for argument in node.nodes:
            self.visit(argument, frame)
            self.write(", ")
        self.write("))")


class _DataEnvironment(ImmutableSandboxedEnvironment):
    """A sandbox over JSON data: keys and indices only, size-checked arithmetic."""

    intercepted_binops = frozenset({"*", "**", "%", "+", "-", "/", "//"})
    code_generator_class = _CheckedCodeGenerator

    def checked_concat(self, values: tuple[Any, ...]) -> str:
        """``a ~ b ~ ...``: each part written out as text, the whole within the size limit."""
        _tick()
        if sum(_text_size(value) for value in values) > MAX_RENDERED_CHARS:
            raise _too_big("joining with ~")
        return "".join(str(value) for value in values)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        """Refuse results over the size limits, and ``%`` string formatting."""
        _tick()
        refusal = _binop_refusal(operator, left, right)
        if refusal is not None:
            raise refusal
        return super().call_binop(context, operator, left, right)

    def getattr(self, obj: Any, attribute: str) -> Any:
        """``a.b`` reads key ``b`` of a mapping, and little else.

        ``.length`` of a list or text is its length (as nunjucks reads it), and
        ``loop.index`` and the like are the loop's; nothing else has attributes.
        """
        if attribute == "length" and isinstance(obj, list | tuple | str):
            return len(obj)
        if isinstance(obj, jinja2.runtime.LoopContext) and attribute in _LOOP_FIELDS:
            return getattr(obj, attribute)
        return self.getitem(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        """``a[k]`` reads a mapping key or a list index."""
        _tick()
        if isinstance(obj, jinja2.Undefined):
            return obj  # the error names the first undefined name, not this key
        try:
            if isinstance(obj, Mapping) or (
                isinstance(obj, list | tuple) and isinstance(argument, int)
            ):
                return obj[argument]
        except (KeyError, IndexError):
            pass
        return self.undefined(obj=obj, name=argument)


def _finalize(value: Any) -> Any:
    """Objects and lists render as JSON; scalars as JavaScript writes them (both tools are).

    ``null`` is empty, ``true``/``false`` lower case, a whole number has no ``.0``, and
    infinities are ``Infinity``.
    """
    if isinstance(value, dict | list | tuple):
        if _text_size(value) > MAX_RENDERED_CHARS:
            raise _too_big("writing out a value")
        return json.dumps(value, ensure_ascii=False)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        if math.isnan(value):
            return "NaN"
        return str(int(value)) if value.is_integer() and abs(value) < 1e21 else repr(value)
    return value


def _load(value: Any) -> Any:
    """The ``load`` filter promptfoo adds: ``JSON.parse`` of the value's text."""
    text = value if isinstance(value, str) else _finalize(value)
    try:
        return json.loads(text, parse_float=_js_number, parse_constant=_not_json)
    except ValueError as exc:
        raise TemplateProblem(f"the 'load' filter: {str(text)[:80]!r} is not JSON") from exc


def _js_number(text: str) -> float | int:
    """A JSON number as JavaScript holds it: ``2.0`` is ``2``."""
    number = float(text)
    return int(number) if number.is_integer() and abs(number) < 2**53 else number


def _not_json(text: str) -> Any:
    raise ValueError(f"{text} is not JSON")


def _dump(value: Any) -> str:
    """The ``dump`` filter promptfoo adds: ``JSON.stringify`` (compact)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _loop_items(value: Any, pairs: bool) -> Iterator[Any]:
    """A loop's items, checking the deadline at each; a mapping's pairs for ``k, v`` loops."""
    items = value.items() if pairs and isinstance(value, Mapping) else value
    for item in items:
        _tick()
        yield item


def _environment(undefined: type[jinja2.Undefined]) -> _DataEnvironment:
    environment = _DataEnvironment(undefined=undefined, autoescape=False, finalize=_finalize)
    environment.globals.clear()
    safe: dict[str, Callable[..., Any]] = {
        name: _checked_filter(name, environment.filters[name]) for name in _SAFE_FILTERS
    }
    safe.update(join=_checked_join, replace=_checked_replace)
    safe.update(load=_checked_filter("load", _load), dump=_checked_filter("dump", _dump))
    safe[_LOOP_ITEMS] = _loop_items
    environment.filters = safe
    environment.tests = {
        name: test
        for name, test in environment.tests.items()
        if name in ("defined", "undefined", "none", "number", "string", "mapping")
        or name in ("sequence", "eq", "ne", "lt", "le", "gt", "ge", "in", "true", "false")
    }
    return environment


_ENVIRONMENT = _environment(jinja2.StrictUndefined)
_LENIENT = _environment(jinja2.ChainableUndefined)
"""promptfoo's reading (nunjucks): an undefined name, or a key of one, renders empty."""


class _KeptUndefined(jinja2.ChainableUndefined):
    """An undefined name rendered as written (``{{ name }}``), as promptfoo keeps it in vars."""

    def __str__(self) -> str:
        return f"{{{{ {self._undefined_name} }}}}"


_KEPT = _environment(_KeptUndefined)
"""promptfoo's variables: the names they define filled in, an undefined one kept as written."""


def _walk(node: nodes.Node, loop_depth: int = 0) -> Iterator[str]:
    """Names of refused constructs in a parsed template.

    Each loop's sequence is wrapped in ``_loop_items`` on the way.
    """
    if isinstance(node, _FORBIDDEN_NODES):
        yield f"'{type(node).__name__.lower()}' blocks are not allowed"
        return
    if isinstance(node, nodes.For):
        if node.recursive:
            yield "recursive loops are not allowed"
        if loop_depth >= MAX_LOOP_DEPTH:
            yield f"loops nested more than {MAX_LOOP_DEPTH} deep are not allowed"
        loop_depth += 1
        pairs = isinstance(node.target, nodes.Tuple) and len(node.target.items) == 2
        node.iter = nodes.Filter(
            node.iter, _LOOP_ITEMS, [nodes.Const(pairs)], [], None, None, lineno=node.lineno
        )
    for child in node.iter_child_nodes():
        yield from _walk(child, loop_depth)


@lru_cache(maxsize=1024)
def _compile(source: str, lenient: bool = False, kept: bool = False) -> jinja2.Template:
    environment = _KEPT if kept else _LENIENT if lenient else _ENVIRONMENT
    try:
        tree = environment.parse(source)
        refused = next(_walk(tree), None)
        if refused is not None:
            raise TemplateProblem(f"template construct refused: {refused}")
        return environment.from_string(tree)
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateSyntaxProblem(
            f"template syntax error at line {exc.lineno}: {exc.message}"
        ) from None
    except jinja2.TemplateError as exc:
        raise TemplateProblem(f"template refused: {exc.message}") from None


def has_template(text: str) -> bool:
    """Whether ``text`` holds a ``{{ ... }}`` or ``{% ... %}`` construct."""
    return _PLACEHOLDER.search(text) is not None


def single_variable(text: str) -> str | None:
    """The variable name when ``text`` is exactly one ``{{ name }}`` (or ``{{ vars.name }}``)."""
    found = _SINGLE_VARIABLE.fullmatch(text)
    return found.group(1) if found else None


def namespace(variables: Mapping[str, Any]) -> dict[str, Any]:
    """What a template sees: each variable at the top level, and all of them as ``vars``."""
    return {**variables, "vars": dict(variables)}


def render(
    text: str, scope: Mapping[str, Any], *, lenient: bool = False, kept: bool = False
) -> str:
    """Render ``text`` with ``scope`` (see ``namespace``); text without a template is returned.

    ``lenient``: an undefined variable renders empty (promptfoo's nunjucks); ``kept``: it
    renders as written, ``{{ name }}`` (promptfoo's variables); else it is an error.

    Raises:
        TemplateProblem: An undefined variable (named: ``UndefinedVariable``), a syntax
            error, a refused construct or a result over ``MAX_RENDERED_CHARS``.
    """
    if not has_template(text):
        return text
    given = REQUEST_ENV.get()
    if given is not None and "env" not in scope:
        scope = {**scope, "env": given}
    template = _compile(text, lenient, kept)
    token = _DEADLINE.set(time.monotonic() + TEMPLATE_SECONDS)
    try:
        chunks: list[str] = []
        size = 0
        for chunk in template.generate(scope):
            size += len(chunk)
            if size > MAX_RENDERED_CHARS:
                raise TemplateProblem(
                    f"the template renders more than {MAX_RENDERED_CHARS} characters"
                )
            chunks.append(chunk)
    except jinja2.UndefinedError as exc:
        raise UndefinedVariable(_undefined_message(str(exc.message))) from None
    except SecurityError as exc:
        raise TemplateProblem(f"template refused: {exc}") from None
    except (jinja2.TemplateError, TypeError, ValueError, ArithmeticError) as exc:
        raise TemplateProblem(f"template cannot be rendered: {exc}") from None
    finally:
        _DEADLINE.reset(token)
    return "".join(chunks)


def _undefined_message(message: str) -> str:
    found = re.fullmatch(r"'(.+)' is undefined", message)
    if found and found.group(1) in AGENTV_RUNTIME_NAMES:
        return (
            f"'{{{{ {found.group(1)} }}}}' is filled by AgentV at run time; this service does "
            "not provide it yet"
        )
    named = re.fullmatch(r"'[\w.]*RequestEnv object' has no attribute '(.+)'", message)
    if named:
        return (
            f"'{{{{ env.{named.group(1)} }}}}' is not given: send it in the request's `env`; "
            "a suite never reads the service's environment"
        )
    if found and found.group(1) == "env":
        return (
            "undefined variable 'env': environment variables are not available to suites "
            "(put the value in the suite or its vars)"
        )
    if found:
        return f"undefined variable '{found.group(1)}' (give it in vars)"
    attribute = re.fullmatch(r"'.+' has no attribute '(.+)'", message)
    if attribute:
        return f"undefined variable: no key '{attribute.group(1)}' (give it in vars)"
    return f"undefined variable: {message}"
