"""Settings: ``config.toml`` (path from ``--config`` or ``CLANKIE_CONFIG``) plus the environment.

Secrets (``DISCORD_TOKEN``, ``OPENAI_API_KEY``, ``DISCORD_CLIENT_SECRET``, ``web.token``) are
``SecretStr``: they never appear in reprs or logs. A wrong type or unknown key fails with the file, the key and what
was expected (:class:`ConfigError`); an unknown key or section is told with the closest known name
("did you mean `max_turns`?").

This module knows no world and no mind (docs/architecture.md §2, §4): it imports neither registry,
so loading the configuration imports no world's code (no Playwright) and nothing of play.
``[play] world`` and ``[play] mind`` are checked here only for their form; that each is registered
is checked by :func:`bot.registered.load_checked`, which also reads each world's own table. A
world's table (``[browser]``, ``[pokeagent]``, ``[worlds.<name>]``) is kept here as written and
read through the world's :class:`WorldSettings` model (:meth:`Settings.world_settings`).
"""

from __future__ import annotations

import difflib
import ipaddress
import os
import re
import stat
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal, Self, TypeVar, get_args
from urllib.parse import urlsplit, urlunsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)


def did_you_mean(word: str, known: Iterable[str], *, shown: str = "`{}`") -> str:
    """`` (did you mean `max_turns`?)`` for the known name closest to ``word``, or ``""``."""
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f" (did you mean {shown.format(close[0])}?)" if close else ""


def unknown_name(kind: str, name: str, known: Iterable[str]) -> str:
    """``'sandbx' is not a world (did you mean `sandbox`?); choose one of sandbox, browser``."""
    known = tuple(known)
    return f"{name!r} is not a {kind}{did_you_mean(name, known)}; choose one of {', '.join(known)}"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, validate_default=True)


class DiscordSettings(_Section):
    token: SecretStr | None = None  # from DISCORD_TOKEN only
    test_guild_id: int | None = None
    application_id: int | None = None  # for `clankie invite` without a token or a network
    api_url: str | None = None  # Discord's REST base, when not https://discord.com/api/v10
    moderator_roles: list[str] = Field(default_factory=list)
    share_offer_on_go_live: bool = True
    # How many shards the bot has in all (None: as many as Discord recommends), and which of them
    # this process runs (None: all); `clankie run --shard-count/--shard-ids` override both.
    shard_count: int | None = Field(default=None, ge=1)
    shard_ids: list[int] | None = None

    @model_validator(mode="after")
    def _shards(self) -> Self:
        problem = shard_problem(self.shard_count, self.shard_ids)
        if problem is not None:
            raise ValueError(problem)
        return self


def shard_problem(
    count: int | None, ids: list[int] | None, names: tuple[str, str] = ("shard_count", "shard_ids")
) -> str | None:
    """What is wrong with this shard count and list of shard ids, in a sentence naming them as
    ``names`` say (the config's keys, or the command line's options); None if nothing."""
    count_name, ids_name = names
    if count is not None and count < 1:
        return f"{count_name} must be at least 1 (got {count})"
    if ids is None:
        return None
    if count is None:
        return f"{ids_name} needs {count_name}: how many shards the bot has in all, across every process"
    if not ids:
        return f"{ids_name} is empty: list this process's shards, or leave it out to run all of them"
    outside = sorted({i for i in ids if not 0 <= i < count})
    if outside:
        listed = ", ".join(map(str, outside))
        return f"{ids_name} {listed}: with {count_name} {count} the shards are 0..{count - 1}"
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        return f"{ids_name} lists {', '.join(map(str, twice))} more than once"
    return None


REDIS_SCHEMES = ("redis", "rediss", "unix")


