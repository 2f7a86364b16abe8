"""promptfoo's ``is-sql``: the answer is SQL of a dialect, touching only allowed tables/columns.

The answer (trimmed) must parse, with sqlglot (a well-kept pure-Python SQL parser), as one or
more SQL statements of ``value.databaseType`` (default ``MySQL``); a bare expression
(``hello world`` reads as a column alias) or text sqlglot cannot place as a statement fails.
``value.allowedTables`` and ``value.allowedColumns`` list authorities as promptfoo's parser
writes them, ``<action>::<table or db>::<name>`` (``select::null::Products``), each read as a
pattern matched whole and ignoring case; every table (column) the SQL reads or writes must
match one:

- a table is ``insert``/``update``/``delete`` where the statement writes it, ``select``
  elsewhere; its middle part is its database, or ``null``;
- a column is ``select::<table>::<name>`` with the table its qualifier names (an alias
  resolved), or ``null`` unqualified; ``update::null::<name>`` where ``SET`` assigns it,
  ``insert::<table>::<name>`` where ``INSERT`` lists it; ``*`` is ``select::null::(.*)``;
  an allowed ``<action>::<table>::<name>`` also allows the unqualified form, as in promptfoo.

Measured against promptfoo 0.123.1 (its node-sql-parser): tests/conformance/promptfoo/is_sql.yaml.
"""

from __future__ import annotations

import re
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from app.errors import EvaluatorConfigError
from app.evaluators.checks.deterministic import CheckOutcome
from app.evaluators.config import EvaluatorConfig

DIALECTS = {
    "mysql": "mysql",
    "mariadb": "mysql",
    "postgresql": "postgres",
    "postgres": "postgres",
    "redshift": "redshift",
    "bigquery": "bigquery",
    "sqlite": "sqlite",
    "transactsql": "tsql",
    "snowflake": "snowflake",
    "hive": "hive",
    "athena": "athena",
    "trino": "trino",
    "db2": "",
    "flinksql": "",
}
"""promptfoo's ``databaseType`` names (node-sql-parser's) -> sqlglot dialects ('' generic)."""

_STATEMENTS = (
    exp.Query, exp.Insert, exp.Update, exp.Delete, exp.Create, exp.Drop, exp.Alter,
    exp.Merge, exp.Use, exp.Set, exp.Transaction, exp.Commit, exp.Rollback, exp.Describe,
)  # fmt: skip


def _value(value: Any) -> dict[str, Any]:
    if value is None or value == "":
        return {}
    if not isinstance(value, dict):
        raise EvaluatorConfigError(
            "is-sql's value is an object: {databaseType?, allowedTables?, allowedColumns?}"
        )
    return value


def _statements(answer: str, dialect: str) -> list[exp.Expression] | None:
    try:
        parsed = sqlglot.parse(answer, read=dialect or None)
    except (ParseError, TokenError):
        return None
    statements = [s for s in parsed if isinstance(s, exp.Expression)]
    if not statements or not all(isinstance(s, _STATEMENTS) for s in statements):
        return None
    if any(not select.expressions for s in statements for select in s.find_all(exp.Select)):
        return None  # `SELECT FROM t`: sqlglot reads an empty select list, SQL has none
    return statements


def _written(table: exp.Table) -> str:
    parent = table.parent
    for kind, action in ((exp.Insert, "insert"), (exp.Update, "update"), (exp.Delete, "delete")):
        if isinstance(parent, kind) and parent.this is table:
            return action
        if isinstance(parent, exp.Schema) and isinstance(parent.parent, kind):
            return action
    return "select"


def tables(statements: list[exp.Expression]) -> list[str]:
    """Each table the SQL touches as ``<action>::<db or null>::<name>``."""
    found: list[str] = []
    for statement in statements:
        for table in statement.find_all(exp.Table):
            if not table.name:
                continue
            entry = f"{_written(table)}::{table.db or 'null'}::{table.name}"
            if entry not in found:
                found.append(entry)
    return found


