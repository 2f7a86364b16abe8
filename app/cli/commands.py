"""What ``evalx run`` and ``evalx compare`` do, once their options are read."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from rich.console import Console
from rich.prompt import Confirm

from app.cli.client import ServiceClient
from app.cli.display import RunDisplay, progress_line
from app.cli.follow import Tally, follow_run
from app.cli.gate import Verdict, comparison_reason, regressed, run_verdict
from app.cli.outputs import Links, Outputs, write_comparison_outputs, write_run_outputs
from app.cli.problems import EXIT_GATE_FAILED, EXIT_INTERRUPTED, EXIT_PASSED, ClientError
from app.cli.suite import SuiteArgument, suite_fields
from app.cli.summary import print_comparison, print_run_summary


@dataclass(frozen=True)
class Connection:
    """Which service to talk to: a server (URL, key) or the embedded one."""

    server: str | None
    key: str | None
    embedded: bool
    viewer_url: str | None = None


@dataclass(frozen=True)
class BaseRun:
    """Where the base of a comparison comes from: a run id, or a tag (its newest run)."""

    run_id: str | None = None
    tag: str | None = None

    async def resolve(self, client: ServiceClient, head: Mapping[str, Any]) -> str | None:
        """The base's run id: the given one, or the tag's (see ``tagged``)."""
        if self.tag is None:
            return self.run_id
        return await self.tagged(client, self.tag, head)

    @staticmethod
    async def tagged(client: ServiceClient, tag: str, head: Mapping[str, Any]) -> str:
        """The newest completed run of the head's suite carrying ``tag``, the head left out."""
        found = await client.runs(tag=tag, name=head.get("name"), status="completed", limit=2)
        for run in found:
            if run["id"] != head["id"]:
                return str(run["id"])
        suite = f" of suite {head['name']!r}" if head.get("name") else ""
        raise ClientError(f"no completed run{suite} carries the tag {tag!r}")


@dataclass(frozen=True)
class RunOptions:
    """Everything ``evalx run`` was told."""

    suite: SuiteArgument
    request: Mapping[str, Any]
    env: Mapping[str, str]
    idempotency_key: str | None
    min_pass_rate: float | None
    base: BaseRun
    fail_on_regression: bool
    outputs: Outputs
    suite_name: str | None = None


@asynccontextmanager
async def connect(
    connection: Connection, embedded_root: Path | None
) -> AsyncIterator[tuple[ServiceClient, Links]]:
    """A client of the server, or of the service started here for the block's duration."""
    if connection.embedded:
        # Imported here: the service's modules take seconds to load, a client needs none.
        from app.cli.embedded import embedded_service

        async with embedded_service(embedded_root) as url:
            client = ServiceClient(url)
            try:
                yield client, Links(connection.viewer_url)
            finally:
                await client.aclose()
        return
    if not connection.server:
        raise ClientError("say where the service is: --server URL (or EVALX_SERVER), or --embedded")
    client = ServiceClient(connection.server, connection.key)
    try:
        yield client, Links(connection.viewer_url or client.base_url)
    finally:
        await client.aclose()