def redacted_url(url: str) -> str:
    """``url`` with the password of its user part, if any, shown as ``***``."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return "<not a URL>"
    if not password:
        return url
    user = parts.username or ""
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


_PREFIX_PATH = re.compile(r"/[A-Za-z0-9._~/-]*")


class ClusterSettings(_Section):
    # Redis that paces logins across processes (a lock per login bucket); None: each process
    # paces only its own shards, as discord.py does. CLANKIE_REDIS_URL overrides.
    redis_url: str | None = None
    # Where, from the public host's root, the process that runs shard N is reached through the
    # reverse proxy, with {shard} for N (e.g. "/s{shard}/"); the Discord Activity, opened at the
    # root by the process nginx's `location /` names, is redirected there when that process does
    # not run the server's shard (bot/web/activity_shards.py). None: no redirect.
    shard_prefix: str | None = None

    @field_validator("shard_prefix")
    @classmethod
    def _shard_prefix(cls, value: str | None) -> str | None:
        if value is None:
            return None
        rest = value.replace("{shard}", "0", 1)
        if value.count("{shard}") != 1:
            raise ValueError(f"shard_prefix must hold {{shard}} once, for the shard's number (got {value!r})")
        if not value.startswith("/") or not value.endswith("/"):
            raise ValueError(
                f"shard_prefix is a path from the host's root: /…/, e.g. /s{{shard}}/ (got {value!r})"
            )
        if not _PREFIX_PATH.fullmatch(rest) or "//" in rest or "/./" in rest or "/../" in rest:
            raise ValueError(
                f"shard_prefix may hold letters, digits, '-', '_', '.', '~' and '/' around {{shard}} "
                f"(got {value!r})"
            )
        return value

    @field_validator("redis_url")
    @classmethod
    def _redis(cls, value: str | None) -> str | None:
        if value is None:
            return None
        shown = redacted_url(value)
        expected = "expected a redis:// (or rediss://, unix://) URL such as redis://127.0.0.1:6379/0"
        try:
            parts = urlsplit(value)
            _port = parts.port  # a port that is not a number raises here
        except ValueError:
            raise ValueError(f"{expected} (got {shown!r})") from None
        if parts.scheme not in REDIS_SCHEMES:
            raise ValueError(f"{expected} (got {shown!r})")
        if parts.scheme != "unix" and not parts.hostname:
            raise ValueError(f"the Redis URL names no host (got {shown!r})")
        if parts.scheme == "unix" and not parts.path:
            raise ValueError(f"the Redis URL names no socket path (got {shown!r})")
        return value

    @property
    def redis_password(self) -> str | None:
        """The password inside ``redis_url`` (registered as a secret, so logs never show it)."""
        return urlsplit(self.redis_url).password if self.redis_url else None


class OpenAISettings(_Section):
    api_key: SecretStr | None = None  # from OPENAI_API_KEY only
    base_url: str | None = None  # OPENAI_BASE_URL overrides
    model: str = "gpt-4.1-mini"
    vision: bool = True
    # A silent endpoint is found out within 12 s × 2 tries + the client's ~0.5 s pause ≈ 25 s a turn.
    timeout_s: float = Field(default=12.0, gt=0, le=600)
    max_retries: int = Field(default=1, ge=0, le=10)
    realtime_model: str = "gpt-realtime"
    voice: str = "marin"
    turn_detection: Literal["server_vad", "semantic_vad"] = "semantic_vad"
    # the room's words as text, for the floor (docs/architecture.md §12); never written to disk
    transcription_model: str = Field(default="gpt-4o-mini-transcribe", min_length=1, max_length=100)
    max_tool_rounds: int = Field(default=4, ge=1, le=16)


NAME_FORM = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
"""The form of a world's or a mind's name (``bot/worlds/info.py`` ``WorldInfo`` holds worlds to it)."""


def name_problem(kind: str, name: str) -> str | None:
    """What is wrong with the form of a world's or mind's name, in a sentence; None if nothing."""
    if NAME_FORM.match(name):
        return None
    return (
        f"{name!r} is not a {kind} name: expected a lowercase letter, then lowercase letters, "
        f"digits or _ (at most 32 characters), such as {'sandbox' if kind == 'world' else 'autopilot'}"
    )


class PlaySettings(_Section):
    # a registered world (bot/worlds/factory.py) and mind (bot/play/minds/factory.py); here only
    # their form is checked, the registries by bot/registered.py
    world: str = "sandbox"
    mind: str = "autopilot"
    max_turns: int = Field(default=500, ge=1, le=100_000)
    max_minutes: float = Field(default=60.0, gt=0, le=24 * 60)
    pace_seconds: float = Field(default=1.0, ge=0, le=60)  # Discord play: watchable; CLI play: --pace
    max_invalid_in_a_row: int = Field(default=20, ge=1, le=10_000)  # then play ends failed
    max_crashes_in_a_row: int = Field(default=3, ge=1, le=10_000)  # a mind that raises: then failed
    seed: int = 0
    keep_room_words: bool = False  # the journal keeps the words of room lines (default: who and when only)

    @field_validator("world", "mind")
    @classmethod
    def _name_form(cls, value: str, info: ValidationInfo) -> str:
        problem = name_problem(str(info.field_name), value)
        if problem is not None:
            raise ValueError(problem)
        return value


class WebSettings(_Section):
    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = Field(default=8750, ge=0, le=65535)
    token: SecretStr | None = None
    public_url: str | None = None  # how people reach the activity page, if not host:port
    max_connections: int = Field(default=4096, ge=1, le=65536)
    max_subscribers: int = Field(default=64, ge=1, le=10_000)  # live activity pages
    header_timeout_s: float = Field(default=10.0, gt=0, le=300)
    idle_timeout_s: float = Field(default=15.0, gt=0, le=3600)
    # Reverse proxies (addresses or networks) whose forwarding header names the client: only a
    # request from one of them is counted by that header's address, any other by its own peer.
    trusted_proxies: list[str] = Field(default_factory=list, max_length=64)
    forwarded_header: Literal["X-Forwarded-For", "Forwarded"] = "X-Forwarded-For"

    @field_validator("trusted_proxies")
    @classmethod
    def _addresses(cls, value: list[str]) -> list[str]:
        for entry in value:
            try:
                ipaddress.ip_network(entry.strip(), strict=False)
            except ValueError:
                raise ValueError(
                    f"trusted_proxies: {entry!r} is not an IP address or network "
                    '(e.g. "127.0.0.1", "10.0.0.0/8", "::1")'
                ) from None
        return value


_FRAME_ORIGIN = re.compile(r"https?://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:[0-9]{1,5})?")


class ActivitySettings(_Section):
    """The Discord Activity (docs/architecture.md §10 "The Activity"): the web surface's root,
    opened by Discord with its query, is the watch page inside the call. The application id is
    ``[discord] application_id``, else learned from Discord with the bot token."""

    enabled: bool = False
    client_secret: SecretStr | None = None  # from DISCORD_CLIENT_SECRET only
    # How long a viewer credential holds before the page renews it (Discord is asked again
    # whether the viewer is still in the call); at most 15 minutes.
    credential_ttl_s: float = Field(default=600.0, ge=30)
    # Seconds for each request to Discord (token exchange, /users/@me, the activity instance).
    discord_timeout_s: float = Field(default=10.0, gt=0, le=60)
    # Seconds between polls of a live page that cannot hold a WebSocket.
    poll_interval_s: float = Field(default=2.0, ge=0.5, le=60)
    # Origins besides Discord's clients that may frame the Activity page (its CSP
    # frame-ancestors, bot/web/headers.py), such as a staging client: "https://host[:port]",
    # a leading "*." for any subdomain. None by default.
    extra_frame_ancestors: list[str] = Field(default_factory=list)

    @field_validator("extra_frame_ancestors")
    @classmethod
    def _origins_only(cls, value: list[str]) -> list[str]:
        for origin in value:
            if not _FRAME_ORIGIN.fullmatch(origin):
                raise ValueError(
                    f"{origin!r} is not an origin such as https://client.example.com or "
                    "http://localhost:3333 (scheme, host, optional port; no path, no spaces)"
                )
        return value

    @field_validator("credential_ttl_s")
    @classmethod
    def _at_most_15_minutes(cls, value: float) -> float:
        if value > 900:
            raise ValueError(
                f"a viewer credential may hold at most 900 seconds (15 minutes) before it is renewed "
                f"(got {value:g})"
            )
        return value


class ShareSettings(_Section):
    link_ttl_minutes: float = Field(default=30.0, gt=0, le=24 * 60)


_NAME_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")


class VoiceSettings(_Section):
    idle_leave_seconds: float = Field(default=120.0, gt=0)
    narration_cooldown_s: float = Field(default=12.0, ge=0)
    play_update_interval_s: float = Field(default=5.0, ge=0)  # at most one plain play update per this
    # who he answers with two or more humans in the call (bot/mouth/floor.py): "addressed" only
    # when spoken to by name, "open" every turn; with one human every turn is answered either way
    floor: Literal["addressed", "open"] = "addressed"
    # other names he answers to besides "Clankie" (one or more words each, e.g. "Clank", "Mister Clank")
    names: list[str] = Field(default_factory=list, max_length=16)

    @field_validator("names")
    @classmethod
    def _names(cls, value: list[str]) -> list[str]:
        for name in value:
            words = name.split()
            if not words or not all(_NAME_WORD.fullmatch(word) for word in words) or len(name) > 40:
                raise ValueError(
                    f"{name!r} is not a name: expected one to four words of letters (an apostrophe or "
                    'hyphen inside a word is fine), at most 40 characters, e.g. "Clank"'
                )
            if len(words) > 4:
                raise ValueError(f"{name!r} is not a name: at most four words")
        return value


class TextGuildSettings(_Section):
    """``[text.guilds."<server id>"]``: one server's own say on the text lane."""

    enabled: bool | None = None  # None: as [text] enabled
    channels: list[int] | None = None  # None: as [text] channels; [] every channel


