"""``evalx``: run a suite against the service and gate CI on it; compare two runs.

Exit codes: 0 passed; 1 the run missed its bar (``--min-pass-rate``, else every case
passing) or regressed (``--fail-on regression``); 2 the run failed, was cancelled or
refused, or the service could not be reached; 130 interrupted (Ctrl-C, SIGTERM).
"""

from __future__ import annotations

import asyncio
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from app.cli.commands import BaseRun, Connection, RunOptions, compare_runs, run_suite
from app.cli.outputs import Outputs, read_run_id
from app.cli.problems import EXIT_INTERRUPTED, EXIT_RUN_FAILED, ClientError
from app.cli.suite import suite_argument

LOG_WIDTH = 120
app = typer.Typer(
    name="evalx",
    help="Run eval suites on the eval-execution service from CI, and gate builds on them.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
# Without a terminal (CI logs) Rich would wrap tables at 80 columns; logs are wider.
OUT = Console(width=None if sys.stdout.isatty() else LOG_WIDTH)
ERR = Console(stderr=True, width=None if sys.stderr.isatty() else LOG_WIDTH)


class FailOn(StrEnum):
    """What fails a build beyond the pass rate."""

    regression = "regression"
    none = "none"


Server = Annotated[
    str | None,
    typer.Option(envvar="EVALX_SERVER", help="Base URL of the service.", show_default=False),
]
Key = Annotated[
    str | None,
    typer.Option(
        envvar="EVALX_KEY", help="API key (sent as the bearer token).", show_default=False
    ),
]
Embedded = Annotated[
    bool, typer.Option(help="Run the service in this process on its embedded defaults.")
]
ViewerUrl = Annotated[
    str | None,
    typer.Option(
        envvar="EVALX_VIEWER_URL",
        help="Public base URL of the service for the reports' links (default: --server).",
        show_default=False,
    ),
]
MarkdownFile = Annotated[
    Path | None,
    typer.Option(dir_okay=False, help="Write a Markdown PR comment.", show_default=False),
]
BaseFrom = Annotated[
    str | None,
    typer.Option(
        help="The base run: tag:NAME (the newest completed run of the same suite carrying "
        "the tag NAME), or a file naming it (an earlier --json report, or a run id).",
        show_default=False,
    ),
]
TAG_PREFIX = "tag:"
FailOnOption = Annotated[
    FailOn, typer.Option(help="Exit 1 when the head is significantly worse than the base.")
]


def _base(base: str | None, base_from: str | None) -> BaseRun:
    if base_from is None:
        return BaseRun(run_id=base)
    if base is not None:
        raise ClientError("give --base or --base-from, not both")
    if base_from.startswith(TAG_PREFIX):
        tag = base_from.removeprefix(TAG_PREFIX)
        if not tag:
            raise ClientError(f"--base-from {base_from!r}: write tag:NAME")
        return BaseRun(tag=tag)
    path = Path(base_from)
    if not path.is_file():
        raise ClientError(f"--base-from {base_from!r}: no such file (a tag is written tag:NAME)")
    found = read_run_id(path)
    if not found:
        raise ClientError(f"{base_from} names no run")
    return BaseRun(run_id=found)


def _pairs(values: list[str], option: str) -> dict[str, str]:
    pairs = {}
    for value in values:
        name, equals, text = value.partition("=")
        if not equals or not name:
            raise ClientError(f"{option} {value!r}: write NAME=VALUE")
        pairs[name] = text
    return pairs


def _finish(work: Any) -> None:
    """Run the command's coroutine; exit with its code (2 and the message on a ClientError)."""
    try:
        code = asyncio.run(work)
    except ClientError as exc:
        ERR.print(f"[red]error:[/red] {exc.message}", highlight=False)
        code = exc.exit_code
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    raise typer.Exit(code)


@app.command()
def run(
    suite: Annotated[
        str,
        typer.Argument(
            help="A local suite file (sent with its files), or a path under the server's roots."
        ),
    ],
    server: Server = None,
    key: Key = None,
    embedded: Embedded = False,
    target: Annotated[
        list[str],
        typer.Option(
            help="Candidate target; repeat it to compare targets in one run (one arm each).",
            show_default=False,
        ),
    ] = [],  # noqa: B006
    judge_target: Annotated[
        str | None, typer.Option(help="Judge target.", show_default=False)
    ] = None,
    max_concurrency: Annotated[
        int | None, typer.Option(min=1, help="Cases at once.", show_default=False)
    ] = None,
    case: Annotated[list[str], typer.Option(help="Run only this case id (repeatable).")] = [],  # noqa: B006
    env: Annotated[
        list[str], typer.Option(help="NAME=VALUE for the suite's ${{ NAME }} (repeatable).")
    ] = [],  # noqa: B006
    cache: Annotated[bool, typer.Option(help="Reuse cached provider replies.")] = False,
    idempotency_key: Annotated[
        str | None,
        typer.Option(help="The same key and suite give back the same run.", show_default=False),
    ] = None,
    tag: Annotated[
        list[str],
        typer.Option(help="Tag the run (repeatable), e.g. the branch: main.", show_default=False),
    ] = [],  # noqa: B006
    min_pass_rate: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            max=1.0,
            help="Pass when at least this share of cases passed (default: all).",
            show_default=False,
        ),
    ] = None,
    base: Annotated[
        str | None,
        typer.Option(
            help="Compare with this run (regressions first in the reports).", show_default=False
        ),
    ] = None,
    base_from: BaseFrom = None,
    fail_on: FailOnOption = FailOn.none,
    junit: Annotated[
        Path | None,
        typer.Option(dir_okay=False, help="Write a JUnit XML report.", show_default=False),
    ] = None,
    markdown: MarkdownFile = None,
    json: Annotated[
        Path | None,
        typer.Option(
            "--json",
            dir_okay=False,
            help="Write the run and its records as JSON.",
            show_default=False,
        ),
    ] = None,
    html: Annotated[
        Path | None,
        typer.Option(
            dir_okay=False, help="Write the self-contained HTML report.", show_default=False
        ),
    ] = None,
    suite_name: Annotated[
        str | None, typer.Option(help="Name of the suite in the JUnit report.", show_default=False)
    ] = None,
    viewer_url: ViewerUrl = None,
) -> None:
    """Run a suite, show its progress, print its summary; exit 0 / 1 / 2 (see --help)."""
    request: dict[str, Any] = {"cache": cache}
    for name, value in (("judge_target", judge_target), ("max_concurrency", max_concurrency)):
        if value is not None:
            request[name] = value
    if len(target) == 1:
        request["target"] = target[0]
    elif target:
        request["targets"] = target
    if case:
        request["case_ids"] = case
    if tag:
        request["tags"] = tag

    async def work() -> int:
        variables = _pairs(env, "--env")
        options = RunOptions(
            suite=suite_argument(suite),
            request={**request, **({"env": variables} if variables else {})},
            env=variables,
            idempotency_key=idempotency_key,
            min_pass_rate=min_pass_rate,
            base=_base(base, base_from),
            fail_on_regression=fail_on == FailOn.regression,
            outputs=Outputs(json=json, junit=junit, markdown=markdown, html=html),
            suite_name=suite_name,
        )
        connection = Connection(server, key, embedded, viewer_url)
        return await run_suite(connection, options, OUT, ERR)

    _finish(work())


