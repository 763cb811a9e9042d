"""What an operator scrapes (docs/architecture.md §15): the bot's Prometheus metrics, in a registry
of its own (never ``prometheus_client``'s global default), and one small typed function per event.

Every name starts ``clankie_`` and carries its unit (``_seconds``, ``_total``, ``_tokens_total``).
Every label is drawn from a bounded set: an outcome, a world or mind of the registries, a stage,
a failure kind, a shard number of this process, a route *template* (never a path as asked), an
HTTP status. Never a user id, a token or free text. A ``guild`` label exists only when
``[metrics] per_guild = true`` (:func:`configure`), since it multiplies the series by the
servers.

The call sites are one line each where the event happens; the functions here do nothing when the
metrics are off (:func:`set_enabled`, for the bench that prices them), and never raise into the
bot. Gauges of the gateway are read when scraped, from the bot's own state
(:func:`watch_gateway`), never kept twice.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar, cast

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    disable_created_metrics,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import Collector

from bot.tallies import Counts, TallyHistograms

__all__ = ["CONTENT_TYPE", "GatewayState", "Metrics", "configure", "current", "exposition"]

STAGES = ("observe", "decide", "act", "settle")
MODEL_FAILURE_KINDS = ("timeout", "429", "5xx", "unexpected", "connection", "refused")
RECONNECT_CAUSES = ("dropped", "closed_by_discord", "reconnect_requested")
NARRATION_OUTCOMES = ("played", "not_played", "suppressed", "refused")
DISK_FILES = ("journal", "event_log", "receipts")
ACTIVITY_LIMITS = ("sign_in", "renewal", "rate_limited", "backoff", "busy")
# Why the Activity refused or ended a live socket itself (bot/web/activity_sockets.py), with the
# close code each is sent (bot/web/activity_limits.py): before the upgrade, 503; then 4401, 4401,
# 4429, 4503 (refused), 4401, 4401, 4403 (ended); ``stalled`` has its connection aborted.
SOCKET_CLOSES = (
    "pending_cap",
    "first_message_late",
    "credential_refused",
    "per_viewer_cap",
    "server_cap",
    "expired",
    "renewal_refused",
    "not_in_instance",
    "stalled",
)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""Prometheus' classic text format, which every Prometheus 2.x and 3.x reads (the names here are
plain ASCII, so the text is the same in its 1.0.0 revision)."""
LOCAL_GUILD = "local"  # the CLI's session, the unscoped web paths: no server

_VOICE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.015, 0.02, 0.03, 0.04, 0.06, 0.1, 0.25, 0.5, 1.0)
_STAGE_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
_FSYNC_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0)
_MODEL_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0)

# no `…_created` twin of every counter and histogram (half the series); prometheus_client leaves
# this one function unannotated
cast(Callable[[], None], disable_created_metrics)()

T = TypeVar("T")
R = TypeVar("R")

now = time.monotonic  # the clock every stamp here is taken with (the bench's CLOCK_MONOTONIC too)


@dataclass(frozen=True)
class GatewayState:
    """This process's shards as the bot sees them when scraped (discord.py's public API only)."""

    owned: tuple[int, ...]  # the shard ids this process runs
    connected: frozenset[int]  # their gateway socket is open
    ready: frozenset[int]  # READY or RESUMED since the last disconnect
    latencies: tuple[tuple[int, float], ...]  # (shard id, heartbeat latency in seconds)


class _Gateway(Collector):
    def __init__(self) -> None:
        self.source: Callable[[], GatewayState] | None = None

    def collect(self) -> Iterator[Metric]:
        source = self.source
        state = source() if source is not None else GatewayState((), frozenset(), frozenset(), ())
        owned = GaugeMetricFamily("clankie_gateway_shards_owned", "Shards this process runs.")
        owned.add_metric([], len(state.owned))
        connected = GaugeMetricFamily(
            "clankie_gateway_shards_connected", "Shards of this process whose gateway socket is open."
        )
        connected.add_metric([], len(state.connected))
        ready = GaugeMetricFamily(
            "clankie_gateway_shards_ready", "Shards of this process connected and READY (or RESUMED)."
        )
        ready.add_metric([], len(state.ready & state.connected))
        latency = GaugeMetricFamily(
            "clankie_gateway_latency_seconds", "Heartbeat latency of each shard.", labels=["shard"]
        )
        for shard, seconds in state.latencies:
            if seconds == seconds and seconds != float("inf"):  # discord.py says inf/nan before a beat
                latency.add_metric([str(shard)], seconds)
        yield from (owned, connected, ready, latency)

    def describe(self) -> Iterable[Metric]:
        return ()