class TextSettings(_Section):
    """``[text]``: the text lane (docs/architecture.md §13): a message that mentions him is
    answered in its channel, one reply per burst, within these bounds."""

    enabled: bool = True
    channels: list[int] = Field(default_factory=list)  # where he may talk; [] every channel
    history_messages: int = Field(default=20, ge=2, le=100)  # the lane's memory, by count…
    history_chars: int = Field(default=8000, ge=500, le=64_000)  # …and by size
    message_chars: int = Field(default=1500, ge=100, le=4000)  # a longer message is clipped
    reply_timeout_s: float = Field(default=45.0, gt=0, le=600)  # then one short line, no retry
    max_redo: int = Field(default=2, ge=0, le=5)  # requests redone to fold a burst in
    burst_quiet_s: float = Field(default=1.5, ge=0, le=30)  # a burst is over after this quiet…
    burst_max_wait_s: float = Field(default=6.0, ge=0, le=60)  # …or this long after it broke in
    user_per_minute: int = Field(default=6, ge=1, le=600)
    channel_per_minute: int = Field(default=12, ge=1, le=600)
    guild_in_flight: int = Field(default=2, ge=1, le=64)  # replies thought at once per server
    process_in_flight: int = Field(default=8, ge=1, le=256)  # and in this process
    guilds: dict[str, TextGuildSettings] = Field(default_factory=dict)

    @field_validator("guilds")
    @classmethod
    def _guild_ids(cls, value: dict[str, TextGuildSettings]) -> dict[str, TextGuildSettings]:
        for key in value:
            if not key.isdigit():
                raise ValueError(f"[text.guilds.{key!r}]: the key must be a server id (digits only)")
        return value

    def enabled_in(self, guild_id: int) -> bool:
        own = self.guilds.get(str(guild_id))
        return self.enabled if own is None or own.enabled is None else own.enabled

    def channels_in(self, guild_id: int) -> list[int]:
        own = self.guilds.get(str(guild_id))
        return self.channels if own is None or own.channels is None else own.channels


