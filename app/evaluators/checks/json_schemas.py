"""JSON Schemas that come from requests, made safe: nothing fetched, checked first, timed.

A schema (an ``is_json``/``contains_json`` grader's, a ``/v1`` eval's ``item_schema``) is
checked once, where it is declared (``schema_problem``): against its dialect's meta-schema
(2020-12 unless ``$schema`` names another), every ``$ref`` must resolve inside the document
(the registry retrieves nothing: no URL, no file), no ``$ref``/``allOf``... chain may lead
back to itself without reading into the instance (it would recurse without end), and every
``pattern``/``patternProperties`` key must compile.

Validation (``validation_error``) runs on the ``regex`` engine with a time limit for
patterns and under one deadline for the whole document (``SCHEMA_SECONDS``): a backtracking
pattern or a huge ``anyOf`` tree stops with ``SchemaTimeout`` instead of holding the
process. Callers run it in a worker thread (``regex`` lets go of the GIL while it searches).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jsonschema
import referencing
import referencing.exceptions
import referencing.jsonschema
import regex
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator
from jsonschema_specifications import REGISTRY as META_SCHEMAS  # type: ignore[import-untyped]

SCHEMA_SECONDS = 1.0
"""Longest one document may take to validate against one schema (patterns included)."""
MAX_SCHEMA_NODES = 20_000
"""Most subschemas a schema may hold (a bigger one is refused when declared)."""

Resolver = Any
"""A ``referencing`` resolver (the package does not export its class)."""
_DEADLINE: ContextVar[float] = ContextVar("schema_deadline", default=float("inf"))

_ONE = (
    *("additionalProperties", "additionalItems", "contains", "not", "if", "then", "else"),
    *("propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema", "items"),
)
_MANY = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
_NAMED = (
    *("properties", "patternProperties", "$defs", "definitions"),
    *("dependentSchemas", "dependencies"),
)
_IN_PLACE = frozenset({"not", "if", "then", "else", "allOf", "anyOf", "oneOf"})
_IN_PLACE |= {"dependentSchemas", "dependencies"}
_REFS = ("$ref", "$dynamicRef", "$recursiveRef")


class SchemaTimeout(Exception):
    """Validation went past its deadline (a backtracking pattern or a huge schema)."""


def _refuse(uri: str) -> referencing.Resource[Any]:
    """A ``$ref`` names something outside the document: nothing is ever fetched."""
    raise referencing.exceptions.NoSuchResource(ref=uri)  # type: ignore[call-arg]


_REFUSING: referencing.Registry[Any] = referencing.Registry(retrieve=_refuse)  # type: ignore[call-arg]
REGISTRY = _REFUSING.with_resources(META_SCHEMAS.items())
"""The meta-schemas, and a refusal for every other URI (no network, no files)."""


def _tick() -> None:
    if time.monotonic() > _DEADLINE.get():
        raise SchemaTimeout


@lru_cache(maxsize=512)
def _compiled(pattern: str) -> regex.Pattern[str]:
    return regex.compile(pattern)


def _search(pattern: str, text: str) -> bool:
    remaining = _DEADLINE.get() - time.monotonic()
    if remaining <= 0:
        raise SchemaTimeout
    try:
        return _compiled(pattern).search(text, timeout=remaining, concurrent=True) is not None
    except TimeoutError:
        raise SchemaTimeout from None


def _pattern(validator: Validator, pattern: str, instance: Any, _schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Validator, patterns: dict[str, Any], instance: Any, _schema: Any
) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from validator.descend(  # type: ignore[attr-defined]
                    value, subschema, path=key, schema_path=pattern
                )


KeywordCheck = Callable[[Validator, Any, Any, Any], Iterator[Any]]


def _timed(check: KeywordCheck) -> KeywordCheck:
    def timed(validator: Validator, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
        _tick()
        yield from check(validator, value, instance, schema) or ()

    return timed


@lru_cache(maxsize=16)
def _safe_class(base: type[Validator]) -> type[Validator]:
    """``base`` with regex patterns on the timed engine and a deadline check per keyword."""
    checks: dict[str, KeywordCheck] = dict(base.VALIDATORS)
    if "pattern" in checks:
        checks["pattern"] = _pattern
    if "patternProperties" in checks:
        checks["patternProperties"] = _pattern_properties
    timed = {name: _timed(check) for name, check in checks.items()}
    return jsonschema.validators.extend(base, timed)  # type: ignore[no-any-return,no-untyped-call]


def _base_class(schema: Any) -> type[Validator]:
    return jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)


@lru_cache(maxsize=64)
def _validator(schema_json: str) -> Validator:
    schema = json.loads(schema_json)
    return _safe_class(_base_class(schema))(schema, registry=REGISTRY)


def _key(schema: Any) -> str:
    return json.dumps(schema, sort_keys=True)  # orjson refuses integers past 64 bits


@dataclass(frozen=True)
class SchemaError:
    """Why a document does not match: where (a JSON path below the root) and the message."""

    path: tuple[str | int, ...]
    message: str


def validation_error(
    schema: dict[str, Any], document: Any, seconds: float = SCHEMA_SECONDS
) -> SchemaError | None:
    """The best error of ``document`` against a checked ``schema`` (None when it matches).

    Raises:
        SchemaTimeout: Validation took longer than ``seconds``.
    """
    token = _DEADLINE.set(time.monotonic() + seconds)
    try:
        validator = _validator(_key(schema))
        error = jsonschema.exceptions.best_match(validator.iter_errors(document))
    except (RecursionError, referencing.exceptions.Unresolvable) as exc:
        if isinstance(exc, RecursionError):
            return SchemaError((), "the document nests too deep for this schema")
        return SchemaError((), f"the schema cannot be applied: {exc}")
    finally:
        _DEADLINE.reset(token)
    if error is None:
        return None
    return SchemaError(tuple(error.absolute_path), error.message)


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` cannot be used (None when it is fine): see the module docstring."""
    return _problem(_key(schema)) if isinstance(schema, dict) else _problem_of(schema)


