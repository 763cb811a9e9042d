"""How everyone outside play reads it (docs/architecture.md §10): :class:`PlayView`, the read side
of a play host (:class:`WebPlayView`, the part the web surface reads), and the JSON it answers — :class:`ActivityDigest`, the one digest of a session
that :meth:`bot.play.play_host.PlayHost.activity` builds and the web surface, the Activity's socket,
the tools and ``/play status`` all pass on.

These are types only (no behaviour, nothing imported from :mod:`bot.play`), so the web surface
and the tools read play without importing it; ``bot.play.play_host.PlayHost`` satisfies
:class:`WebPlayView` and ``bot.play.guild_hosts.PlayHosts`` :class:`PlayDirectory`, which mypy checks
where the character hands them to the web surface.

The JSON shapes are ``TypedDict``\\s, not pydantic models: every value in them is built by our
own code from objects already checked (nothing untrusted is parsed here, so there is nothing to
validate), they are read as mappings by their consumers (``digest.get("world")``), and orjson
writes them as they are — several times a second per watched server — with no model to dump.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Protocol, TypedDict, runtime_checkable

from bot.worlds.base import Still

Json = None | bool | int | float | str | list["Json"] | dict[str, "Json"]
"""A JSON value: what an action, a progress snapshot or a story card holds."""


class ViewedSpec(Protocol):
    """What is read of a session's spec (``bot.play.session_spec.SessionSpec``)."""

    @property
    def world(self) -> str: ...
    @property
    def mind(self) -> str: ...
    @property
    def max_turns(self) -> int: ...


class ViewedSession(Protocol):
    """What is read of a play session (``bot.play.session.PlaySession``)."""

    @property
    def session_id(self) -> str: ...
    @property
    def run_id(self) -> str: ...
    @property
    def journey_id(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def spec(self) -> ViewedSpec: ...
    @property
    def turn(self) -> int: ...
    @property
    def last_still(self) -> Still | None: ...


class ViewedTurn(Protocol):
    """What is read of a settled turn (``bot.play.settled_turn.SettledTurn``)."""

    @property
    def session_id(self) -> str: ...
    @property
    def turn(self) -> int: ...
    @property
    def at(self) -> str: ...
    @property
    def outcome(self) -> str: ...
    @property
    def intent(self) -> str: ...
    @property
    def action(self) -> Mapping[str, Json] | None: ...
    @property
    def effect(self) -> str | None: ...
    @property
    def detail(self) -> str | None: ...
    @property
    def objective(self) -> str | None: ...
    @property
    def speak(self) -> str | None: ...
    @property
    def speak_wanted(self) -> bool: ...
    @property
    def speak_suppressed(self) -> str | None: ...
    @property
    def progress(self) -> Mapping[str, Json]: ...
    @property
    def room(self) -> Sequence[HeardLine]: ...


class ActivityDigest(TypedDict):
    """The activity digest of one session (docs/architecture.md §10): hashes only, never pixels.

    While it plays, ``turn``, ``objective`` and ``progress`` are the session's now (the turn
    under way); once it has ended they are its last settled turn's, so a late watcher sees where
    play stopped. ``at``, ``intent`` and the ``last…`` fields are the last settled turn's either
    way (null before the first); ``frameSha256`` is the newest frame's (after play, the one
    ``/still?last=1`` serves), ``observationSha256`` and ``scene`` the newest observation's;
    ``milestoneTotal`` is how many milestones the world declares (null for none); ``ended`` is how an
    ended session ended (its outcome: ``stopped``, ``budget_exhausted``, ``budget``, ``failed``),
    null while it plays."""

    sessionId: str
    runId: str
    state: str
    ended: str | None
    world: str
    mind: str
    turn: int
    at: str | None
    objective: str | None
    intent: str | None
    lastAction: dict[str, Json] | None
    lastOutcome: str | None
    lastEffect: str | None
    progress: dict[str, Json]
    metricLabels: dict[str, str]
    milestoneTotal: int | None
    frameSha256: str | None
    observationSha256: str | None
    scene: str | None


class HeardLine(TypedDict):
    """A room line as a settled turn carries it (``bot.play.settled_turn.HeardLine``, the same
    shape): who said it, by which lane, what (clipped), and whether the decision heeded it."""

    id: str
    source: str
    name: str
    words: str
    heeded: bool


@runtime_checkable
class PlayView(Protocol):
    """The read side of a play host as the tools see it (``bot.play.play_host.PlayHost`` satisfies
    it, and so does a player mind's view of its own decision): is anything playing, its picture,
    its digest and its story card."""

    @property
    def active(self) -> object | None:
        """What is playing now, or None."""
        ...

    def live_still(self) -> Still | None: ...

    def activity(self) -> ActivityDigest | None:
        """The digest of the session playing now."""
        ...

    def recall_story(self) -> tuple[dict[str, Json] | None, bool]: ...


@runtime_checkable
class WebPlayView(PlayView, Protocol):
    """:class:`PlayView` as the web surface and the Activity's socket read it (``PlayHost``
    satisfies it): also the session itself, the last session once it has ended and its digest,
    the recent turns, the live story card and the stream of settled turns — all of it in memory,
    so watching costs play nothing."""

    @property
    def active(self) -> ViewedSession | None:
        """The session playing now (requested, running or stopping), or None."""
        ...

    @property
    def session(self) -> ViewedSession | None:
        """The latest session, playing or ended (None before the first)."""
        ...

    def last_activity(self) -> ActivityDigest | None:
        """The digest of the session that played last, once it has ended (and settled a turn)."""
        ...

    def recent_turns(self) -> Sequence[ViewedTurn]: ...

    def live_story(self) -> dict[str, Json] | None: ...

    def subscribe(self) -> AsyncIterator[ViewedTurn]: ...


class PlayDirectory(Protocol):
    """Each server's play host, for requests from outside (``bot.play.guild_hosts.PlayHosts``)."""

    def known(self, guild_id: int) -> WebPlayView | None: ...