WORLDS_TABLE = "worlds"
"""``[worlds.<name>]``: where a world's own table goes unless it keeps one it had before."""


class WorldSettings(_Section):
    """A world's own table of ``config.toml``, declared by the world's package (its
    ``WorldEntry.settings``, docs/architecture.md §4): ``table`` names it as written in the file,
    ``"browser"`` for ``[browser]`` or ``"worlds.tiny"`` for ``[worlds.tiny]``. Every key has a
    default, so a file without the table takes them all."""

    table: ClassVar[str]


W = TypeVar("W", bound=WorldSettings)


class LimitsSettings(_Section):
    """What one process takes on at once, across all its servers (docs/architecture.md §5)."""

    play_sessions: int = Field(default=4, ge=1, le=64)
    browser_sessions: int = Field(default=2, ge=0, le=16)
    voice_calls: int = Field(default=8, ge=0, le=64)


class MetricsSettings(_Section):
    """What an operator scrapes (bot/metrics.py, docs/architecture.md §15)."""

    per_guild: bool = False  # a guild label on play and voice series (one series per server)
    port: int | None = Field(default=None, ge=0, le=65535)  # /metrics, /healthz, /readyz on 127.0.0.1


class ModelPrice(BaseModel):
    """One model's prices: US dollars per million tokens of each kind, per minute of audio."""

    model_config = ConfigDict(extra="forbid", strict=True)

    source: str = Field(min_length=1, max_length=300)  # the public page the figures were read from
    checked: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")  # the day they were read (YYYY-MM-DD)
    input: float | None = Field(default=None, ge=0)
    input_cached: float | None = Field(default=None, ge=0)
    input_audio: float | None = Field(default=None, ge=0)
    input_audio_cached: float | None = Field(default=None, ge=0)
    input_image: float | None = Field(default=None, ge=0)
    input_image_cached: float | None = Field(default=None, ge=0)
    output: float | None = Field(default=None, ge=0)
    output_audio: float | None = Field(default=None, ge=0)
    audio_minute: float | None = Field(default=None, ge=0)


