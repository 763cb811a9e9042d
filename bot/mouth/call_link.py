"""One voice call (docs/architecture.md §12): :class:`CallLink` ties a channel, its voice client, the
media on it (receive and playback) and one :class:`MouthSession`, from join to leave. Made,
opened and closed by :class:`bot.mouth.calls.Calls`; nothing here knows discord.py.

What a call needs from Discord is the seam below: a channel (``CallChannel``: its id, name,
server and who is in it) and a voice client (``VoiceLike``: connected or not, stop, disconnect),
handed out by the call's connector; the media on a client is made by a factory
(``bot.mouth.discord_call.discord_media`` in the bot, a fake in tests).

- open: connect (within ``Calls.connect_timeout``), start the media and the realtime session,
  attach the session to its server's play relay, start the watchdog. A call closed while it
  connects (a later join of the same server took its place, a leave) fails at once
  (``Superseded``, saying why); its connect goes on in the background, given up on, and a client
  it brings is left again.
- leave: ``close(reason)``, by ``/voice leave``, by the idle timer once nobody (no human) has been
  in the channel for ``[voice] idle_leave_seconds``, or by a rejoin that gives up.
- a dropped connection (``dropped``: the bot's own voice state went away without a leave, or the
  watchdog saw the client disconnected twice in a row, past discord.py's own reconnects) is
  rejoined with ``Calls.backoff``; the session, and with it the realtime conversation, is kept.

Tasks: the link's ``TaskOwner("voice-link")`` owns its watchdog, its rejoin and the media's
keepalive; ``close()`` ends them all before it returns.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol

import structlog

from bot import metrics
from bot.mouth.call_timers import IdleTimer
from bot.mouth.realtime.session import MouthSession
from bot.tasks import TaskOwner

if TYPE_CHECKING:
    from bot.mouth.calls import Calls

log = structlog.get_logger("clankie.mouth.calls")


class CallMember(Protocol):
    @property
    def bot(self) -> bool: ...

    @property
    def display_name(self) -> str: ...


class CallGuild(Protocol):
    @property
    def id(self) -> int: ...

    def get_member(self, user_id: int, /) -> CallMember | None: ...


class CallChannel(Protocol):
    """What a call reads of its channel (a discord.py ``VoiceChannel`` or ``StageChannel`` is one)."""

    @property
    def id(self) -> int: ...

    @property
    def name(self) -> str: ...

    @property
    def guild(self) -> CallGuild: ...

    @property
    def voice_states(self) -> Mapping[int, object]: ...


class VoiceLike(Protocol):
    """What a call does with its voice client (a discord.py ``VoiceClient`` is one)."""

    def is_connected(self) -> bool: ...

    def stop(self) -> None: ...

    async def disconnect(self, *, force: bool = False) -> None: ...


class CallMedia(Protocol):
    """Receive and playback on one voice client; ``stop()`` ends both."""

    def stop(self) -> None: ...


async def leave_quietly(vc: VoiceLike) -> None:
    with contextlib.suppress(Exception):
        await vc.disconnect(force=True)


class CallLink:
    """One voice call: its channel, voice client, media and MouthSession."""

    def __init__(
        self,
        calls: Calls,
        channel: CallChannel,
        me: int | None,
        make_session: Callable[[CallLink], MouthSession],
    ) -> None:
        self.calls = calls
        self.channel = channel
        self.me = me  # the bot's own user id: not one of the people in the call
        self.vc: VoiceLike | None = None
        self.media: CallMedia | None = None
        self.replaces: CallLink | None = None  # the server's call this one takes the place of
        self.leaving = False
        self.ended_by = ""  # why it was closed (said to a join it ends before it opened)
        self.opened = False  # joined once; only then is a lost connection a drop to rejoin
        self.rejoins = 0
        self.closed = asyncio.Event()
        self.rejoined = asyncio.Event()  # set at each successful rejoin
        self.idle = IdleTimer(calls.settings.voice.idle_leave_seconds, self._idle_leave, sleep=calls.sleep)
        self.tasks = TaskOwner("voice-link")  # the watchdog, the rejoin, the media's keepalive
        self._rejoin_task: asyncio.Task[None] | None = None
        self.session = make_session(self)

    @property
    def guild_id(self) -> int:
        return self.channel.guild.id

    def human_ids(self) -> frozenset[int]:
        """The user ids of the people (not bots, not himself) in the call's channel now, read
        afresh at each call (the channel may have changed); one whose member is not cached
        counts as a person."""
        guild = self.channel.guild
        ids = set()
        for user_id in self.channel.voice_states:
            member = guild.get_member(user_id)
            if user_id != self.me and not (member is not None and member.bot):
                ids.add(user_id)
        return frozenset(ids)

    # -- open and close ---------------------------------------------------------------------------
    async def open(self) -> None:
        if self.leaving:
            raise Superseded(self.ended_by)
        # a task of the link, so that a close (a later join of the server taking its place) ends
        # the wait at once; the connect itself then goes on, given up on (Calls.connect_within)
        connecting = self.tasks.spawn(
            self.calls.connect_within(self.channel), f"voice-join-{self.guild_id}", report_failure=False
        )
        try:
            vc = await connecting
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if self.leaving and current is not None and not current.cancelling():
                raise Superseded(self.ended_by) from None
            raise
        if self.leaving:  # closed as it connected: nobody else will leave this client
            await leave_quietly(vc)
            raise Superseded(self.ended_by)
        self.attach(vc)
        await self.session.start()
        self.calls.relay_of(self.guild_id).attach(self.session)
        self.opened = True
        metrics.call_opened(self.guild_id)
        self.tasks.spawn(self._watch(), f"voice-watchdog-{self.guild_id}")
        self.people_changed()

    def attach(self, vc: VoiceLike) -> None:
        self.vc = vc
        self.media = self.calls.media(vc, self.session, self.tasks)

    def detach(self) -> VoiceLike | None:
        media, self.media = self.media, None
        if media is not None:
            media.stop()
        vc, self.vc = self.vc, None
        if vc is not None:
            vc.stop()
        return vc

    async def close(self, reason: str) -> None:
        """Leave: end the media, the client, every task of the link and the session. A close
        while another is under way returns once that one has ended."""
        if self.leaving:
            await self.closed.wait()
            return
        self.leaving, self.ended_by = True, reason
        if self.opened:
            metrics.call_closed(self.guild_id)
        log.info("voice_leave", guild_id=self.guild_id, channel=self.channel.name, reason=reason)
        try:
            self.tasks.cancel()  # not the caller: a rejoin that gives up closes the link itself
            await self.idle.close()
            relay = self.calls.relays.get(self.guild_id)
            if relay is not None:
                relay.detach(self.session)
            vc = self.detach()
            if vc is not None:
                await leave_quietly(vc)
            await self.tasks.close()
            await self.session.close()
        finally:  # whatever became of the above, the call is over: nobody waits for it forever
            self.calls.forget(self)
            self.closed.set()

    # -- presence -------------------------------------------------------------------------------
    def people_changed(self) -> None:
        if self.opened and not self.leaving:  # counted from the open on (open counts once)
            self.idle.people(len(self.human_ids()))

    def moved(self, channel: CallChannel) -> None:
        """A moderator moved him to another channel of the server: the call follows."""
        self.channel = channel
        self.people_changed()

    async def _idle_leave(self) -> None:
        await self.close("alone in the channel")

    # -- a dropped voice connection ---------------------------------------------------------------
    def dropped(self, why: str) -> None:
        rejoining = self._rejoin_task is not None and not self._rejoin_task.done()
        if self.leaving or not self.opened or rejoining:
            return
        log.warning("voice_dropped", guild_id=self.guild_id, why=why)
        self._rejoin_task = self.tasks.spawn(self._rejoin(), f"voice-rejoin-{self.guild_id}")

    async def _rejoin(self) -> None:
        for delay in self.calls.backoff.delays():
            old = self.detach()
            if old is not None:
                await leave_quietly(old)
            await self.calls.sleep(delay)
            if self.leaving:
                return
            if not self.human_ids():
                await self.close("alone after a dropped connection")
                return
            try:
                self.attach(await self.calls.connect_within(self.channel))
            except Exception as exc:
                log.warning(
                    "voice_rejoin_failed", guild_id=self.guild_id, error=f"{type(exc).__name__}: {exc}"
                )
                continue
            self.rejoins += 1
            self.rejoined.set()
            log.info("voice_rejoined", guild_id=self.guild_id, rejoins=self.rejoins)
            return
        await self.close("could not rejoin")

    async def _watch(self) -> None:
        down = 0
        while not self.leaving:
            await self.calls.sleep(self.calls.watchdog_s)
            vc = self.vc
            down = down + 1 if vc is not None and not vc.is_connected() else 0
            if down >= 2:  # past discord.py's own reconnect attempts
                down = 0
                self.dropped("voice client stayed disconnected")


class Superseded(Exception):
    """A call closed while it was still connecting (a later join of its server took its place, a
    leave, the calls closing); its text is why it was closed."""