async def _follow(
    client: ServiceClient, run_id: str, tally: Tally, display: RunDisplay
) -> dict[str, Any] | int:
    """The ``run_completed`` data, or the number of the signal that interrupted the wait."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(follow_run(client, run_id, tally, display.update, display.dropped))
    received: list[int] = []

    def interrupt(signum: int) -> None:
        received.append(signum)
        task.cancel()

    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, interrupt, signum)
    try:
        return await task
    except asyncio.CancelledError:
        if not received:
            raise
        return received[0]
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)


async def _should_cancel(signum: int, embedded: bool, run_id: str, console: Console) -> bool:
    """SIGTERM, the embedded service and no terminal: cancel; else ask (the server holds it)."""
    if signum == signal.SIGTERM or embedded or not sys.stdin.isatty():
        return True
    question = f"Cancel run {run_id} on the server? (no: it keeps running there)"
    return await asyncio.to_thread(Confirm.ask, question, default=True, console=console)


async def run_suite(connection: Connection, options: RunOptions, out: Console, err: Console) -> int:
    """Submit the suite, follow it, print its summary, write the reports; the exit code."""
    root = options.suite.root if connection.embedded else None
    async with connect(connection, root) as (client, links):
        fields = await suite_fields(options.suite, embedded=connection.embedded, env=options.env)
        run = await client.submit({**options.request, **fields}, options.idempotency_key)
        run_id = run["id"]
        err.print(f"run {run_id}: {run['progress']['total']} cases", highlight=False)
        if links.run(run_id):
            err.print(f"viewer: {links.run(run_id)}", highlight=False)
        tally = Tally(total=int(run["progress"]["total"]))
        with RunDisplay(err, run_id) as display:
            outcome = await _follow(client, run_id, tally, display)
        interrupted = isinstance(outcome, int)
        if isinstance(outcome, int):
            if await _should_cancel(outcome, connection.embedded, run_id, err):
                await client.cancel(run_id)
                err.print(f"cancelled run {run_id} ({progress_line(tally)})", highlight=False)
            else:
                err.print(f"run {run_id} keeps running on {client.base_url}", highlight=False)
        run = await client.run(run_id)
        records = await client.records(run_id)
        if not interrupted and len(records) != len(tally.records):
            err.print(
                f"warning: the event stream gave {len(tally.records)} records, the server holds "
                f"{len(records)}; the reports use the server's",
                highlight=False,
            )
        err.print(
            f"events: {len(tally.records)} cases received over {tally.reconnects + 1} "
            f"connection{'s' if tally.reconnects else ''}",
            highlight=False,
        )
        base = await options.base.resolve(client, run)
        comparison = await client.compare(base, run_id) if base else None
        verdict = run_verdict(
            run, records, options.min_pass_rate,
            comparison if options.fail_on_regression else None,
        )  # fmt: skip
        print_run_summary(out, run, records)
        if comparison is not None:
            print_comparison(out, comparison)
            out.print(comparison_reason(comparison), highlight=False)
        await write_run_outputs(
            options.outputs, client, run, records,
            suite_name=options.suite_name or _suite_name(options.suite, records, run),
            passed_gate=verdict.passed and not interrupted, links=links, comparison=comparison,
        )  # fmt: skip
        if interrupted:
            return EXIT_INTERRUPTED
        _print_verdict(out, verdict)
        return verdict.exit_code


def _suite_name(suite: SuiteArgument, records: list[dict[str, Any]], run: dict[str, Any]) -> str:
    if run.get("name"):
        return str(run["name"])
    datasets = {str(r.get("dataset")) for r in records if r.get("dataset")}
    if len(datasets) == 1:
        return datasets.pop()
    return suite.path.stem if suite.path else PurePosixPath(suite.given).stem or str(run["id"])


def _print_verdict(out: Console, verdict: Verdict) -> None:
    mark = "[green]PASS[/green]" if verdict.passed else "[red]FAIL[/red]"
    out.print(f"{mark} {verdict.reason}")


async def compare_runs(
    connection: Connection,
    base_run: BaseRun,
    head: str,
    fail_on_regression: bool,
    outputs: Outputs,
    out: Console,
) -> int:
    """Compare ``head`` with ``base``; 1 when asked to fail on a significant regression."""
    async with connect(connection, None) as (client, links):
        base = await base_run.resolve(client, await client.run(head) if base_run.tag else {})
        assert base is not None
        comparison = await client.compare(base, head)
    print_comparison(out, comparison)
    worse = regressed(comparison)
    write_comparison_outputs(outputs, comparison, regressed=worse, links=links)
    verdict = Verdict(
        EXIT_GATE_FAILED if worse and fail_on_regression else EXIT_PASSED,
        comparison_reason(comparison),
    )
    _print_verdict(out, verdict)
    return verdict.exit_code