_PAGE = "https://openai.com/api/pricing/"
_FIRST = "2025-09-01"  # the day the figures were first written down with; no reading of it is recorded
_HERE = "2026-12-06"  # the day this build wrote or compared them, without network


def _p(checked: str = _FIRST, source: str = _PAGE, **prices: float) -> ModelPrice:
    return ModelPrice(source=source, checked=checked, **prices)


# What is known of each row is said beside it in config.example.toml, which lists them all and
# must equal this table (tests/usage/test_prices.py). None was read from the live page here.
DEFAULT_PRICES: dict[str, ModelPrice] = {
    # unverified; every figure equals a stored copy of the gpt-realtime-1.5 model page (same tier)
    "gpt-realtime": _p(
        input=4.0,
        input_cached=0.4,
        input_audio=32.0,
        input_audio_cached=0.4,
        input_image=5.0,
        input_image_cached=0.5,
        output=16.0,
        output_audio=64.0,
    ),
    # unverified; out 2025-10-06, so dated the day it was written here and compared with stored copies
    "gpt-realtime-mini": _p(
        _HERE,
        input=0.6,
        input_cached=0.06,
        input_audio=10.0,
        input_audio_cached=0.3,
        output=2.4,
        output_audio=20.0,
    ),
    # unverified live; agree with stored copies of OpenAI's cookbook and pricing tables (config.example.toml)
    "gpt-4o-mini-transcribe": _p(input=1.25, input_audio=3.0, output=5.0),
    "gpt-4o-transcribe": _p(input=2.5, input_audio=6.0, output=10.0),
    # read from a stored copy of the model page
    "whisper-1": _p(_HERE, "https://developers.openai.com/api/docs/models/whisper-1", audio_minute=0.006),
    # unverified
    "gpt-4.1": _p(input=2.0, input_cached=0.5, output=8.0),
    "gpt-4.1-mini": _p(input=0.4, input_cached=0.1, output=1.6),
    "gpt-4.1-nano": _p(input=0.1, input_cached=0.025, output=0.4),
    "gpt-4o-mini": _p(input=0.15, input_cached=0.075, output=0.6),
}
"""The built-in ``[prices]`` (the file adds to it or replaces a model's row; bot/usage/prices.py
prices the ledger with it)."""


class GuildBudget(_Section):
    """One server's own ceiling (``[budget.guilds."<id>"]``), under the operator's default."""

    daily_usd: float | None = Field(default=None, ge=0)
    monthly_usd: float | None = Field(default=None, ge=0)


class BudgetSettings(_Section):
    """What he may spend (docs/architecture.md §5 "What he costs"), in US dollars as priced by
    ``[prices]``; None: no limit. ``daily_usd``/``monthly_usd`` hold all the servers of the bot
    together (the other processes' as read from their books: :mod:`bot.usage.others`),
    ``guild_daily_usd``/``guild_monthly_usd`` each server, and ``[budget.guilds]``
    one server's own (a moderator may lower a server's further with ``/clankie budget``). Days and
    months are UTC."""

    daily_usd: float | None = Field(default=None, ge=0)
    monthly_usd: float | None = Field(default=None, ge=0)
    guild_daily_usd: float | None = Field(default=None, ge=0)
    guild_monthly_usd: float | None = Field(default=None, ge=0)
    warn_at: float = Field(default=0.8, gt=0, lt=1)  # the share of a limit at which moderators are told
    guilds: dict[str, GuildBudget] = Field(default_factory=dict)

    @field_validator("guilds")
    @classmethod
    def _guild_ids(cls, value: dict[str, GuildBudget]) -> dict[str, GuildBudget]:
        for key in value:
            if not (key.isdigit() and key == str(int(key))):
                raise ValueError(
                    f'[budget.guilds] keys are server ids (digits, e.g. "123456789"), got {key!r}'
                )
        return value


