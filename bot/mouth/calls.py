"""Voice calls (docs/architecture.md §12): :class:`Calls`, owned by the Character as the play hosts
are, holds every voice call of the process (one :class:`bot.mouth.call_link.CallLink` per server),
the cap on them, the servers' play relays and the connects given up on.

    link = await calls.join(channel, me=bot_user_id, accepted=defer)   # CallRefused | JoinFailed
    calls.voice_state(guild_id, member_id, before, after)             # who came, went, moved
    await calls.leave(guild_id, reason)
    await calls.close()                                               # every call, relay, task

- join: refused at once (``CallRefused``, a sentence for the person) with no voice model, while
  the server's last connect given up on is still being undone, when he is already in that
  channel, or over ``[limits] voice_calls`` (in a server without a call of its own). The cap is
  checked and the slot claimed with no ``await`` between, so two servers cannot both take the last
  slot; only then is ``accepted()`` awaited (the cog defers its reply there). A join in another
  channel of the same server takes the place of the server's call, which is closed first (a
  call still connecting fails at once, and its connect is waited out: discord.py holds one voice
  client per server). A join that fails (``JoinFailed``) gives up only its own claim: a
  concurrent join of the same server keeps its own. Its clean-up runs after, owned here.
- connect within ``connect_timeout``: a connect that takes longer (or whose caller went away)
  fails at once and finishes (or is undone: a client that connects after all is left again) in
  the background, a task of ``connects``.
- relays: each server that plays, or has a call, has its own ``PlayRelay`` (made on first use,
  and for every server whose play begins once ``start()`` has run), with that server's play
  host and receipt trail, so narration never crosses servers.
- close: every call, then the connects given up on, then the relays, and last the process's
  receipt writer (``receipts.WRITER``), once everything that wrote receipts is closed.

Discord is reached only through the connector (``connect(channel)`` → a voice client) and the
media factory; by default those of ``bot.mouth.discord_call`` (imported when first used, so the
Character does not load discord.py's voice stack). Tests hand in fakes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import structlog

from bot.config import Settings
from bot.mouth.call_link import CallChannel, CallLink, CallMedia, Superseded, VoiceLike, leave_quietly
from bot.mouth.call_timers import Backoff
from bot.mouth.play_relay import PlayRelay
from bot.mouth.realtime.session import MouthHost, MouthSession
from bot.mouth.receipts import WRITER as RECEIPT_WRITER
from bot.tasks import TaskOwner

if TYPE_CHECKING:
    from bot.play.guild_hosts import PlayHosts

log = structlog.get_logger("clankie.mouth.calls")

Connector = Callable[[CallChannel], Awaitable[VoiceLike]]
MediaFactory = Callable[[VoiceLike, MouthSession, TaskOwner], CallMedia]
Sleep = Callable[[float], Awaitable[None]]

NO_VOICE_MODEL = "My voice needs an OpenAI API key (OPENAI_API_KEY) and none is set up here."
STILL_LEAVING = "I'm still backing out of my last try to join; ask me again in a few seconds."
SHUTTING_DOWN = "I'm shutting down; ask me again once I'm back."
REPLACED = "another join took its place"  # why a server's call ends when a join elsewhere in it opens
CONNECT_TIMEOUT_S = 20.0
WATCHDOG_S = 15.0
OUT_OF_BUDGET = "I've used up my budget for now, so I'm heading out. See you when it resets!"
BUDGET_LINE_S = 15.0  # how long his last line may take to be said before he leaves anyway


class CallRefused(Exception):
    """A join refused before anything was done; ``text`` is the answer for the person."""

    def __init__(self, reason: str, text: str) -> None:
        super().__init__(text)
        self.reason, self.text = reason, text


class JoinFailed(Exception):
    """A join that was tried and failed; ``why`` says how, in a few words."""

    def __init__(self, channel: str, why: str) -> None:
        super().__init__(f"could not join {channel}: {why}")
        self.channel, self.why = channel, why


class Calls:
    def __init__(
        self,
        settings: Settings,
        plays: PlayHosts,
        in_call: Callable[[int, int], MouthHost],
        *,
        connector: Connector | None = None,
        media: MediaFactory | None = None,
        openai_client: Any | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.settings = settings
        self._plays = plays
        self._in_call = in_call
        self.connector: Connector = connector or self._connect_discord
        self.media: MediaFactory = media or _discord_media
        self.openai_client = openai_client
        self.sleep = sleep
        self.connect_timeout = CONNECT_TIMEOUT_S
        self.watchdog_s = WATCHDOG_S
        self.backoff = Backoff()
        self.links: dict[int, CallLink] = {}  # per server: its call (claimed, open, or leaving)
        self._live: set[CallLink] = set()  # every call not closed yet, a failed or replaced one too
        # per server: a connect given up on, still finishing (or being undone) in the background
        self.late_connects: dict[int, asyncio.Task[None]] = {}
        self.connects = TaskOwner("voice-connect")
        self.endings = TaskOwner("voice-join-failed")  # the clean-up of the joins that failed
        self.relays: dict[int, PlayRelay] = {}  # per server: its play's turns to its call's mouth
        self.closed = False
        self._watching = False
        self.budget_line_s = BUDGET_LINE_S
        plays.usage.ledger.listeners.append(self._counted)

    # -- relays -----------------------------------------------------------------------------------
    def relay_of(self, guild_id: int) -> PlayRelay:
        """The relay of a server's play (made and started on first use)."""
        relay = self.relays.get(guild_id)
        if relay is None:
            if self.closed:
                raise RuntimeError(f"the voice calls are closed; no relay for server {guild_id}")
            host = self._plays.of(guild_id)
            relay = self.relays[guild_id] = PlayRelay(
                host,
                host.paths.receipts,
                cooldown_s=self.settings.voice.narration_cooldown_s,
                update_interval_s=self.settings.voice.play_update_interval_s,
            )
            relay.start()
        return relay

    def start(self) -> None:
        """From now on every server whose play begins gets its relay, so a turn that wants to
        speak with no call to speak in still leaves its refusal receipt."""
        if not self._watching:
            self._watching = True
            self._plays.on_host(self._play_began)

    def _play_began(self, guild_id: int | None) -> None:
        if guild_id is not None and not self.closed:
            self.relay_of(guild_id)

    # -- joining ----------------------------------------------------------------------------------
    def voice_ready(self) -> bool:
        cfg = self.settings.openai
        return self.openai_client is not None or cfg.api_key is not None or cfg.base_url is not None

    def link_of(self, guild_id: int) -> CallLink | None:
        return self.links.get(guild_id)

    def claim(self, channel: CallChannel, *, me: int | None) -> CallLink:
        """Check that ``channel`` may be joined and claim its server's slot, with no await (so
        no other join runs between the check and the claim). Raises :class:`CallRefused`."""
        guild_id = channel.guild.id
        if self.closed:
            raise CallRefused("shutting_down", SHUTTING_DOWN)
        spent = self._plays.usage.budget.out(guild_id)
        if spent is not None:
            raise CallRefused("budget", f"I'm out of budget until it resets: {spent}.")
        if not self.voice_ready():
            raise CallRefused("no_voice_model", NO_VOICE_MODEL)
        if guild_id in self.late_connects:  # discord.py still undoing the last try
            raise CallRefused("still_leaving", STILL_LEAVING)
        existing = self.links.get(guild_id)
        if existing is not None and existing.channel.id == channel.id and not existing.leaving:
            raise CallRefused("already_here", f"I'm already here in **{channel.name}**.")
        cap = self.settings.limits.voice_calls
        holds_a_slot = existing is not None and not existing.leaving  # a call that is ending does not
        elsewhere = [g for g, held in self.links.items() if g != guild_id and not held.leaving]
        if not holds_a_slot and len(elsewhere) >= cap:
            raise CallRefused(
                "cap_voice_calls",
                f"Every voice call this process may join is taken by other servers ([limits] voice_calls = "
                f"{cap}); try again when one of them ends.",
            )
        link = CallLink(self, channel, me, self._session_for)
        link.replaces = existing
        self.links[guild_id] = link
        self._live.add(link)
        return link

    async def join(
        self,
        channel: CallChannel,
        *,
        me: int | None,
        accepted: Callable[[], Awaitable[object]] | None = None,
    ) -> CallLink:
        """Join ``channel``: :meth:`claim`, then ``accepted()`` (the caller's own step, the
        cog's deferred reply), then connect and open. Raises :class:`CallRefused` before
        ``accepted`` is called, :class:`JoinFailed` after."""
        link = self.claim(channel, me=me)
        try:
            if accepted is not None:
                await accepted()
            replaced, link.replaces = link.replaces, None
            if replaced is not None:
                await replaced.close(REPLACED)
            late = self.late_connects.get(channel.guild.id)
            if late is not None:  # the replaced call's connect: one voice client a server
                await asyncio.wait({late})  # (discord.py), so not before it is undone
            await link.open()
        except BaseException as exc:
            self._release(link)
            why = _why(exc)
            log.warning("voice_join_failed", channel=channel.name, error=f"{type(exc).__name__}: {exc}")
            if not self.endings.closed:
                self.endings.spawn(link.close("join failed"), f"voice-join-failed-{channel.guild.id}")
            if isinstance(exc, Exception):
                raise JoinFailed(channel.name, why) from exc
            raise
        log.info("voice_join", guild_id=channel.guild.id, channel=channel.name, by=me)
        return link

    def _release(self, link: CallLink) -> None:
        """Give up a join's claim: its server's slot, if it still holds it (never another's)."""
        if self.links.get(link.guild_id) is link:
            del self.links[link.guild_id]

    def forget(self, link: CallLink) -> None:
        """A call has closed (called by the link)."""
        self._release(link)
        self._live.discard(link)

    def _session_for(self, link: CallLink) -> MouthSession:
        guild = link.channel.guild

        def name_of(user_id: int) -> str | None:
            member = guild.get_member(user_id)
            return member.display_name if member is not None else None

        return MouthSession(
            self._in_call(guild.id, link.channel.id),
            receipt_path=self._plays.of(guild.id).paths.receipts,
            client=self.openai_client,
            name_of=name_of,
            label=f"{guild.id}/{link.channel.id}",
            humans=link.human_ids,
            usage=self._plays.usage.scope(guild.id, "voice"),
        )

    # -- connecting -------------------------------------------------------------------------------
    async def _connect_discord(self, channel: CallChannel) -> VoiceLike:
        from bot.mouth.discord_call import connect  # discord.py's voice stack, only when used

        return await connect(channel, self.connect_timeout)

    async def connect_within(self, channel: CallChannel) -> VoiceLike:
        """The connector, answered within ``connect_timeout`` whatever it does after.

        discord.py's ``connect(timeout=t)`` raises only after its own cleanup, which waits up to
        another ``t`` for Discord to confirm the disconnect, so a failed join took twice what
        ``/voice join`` promises. Here the join fails at ``connect_timeout`` and the connect
        goes on in the background: its cleanup finishes there, and a client that connects after
        all is disconnected again.
        """
        guild_id = channel.guild.id
        # its outcome is taken here, or by _finish_late: the owner need not report it
        task = self.connects.spawn(
            _awaited(self.connector(channel)), f"voice-connect-{guild_id}", report_failure=False
        )
        try:
            done, _ = await asyncio.wait({task}, timeout=self.connect_timeout)
        except asyncio.CancelledError:  # the caller went away (a call closed mid-rejoin)
            self._give_up(guild_id, task)
            raise
        if task in done:
            return task.result()
        self._give_up(guild_id, task)
        raise TimeoutError(f"voice connect to {channel.id} took over {self.connect_timeout:g} s")

    def _give_up(self, guild_id: int, connect: asyncio.Task[VoiceLike]) -> None:
        if not self.connects.closed:  # else the close is ending the connect already
            self.late_connects[guild_id] = self.connects.spawn(
                self._finish_late(guild_id, connect), f"voice-late-connect-{guild_id}"
            )

    async def _finish_late(self, guild_id: int, connect: asyncio.Task[VoiceLike]) -> None:
        """A connect given up on: let it finish, and leave again if it connected after all."""
        try:
            try:
                vc = await connect
            except Exception as exc:
                log.info("voice_connect_gave_up", guild_id=guild_id, error=f"{type(exc).__name__}: {exc}")
                return
            log.info("voice_connect_late", guild_id=guild_id)
            await leave_quietly(vc)  # connected after the join had failed: leave
        finally:
            if self.late_connects.get(guild_id) is asyncio.current_task():
                del self.late_connects[guild_id]

    # -- events -----------------------------------------------------------------------------------
    def voice_state(
        self, guild_id: int, member_id: int, before: CallChannel | None, after: CallChannel | None
    ) -> None:
        """Someone's voice state changed in a server (the bot's own included)."""
        link = self.links.get(guild_id)
        if link is None or link.leaving:
            return
        if link.me is not None and member_id == link.me:
            if after is None:
                link.dropped("the bot's voice state left the channel")
            elif after.id != link.channel.id:
                link.moved(after)  # moved by a moderator: follow
            return
        if before is not None and before.id == link.channel.id:
            if after is None or after.id != link.channel.id:
                link.session.forget(member_id)
        link.people_changed()

    # -- leaving ----------------------------------------------------------------------------------
    # -- the money budget ---------------------------------------------------------------------
    def _counted(self, _guild_id: int | None, _part: str, _model: str, _counts: object) -> None:
        """A model call was counted: in every call whose server's budget is now spent, he says so
        once (for the server and window) and leaves (docs/architecture.md §12). Every call, not
        only the counted server's: a call anywhere (or local play) can spend the limit of all
        servers, and then each server's call ends, as the one that spent it."""
        if self.closed:
            return
        budget = self._plays.usage.budget
        for guild_id, link in list(self.links.items()):
            if link.leaving or budget.out(guild_id) is None:
                continue
            if budget.first_said(guild_id, "voice"):
                self.endings.spawn(self._out_of_budget(link), f"voice-budget-{guild_id}")

    async def _out_of_budget(self, link: CallLink) -> None:
        log.warning(
            "voice_budget_spent", guild_id=link.guild_id, reason=self._plays.usage.budget.out(link.guild_id)
        )
        session = link.session
        if await session.say(OUT_OF_BUDGET):
            with contextlib.suppress(TimeoutError):
                await session.wait_until(lambda: not session.speaking, self.budget_line_s)
        if self.links.get(link.guild_id) is link:
            await self.leave(link.guild_id, "budget")

    async def leave(self, guild_id: int, reason: str) -> CallLink | None:
        """End a server's call; the call that ended (None when it had none)."""
        link = self.links.get(guild_id)
        if link is not None:
            await link.close(reason)
        return link

    async def leave_all(self, reason: str) -> None:
        """End every call (a failed or replaced one still closing too)."""
        for link in list(self._live):
            await link.close(reason)

    async def close(self) -> None:
        """End every call, the connects given up on and the relays; close the receipt writer
        last. Nothing is joined after."""
        self.closed = True
        await self.leave_all("unloading")
        await self.endings.close()
        await self.connects.close()
        for relay in list(self.relays.values()):
            await relay.close()
        await RECEIPT_WRITER.close()  # every relay and mouth that wrote receipts is closed: end its thread


def _why(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "it timed out"
    if isinstance(exc, Superseded):
        return str(exc)
    return type(exc).__name__


async def _awaited(connecting: Awaitable[VoiceLike]) -> VoiceLike:
    return await connecting


def _discord_media(vc: VoiceLike, session: MouthSession, tasks: TaskOwner) -> CallMedia:
    from bot.mouth.discord_call import discord_media  # discord.py's voice stack, only when used

    return discord_media(vc, session, tasks)
