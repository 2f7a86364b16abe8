"""A run's cost budget (``budget_usd``): once its finished cases cost that much, none starts.

A case is checked as it starts, so the cases in flight when the budget is reached still
finish (the run may end above its budget by what they cost). A case not started gets a
record of status ``error`` saying so. Calls whose cost is unknown (no target report, no
``pricing``) count nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.evaluation.records import ResultRecord


@dataclass
class Spending:
    """What a run has spent as far as this process knows, against its budget (US dollars)."""

    limit: float
    spent: float = 0.0

    def exhausted(self) -> bool:
        """Whether no more case may start."""
        return self.spent >= self.limit

    def add(self, record: ResultRecord) -> None:
        """Count a finished case's cost."""
        self.spent += record.cost_usd.total() or 0.0

    def refusal(self) -> str:
        """The error of a case not started because the budget is spent."""
        return (
            f"not run: the run's budget_usd of {self.limit:g} is spent "
            f"({self.spent:.6g} USD so far)"
        )