def _default_prices() -> dict[str, ModelPrice]:
    return dict(DEFAULT_PRICES)


class PathSettings(_Section):
    state_dir: Path | None = None  # CLANKIE_STATE
    journal_dir: Path | None = None  # CLANKIE_JOURNAL_DIR
    event_log: Path | None = None  # CLANKIE_EVENT_LOG
    receipt_path: Path | None = None  # DISCORD_BRIDGE_RECEIPT_PATH


class Settings(_Section):
    discord: DiscordSettings = Field(default_factory=DiscordSettings)
    openai: OpenAISettings = Field(default_factory=OpenAISettings)
    play: PlaySettings = Field(default_factory=PlaySettings)
    web: WebSettings = Field(default_factory=WebSettings)
    activity: ActivitySettings = Field(default_factory=ActivitySettings)
    share: ShareSettings = Field(default_factory=ShareSettings)
    voice: VoiceSettings = Field(default_factory=VoiceSettings)
    text: TextSettings = Field(default_factory=TextSettings)
    paths: PathSettings = Field(default_factory=PathSettings)
    limits: LimitsSettings = Field(default_factory=LimitsSettings)
    cluster: ClusterSettings = Field(default_factory=ClusterSettings)
    metrics: MetricsSettings = Field(default_factory=MetricsSettings)
    budget: BudgetSettings = Field(default_factory=BudgetSettings)
    # ``[prices."<model>"]``: a model's row replaces the built-in one (bot/usage/prices.py)
    prices: dict[str, ModelPrice] = Field(default_factory=_default_prices)

    @field_validator("prices", mode="after")
    @classmethod
    def _prices_over_defaults(cls, value: dict[str, ModelPrice]) -> dict[str, ModelPrice]:
        return {**DEFAULT_PRICES, **value}

    # Tables this model does not hold, as written: each world's own (``[browser]``,
    # ``[worlds.tiny]``), read through world_settings; bot/registered.py refuses any that no
    # registered world declares.
    _tables: dict[str, object] = PrivateAttr(default_factory=dict)
    _worlds: dict[type[WorldSettings], WorldSettings] = PrivateAttr(default_factory=dict)
    _source: str = PrivateAttr(default="<defaults>")

    @model_validator(mode="wrap")
    @classmethod
    def _keep_world_tables(cls, data: Any, handler: ModelWrapValidatorHandler[Self]) -> Self:
        """Every table of the file that is not one of this model's own sections is kept as
        written, for the worlds to read: a table at the top (``[browser]``) and each table under
        ``[worlds]``. A key that is not a table and not a section stays an unknown key."""
        tables: dict[str, object] = {}
        if isinstance(data, dict):
            tables = world_tables_of(data)
            data = {k: v for k, v in data.items() if k in cls.model_fields or not isinstance(v, dict)}
        settings = handler(data)
        settings._tables = tables
        return settings

    @property
    def source(self) -> str:
        """Where these settings were read from: the file, ``<environment>``, or ``<defaults>``."""
        return self._source

    def world_tables(self) -> dict[str, object]:
        """The tables kept for the worlds, by name as written (``browser``, ``worlds.tiny``)."""
        return dict(self._tables)

    def world_settings(self, model: type[W]) -> W:
        """A world's own table, read through its model (its defaults where the file says
        nothing); read once, then the same object, so a change made to it is kept. A table that
        does not fit the model is a :class:`ConfigError` naming the file, table and key."""
        found = self._worlds.get(model)
        if isinstance(found, model):
            return found
        try:
            read = model.model_validate(self._tables.get(model.table, {}))
        except ValidationError as exc:
            raise ConfigError(problems_of(exc, self._source, model, model.table)) from None
        self._worlds[model] = read
        return read

    # -- derived paths ---------------------------------------------------------------
    @property
    def state_dir(self) -> Path:
        if self.paths.state_dir is not None:
            return self.paths.state_dir
        base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
        return Path(base) / "clankie"

    @property
    def journal_dir(self) -> Path:
        return self.paths.journal_dir or self.state_dir / "play"

    @property
    def event_log(self) -> Path:
        return self.paths.event_log or self.state_dir / "events.jsonl"

    @property
    def receipt_path(self) -> Path:
        return self.paths.receipt_path or self.state_dir / "voice-receipts.jsonl"

    def guild_dir(self, guild_id: int) -> Path:
        """Where one server's play state lives: ``<state>/guilds/<guild id>/`` holds its
        ``journal/``, ``events.jsonl``, ``voice-receipts.jsonl`` and ``play-switches.json`` (one
        writer per file)."""
        return self.state_dir / "guilds" / str(guild_id)


