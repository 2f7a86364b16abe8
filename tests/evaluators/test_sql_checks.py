"""promptfoo's ``is-sql`` (measured against promptfoo 0.123.1: tests/conformance/promptfoo/
is_sql.yaml runs both tools on these answers and more, 28 of 28 assertions agreeing)."""

from __future__ import annotations

from typing import Any

import pytest

from app.errors import EvaluatorConfigError
from app.evaluators.checks.sql_checks import check_is_sql, columns, tables
from app.evaluators.config import EvaluatorConfig

JOIN = "SELECT s.quantity, p.name FROM Shipments s JOIN Products p ON s.product_id = p.id"


def grader(value: Any = None) -> EvaluatorConfig:
    return EvaluatorConfig(name="s", type="is_sql", value=value)


@pytest.mark.parametrize(
    ("answer", "value", "held"),
    [
        ("SELECT SUM(quantity) FROM Shipments WHERE product = 'bananas'", None, True),
        ("Sure! Here is the query you asked for.", None, False),
        ("hello world", None, False),  # sqlglot reads a column alias; not a statement
        ("", None, False),
        ("SELECT FROM Products", None, False),
        ("SELECT * FROM `Products", None, False),
        ("SELECT price::int FROM Products", None, True),  # promptfoo's MySQL takes it too
        ("SELECT price::int FROM Products", {"databaseType": "PostgresQL"}, True),
        (JOIN, {"allowedTables": ["select::null::Products", "select::null::Shipments"]}, True),
        (JOIN, {"allowedTables": ["select::null::Products"]}, False),
        (JOIN, {"allowedColumns": ["select::null::quantity"]}, False),
        ("SELECT * FROM Products WHERE price > 2", {"allowedColumns": ["select::null::price"]},
         False),
        ("UPDATE Products SET price = 1 WHERE id = 2",
         {"allowedColumns": ["update::null::price", "select::null::id"]}, True),
        ("DELETE FROM Products WHERE id = 1", {"allowedTables": ["delete::null::products"]}, True),
    ],
)  # fmt: skip
def test_is_sql(answer: str, value: Any, held: bool) -> None:
    assert check_is_sql(grader(value), answer).held is held


def test_authorities_are_written_as_promptfoos_parser_writes_them() -> None:
    import sqlglot

    statement = sqlglot.parse(JOIN, read="mysql")
    assert tables(statement) == ["select::null::Shipments", "select::null::Products"]  # type: ignore[arg-type]
    assert columns(statement) == [  # type: ignore[arg-type]
        "select::Shipments::quantity", "select::Products::name",
        "select::Shipments::product_id", "select::Products::id",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "value",
    ["MySQL", {"databaseType": "Oracle9"}, {"allowedTables": "Products"},
     {"allowedColumns": ["select::null::("]}],
)  # fmt: skip
def test_a_bad_value_is_a_configuration_error_naming_it(value: Any) -> None:
    with pytest.raises(EvaluatorConfigError, match="is-sql"):
        check_is_sql(grader(value), "SELECT 1")
