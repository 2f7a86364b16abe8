"""Live progress of a run: a Rich progress bar on a terminal, plain lines in CI logs."""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

from app.cli.follow import Tally

PLAIN_STEP = 0.1
"""Without a terminal, a line each time another tenth of the cases is done..."""
PLAIN_EVERY_SECONDS = 10.0
"""...or when this long has passed since the last line."""


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.1f}%"


def _eta(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m{rest:02d}s" if minutes else f"{rest}s"


def progress_line(tally: Tally) -> str:
    """``40/200 cases · pass rate 85.0% · errors 0 · ETA 12s``."""
    return (
        f"{tally.done}/{tally.total} cases · pass rate {_percent(tally.pass_rate)} · "
        f"errors {tally.errors} · ETA {_eta(tally.eta_seconds())}"
    )


class RunDisplay:
    """Shows a tally as it changes; a context manager around the run's stream."""

    def __init__(self, console: Console, run_id: str) -> None:
        """Draw on ``console`` (stderr): live when it is a terminal, else line by line."""
        self.console = console
        self.run_id = run_id
        self._live = console.is_terminal
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._shown_done = -1
        self._shown_at = 0.0

    def __enter__(self) -> RunDisplay:
        if self._live:
            self._progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[detail]}"),
                console=self.console,
                transient=False,
            )
            self._progress.start()
            self._task = self._progress.add_task(self.run_id, total=None, detail="")
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.stop()

    def update(self, tally: Tally) -> None:
        """Show the tally (throttled to a tenth of the run or ten seconds without a terminal)."""
        if self._progress is not None and self._task is not None:
            detail = (
                f"pass rate {_percent(tally.pass_rate)} · errors {tally.errors} · "
                f"ETA {_eta(tally.eta_seconds())}"
            )
            self._progress.update(
                self._task, completed=tally.done, total=tally.total, detail=detail
            )
            return
        step = max(1, int(tally.total * PLAIN_STEP))
        now = time.monotonic()
        finished = tally.done >= tally.total
        due = tally.done // step > self._shown_done // step or now - self._shown_at > (
            PLAIN_EVERY_SECONDS
        )
        if tally.done != self._shown_done and (due or finished):
            self.console.print(f"progress: {progress_line(tally)}", highlight=False)
            self._shown_done, self._shown_at = tally.done, now

    def dropped(self, last_event_id: str | None, problem: BaseException | None) -> None:
        """Say that the stream dropped and where it resumes."""
        after = f"after event {last_event_id}" if last_event_id else "from the start"
        reason = f" ({type(problem).__name__})" if problem else ""
        self.console.print(f"event stream dropped{reason}; resuming {after}", highlight=False)