class ConfigError(Exception):
    """A configuration problem, phrased for a person: file, key, what was expected."""


SECRET_KEYS = {("discord", "token"), ("openai", "api_key"), ("activity", "client_secret")}
ENV_MAP: dict[str, tuple[str, str]] = {
    "DISCORD_TOKEN": ("discord", "token"),
    "OPENAI_API_KEY": ("openai", "api_key"),
    "DISCORD_CLIENT_SECRET": ("activity", "client_secret"),
    "OPENAI_BASE_URL": ("openai", "base_url"),
    "DISCORD_API_URL": ("discord", "api_url"),
    "CLANKIE_STATE": ("paths", "state_dir"),
    "CLANKIE_JOURNAL_DIR": ("paths", "journal_dir"),
    "CLANKIE_EVENT_LOG": ("paths", "event_log"),
    "DISCORD_BRIDGE_RECEIPT_PATH": ("paths", "receipt_path"),
    "CLANKIE_REDIS_URL": ("cluster", "redis_url"),
}
_PATH_KEYS = {"state_dir", "journal_dir", "event_log", "receipt_path"}


def _field_at(model: type[BaseModel], loc: tuple[str, ...]) -> tuple[type[BaseModel], Any] | None:
    """The model holding the field at ``loc`` and that field's annotation, or None."""
    for i, part in enumerate(loc):
        field = model.model_fields.get(part)
        if field is None:
            return None
        if i == len(loc) - 1:
            return model, field.annotation
        if not (isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)):
            return None
        model = field.annotation
    return None


def _is_secret(model: type[BaseModel], loc: tuple[str, ...]) -> bool:
    found = _field_at(model, loc)
    return found is not None and (found[1] is SecretStr or SecretStr in get_args(found[1]))


def _describe(err: Mapping[str, Any], model: type[BaseModel] = Settings) -> str:
    """One validation error of ``model`` (the settings, or a world's table) in a few words."""
    kind = err.get("type", "")
    loc = tuple(str(p) for p in err.get("loc", ()))
    got = err.get("input")
    if kind == "extra_forbidden":
        return _unknown(loc, model)
    shown = (
        f" (got {got!r})"
        if isinstance(got, (str, int, float, bool)) and not _is_secret(model, loc[:2])
        else ""
    )
    if kind in ("model_type", "dict_type", "model_attributes_type") and len(loc) <= (
        1 if model is Settings else 0
    ):
        return f"expected a table{shown}"
    if kind == "is_instance_of" and model is Settings and loc[-1:] and loc[-1] in _PATH_KEYS:
        return f"expected a path (a string){shown}"
    msg = str(err.get("msg", "invalid value"))
    if kind == "value_error":  # a validator's own sentence already names the value
        return msg.removeprefix("Value error, ")
    return f"{msg}{shown}" if kind != "missing" else msg


def _unknown(loc: tuple[str, ...], model: type[BaseModel]) -> str:
    """An unknown key, with the closest known name of its table. (A table that is not a section
    is kept for the worlds, and refused by bot/registered.py if no world declares it.)"""
    found = _field_at(model, loc[:-1]) if loc[:-1] else (model, model)
    table = found[1] if found else None
    if not (isinstance(table, type) and issubclass(table, BaseModel)):
        return "unknown key"
    return "unknown key" + did_you_mean(loc[-1], table.model_fields)


