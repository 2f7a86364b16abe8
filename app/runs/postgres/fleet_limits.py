"""Concurrency limits shared by every worker on one PostgreSQL (a target's, a run's).

A limit is a row of ``fleet_limits`` (the limit in force, its ceiling, successes in a row)
and ``max_limit`` rows of ``fleet_slots``. A call holds one slot: it takes a free slot
numbered below the limit in force with one ``UPDATE ... FOR UPDATE SKIP LOCKED``, and
frees it afterwards with a NOTIFY that wakes the workers waiting for that limit. So ten
workers together never hold more slots than the limit, and a 429 seen by one halves the
limit for all. A slot names its holder (one per process) and expires unless that process
renews it: the slots of a worker killed mid-call come back after ``ttl_seconds``.

A call first takes a slot this process freed earlier, else it queues. While calls queue,
one task of the process asks the database for as many slots as there are calls waiting,
in one query per wake-up (a NOTIFY, or ``POLL_SECONDS``), and a slot freed here goes
straight to the call that has waited longest: a crowd of waiting cases, or a run's first
cases arriving all at once, costs one query, not one each. A freed slot stays with this
process for its next call (handed to a waiter at once, or kept idle for at most
``IDLE_SECONDS``), for at most ``HANDOFF_SECONDS`` after it was taken. A busy process thus
takes and frees a slot in the database about once per ``HANDOFF_SECONDS``, not twice per
call. Fairness comes from the waiters: a process whose calls find no free slot says so on
``WANTED_CHANNEL``. For ``WANTED_SECONDS`` after that, every other process gives back its
idle slots at once, holds no more than its share of the limit (the limit divided among the
processes that said they wait, and itself), and a slot its calls free goes back unless one
of its own waiters takes it: processes competing for a saturated limit split it. Only the
slots the division leaves over (all of them, when the limit is smaller than the processes)
change hands every ``SHARE_SECONDS``; a process within its part keeps its slots. Slots given
back while a query is under way go together in the next one, with one NOTIFY.

The listener's connection is connected again (with backoff) when it dies, and the waiters
poll meanwhile; the pool replaces dead connections itself. Until the listener is back, and
while renewing slots fails, the links ``fleet_listener`` and ``fleet_renewal`` are down.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg

from app.observability.links import Backoff, Links
from app.providers.limiter import (
    MIN_SUCCESSES_TO_GROW,
    Limiter,
    LimiterFactory,
    LimiterState,
    count_recent,
)

logger = logging.getLogger("app.runs.postgres.fleet_limits")
CHANNEL = "eval_fleet_slots"
WANTED_CHANNEL = "eval_fleet_wanted"
"""A waiter found no free slot: payload ``[holder, key]`` (JSON)."""
LOWERED_CHANNEL = "eval_fleet_lowered"
"""A 429 halved a limit: payload ``[key, limit in force]`` (JSON)."""
POLL_SECONDS = 0.25
"""Longest wait between two tries when no NOTIFY comes (a slot expired, a lost NOTIFY)."""
HANDOFF_SECONDS = 10.0
"""How long a slot may pass from call to call in one process before it is given back."""
IDLE_SECONDS = 1.0
"""How long a freed slot waits in its process for the next call before it is given back
(unless another process wants one first)."""
WANTED_SECONDS = 1.0
"""How long after another process's waiter spoke up freed slots go back instead of staying."""
ENSURED_SECONDS = 1.0
"""How long a limit this process created counts as created for calls that found it missing."""
SHARE_SECONDS = 2.0
"""How long a slot may pass between this process's waiters while another process wants one."""