class Metrics:
    """The metric objects of one registry. ``per_guild`` adds a ``guild`` label where a server's
    share is worth a series (play sessions, turns, sessions ended, voice calls)."""

    def __init__(self, *, per_guild: bool = False) -> None:
        self.per_guild = per_guild
        self._usage_children: dict[tuple[str, ...], Counter] = {}
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        g = ("guild",) if per_guild else ()
        ProcessCollector(registry=r)
        self.gateway = _Gateway()
        r.register(self.gateway)
        self.reconnects = Counter(
            "clankie_gateway_reconnects_total",
            "Gateway connections lost (discord.py reconnects), by cause.",
            ["cause"],
            registry=r,
        )
        self.sessions_active = Gauge(
            "clankie_play_sessions_active", "Play sessions running, by world.", ["world", *g], registry=r
        )
        self.turns = Counts(  # per turn, on the event loop (bot/tallies.py)
            "clankie_turns",
            "Turns written to a journal, by outcome, world and mind.",
            ["outcome", "world", "mind", *g],
        )
        r.register(self.turns)
        self.stage = TallyHistograms(
            "clankie_turn_stage_duration_seconds",
            "Time of each stage of a turn: observe, decide, act, settle.",
            _STAGE_BUCKETS,
            label="stage",
            values=STAGES,
        )
        r.register(self.stage)
        self.stages = self.stage.tallies  # written on the event loop (bot/tallies.py)
        self.sessions_ended = Counter(
            "clankie_play_sessions_ended_total",
            "Play sessions ended, by outcome.",
            ["outcome", *g],
            registry=r,
        )
        self.model_duration = Histogram(
            "clankie_model_request_duration_seconds",
            "Chat-completion requests (player minds and the captain), answered or failed.",
            buckets=_MODEL_BUCKETS,
            registry=r,
        )
        self.model_failures = Counter(
            "clankie_model_failures_total",
            "Chat-completion requests that failed, by kind: timeout, 429, 5xx, unexpected (not a "
            "completion), connection, refused (another 4xx).",
            ["kind"],
            registry=r,
        )
        self.tokens = Counter(
            "clankie_model_tokens_total",
            "Tokens the endpoint reported, prompt and completion.",
            ["kind"],
            registry=r,
        )
        self.usage_tokens = Counter(
            "clankie_usage_tokens_total",
            "Tokens counted in the usage ledger, by part, model and kind (input, input_cached, "
            "input_audio, …, output_audio); audio billed by duration is clankie_usage_audio_seconds_total.",
            ["part", "model", "kind", *g],
            registry=r,
        )
        self.usage_audio = Counter(
            "clankie_usage_audio_seconds_total",
            "Seconds of audio billed by duration (input transcription), by part and model.",
            ["part", "model", *g],
            registry=r,
        )
        self.usage_calls = Counter(
            "clankie_usage_calls_total",
            "Model calls counted in the usage ledger, by part, model and whether [prices] prices them.",
            ["part", "model", "priced", *g],
            registry=r,
        )
        self.usage_cost = Counter(
            "clankie_usage_cost_usd_total",
            "Estimated US dollars of the priced calls ([prices]), by part and model.",
            ["part", "model", *g],
            registry=r,
        )
        self.calls_active = Gauge("clankie_voice_calls_active", "Voice calls joined.", [*g], registry=r)
        self.room_to_model = Histogram(
            "clankie_voice_room_to_model_seconds",
            "The longest wait of the room's frames in each input_audio_buffer.append: a decoded 20 ms "
            "frame reaching the event loop, to the append written.",
            buckets=_VOICE_BUCKETS,
            registry=r,
        )
        self.model_to_room = Histogram(
            "clankie_voice_model_to_room_seconds",
            "A response.output_audio.delta that finds nothing queued, to its first frame taken by the voice player.",
            buckets=_VOICE_BUCKETS,
            registry=r,
        )
        self.barge_ins = Counter(
            "clankie_voice_barge_ins_total", "Times the room talked over him.", registry=r
        )
        self.dave_failures = Counter(
            "clankie_voice_dave_decrypt_failures_total",
            "Voice frames that did not open with the call's DAVE session (played as silence).",
            registry=r,
        )
        self.narrations = Counter(
            "clankie_voice_narrations_total",
            "Narration outcomes: played, not_played, suppressed, refused.",
            ["outcome"],
            registry=r,
        )
        self.text_turns = Counter(
            "clankie_text_turns_total",
            "Text mentions, by decision: answered, folded (into a reply to a later one), "
            "rate_limited, off, failed, budget.",
            ["decision"],
            registry=r,
        )
        self.text_reply = Histogram(
            "clankie_text_reply_seconds",
            "A mention's arrival to its reply posted (the newest mention a reply answers).",
            buckets=_MODEL_BUCKETS,
            registry=r,
        )
        self.fsync_family = TallyHistograms(
            "clankie_journal_fsync_duration_seconds",
            "Write and fsync of one journal line, on the sitting's disk thread.",
            _FSYNC_BUCKETS,
        )
        r.register(self.fsync_family)
        self.fsync = self.fsync_family.tallies[""]  # timed on the disk thread, observed on the loop
        self.disk_failures = Counter(
            "clankie_disk_failures_total",
            "Writes the disk refused, by file: journal, event_log, receipts.",
            ["file"],
            registry=r,
        )
        self.requests = Counts(  # per request, on the event loop
            "clankie_web_requests", "Web requests, by route template and status.", ["route", "status"]
        )
        r.register(self.requests)
        self.activity_limited = Counter(
            "clankie_activity_limited_total",
            "The Discord Activity's limits at work, by reason: sign_in (a client address's sign-ins) and "
            "renewal (a viewer's renewals) refused; rate_limited (Discord answered 429: every request "
            "waits it out); backoff (a request turned away during that wait) and busy (turned away by "
            "the process's own rate, slots or queue).",
            ["reason"],
            registry=r,
        )
        self.socket_closes = Counts(  # every value present from the start, 0 until it happens
            "clankie_activity_socket_closes",
            "Live sockets of the Discord Activity it refused or ended itself, by reason: pending_cap "
            "(503 before the upgrade), first_message_late and credential_refused (4401), "
            "per_viewer_cap (4429), server_cap (4503); expired and renewal_refused (4401), "
            "not_in_instance (4403), stalled (a viewer that stopped reading: connection aborted).",
            ["reason"],
        )
        self.socket_closes.counts.update({(reason,): 0 for reason in SOCKET_CLOSES})
        r.register(self.socket_closes)
        self.viewers = Gauge(
            "clankie_web_live_viewers", "Open live streams (server-sent events, WebSockets).", registry=r
        )
        self.viewers.set_function(lambda: _open_streams())

    def usage_child(self, metric: Counter, *values: str) -> Counter:
        """A usage counter's labelled child, looked up once (``labels()`` takes a lock and checks
        every value; a model call's counts touch up to ten of these)."""
        key = (metric._name, *values)
        found = self._usage_children.get(key)
        if found is None:
            found = self._usage_children[key] = metric.labels(*values)
        return found

    def guild(self, guild_id: int | str | None) -> tuple[str, ...]:
        """The guild label's value, when there is a guild label."""
        if not self.per_guild:
            return ()
        return (LOCAL_GUILD if guild_id is None else str(int(guild_id)),)


