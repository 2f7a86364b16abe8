"""Service settings: the one place that reads the environment (prefix ``EVAL_``).

``create_app`` is the edge: it reads the environment (``load_settings``) and the targets
file (``with_targets_file``) once; everything else receives a ``Settings``. Imports nothing
of the app but ``app.errors`` and its own ``targets`` and ``git`` modules.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, PrivateAttr, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from app.settings.git import parse_url
from app.settings.targets import TargetConfig, load_targets_file
from app.settings.webhooks import WebhookEndpoint

MIB = 1024 * 1024
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH", re.IGNORECASE)
MIN_ENV_SECRET_CHARS = 8
"""Shorter values of secret-named variables are not scrubbed (``GIT_TOKEN_COUNT=1``...)."""
_URL_PASSWORD = re.compile(r"//[^/:@]*:([^/@]+)@")


class Settings(BaseSettings):
    """Every setting of the service, read once by ``create_app`` and passed down.

    Each field is documented by its ``description``; the README settings table is checked
    against this class by a test.
    """

    model_config = SettingsConfigDict(env_prefix="EVAL_", extra="ignore", hide_input_in_errors=True)
    _skipped_targets: tuple[str, ...] = PrivateAttr(default=())

    max_body_bytes: int = Field(
        5 * MIB, ge=1024, description="Largest request body accepted, in bytes (413 above)."
    )
    data_dir: Path = Field(
        Path("data"), description="Folder for the SQLite database and other local state."
    )
    workspace_roots: Annotated[list[Path], NoDecode] = Field(
        default_factory=list,
        description="Folders from which suites may read referenced files (comma-separated).",
    )
    max_file_bytes: int = Field(
        1 * MIB, ge=1, description="Largest single referenced file, in bytes."
    )
    max_request_file_bytes: int = Field(
        20 * MIB, ge=1, description="Largest total of referenced files per request, in bytes."
    )

    targets_file: Path | None = Field(
        None,
        description=(
            "YAML targets file (AgentV format); without it (and without `EVAL_TARGETS`) the "
            "mock targets 'default', 'terse' and 'slow', and the mock embeddings target "
            "'embeddings'."
        ),
    )
    targets: list[TargetConfig] = Field(
        default_factory=list,
        description=(
            "Targets as a JSON list of targets-file entries (no `${{ VAR }}`); the targets "
            "file's are added after them."
        ),
    )
    cli_path: str | None = Field(
        None,
        description="PATH given to the programs of `cli` targets (default: the service's own).",
    )
    code_graders: bool = Field(
        False,
        description=(
            "Run code graders (`code_judge`, `code-grader`, composite code aggregators) and "
            "workspace hooks: programs named by suites read from a workspace root, never by "
            "suites sent in a request body; each runs in the bubblewrap sandbox "
            "(`EVAL_SANDBOX_*`). Off: such suites are refused."
        ),
    )
    hosted_tools: bool = Field(
        False,
        description=(
            "Let suites declare tools the provider runs itself (Anthropic's web search and "
            "fetch, the Responses API's web search and MCP, Gemini's Google Search and code "
            "execution): sent to targets of that API as written, on the operator's account; "
            "this service never fetches anything for them. Off: such suites are refused."
        ),
    )
    image_urls: bool = Field(
        False,
        description=(
            "Let suites send images by http(s) URL in `image_url` content parts: sent to API "
            "targets as written, and the provider fetches them (a model server on your "
            "network fetches from inside it); this service never fetches them. Off: such "
            "suites are refused. Images as `data:` URIs are always allowed."
        ),
    )
    git_mirrors: dict[str, Path] = Field(
        default_factory=dict,
        description=(
            "Repositories a workspace's `repos` may name, each mapped to a local copy to clone "
            "it from (a clone or a bare mirror, no network), as JSON "
            '(`{"https://github.com/org/repo.git": "/srv/git/repo.git"}`).'
        ),
    )
    git_remotes: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description=(
            "URL prefixes of repositories a workspace's `repos` may clone over the network "
            "(comma-separated, `https://github.com/my-org/`); empty: none."
        ),
    )
    code_grader_timeout_seconds: float = Field(
        30.0, gt=0, description="Time limit of one code grader program run, in seconds."
    )
    code_grader_max_output_bytes: int = Field(
        1 * MIB, ge=1024, description="Most bytes a code grader program may write to stdout."
    )
    cli_max_output_bytes: int = Field(
        16 * MIB,
        ge=1024,
        description=(
            "Most bytes a `cli` target's program may write to stdout (or to its output file); "
            "more fails the call."
        ),
    )
    sandbox_cpu_seconds: int = Field(
        60, ge=1, description="CPU time of each process of a sandboxed program, in seconds."
    )
    sandbox_memory_bytes: int = Field(
        1024 * MIB,
        ge=16 * MIB,
        description="Private writable memory (heap) of each process of a sandboxed program.",
    )
    sandbox_max_processes: int = Field(
        128, ge=8, description="Processes and threads the sandboxed programs' user may have."
    )
    sandbox_max_file_bytes: int = Field(
        64 * MIB, ge=1024, description="Largest file a sandboxed program may write, in bytes."
    )
    sandbox_max_open_files: int = Field(
        256, ge=16, description="Open files of each process of a sandboxed program."
    )
    sandbox_tmp_bytes: int = Field(
        64 * MIB, ge=MIB, description="Size of a sandboxed program's private /tmp, in bytes."
    )
    sandbox_uid: int = Field(
        65534,
        ge=1,
        description=(
            "User (and group) id sandboxed programs run as when the service runs as root "
            "(otherwise they run as the service's own user)."
        ),
    )
    sandbox_runtime: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description=(
            "Extra read-only paths sandboxed programs see (comma-separated, absolute), besides "
            "/usr, /bin, /lib* and a few files of /etc."
        ),
    )
    openai_models: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "The OpenAI Evals surface (`/v1`): model names mapped to targets, as JSON "
            '(`{"gpt-4.1": "local-llama"}`); a model not listed is the target of that name.'
        ),
    )
    allow_inline_targets: bool = Field(
        False, description="Accept target configurations sent inline in requests."
    )
    inline_target_allow_private: bool = Field(
        False,
        description=(
            "Let inline targets reach loopback and private addresses (link-local and cloud "
            "metadata addresses are always refused)."
        ),
    )
    retry_base_seconds: float = Field(
        1.0, ge=0, description="First backoff step of provider retries, in seconds."
    )
    retry_cap_seconds: float = Field(
        30.0, ge=0, description="Longest backoff between provider retries, in seconds."
    )
    retry_max_attempts: int = Field(
        5, ge=1, description="Most attempts per provider call, the first one included."
    )
    retry_budget_seconds: float = Field(
        120.0,
        ge=0,
        description=(
            "Time a provider call may go on retrying after its first failure, in seconds: no "
            "retry starts later (targets: `retry_budget_seconds`)."
        ),
    )
    provider_attempt_timeout_seconds: float = Field(
        120.0, gt=0, description="Time limit of one provider attempt, in seconds."
    )
    provider_max_reply_bytes: int = Field(
        16 * 1024 * 1024,
        ge=1024,
        description=(
            "Largest provider reply one call may read, in bytes after decompression; a "
            "larger reply fails the call (not retried)."
        ),
    )
    provider_deadline_seconds: float = Field(
        600.0, gt=0, description="Time limit of one provider call, retries included, in seconds."
    )
    judge_max_output_tokens: int = Field(
        1024,
        ge=1,
        description=(
            "Output-token budget of a judge call (targets: `judge_max_output_tokens`); a reply "
            "cut at it is a judge_error."
        ),
    )
    judge_timeout_seconds: float = Field(
        60.0,
        gt=0,
        description=(
            "Time limit of one judge attempt, in seconds (targets: `judge_timeout_seconds`); "
            "the request is closed when it runs out."
        ),
    )
    default_target_concurrency: int = Field(
        8, ge=1, description="Concurrent calls per target and role when a target sets none."
    )

    database_url: str | None = Field(
        None,
        description=(
            "SQLAlchemy URL of the runs database (postgresql+asyncpg://... or "
            "sqlite+aiosqlite:///...); default: SQLite at <data_dir>/eval.db."
        ),
    )
    max_cases_per_run: int = Field(
        10_000, ge=1, description="Most cases one durable run may hold (413 above)."
    )
    run_concurrency: int = Field(
        8, ge=1, description="Cases run at once per run when neither request nor target says."
    )
    max_active_runs: int = Field(
        4, ge=1, description="Runs executed at once by this process; others wait queued."
    )
    instance_id: str | None = Field(
        None,
        description=(
            "Name of this process in claims of cases and provider slots, and in metrics "
            "(default: the host name). Each process appends its id and a random token, so "
            "processes sharing a name never share a claim."
        ),
    )
    execute_cases: bool = Field(
        True,
        description=(
            "With PostgreSQL: whether this API process also runs cases of the queue (turn off "
            "when dedicated `eval-worker` processes do)."
        ),
    )
    worker_max_cases: int = Field(
        256,
        ge=20,
        description=(
            "With PostgreSQL: most cases one process holds at once (claimed, waiting for a "
            "slot or running)."
        ),
    )
    claim_timeout_seconds: float = Field(
        30.0,
        ge=1,
        description=(
            "With PostgreSQL: how long the cases and provider slots a process holds outlive "
            "its last heartbeat; after that, other workers take them."
        ),
    )
    sample_run: bool = Field(
        True,
        description=(
            "Create the sample run `run_sample` (two cases on the mock target `default`) at "
            "start-up when it is missing; the /docs examples of /runs/{run_id} use it. "
            "Skipped when `default` is not a mock target. With the three mock targets of a "
            "fresh server, also `run_sample_arms` (the same cases on `default`, `terse` and "
            "`slow`), which the /runs/{run_id}/compare example names."
        ),
    )
    runs_page_size: int = Field(
        50, ge=1, le=1000, description="Default page size of run and result listings."
    )
    evaluate_max_cases: int = Field(
        200, ge=1, description="Most cases POST /evaluate runs inline (413, pointing to /runs)."
    )
    judge_retries: int = Field(
        2, ge=0, description="Extra judge calls when a reply does not follow the output contract."
    )
    case_timeout_seconds: float = Field(
        3600.0, gt=0, description="Time limit of one case (candidate and judge calls), in seconds."
    )

    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        "INFO", description="Lowest level written to the JSON log on stderr."
    )
    api_keys: Annotated[list[SecretStr], NoDecode] = Field(
        default_factory=list,
        description=(
            "API keys callers must send as `Authorization: Bearer <key>` (comma-separated); "
            "no keys and no keys file: no authentication."
        ),
    )
    api_keys_file: Path | None = Field(
        None,
        description="File of accepted API keys as SHA-256 hex digests, one per line (# comments).",
    )
    metrics_require_key: bool = Field(
        False,
        description=(
            "Ask an API key for `/metrics` too (when keys are set). Off: Prometheus scrapes "
            "without one; the metrics count runs and requests of every key, not their content."
        ),
    )
    rate_limit_per_minute: int = Field(
        0,
        ge=0,
        description=(
            "Requests per minute per API key (per client address without keys), for every "
            "replica together on PostgreSQL; 0: no limit."
        ),
    )
    max_runs_in_flight_per_key: int = Field(
        0, ge=0, description="Runs queued or running per API key at once (429 above); 0: no limit."
    )
    webhooks: list[WebhookEndpoint] = Field(
        default_factory=list,
        description=(
            "Webhook endpoints run events are posted to, as JSON: `[{name, url, secret: "
            "whsec_..., events?}]` (Standard Webhooks signatures; default: every event)."
        ),
    )
    webhook_secrets_key: SecretStr | None = Field(
        None,
        min_length=32,
        description=(
            "Key that encrypts the signing secrets of webhook endpoints registered through "
            "the API (`POST /webhooks`), at least 32 characters (`openssl rand -base64 32`); "
            "unset: endpoints come from `EVAL_WEBHOOKS` only. Every process of a fleet needs "
            "the same key."
        ),
    )
    webhook_allow_private: bool = Field(
        False,
        description=(
            "Let webhook URLs reach loopback and private addresses (link-local and cloud "
            "metadata addresses are always refused)."
        ),
    )
    webhook_retry_base_seconds: float = Field(
        5.0, gt=0, description="First wait before a failed webhook delivery is retried, in seconds."
    )
    webhook_retry_cap_seconds: float = Field(
        3600.0, gt=0, description="Longest wait between webhook delivery attempts, in seconds."
    )
    webhook_max_attempts: int = Field(
        12, ge=1, description="Attempts of a webhook delivery before it is marked failed."
    )
    webhook_timeout_seconds: float = Field(
        10.0, gt=0, description="Time limit of one webhook delivery attempt, in seconds."
    )
    cors_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description=(
            "Origins allowed to call the API from a browser (comma-separated, `*` for any); "
            "empty: CORS off."
        ),
    )

    @property
    def skipped_targets(self) -> tuple[str, ...]:
        """Why each target of the targets file that is not served was skipped."""
        return self._skipped_targets

    def program_path(self) -> str:
        """The PATH of ``cli`` targets' programs: ``cli_path``, else this process's own."""
        return self.cli_path or os.environ.get("PATH", "/usr/bin:/bin")

    @field_validator("log_level", mode="before")
    @classmethod
    def _log_level_any_case(cls, value: object) -> object:
        """``info`` means ``INFO``: the level names of Python's logging, in any case."""
        return value.upper() if isinstance(value, str) else value

    def secret_values(self) -> tuple[str, ...]:
        """Every configured secret: scrubbed from whatever a program wrote.

        The targets' keys and values read from the environment, the API keys, the webhook
        secrets and key, the database password and the value of every environment variable
        whose name says it is secret.
        """
        found = [secret for target in self.targets for secret in target.secret_values()]
        found += [key.get_secret_value() for key in self.api_keys]
        found += [endpoint.secret.get_secret_value() for endpoint in self.webhooks]
        if self.webhook_secrets_key is not None:
            found.append(self.webhook_secrets_key.get_secret_value())
        if self.database_url:
            password = _URL_PASSWORD.search(self.database_url)
            if password:
                found.append(password.group(1))
        found += [
            value
            for name, value in os.environ.items()
            if _SECRET_NAME.search(name) and len(value) >= MIN_ENV_SECRET_CHARS
        ]
        return tuple(dict.fromkeys(found))

    @field_validator("api_keys", "cors_origins", "git_remotes", "sandbox_runtime", mode="before")
    @classmethod
    def _split_words(cls, value: Any) -> Any:
        """Accept a comma-separated string as well as a list."""
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("git_remotes")
    @classmethod
    def _check_remotes(cls, value: list[str]) -> list[str]:
        """Each prefix must be a repository URL this service takes."""
        for prefix in value:
            parse_url(prefix)
        return value

    @field_validator("sandbox_runtime")
    @classmethod
    def _check_runtime(cls, value: list[str]) -> list[str]:
        """Each extra runtime path must be absolute and normalised."""
        for entry in value:
            if not entry.startswith("/") or os.path.normpath(entry) != entry:
                raise ValueError("each sandbox runtime path must be absolute and normalised")
        return value

    @field_validator("git_mirrors")
    @classmethod
    def _check_mirrors(cls, value: dict[str, Path]) -> dict[str, Path]:
        """Each key must be a repository URL this service takes, each copy an absolute path."""
        for url, folder in value.items():
            parse_url(url)
            if not folder.is_absolute():
                raise ValueError(f"the local copy of {url!r} must be an absolute path")
        return value

    @field_validator("workspace_roots", mode="before")
    @classmethod
    def _split_paths(cls, value: Any) -> Any:
        """Accept a comma-separated string as well as a list."""
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value


def load_settings() -> Settings:
    """Read the settings from the environment (called only by ``create_app``)."""
    return Settings()


def with_targets_file(settings: Settings) -> Settings:
    """The settings with the targets file's targets added (called once, by ``create_app``).

    ``${{ VAR }}`` values in the file are read from the process environment.

    Raises:
        TargetsFileError: The targets file cannot be read or a target in it is not valid.
    """
    if settings.targets_file is None:
        return settings
    skipped: list[str] = []
    from_file = load_targets_file(settings.targets_file, dict(os.environ), skipped)
    updated = settings.model_copy(update={"targets": [*settings.targets, *from_file]})
    updated._skipped_targets = tuple(skipped)
    return updated