def problems_of(exc: ValidationError, where: str, model: type[BaseModel] = Settings, table: str = "") -> str:
    """Each error of ``exc`` on a line: the file, ``[section] key`` and what was wrong. ``table``
    names the table of the file ``model`` read (a world's), when it is not the settings."""
    problems = []
    for err in exc.errors():
        loc = [str(p) for p in err["loc"]]
        if table:
            loc = [table, *loc]
        key = f"[{loc[0]}] {'.'.join(loc[1:])}" if len(loc) > 1 else f"[{loc[0]}]" if loc else "?"
        problems.append(f"{where}: {key}: {_describe(err, model)}")
    return "\n".join(problems)


def _read_toml(path: Path) -> dict[str, Any]:
    """The file's TOML table; any problem reading or decoding it is a ConfigError naming it."""
    try:
        mode = path.stat().st_mode
        if stat.S_ISDIR(mode):
            raise ConfigError(f"{path}: is a directory, not a configuration file")
        if not stat.S_ISREG(mode):  # a FIFO would block the read, a device never ends
            raise ConfigError(f"{path}: not a regular file")
        text = path.read_bytes().decode("utf-8")
        return tomllib.loads(text)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file") from None
    except UnicodeDecodeError as exc:
        line = exc.object[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{path}: not UTF-8 text: byte 0x{exc.object[exc.start]:02x} at line {line} (offset {exc.start})"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except OSError as exc:  # a directory, no permission, a loop of symlinks, an I/O error
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (ValueError, RecursionError) as exc:  # e.g. a NUL byte, absurd nesting
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


def world_tables_of(raw: Mapping[str, Any]) -> dict[str, object]:
    """The tables of a read configuration that are not its own sections, by name as written: a
    table at the top (``browser``) and each entry of ``[worlds]`` (``worlds.tiny``), each TOML
    value as read (a world's model validates it)."""
    tables: dict[str, object] = {}
    for name, table in raw.items():
        if name in Settings.model_fields or not isinstance(table, dict):
            continue
        if name == WORLDS_TABLE:
            tables.update({f"{name}.{key}": value for key, value in table.items()})
        else:
            tables[name] = table
    return tables


def load_settings(path: Path | None = None, env: Mapping[str, str] | None = None) -> Settings:
    """Load settings from a TOML file (optional) and the environment (which wins)."""
    return settings_from(*read_config(path, env))


def read_config(path: Path | None = None, env: Mapping[str, str] | None = None) -> tuple[dict[str, Any], str]:
    """The configuration as read, before it is validated: the file's tables (``path``, else
    ``$CLANKIE_CONFIG``, else none) with the environment's values over them; and where it came
    from (the file, or ``<environment>``), as problems name it."""
    env = os.environ if env is None else env
    if path is None and env.get("CLANKIE_CONFIG"):
        path = Path(env["CLANKIE_CONFIG"])
    where = str(path) if path else "<environment>"
    raw: dict[str, Any] = {}
    if path is not None:
        raw = _read_toml(path)
        for section, key in SECRET_KEYS:
            if isinstance(raw.get(section), dict) and key in raw[section]:
                env_name = next(k for k, v in ENV_MAP.items() if v == (section, key))
                raise ConfigError(
                    f"{path}: [{section}] {key}: secrets are read from ${env_name}, not the file"
                )
        for section, values in raw.get("paths", {}).items() if isinstance(raw.get("paths"), dict) else ():
            if section in _PATH_KEYS and isinstance(values, str):
                raw["paths"][section] = Path(values).expanduser()
    for name, (section, key) in ENV_MAP.items():
        value = env.get(name)
        if value:
            raw.setdefault(section, {})
            if not isinstance(raw[section], dict):
                raise ConfigError(f"{where}: [{section}]: expected a table")
            if (section, key) in SECRET_KEYS:
                raw[section][key] = SecretStr(value)
            elif key in _PATH_KEYS:
                raw[section][key] = Path(value).expanduser()
            else:
                raw[section][key] = value
    if isinstance(raw.get("web"), dict) and isinstance(raw["web"].get("token"), str):
        raw["web"]["token"] = SecretStr(raw["web"]["token"]) if raw["web"]["token"] else None
    return raw, where


def settings_from(raw: Mapping[str, Any], where: str) -> Settings:
    """Settings from a read configuration (:func:`read_config`); a :class:`ConfigError` with a
    line for each problem, naming ``where``."""
    try:
        settings = Settings.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(problems_of(exc, where)) from None
    settings._source = where
    return settings