class _State:
    """The module's current metrics and whether they record (one process, one registry)."""

    def __init__(self) -> None:
        self.metrics = Metrics()
        self.on = True
        self.lock = threading.Lock()
        self.streams: dict[int, Callable[[], bool]] = {}  # id(stream) -> is its connection open
        self.models: frozenset[str] = frozenset()  # the usage series' model label values


_STATE = _State()


def _child(metric: Gauge, values: tuple[str, ...]) -> Gauge:
    """The labelled child, or the metric itself when it has no labels."""
    return metric.labels(*values) if values else metric


def configure(*, per_guild: bool = False, models: Iterable[str] = ()) -> Metrics:
    """Make the metrics (a fresh registry, no gateway until a bot watches it) for ``[metrics]
    per_guild``; ``models`` are the model names the usage series may carry (the configured ones
    and those of ``[prices]``; any other is ``other``). Called as the character is built, before
    its bot is made."""
    with _STATE.lock:
        _STATE.metrics = Metrics(per_guild=per_guild)
        _STATE.models = frozenset(models)
        return _STATE.metrics


def current() -> Metrics:
    return _STATE.metrics


def set_enabled(on: bool) -> None:
    """Metrics on (the default) or off: off, every function below returns at once (the bench
    compares the two)."""
    _STATE.on = on