@lru_cache(maxsize=256)
def _problem(schema_json: str) -> str | None:
    return _problem_of(json.loads(schema_json))


def _problem_of(schema: Any) -> str | None:
    if not isinstance(schema, dict):
        return None if isinstance(schema, bool) else "is not a JSON Schema object"
    base = _base_class(schema)
    try:
        base.check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = "/".join(str(part) for part in exc.absolute_path)
        return f"is not a valid JSON Schema{f' at {where}' if where else ''}: {exc.message}"
    return _Walk(schema).problem()


class _Walk:
    """One pass over a schema's subschemas: references, patterns, size and ``$ref`` loops."""

    def __init__(self, schema: dict[str, Any]) -> None:
        specification = referencing.jsonschema.specification_with(
            str(schema.get("$schema", "")), default=referencing.jsonschema.DRAFT202012
        )
        self.specification = specification
        resource = specification.create_resource(schema)
        registry = REGISTRY.with_resource(resource.id() or "", resource)
        self.root = registry.resolver(base_uri=resource.id() or "")
        self.schema = schema
        self.nodes = 0
        self.active: set[int] = set()
        self.done: set[int] = set()

    def problem(self) -> str | None:
        pending: list[tuple[Any, Resolver]] = [(self.schema, self.root)]
        try:
            while pending:
                schema, resolver = pending.pop()
                self._visit(schema, resolver, pending)
        except _Found as found:
            return str(found)
        except RecursionError:
            return "nests too deep"
        return None

    def _visit(
        self,
        schema: Any,
        resolver: Resolver,
        pending: list[tuple[Any, Resolver]],
    ) -> None:
        """Follow ``schema``'s in-place edges depth first; queue what reads into the document."""
        if not isinstance(schema, dict) or id(schema) in self.done:
            return
        if id(schema) in self.active:
            raise _Found(
                "has a $ref loop: a reference leads back to itself without reading into "
                "the document"
            )
        self.nodes += 1
        if self.nodes > MAX_SCHEMA_NODES:
            raise _Found(f"has more than {MAX_SCHEMA_NODES} subschemas")
        if "$id" in schema and schema is not self.schema:
            resolver = resolver.in_subresource(self.specification.create_resource(schema))
        self.active.add(id(schema))
        self._patterns(schema)
        for keyword in _REFS:
            reference = schema.get(keyword)
            if isinstance(reference, str):
                self._visit(self._lookup(reference, resolver), resolver, pending)
        for keyword, child in _children(schema):
            if keyword in _IN_PLACE:
                self._visit(child, resolver, pending)
            else:
                pending.append((child, resolver))
        self.active.discard(id(schema))
        self.done.add(id(schema))

    def _lookup(self, reference: str, resolver: Resolver) -> Any:
        try:
            return resolver.lookup(reference).contents
        except referencing.exceptions.Unresolvable as exc:
            raise _Found(
                f"has a $ref {reference!r} that does not resolve inside the schema "
                "(nothing is fetched: no URL and no file may be referenced)"
            ) from exc

    @staticmethod
    def _patterns(schema: dict[str, Any]) -> None:
        patterns = [schema["pattern"]] if isinstance(schema.get("pattern"), str) else []
        if isinstance(schema.get("patternProperties"), dict):
            patterns.extend(schema["patternProperties"])
        for pattern in patterns:
            try:
                _compiled(pattern)
            except regex.error as exc:
                raise _Found(f"has a pattern {pattern!r} that does not compile: {exc}") from None


class _Found(Exception):
    """The first problem the walk found."""


def _children(schema: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    for keyword in _ONE:
        if isinstance(schema.get(keyword), dict):
            yield keyword, schema[keyword]
    for keyword in _MANY:
        if isinstance(schema.get(keyword), list):
            for child in schema[keyword]:
                yield keyword, child
    for keyword in _NAMED:
        if isinstance(schema.get(keyword), dict):
            for child in schema[keyword].values():
                yield keyword, child
