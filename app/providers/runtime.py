"""A target's runtime: its adapter behind per-role limits, retries and time limits.

``TargetRuntime.complete`` is the one way a call reaches a provider: the role's adaptive
concurrency limit, the retry policy, the attempt and call time limits, the judge output
budget, structured-output negotiation (``app.providers.structured_output.structured``) and
the call's log of tries (``app.providers.calls``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, Field

from app.providers.adapters.http import options_api, untaken_options
from app.providers.base import (
    CallObserver,
    CallRole,
    ModelOptions,
    NoObserver,
    Provider,
    ProviderKind,
    ProviderRequest,
    ProviderResponse,
)
from app.providers.calls import CallLog
from app.providers.errors import (
    ProviderError,
    ProviderRateLimited,
    ProviderTimeout,
    remove_secrets,
    remove_secrets_json,
)
from app.providers.limiter import Limiter, LimiterFactory, LimiterState, local_limiter
from app.providers.preview import ProviderPreview
from app.providers.retry import RetryPolicy, Sleep, call_with_retries
from app.providers.structured_output.structured import (
    Negotiation,
    StructuredOutputState,
    is_refusal,
)
from app.settings import Settings
from app.settings.targets import CliTarget, Pricing, StructuredForm, TargetConfig
from app.time_limits import time_limit

CLI_TIMEOUT_GRACE_SECONDS = 5.0
logger = logging.getLogger("app.providers")


class RetryLimits(BaseModel):
    """The limits of one call of a role, as ``GET /targets`` lists them."""

    max_attempts: int = Field(examples=[5])
    retry_budget_seconds: float = Field(examples=[120.0])
    attempt_timeout_seconds: float = Field(examples=[120.0])
    deadline_seconds: float = Field(examples=[600.0])


class TargetDescription(BaseModel):
    """A target as ``GET /targets`` lists it: no secrets, live limiter state per role."""

    name: str = Field(examples=["default"])
    provider: str = Field(examples=["mock"])
    kind: ProviderKind = Field(examples=["api"])
    model: str | None = Field(None, examples=["gpt-4o-mini"])
    base_url: str | None = Field(None, examples=["https://api.openai.com/v1"])
    judge_target: str | None = Field(None, examples=[None])
    max_concurrency: int = Field(examples=[8])
    limits: dict[CallRole, LimiterState]
    structured_output: StructuredOutputState | None = Field(
        None, description="How judge calls ask for JSON (API targets only)."
    )
    judge_max_output_tokens: int = Field(
        description="Output-token budget of judge calls.", examples=[1024]
    )
    retries: dict[CallRole, RetryLimits] = Field(
        description="Per role: attempts, retry budget and time limits of one call."
    )
    pricing: Pricing | None = Field(
        None, description="US dollars per million tokens, when the target sets prices."
    )


def _strip_credentials(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def retry_policy(
    settings: Settings, config: TargetConfig, role: CallRole = CallRole.CANDIDATE
) -> RetryPolicy:
    """The settings' policy for ``role`` with the target's own retry and time keys applied."""
    attempt_timeout = settings.provider_attempt_timeout_seconds
    if role is CallRole.JUDGE:
        attempt_timeout = config.judge_timeout_seconds or settings.judge_timeout_seconds
    deadline = settings.provider_deadline_seconds
    if isinstance(config, CliTarget):
        attempt_timeout = config.timeout_seconds + CLI_TIMEOUT_GRACE_SECONDS
        deadline = max(deadline, attempt_timeout)
    return RetryPolicy(
        base_seconds=_given(config.retry_initial_delay_ms, 1000, settings.retry_base_seconds),
        cap_seconds=_given(config.retry_max_delay_ms, 1000, settings.retry_cap_seconds),
        max_attempts=(
            config.max_retries + 1
            if config.max_retries is not None
            else settings.retry_max_attempts
        ),
        attempt_timeout_seconds=attempt_timeout,
        deadline_seconds=deadline,
        budget_seconds=_given(config.retry_budget_seconds, 1, settings.retry_budget_seconds),
    )


def _given(value: float | None, per_second: float, default: float) -> float:
    """A target's value converted to seconds, else the settings' default."""
    return value / per_second if value is not None else default


class TargetRuntime:
    """One configured target: its adapter behind per-role adaptive limits and retries.

    Judge calls get the target's judge output budget and time limit, and ask for structured
    output in the form its ``structured_output`` setting (or ``auto``'s negotiation) gives.
    """

    def __init__(
        self,
        config: TargetConfig,
        adapter: Provider,
        *,
        policies: Mapping[CallRole, RetryPolicy],
        judge_max_output_tokens: int,
        max_concurrency: int,
        sleep: Sleep = asyncio.sleep,
        observer: CallObserver | None = None,
        secrets: Sequence[str] = (),
        limiters: LimiterFactory = local_limiter,
    ) -> None:
        self.name = config.name
        # Longest first, so a secret holding another is replaced whole.
        self._secrets = tuple(sorted({*secrets, *config.secret_values()}, key=len, reverse=True))
        self.config = config
        self.adapter = adapter
        self.kind: ProviderKind = adapter.kind
        self.judge_target = config.judge_target
        self.system_prompt = config.system_prompt
        self.max_concurrency = max_concurrency
        self.policies = dict(policies)
        self.judge_max_output_tokens = judge_max_output_tokens
        self.limiters: dict[CallRole, Limiter] = {
            role: limiters(config.name, role.value, max_concurrency) for role in CallRole
        }
        setting = getattr(config, "structured_output", None)
        self.structured = Negotiation(setting, config.provider) if setting else None
        self._sleep = sleep
        self._observer: CallObserver = observer or NoObserver()
        base_url = config.endpoint_url()
        self.base_url = _strip_credentials(base_url) if base_url else None
        self._where = config.provider  # never the base URL: errors reach API callers

    def untaken_options(self, options: ModelOptions) -> list[str]:
        """The sampling options set in ``options`` that this target's API does not take."""
        return untaken_options(options_api(self.config), options)

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """Call the provider within the role's limit, retrying by policy, within the deadline.

        The reply (or the error) lists every request the call made.

        Raises:
            ProviderError: a subclass naming the target, where it points, and the tries made.
        """
        role = request.role.value
        started = time.perf_counter()
        outcome = "ok"
        log = CallLog()
        deadline = self.policies[request.role].deadline_seconds
        try:
            async with time_limit(deadline):
                reply = await self._negotiated(self._for_role(request), log)
                return log.succeeded(self._priced(self._without_secrets(reply)))
        except TimeoutError:
            outcome = ProviderTimeout.slug
            timeout = ProviderTimeout(
                f"no answer within the {deadline:g}s deadline", target=self.name
            )
            raise log.failed(timeout, self._where) from None
        except ProviderError as exc:
            outcome = exc.slug
            exc.detail = remove_secrets(exc.detail, self._secrets)
            if exc.upstream_message:
                exc.upstream_message = remove_secrets(exc.upstream_message, self._secrets)
            log.failed(exc, self._where)
            raise
        except asyncio.CancelledError:
            outcome = "cancelled"
            raise
        finally:
            seconds = time.perf_counter() - started
            self._observer.record_provider_call(self.name, role, outcome, seconds)

    def scrub(self, text: str) -> str:
        """``text`` with every secret of this target replaced."""
        return remove_secrets(text, self._secrets)

    def _priced(self, reply: ProviderResponse) -> ProviderResponse:
        """The reply with its cost from the target's ``pricing`` when it reports none."""
        pricing, usage = self.config.pricing, reply.usage
        if pricing is None or reply.cost_usd is not None:
            return reply
        if usage.input_tokens is None and usage.output_tokens is None:
            return reply  # nothing to price: the cost stays unknown
        cost = pricing.cost(usage.input_tokens or 0, usage.output_tokens or 0)
        return reply.model_copy(update={"cost_usd": cost})

    def _without_secrets(self, reply: ProviderResponse) -> ProviderResponse:
        """The reply with every configured secret removed: a provider may echo a key."""
        secrets = self._secrets
        if not secrets:
            return reply
        model = remove_secrets(reply.model, secrets) if reply.model else reply.model
        return reply.model_copy(
            update={
                "text": remove_secrets(reply.text, secrets),
                "raw": remove_secrets_json(reply.raw, secrets),
                "model": model,
            }
        )

    def _for_role(self, request: ProviderRequest) -> ProviderRequest:
        """A judge request with the judge output budget when it sets none."""
        if request.role is not CallRole.JUDGE or request.options.max_output_tokens is not None:
            return request
        options = request.options.model_copy(
            update={"max_output_tokens": self.judge_max_output_tokens}
        )
        return request.model_copy(update={"options": options})

    async def _negotiated(self, request: ProviderRequest, log: CallLog) -> ProviderResponse:
        """The call, in the structured-output form in force; ``auto`` may fall back once."""
        negotiation = self.structured
        if negotiation is None or request.options.json_schema is None:
            return await self._retried(request, log, None)
        form = await negotiation.form_for_call()
        try:
            try:
                return await self._retried(_in_form(request, form), log, negotiation)
            except ProviderError as exc:
                following = negotiation.refused(form, exc)
                if following is None:
                    raise
                logger.warning(
                    "target %s: structured output %s refused; using %s from now on",
                    self.name, form, following,
                )  # fmt: skip
                return await self._retried(_in_form(request, following), log, negotiation)
        finally:
            negotiation.answered()

    async def _retried(
        self, request: ProviderRequest, log: CallLog, negotiation: Negotiation | None
    ) -> ProviderResponse:
        """Tries by the role's retry policy; a refused structured form is never retried."""
        role = request.role.value
        form = request.options.structured_output

        def on_retry(error: BaseException | None) -> None:
            reason = error.slug if isinstance(error, ProviderError) else "error"
            self._observer.record_retry(self.name, role, reason)

        async def attempt() -> ProviderResponse:
            try:
                response = await log.attempt(lambda: self._attempt(request))
            except ProviderError as exc:
                if form is not None and is_refusal(form, exc):
                    exc.retryable = False
                elif negotiation is not None:
                    negotiation.answered()
                raise
            if negotiation is not None:
                negotiation.answered()
            return response

        return await call_with_retries(
            attempt,
            self.policies[request.role],
            sleep=self._sleep,
            target=self.name,
            on_retry=on_retry,
        )

    async def _attempt(self, request: ProviderRequest) -> ProviderResponse:
        limiter = self.limiters[request.role]
        timeout = self.policies[request.role].attempt_timeout_seconds
        async with limiter.slot():
            try:
                async with time_limit(timeout):
                    response = await self.adapter.complete(request)
            except TimeoutError:
                raise ProviderTimeout(
                    f"target {self.name!r}: no reply within {timeout:g}s (request closed)",
                    target=self.name,
                ) from None
            except ProviderRateLimited:
                limiter.record_rate_limited()
                self._observer.record_rate_limited(self.name, request.role.value)
                raise
            limiter.record_success()
            return response

    def preview(self, request: ProviderRequest) -> ProviderPreview:
        """The body the adapter would send for ``request`` now, and its rewrites."""
        request = self._for_role(request)
        if self.structured is not None and request.options.json_schema is not None:
            request = _in_form(request, self.structured.form)
        return self.adapter.preview(request)

    def describe(self) -> TargetDescription:
        """Name, provider, model and live limiter state; never a key."""
        config = self.config
        model = getattr(config, "model", None) or getattr(config, "deployment", None)
        return TargetDescription(
            name=self.name,
            provider=config.provider,
            kind=self.kind,
            model=model if isinstance(model, str) else None,
            base_url=self.base_url,
            judge_target=self.judge_target,
            max_concurrency=self.max_concurrency,
            limits={role: limiter.state() for role, limiter in self.limiters.items()},
            structured_output=self.structured.state() if self.structured else None,
            judge_max_output_tokens=self.judge_max_output_tokens,
            retries={
                role: RetryLimits(
                    max_attempts=policy.max_attempts,
                    retry_budget_seconds=policy.budget_seconds,
                    attempt_timeout_seconds=policy.attempt_timeout_seconds,
                    deadline_seconds=policy.deadline_seconds,
                )
                for role, policy in self.policies.items()
            },
            pricing=config.pricing,
        )

    async def aclose(self) -> None:
        """Close the adapter."""
        await self.adapter.aclose()


def _in_form(request: ProviderRequest, form: StructuredForm) -> ProviderRequest:
    options = request.options.model_copy(update={"structured_output": form})
    return request.model_copy(update={"options": options})
