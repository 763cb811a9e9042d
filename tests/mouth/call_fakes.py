"""The Discord side of a voice call, faked at the seam ``bot.mouth.calls.Calls`` takes (a channel, a
connector that hands out voice clients, a media factory), and a sleep the test drives: every step
of a call's lifecycle is ordered by asyncio events, never by time."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

BOT_ID = 900
ADA, BOB, HELPER_BOT = 1, 2, 800


@dataclass
class Member:
    id: int
    display_name: str
    bot: bool = False


@dataclass
class Guild:
    id: int
    members: dict[int, Member] = field(default_factory=dict)

    def get_member(self, user_id: int, /) -> Member | None:
        return self.members.get(user_id)


@dataclass(eq=False)
class Channel:
    """A voice channel: ``voice_states`` holds who is in it (by user id), as discord.py's does."""

    id: int
    name: str
    guild: Guild
    voice_states: dict[int, object] = field(default_factory=dict)

    def enter(self, member: Member) -> None:
        self.guild.members.setdefault(member.id, member)
        self.voice_states[member.id] = object()

    def leave(self, user_id: int) -> None:
        self.voice_states.pop(user_id, None)


def server(guild_id: int, *channels: tuple[int, str], people: tuple[int, ...] = (ADA,)) -> list[Channel]:
    """A server's voice channels; ``people`` (and the bot's own member) are cached members, and
    the people are in the first channel."""
    guild = Guild(guild_id, {BOT_ID: Member(BOT_ID, "Clankie", bot=True)})
    made = [Channel(cid, name, guild) for cid, name in channels]
    for user_id in people:
        made[0].enter(Member(user_id, f"person-{user_id}"))
    return made


class VoiceClient:
    def __init__(self, channel: Channel) -> None:
        self.channel = channel
        self.connected = True
        self.stops = 0
        self.disconnects = 0
        self.disconnecting = asyncio.Event()
        self.hold: asyncio.Event | None = None  # a disconnect waits for it (Discord slow to confirm)

    def is_connected(self) -> bool:
        return self.connected

    def stop(self) -> None:
        self.stops += 1

    async def disconnect(self, *, force: bool = False) -> None:
        self.disconnects += 1
        self.disconnecting.set()
        if self.hold is not None:
            await self.hold.wait()
        self.connected = False


class Connector:
    """Hands out voice clients. Per channel, a test may hold the next connects at a gate and make
    them fail (``plan``); ``entered`` says a connect to that channel has begun."""

    def __init__(self) -> None:
        self.clients: list[VoiceClient] = []
        self.calls: list[Channel] = []
        self._plans: dict[int, list[tuple[asyncio.Event | None, bool]]] = {}
        self._entered: dict[int, asyncio.Event] = {}

    def plan(self, channel: Channel, *, gate: asyncio.Event | None = None, fail: bool = False) -> None:
        """The next unplanned connect to ``channel`` waits for ``gate`` (if any), then fails or not."""
        self._plans.setdefault(channel.id, []).append((gate, fail))

    def entered(self, channel: Channel) -> asyncio.Event:
        return self._entered.setdefault(channel.id, asyncio.Event())

    async def __call__(self, channel: Any) -> VoiceClient:
        self.calls.append(channel)
        plans = self._plans.get(channel.id)
        gate, fail = plans.pop(0) if plans else (None, False)
        self.entered(channel).set()
        if gate is not None:
            await gate.wait()
        if fail:
            raise ConnectionError(f"no voice server for {channel.name}")
        vc = VoiceClient(channel)
        self.clients.append(vc)
        return vc


class Media:
    """Stands in for the receive path and the playback on one voice client."""

    def __init__(self, vc: Any, session: Any, tasks: Any) -> None:
        self.vc, self.session, self.tasks = vc, session, tasks
        self.stopped = False

    def stop(self) -> None:
        self.stopped = True


def media_factory() -> tuple[Callable[[Any, Any, Any], Media], list[Media]]:
    made: list[Media] = []

    def make(vc: Any, session: Any, tasks: Any) -> Media:
        media = Media(vc, session, tasks)
        made.append(media)
        return media

    return make, made


class Clock:
    """The calls' ``sleep``: each sleep is recorded and waits until the test wakes sleeps of its
    length (``wake``); ``sleeping`` waits until one of a given length is waiting."""

    def __init__(self) -> None:
        self.asked: list[float] = []
        self._waiting: list[tuple[float, asyncio.Future[None]]] = []
        self._arrived = asyncio.Event()

    async def __call__(self, seconds: float) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.asked.append(seconds)
        self._waiting.append((seconds, future))
        self._arrived.set()  # in the same step as the wait below: a sleep seen waiting is waiting
        try:
            await future
        finally:
            self._waiting = [(s, f) for s, f in self._waiting if f is not future]

    def waiting(self, seconds: float) -> int:
        return sum(1 for s, f in self._waiting if s == seconds and not f.done())

    async def sleeping(self, seconds: float, timeout: float = 5.0) -> None:  # noqa: ASYNC109
        async with asyncio.timeout(timeout):
            while self.waiting(seconds) == 0:
                self._arrived.clear()
                await self._arrived.wait()

    def wake(self, seconds: float) -> int:
        """End every sleep of ``seconds`` now waiting; returns how many."""
        woken = [f for s, f in self._waiting if s == seconds and not f.done()]
        for future in woken:
            future.set_result(None)
        return len(woken)