def enabled() -> bool:
    return _STATE.on


def exposition() -> bytes:
    """The registry in Prometheus' text format (:data:`CONTENT_TYPE`)."""
    return generate_latest(_STATE.metrics.registry)


# -- gateway ----------------------------------------------------------------------------------


def watch_gateway(source: Callable[[], GatewayState] | None) -> None:
    """The bot's shards are read from ``source`` at every scrape (None: no bot)."""
    _STATE.metrics.gateway.source = source


def gateway_lost(cause: str) -> None:
    """A shard's gateway connection was lost; ``cause`` is one of :data:`RECONNECT_CAUSES`."""
    if _STATE.on:
        _STATE.metrics.reconnects.labels(cause).inc()


# -- play -------------------------------------------------------------------------------------


def session_started(world: str, guild_id: int | None) -> None:
    if _STATE.on:
        m = _STATE.metrics
        m.sessions_active.labels(world, *m.guild(guild_id)).inc()


def session_ended(world: str, outcome: str, guild_id: int | None) -> None:
    if _STATE.on:
        m = _STATE.metrics
        m.sessions_active.labels(world, *m.guild(guild_id)).dec()
        m.sessions_ended.labels(outcome, *m.guild(guild_id)).inc()


def turn_written(outcome: str, world: str, mind: str, guild_id: int | None) -> None:
    """A turn line the journal holds (so the count equals the journal's turn lines)."""
    if _STATE.on:
        m = _STATE.metrics
        m.turns.inc((outcome, world, mind, *m.guild(guild_id)))


def stage_done(stage: str, started: float) -> float:
    """A stage of a turn (one of :data:`STAGES`) that began at ``started`` (:func:`now`) ended
    now; returns now, the next stage's start."""
    ended = now()
    if _STATE.on:
        _STATE.metrics.stages[stage].observe(ended - started)
    return ended


def model_request(seconds: float, failure: str | None = None) -> None:
    """One chat-completion request took ``seconds``; ``failure`` is its kind when it failed."""
    if _STATE.on:
        m = _STATE.metrics
        m.model_duration.observe(seconds)
        if failure is not None:
            m.model_failures.labels(failure).inc()


def model_tokens(prompt: int | None, completion: int | None) -> None:
    if _STATE.on:
        m = _STATE.metrics
        if isinstance(prompt, int) and prompt > 0:
            m.tokens.labels("prompt").inc(prompt)
        if isinstance(completion, int) and completion > 0:
            m.tokens.labels("completion").inc(completion)


USAGE_PARTS = ("voice", "transcription", "play", "consult", "text")
USAGE_KINDS = (
    "input",
    "input_cached",
    "input_audio",
    "input_audio_cached",
    "input_image",
    "input_image_cached",
    "output",
    "output_audio",
)


def usage_counted(
    part: str, model: str, counts: dict[str, int], usd: float | None, guild_id: int | None
) -> None:
    """One model call counted in the usage ledger (bot/usage): its tokens by kind, its audio
    seconds, the call, and its estimated dollars when priced (``usd`` None: no price)."""
    if not _STATE.on or part not in USAGE_PARTS:
        return
    m = _STATE.metrics
    g = m.guild(guild_id)
    name = model if model in _STATE.models else "other"
    child = m.usage_child
    for kind in USAGE_KINDS:
        n = counts.get(kind, 0)
        if n > 0:
            child(m.usage_tokens, part, name, kind, *g).inc(n)
    audio_ms = counts.get("audio_ms", 0)
    if audio_ms > 0:
        child(m.usage_audio, part, name, *g).inc(audio_ms / 1000)
    child(m.usage_calls, part, name, "no" if usd is None else "yes", *g).inc(counts.get("calls", 1))
    if usd is not None:
        child(m.usage_cost, part, name, *g).inc(usd)