def _column(column: exp.Column, aliases: dict[str, str]) -> str | None:
    """``column``'s authority; None for a column an INSERT lists (counted with its table)."""
    parent = column.parent
    if isinstance(parent, exp.Schema):
        return None
    assigned = isinstance(parent, exp.EQ) and isinstance(parent.parent, exp.Update)
    if assigned and parent is not None and parent.this is column:
        return f"update::null::{column.name}"
    table = aliases.get(column.table, column.table) if column.table else "null"
    return f"select::{table}::{column.name}"


def _statement_columns(statement: exp.Expression) -> list[str]:
    aliases = {t.alias_or_name: t.name for t in statement.find_all(exp.Table) if t.name}
    found: list[str] = []
    schema = statement.this if isinstance(statement, exp.Insert) else None
    if isinstance(schema, exp.Schema) and isinstance(schema.this, exp.Table):
        found += [f"insert::{schema.this.name}::{c.name}" for c in schema.expressions]
    found += [entry for c in statement.find_all(exp.Column) if (entry := _column(c, aliases))]
    if any(isinstance(star.parent, exp.Select) for star in statement.find_all(exp.Star)):
        found.append("select::null::(.*)")
    if isinstance(statement, exp.Delete) and isinstance(statement.this, exp.Table):
        found.append(f"delete::{statement.this.name}::(.*)")
    return found


def columns(statements: list[exp.Expression]) -> list[str]:
    """Each column the SQL touches as ``<action>::<table or null>::<name>``, once."""
    return list(dict.fromkeys(entry for s in statements for entry in _statement_columns(s)))


def _denied(found: list[str], allowed: list[str]) -> str | None:
    for authority in found:
        if not any(re.fullmatch(pattern, authority, re.IGNORECASE) for pattern in allowed):
            return authority
    return None


def _allowed_columns(allowed: list[str]) -> list[str]:
    widened = list(allowed)
    for item in allowed:
        parts = item.split("::")
        if len(parts) == 3 and parts[1] != "null":
            alt = f"{parts[0]}::null::{parts[2]}"
            if alt not in widened:
                widened.append(alt)
    return widened


def _patterns(value: Any, key: str) -> list[str] | None:
    listed = value.get(key)
    if listed is None:
        return None
    if not isinstance(listed, list) or not all(isinstance(item, str) for item in listed):
        raise EvaluatorConfigError(
            f"is-sql's {key} is a list of '<action>::<table>::<name>' patterns"
        )
    for item in listed:
        try:
            re.compile(item)
        except re.error as exc:
            raise EvaluatorConfigError(
                f"is-sql's {key}: {item!r} is not a pattern ({exc})"
            ) from exc
    return listed


def check_is_sql(config: EvaluatorConfig, answer: str) -> CheckOutcome:
    """Whether ``answer`` is SQL of the dialect, on allowed tables and columns only."""
    options = _value(config.value)
    database = str(options.get("databaseType") or "MySQL")
    dialect = DIALECTS.get(database.lower())
    if dialect is None:
        raise EvaluatorConfigError(
            f"is-sql's databaseType {database!r} is not one of {sorted(DIALECTS)}"
        )
    allowed_tables = _patterns(options, "allowedTables")
    allowed_columns = _patterns(options, "allowedColumns")
    text = answer.strip()
    statements = _statements(text, dialect) if text and text.count("`") % 2 == 0 else None
    if statements is None:
        return CheckOutcome(
            False, f"SQL statement does not conform to the provided {database} database syntax"
        )
    if allowed_tables is not None:
        denied = _denied(tables(statements), allowed_tables)
        if denied is not None:
            return CheckOutcome(False, f"SQL references table {denied!r}, not in allowedTables")
    if allowed_columns is not None:
        denied = _denied(columns(statements), _allowed_columns(allowed_columns))
        if denied is not None:
            return CheckOutcome(False, f"SQL references column {denied!r}, not in allowedColumns")
    return CheckOutcome(True, f"valid {database} SQL")