ENSURE = """
INSERT INTO fleet_limits (key, current_limit, max_limit, successes) VALUES ($1, $2, $2, 0)
ON CONFLICT (key) DO UPDATE SET max_limit = EXCLUDED.max_limit,
    current_limit = LEAST(fleet_limits.current_limit, EXCLUDED.max_limit)
"""
ENSURE_SLOTS = """
INSERT INTO fleet_slots (key, slot) SELECT $1, g FROM generate_series(0, $2 - 1) AS g
ON CONFLICT DO NOTHING
"""
ACQUIRE = """
WITH free AS (
    SELECT s.slot FROM fleet_slots s JOIN fleet_limits l ON l.key = s.key
    WHERE s.key = $1 AND s.slot < l.current_limit
        AND (s.holder IS NULL OR s.expires_at < now())
    ORDER BY s.slot LIMIT $4 FOR UPDATE OF s SKIP LOCKED
), taken AS (
    UPDATE fleet_slots s SET holder = $2, expires_at = now() + make_interval(secs => $3)
    FROM free WHERE s.key = $1 AND s.slot = free.slot
    RETURNING s.slot
)
SELECT ARRAY(SELECT slot FROM taken) AS slots,
    EXISTS (SELECT 1 FROM fleet_limits WHERE key = $1) AS known
"""
RELEASE = """
WITH freed AS (
    UPDATE fleet_slots SET holder = NULL, expires_at = NULL
    WHERE key = $1 AND slot = ANY($2::int[]) AND holder = $3 RETURNING slot
)
SELECT pg_notify($4, $1) WHERE EXISTS (SELECT 1 FROM freed)
"""
SUCCEEDED = """
UPDATE fleet_limits SET
    current_limit = CASE WHEN successes + 1 >= GREATEST(current_limit, $2)
        AND current_limit < max_limit THEN current_limit + 1 ELSE current_limit END,
    successes = CASE WHEN successes + 1 >= GREATEST(current_limit, $2)
        AND current_limit < max_limit THEN 0 ELSE successes + 1 END
WHERE key = $1 RETURNING current_limit
"""
RATE_LIMITED = """
WITH lowered AS (
    UPDATE fleet_limits SET current_limit = GREATEST(1, current_limit / 2), successes = 0,
        rate_limited_at = now()
    WHERE key = $1 RETURNING current_limit
)
SELECT current_limit, pg_notify($2, json_build_array($1::text, current_limit)::text) FROM lowered
"""
CONNECT_TIMEOUT_SECONDS = 5.0
CLOSE_SECONDS = 1.0
"""How long closing waits for the connections' goodbyes, and for queries under way while the
database is away."""
GIVE_BACK_SECONDS = 10.0
"""How long closing waits for the slots it gives back while the database answers."""
LISTENER_LINK = "fleet_listener"
RENEWAL_LINK = "fleet_renewal"
RENEW = "UPDATE fleet_slots SET expires_at = now() + make_interval(secs => $2) WHERE holder = $1"
DROP = "DELETE FROM fleet_limits WHERE key = $1"