# -- voice ------------------------------------------------------------------------------------


def call_opened(guild_id: int | None) -> None:
    if _STATE.on:
        m = _STATE.metrics
        _child(m.calls_active, m.guild(guild_id)).inc()


def call_closed(guild_id: int | None) -> None:
    if _STATE.on:
        m = _STATE.metrics
        _child(m.calls_active, m.guild(guild_id)).dec()


def room_to_model(oldest: float | None, sent: bool = True) -> None:
    """An ``input_audio_buffer.append`` was just written (``sent``) whose oldest frame of the
    room reached the loop at ``oldest`` (:func:`now`; None: silence only). One observation per
    append, of its longest wait — a histogram observation costs microseconds, a frame's whole
    receive path about 60."""
    if _STATE.on and sent and oldest is not None:
        _STATE.metrics.room_to_model.observe(now() - oldest)


def model_to_room(pushed: float) -> None:
    """The first frame of a delta pushed at ``pushed`` (:func:`now`) was just taken by the player."""
    if _STATE.on:
        _STATE.metrics.model_to_room.observe(now() - pushed)


def barge_in() -> None:
    if _STATE.on:
        _STATE.metrics.barge_ins.inc()


def dave_failure() -> None:
    if _STATE.on:
        _STATE.metrics.dave_failures.inc()


def narration(outcome: str) -> None:
    """One of :data:`NARRATION_OUTCOMES`."""
    if _STATE.on:
        _STATE.metrics.narrations.labels(outcome).inc()


def text_turn(decision: str) -> None:
    """One mention's decision (``discord.text.turn``)."""
    if _STATE.on:
        _STATE.metrics.text_turns.labels(decision).inc()


def text_reply_latency(seconds: float) -> None:
    if _STATE.on:
        _STATE.metrics.text_reply.observe(seconds)


# -- disk -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Timed(Generic[R]):
    """What :func:`timed` brings back from the disk thread: the commit's answer or its error,
    and the seconds it took either way."""

    seconds: float
    done: R | None = None
    error: Exception | None = None

    def result(self) -> R:
        if self.error is not None:
            raise self.error
        assert self.done is not None
        return self.done


def timed(commit: Callable[[T], R], line: T) -> Timed[R]:
    """``commit(line)`` (a journal line's write and fsync, on its sitting's disk thread) and the
    seconds it took, answered or failed, for :func:`fsync_done` to observe on the event loop."""
    started = now()
    try:
        done = commit(line)
    except Exception as exc:  # handed back to the loop, raised there by Timed.result
        return Timed(now() - started, error=exc)
    return Timed(now() - started, done)


def fsync_done(seconds: float) -> None:
    """A journal line was written and fsynced in ``seconds`` (on the event loop: the tally has
    one writer, bot/tallies.py)."""
    if _STATE.on:
        _STATE.metrics.fsync.observe(seconds)


def disk_failure(file: str) -> None:
    """The disk refused a write to one of :data:`DISK_FILES`."""
    if _STATE.on:
        _STATE.metrics.disk_failures.labels(file).inc()


# -- web --------------------------------------------------------------------------------------


def web_request(route: str, status: int) -> None:
    if _STATE.on:
        _STATE.metrics.requests.inc((route, str(status)))


def activity_limited(reason: str) -> None:
    """One of :data:`ACTIVITY_LIMITS`."""
    if _STATE.on:
        _STATE.metrics.activity_limited.labels(reason).inc()


def activity_socket_closed(reason: str) -> None:
    """The Activity refused or ended a live socket: one of :data:`SOCKET_CLOSES`."""
    if _STATE.on:
        _STATE.metrics.socket_closes.inc((reason,))


def viewer_opened(stream: object, is_open: Callable[[], bool]) -> None:
    """A live stream began; it is a viewer while ``is_open()`` (asked when scraped: a client that
    went away is no viewer, even before the stream's next write finds out)."""
    if _STATE.on:
        _STATE.streams[id(stream)] = is_open


def viewer_closed(stream: object) -> None:
    _STATE.streams.pop(id(stream), None)


def _open_streams() -> float:
    return float(sum(1 for is_open in list(_STATE.streams.values()) if is_open()))