@app.command()
def compare(
    runs: Annotated[list[str], typer.Argument(help="BASE HEAD, or HEAD alone with --base-from.")],
    base_from: BaseFrom = None,
    server: Server = None,
    key: Key = None,
    embedded: Embedded = False,
    fail_on: FailOnOption = FailOn.none,
    markdown: MarkdownFile = None,
    json: Annotated[
        Path | None,
        typer.Option(
            "--json", dir_okay=False, help="Write the comparison as JSON.", show_default=False
        ),
    ] = None,
    viewer_url: ViewerUrl = None,
) -> None:
    """Compare HEAD with BASE case by case (the paired test); exit 1 on a regression if asked."""

    async def work() -> int:
        if base_from is not None and len(runs) == 1:
            base, head = _base(None, base_from), runs[0]
        elif base_from is None and len(runs) == 2:
            base, head = BaseRun(run_id=runs[0]), runs[1]
        else:
            raise ClientError("give BASE HEAD, or HEAD with --base-from FILE or tag:NAME")
        connection = Connection(server, key, embedded, viewer_url)
        outputs = Outputs(json=json, markdown=markdown)
        return await compare_runs(
            connection, base, head, fail_on == FailOn.regression, outputs, OUT
        )

    _finish(work())


def main() -> None:
    """The console script's entry point."""
    try:
        app()
    except KeyboardInterrupt:
        raise SystemExit(EXIT_INTERRUPTED) from None
    except ClientError as exc:  # pragma: no cover - raised inside commands, caught there
        ERR.print(f"error: {exc.message}", highlight=False)
        raise SystemExit(EXIT_RUN_FAILED) from None


if __name__ == "__main__":
    main()