class FleetLimits:
    """This process's handle on the fleet-wide limits: a small pool, a listener, renewals."""

    def __init__(
        self, dsn: str, holder: str, *, ttl_seconds: float = 30.0, links: Links | None = None
    ) -> None:
        self.holder = holder
        self.ttl_seconds = ttl_seconds
        self._dsn = dsn
        self._links = links or Links()
        self._pool: Any = None
        self._listener: Any = None
        self._relistener: asyncio.Task[None] | None = None
        self._renewer: asyncio.Task[None] | None = None
        self._closing = False
        self._limiters: dict[str, FleetLimiter] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self._ensuring: dict[str, asyncio.Future[None]] = {}

    async def start(self) -> None:
        """Connect, listen for freed slots and start renewing this process's slots."""
        self._pool = await asyncpg.create_pool(
            self._dsn, min_size=1, max_size=4, reset=_keep_session, timeout=CONNECT_TIMEOUT_SECONDS
        )
        await self._listen()
        self._links.up(RENEWAL_LINK)
        self._renewer = asyncio.create_task(self._renew(), name="fleet-slot-renewal")

    async def _listen(self) -> None:
        """Open the listener's connection and listen on the three channels."""
        listener = await asyncpg.connect(self._dsn, timeout=CONNECT_TIMEOUT_SECONDS)
        try:
            await listener.add_listener(CHANNEL, self._notified)
            await listener.add_listener(WANTED_CHANNEL, self._wanted)
            await listener.add_listener(LOWERED_CHANNEL, self._lowered)
        except BaseException:
            listener.terminate()
            raise
        listener.add_termination_listener(self._listener_lost)
        self._listener = listener
        self._links.up(LISTENER_LINK)

    def _listener_lost(self, _connection: Any) -> None:
        if self._closing:
            return
        self._links.down(LISTENER_LINK, "connection lost")
        logger.warning("the fleet limits' listener was disconnected: reconnecting")
        if self._relistener is None or self._relistener.done():
            self._relistener = asyncio.create_task(self._relisten(), name="fleet-relisten")

    async def _relisten(self) -> None:
        """Connect the listener again, with backoff; then wake every waiter (NOTIFYs lost)."""
        backoff = Backoff()
        while not self._closing:
            await asyncio.sleep(backoff.delay())
            try:
                await self._listen()
            except Exception as exc:  # whatever the driver raises, try again later
                self._links.down(LISTENER_LINK, exc)
                continue
            logger.info("the fleet limits' listener is back")
            for limiter in list(self._limiters.values()):
                limiter.wake()
            return

    @property
    def closing(self) -> bool:
        """Whether this process is closing its fleet limits."""
        return self._closing

    async def aclose(self) -> None:
        """Stop renewing and close the connections (slots still held expire)."""
        self._closing = True
        for task in (self._renewer, self._relistener):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        for limiter in list(self._limiters.values()):
            await limiter.close()
        if self._background:  # queries under way (slots given back) end, or are given up
            reachable = all(state.up for state in self._links.states().values())
            wait = GIVE_BACK_SECONDS if reachable else CLOSE_SECONDS
            _, late = await asyncio.wait(set(self._background), timeout=wait)
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)
        if self._listener is not None:
            await _close(self._listener.close(timeout=CLOSE_SECONDS), self._listener)
        if self._pool is not None:
            await _close(self._pool.close(), self._pool)

    def limiter(self, key: str, max_limit: int) -> FleetLimiter:
        """The limiter of ``key`` (created on first use, with ``max_limit`` slots)."""
        limiter = self._limiters.get(key)
        if limiter is None:
            limiter = self._limiters[key] = FleetLimiter(self, key, max_limit)
        return limiter

    def target_limiters(self) -> LimiterFactory:
        """A ``LimiterFactory`` for targets' roles, shared with the fleet."""

        def build(target: str, role: str, max_limit: int) -> Limiter:
            return self.limiter(f"target:{target}:{role}", max_limit)

        return build

    async def drop(self, key: str) -> None:
        """Forget a limit that is no longer needed (a finished run's)."""
        self._limiters.pop(key, None)
        self._ensuring.pop(key, None)
        await self._pool.execute(DROP, key)

    def _notified(self, _connection: Any, _pid: int, _channel: str, key: str) -> None:
        limiter = self._limiters.get(key)
        if limiter is not None:
            limiter.wake()

    def _wanted(self, _connection: Any, _pid: int, _channel: str, payload: str) -> None:
        holder, key = _pair(payload)
        limiter = self._limiters.get(str(key)) if holder != self.holder else None
        if limiter is not None:
            limiter.wanted_elsewhere(str(holder))

    def _lowered(self, _connection: Any, _pid: int, _channel: str, payload: str) -> None:
        key, limit = _pair(payload)
        limiter = self._limiters.get(str(key))
        if limiter is not None and isinstance(limit, int):
            limiter.lowered(limit)

    async def announce_wanted(self, key: str) -> None:
        """Tell the other processes that a waiter here found no free slot of ``key``."""
        payload = json.dumps([self.holder, key])
        await self._pool.execute("SELECT pg_notify($1, $2)", WANTED_CHANNEL, payload)

    def spawn(self, coroutine: Any) -> asyncio.Task[Any]:
        """Run a query in the background (slots freed, a count, a want), keeping a reference."""
        task = asyncio.create_task(coroutine)
        self._background.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.warning("a fleet limit query failed", exc_info=task.exception())

    async def ensure(self, key: str, max_limit: int) -> None:
        """Create the limit's rows (or adjust its ceiling to ``max_limit``)."""
        async with self._pool.acquire() as connection, connection.transaction():
            await connection.execute(ENSURE, key, max_limit)
            await connection.execute(ENSURE_SLOTS, key, max_limit)

    async def try_acquire(self, key: str, max_limit: int, count: int = 1) -> list[int]:
        """Take up to ``count`` free slots of ``key``; their numbers (none free: empty).

        A limit not stored yet (or dropped since: a run retried after it finished) is
        created first, once however many calls find it missing at the same time (a run's
        first cases all do).
        """
        args = (key, self.holder, self.ttl_seconds, count)
        row = await self._pool.fetchrow(ACQUIRE, *args)
        if not row["known"]:
            await self._ensure_once(key, max_limit)
            row = await self._pool.fetchrow(ACQUIRE, *args)
        return [int(slot) for slot in row["slots"]]

    async def _ensure_once(self, key: str, max_limit: int) -> None:
        ensuring = self._ensuring.get(key)
        if ensuring is None:
            ensuring = self._ensuring[key] = asyncio.ensure_future(self.ensure(key, max_limit))
            ensuring.add_done_callback(lambda done: self._ensured(key, done))
        await asyncio.shield(ensuring)

    def _ensured(self, key: str, done: asyncio.Future[None]) -> None:
        # Kept a moment once created: a query sent before the creation committed can still
        # answer "not known", and must find it done rather than create the limit again. A
        # creation that failed is forgotten at once, so that the next call tries again.
        if done.cancelled() or done.exception() is not None:
            self._forget_ensured(key, done)
        else:
            loop = asyncio.get_running_loop()
            loop.call_later(ENSURED_SECONDS, self._forget_ensured, key, done)

    def _forget_ensured(self, key: str, done: asyncio.Future[None]) -> None:
        if self._ensuring.get(key) is done:
            del self._ensuring[key]

    async def release(self, key: str, slots: list[int]) -> None:
        """Free slots this process holds and wake the workers waiting for one (one NOTIFY)."""
        await self._pool.execute(RELEASE, key, slots, self.holder, CHANNEL)

    async def succeeded(self, key: str) -> int:
        """Count a success; returns the limit in force after it."""
        return int(await self._pool.fetchval(SUCCEEDED, key, MIN_SUCCESSES_TO_GROW))

    async def rate_limited(self, key: str) -> int:
        """Halve the limit in force and tell every process; returns it."""
        return int(await self._pool.fetchval(RATE_LIMITED, key, LOWERED_CHANNEL))

    async def _renew(self) -> None:
        """Renew this process's slots every third of their time to live.

        After a failure it tries again with backoff; the link ``fleet_renewal`` is down
        until one succeeds.
        """
        interval = self.ttl_seconds / 3
        backoff = Backoff(ceiling=interval)
        delay = interval
        while True:
            await asyncio.sleep(delay)
            try:
                await self._pool.execute(RENEW, self.holder, self.ttl_seconds)
            except Exception as exc:
                logger.warning("renewing fleet slots failed", exc_info=True)
                self._links.down(RENEWAL_LINK, exc)
                delay = backoff.delay()
            else:
                self._links.up(RENEWAL_LINK)
                backoff.reset()
                delay = interval


async def _close(closing: Any, resource: Any) -> None:
    """Close gracefully for a moment, else at once (the database may be gone)."""
    try:
        async with asyncio.timeout(CLOSE_SECONDS):
            await closing
    except Exception:
        resource.terminate()


def _pair(payload: str) -> tuple[Any, Any]:
    """The two values of a NOTIFY payload sent as a JSON array (``None``s if it is not one)."""
    try:
        first, second = json.loads(payload)
    except (ValueError, TypeError):
        return None, None
    return first, second


async def _keep_session(_connection: Any) -> None:
    """A pooled connection goes back as it is (asyncpg still ends an open transaction).

    asyncpg's default reset sends a query of its own on every release (unlisten, unlock,
    reset settings), which doubled the round trips of every slot taken and freed; these
    connections never listen, lock or change a setting (the listener has its own).
    """


class FleetLimiter:
    """One fleet-wide limit as a target's runtime (or a run's executor) uses it."""

    def __init__(self, fleet: FleetLimits, key: str, max_limit: int) -> None:
        self.key = key
        self.max_limit = max_limit
        self.limit = max_limit
        self.in_flight = 0
        self.waiting = 0
        self._fleet = fleet
        self._waiters: deque[asyncio.Future[tuple[int, float]]] = deque()
        """Calls of this process waiting for a slot, first come first served."""
        self._asker: asyncio.Task[None] | None = None
        self._woken = asyncio.Event()
        self._spare: deque[tuple[int, float, float]] = deque()
        """Slots this process holds and no call uses: (number, taken at, freed at)."""
        self._sweep: asyncio.TimerHandle | None = None
        self._wanted_until = 0.0
        self._wanted_by: dict[str, float] = {}
        """Other processes whose calls wait for this limit, and until when that counts."""
        self._rate_limited_at: deque[float] = deque()
        self._returning: list[int] = []
        """Slots to give back with the next query (those freed while one is under way)."""
        self._returned: asyncio.Future[None] | None = None
        """Settled when the query giving back ``_returning`` has committed."""
        self._returner: asyncio.Task[None] | None = None

    def wake(self) -> None:
        """A slot was freed somewhere: the waiters ask the database again."""
        self._woken.set()

    def lowered(self, limit: int) -> None:
        """A 429 (seen anywhere) lowered the limit: kept slots at or above it go back."""
        self.limit = limit
        kept = [spare for spare in self._spare if spare[0] < self.limit]
        for slot, _, _ in self._spare:
            if slot >= self.limit:
                self._give_back(slot)
        self._spare = deque(kept)

    def wanted_elsewhere(self, holder: str) -> None:
        """Another process waits for a slot: give back the idle ones, and freed ones a while."""
        until = time.monotonic() + WANTED_SECONDS
        self._wanted_by[holder] = self._wanted_until = until
        self.give_back_spares()

    def _room(self, now: float) -> int | None:
        """How many more slots this process may hold while others wait (``None``: nobody does).

        Its fair share is the limit divided among it and the processes that said they wait
        within ``WANTED_SECONDS``: a process that took every slot at a run's start gives back
        what it holds beyond that share as its calls end, instead of after ``SHARE_SECONDS``.
        """
        others = self._waiting_elsewhere(now)
        if others is None:
            return None
        share = -(-self.limit // (others + 1))
        return share - self.in_flight - len(self._spare)

    def _waiting_elsewhere(self, now: float) -> int | None:
        """How many other processes said they wait within ``WANTED_SECONDS`` (None: none)."""
        if now >= self._wanted_until:
            return None
        self._wanted_by = {
            holder: until for holder, until in self._wanted_by.items() if until > now
        }
        return len(self._wanted_by)

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one fleet-wide slot for the duration of the block."""
        slot, taken_at = await self._acquire()
        self.in_flight += 1
        try:
            yield
        finally:
            self.in_flight -= 1
            await self._release(slot, taken_at)

    async def _release(self, slot: int, taken_at: float) -> None:
        now = time.monotonic()
        keep = self.in_flight < self.limit and self._may_keep(slot, taken_at, now)
        room = self._room(now)
        if keep and room is not None and room <= 0:
            keep = False  # more than its share while other processes wait: back to the fleet
        if keep and self._hand(slot, taken_at):
            return
        if keep and now >= self._wanted_until:
            self._spare.append((slot, taken_at, now))  # for this process's next call
            self._sweep_later()
            return
        await asyncio.shield(self._give_back(slot))

    async def _acquire(self) -> tuple[int, float]:
        if not self.waiting:  # nobody queued here: a kept slot may serve at once
            spare = self._take_spare()
            if spare is not None:
                return spare
        waiter: asyncio.Future[tuple[int, float]] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        self.waiting += 1
        if self._asker is None:
            self._asker = asyncio.create_task(self._ask(), name=f"fleet-slots {self.key}")
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():  # handed a slot as it was cancelled
                self._pass_on(*waiter.result())
            raise
        finally:
            self.waiting -= 1

    def _hand(self, slot: int, taken_at: float) -> bool:
        """Give a slot to the call that has waited longest here; ``False`` if none waits."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result((slot, taken_at))
                return True
        return False

    def _pass_on(self, slot: int, taken_at: float) -> None:
        """A slot no call here took after all: to the next waiter, else kept, else back."""
        if self._hand(slot, taken_at):
            return
        self._spare.append((slot, taken_at, time.monotonic()))
        self._sweep_later()

    def _give_back(self, slot: int) -> asyncio.Future[None]:
        """Give a slot back to the fleet; settled once the query that frees it commits.

        Slots given back while a query is under way go together in the next one, with one
        NOTIFY: a process leaving its share of a busy run frees its slots in a few queries
        instead of one each, and the waiting processes ask again once per query.
        """
        self._returning.append(slot)
        if self._returned is None:
            self._returned = asyncio.get_running_loop().create_future()
        if self._returner is None:
            self._returner = self._fleet.spawn(self._return_slots())
        return self._returned

    async def _return_slots(self) -> None:
        """Give back the slots queued for it, query after query, until none is left.

        Slots that could not be given back (the database away) are tried again with
        backoff until this process closes: the renewal would otherwise keep them held by
        this process for good, and the limit would shrink by as many.
        """
        backoff = Backoff()
        try:
            while self._returning and self._returned is not None:
                slots, returned = self._returning, self._returned
                self._returning, self._returned = [], None
                try:
                    await self._fleet.release(self.key, slots)
                except Exception as exc:
                    logger.warning("giving back slots of %s failed", self.key, exc_info=exc)
                    returned.set_exception(exc)
                    returned.exception()  # marked retrieved: a spawned give-back awaits none
                    if self._fleet.closing:
                        return  # they expire once this process no longer renews them
                    self._returning[:0] = slots
                    if self._returned is None:
                        self._returned = asyncio.get_running_loop().create_future()
                    await asyncio.sleep(backoff.delay())
                else:
                    returned.set_result(None)
                    backoff.reset()
        finally:
            self._returner = None

    async def _ask(self) -> None:
        """While calls here wait, ask the database for as many slots as they are, in one query.

        A slot freed here meanwhile goes straight to a waiter (``_release``), so a crowd of
        waiting calls costs one query per wake-up, and the calls that find no kept slot at
        the same moment (a run's first cases) share one query instead of one each.
        """
        try:
            while wanted := self._unserved():
                self._woken.clear()
                room = self._room(time.monotonic())
                count = wanted if room is None else min(wanted, room)
                slots = await self._try(count) if count > 0 else []
                now = time.monotonic()
                for slot in slots:
                    self._pass_on(slot, now)
                if not slots and self._unserved():
                    self._fleet.spawn(self._fleet.announce_wanted(self.key))
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(POLL_SECONDS):
                            await self._woken.wait()
        except Exception as exc:  # the database failed: the waiting calls fail with it
            for waiter in self._drain():
                waiter.set_exception(exc)
        except asyncio.CancelledError:  # this process closes
            for waiter in self._drain():
                waiter.cancel()
            raise
        finally:
            self._asker = None

    def _unserved(self) -> int:
        """How many calls here wait and have no slot handed to them yet."""
        while self._waiters and self._waiters[0].done():
            self._waiters.popleft()
        return sum(not waiter.done() for waiter in self._waiters)

    def _drain(self) -> list[asyncio.Future[tuple[int, float]]]:
        """The waiters not served yet, taken off the queue."""
        waiters = [waiter for waiter in self._waiters if not waiter.done()]
        self._waiters.clear()
        return waiters

    async def close(self) -> None:
        """Stop asking for slots (calls still waiting are cancelled); kept slots go back."""
        if self._asker is not None:
            asker = self._asker
            asker.cancel()
            await asyncio.gather(asker, return_exceptions=True)
        self.give_back_spares()

    def _take_spare(self) -> tuple[int, float] | None:
        """The slot freed last that may still be used here; stale ones go back."""
        now = time.monotonic()
        while self._spare:
            slot, taken_at, _ = self._spare.pop()
            if self._may_keep(slot, taken_at, now):
                return slot, taken_at
            self._give_back(slot)
        return None

    def _may_keep(self, slot: int, taken_at: float, now: float) -> bool:
        """Whether a slot taken at ``taken_at`` may serve another call of this process.

        Slots go back after ``HANDOFF_SECONDS``. While other processes wait, a slot beyond
        this process's certain part of the limit (the limit divided among the processes that
        wait, rounded down) goes back after ``SHARE_SECONDS``: the processes take turns with
        the slots the division leaves over (all of them, when the limit is smaller than the
        processes), and a process within its part keeps its slots instead of each going round
        the database every ``SHARE_SECONDS``.
        """
        if slot >= self.limit:  # the limit was lowered (a 429) since it was taken
            return False
        held_for = now - taken_at
        if held_for >= HANDOFF_SECONDS:
            return False
        others = self._waiting_elsewhere(now)
        if others is None or held_for < SHARE_SECONDS:
            return True
        holds = self.in_flight + len(self._spare) + 1  # with this slot, which neither counts
        return holds <= self.limit // (others + 1)

    def _sweep_later(self, delay: float = IDLE_SECONDS) -> None:
        if self._sweep is None:
            loop = asyncio.get_running_loop()
            self._sweep = loop.call_later(delay, self._give_back_idle)

    def _give_back_idle(self) -> None:
        """Slots freed ``IDLE_SECONDS`` ago or more, and still unused, go back to the fleet."""
        self._sweep = None
        now = time.monotonic()
        idle_since = now - IDLE_SECONDS
        kept: deque[tuple[int, float, float]] = deque()
        for slot, taken_at, freed_at in self._spare:
            if freed_at <= idle_since:
                self._give_back(slot)
            else:
                kept.append((slot, taken_at, freed_at))
        self._spare = kept
        if kept:  # again when the first of those kept has been idle long enough
            self._sweep_later(min(freed_at for _, _, freed_at in kept) - idle_since)

    def give_back_spares(self) -> None:
        """Every slot held here and unused goes back to the fleet now (closing, or wanted)."""
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None
        while self._spare:
            slot, _, _ = self._spare.popleft()
            self._give_back(slot)

    async def _try(self, count: int) -> list[int]:
        """One try, carried to its end even if the caller is cancelled (then freed)."""
        attempt = asyncio.ensure_future(self._fleet.try_acquire(self.key, self.max_limit, count))
        try:
            return await asyncio.shield(attempt)
        except asyncio.CancelledError:
            attempt.add_done_callback(self._free_abandoned)
            raise

    def _free_abandoned(self, attempt: asyncio.Future[list[int]]) -> None:
        if not attempt.cancelled() and attempt.exception() is None:
            for slot in attempt.result():
                self._give_back(slot)

    def record_success(self) -> None:
        """A call succeeded: after a lowered limit, count it towards raising it again."""
        if self.limit < self.max_limit:
            self._fleet.spawn(self._count_success())

    async def _count_success(self) -> None:
        self.limit = await self._fleet.succeeded(self.key)

    def record_rate_limited(self) -> None:
        """The provider answered 429: halve the fleet's limit."""
        self._rate_limited_at.append(time.monotonic())
        self.limit = max(1, self.limit // 2)
        self._fleet.spawn(self._halve())

    async def _halve(self) -> None:
        self.limit = await self._fleet.rate_limited(self.key)

    def state(self) -> LimiterState:
        """The limit last seen, and this process's calls in flight and waiting."""
        return LimiterState(
            limit=self.limit,
            max_limit=self.max_limit,
            in_flight=self.in_flight,
            waiting=self.waiting,
            recent_429s=count_recent(self._rate_limited_at, time.monotonic()),
        )
