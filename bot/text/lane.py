"""The text lane's workers: one per channel, at most one reply in flight there.

A mention (:meth:`TextLane.heard`) is judged at once: the lane off in that server or channel,
or a rate window full, gets no reply and its receipt. Otherwise its line joins the channel's
conversation and waits for the channel's worker. The worker takes every waiting mention into one
turn: a lone mention in a quiet channel is asked at once. Before the model has answered, a mention
that arrives cancels the request, and the turn waits for the channel to go quiet (no mention for
``burst_quiet_s``, at most ``burst_max_wait_s`` after the first one broke in) before asking again
with everything — so a burst costs its first request and one more, not one per mention (at most
``max_redo`` asks again); after that, or once the model has answered, a mention waits for the next
turn, which answers everything that came meanwhile together. While a turn
thinks the channel shows him typing. The reply is a Discord reply to the newest message it
answers, pinging nobody but that message's author; a picture he chose to show rides in the same
message, and an upload that fails never loses the words. A turn that outlives
``reply_timeout_s`` (the model, the wait for a free slot) ends with one short line.

When the server's money budget is spent (:class:`bot.usage.budget.Budget`), a turn asks no model:
the first mention after it gets one line saying he is out until the budget resets, and every
mention until the window turns gets nothing (receipt decision ``budget``). A turn already asking
when the budget ran out settles.

After a restart the first mention in a channel reads the channel's recent history back
(without Message Content, exactly his own messages and those mentioning him), so no transcript
is stored by us."""

from __future__ import annotations

import asyncio
import contextlib
import io
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import discord
import structlog

from bot import metrics
from bot.tasks import TaskOwner
from bot.text.conversation import ChannelConversation, Line, clip
from bot.text.limits import InFlight, RateWindows
from bot.text.mind import Thought, Usage
from bot.text.reply import PICTURE_FAILED, only_author, parts
from bot.text.switches import Switches
from bot.web.share_types import Place

log = structlog.get_logger("clankie.text")

Decision = Literal["answered", "folded", "rate_limited", "off", "failed", "budget"]
HISTORY_PAGE = 100  # messages read back after a restart: one GET /channels/{id}/messages (its most)
TYPING_EVERY_S = 8.0  # Discord shows typing for about 10 s per call
TOO_SLOW = "Sorry, I couldn't think that through in time. Try me again in a bit?"
FAILED = "Sorry, something went wrong while I was thinking. Try me again in a bit?"
EMPTY = "I don't have an answer for that."
OUT_OF_BUDGET = "I've used up my budget {when}, so I'll be quiet here until it resets. See you then!"


class Ceiling(Protocol):
    """What the lane asks of the money budget (:class:`bot.usage.budget.Budget`)."""

    def out_window(self, guild_id: int | None) -> tuple[str, str] | None: ...

    def first_said(self, guild_id: int | None, who: str) -> bool: ...


def out_of_budget(window: str) -> str:
    """The one line, for the spent window (``day …`` or ``month …``)."""
    return OUT_OF_BUDGET.format(when="for today" if window.startswith("day") else "for this month")


@dataclass(frozen=True)
class LaneBounds:
    """The lane's bounds in one server (``[text]`` with its override)."""

    enabled: bool
    channels: tuple[int, ...]  # () every channel
    history_messages: int
    history_chars: int
    message_chars: int
    reply_timeout_s: float
    max_redo: int
    burst_quiet_s: float
    burst_max_wait_s: float


@dataclass
class Mention:
    message: discord.Message
    line: Line
    arrived: float = field(default_factory=time.monotonic)


@dataclass
class TurnTimes:
    queue_ms: int = 0
    model_ms: int = 0
    post_ms: int = 0


Thinker = Callable[[Place, list[Line], list[Line], Usage], Coroutine[Any, Any, Thought]]
Receipt = Callable[[discord.Message, Decision, TurnTimes, Usage | None], None]
RoomIngress = Callable[[int, int, str, str], object]
"""(guild id, author id, display name, words): an admitted mention as a room line for play."""


def readable(message: discord.Message, me_id: int, limit: int) -> str:
    """The message's words for the model: mentions as @names, clipped with a note."""
    text = message.content
    for user in message.mentions:
        name = "Clankie" if user.id == me_id else user.display_name
        text = text.replace(f"<@{user.id}>", f"@{name}").replace(f"<@!{user.id}>", f"@{name}")
    return clip(text.strip(), limit)


def line_of(message: discord.Message, me_id: int, limit: int) -> Line:
    return Line(
        message.id,
        message.author.id,
        message.author.display_name,
        readable(message, me_id, limit),
        message.author.id == me_id,
    )


def mentions_me(message: discord.Message, me_id: int) -> bool:
    return any(user.id == me_id for user in message.mentions)


class ChannelLane:
    """One channel's conversation and its one worker."""

    def __init__(
        self, lane: TextLane, channel: discord.abc.Messageable, guild_id: int, channel_id: int
    ) -> None:
        self.lane = lane
        self.channel = channel
        self.guild_id = guild_id
        self.channel_id = channel_id
        bounds = lane.bounds(guild_id)
        self.conversation = ChannelConversation(
            max_lines=bounds.history_messages, max_chars=bounds.history_chars
        )
        self.rebuilt = False
        self.pending: list[Mention] = []
        self.arrived = asyncio.Event()
        self.worker: asyncio.Task[None] | None = None

    def take(self, mention: Mention) -> None:
        self.conversation.add(mention.line)
        self.pending.append(mention)
        self.arrived.set()
        if self.worker is None or self.worker.done():
            self.worker = self.lane.owner.spawn(self._work(), f"text-lane-{self.channel_id}")

    def _take_pending(self) -> list[Mention]:
        taken, self.pending = self.pending, []
        return taken

    async def _work(self) -> None:
        if not self.rebuilt:
            await self._rebuild(self.pending[0].message.id if self.pending else None)
        while self.pending:
            await self._turn()

    async def _rebuild(self, before: int | None) -> None:
        """The lane from the channel's own recent history: his messages and those mentioning him
        (without Message Content, what comes back with words in it). One page of the channel's
        newest ``HISTORY_PAGE`` messages is read, whatever they are, and the newest
        ``history_messages`` of those that are the lane's are kept: in a busy channel his lines
        are few among the rest."""
        self.rebuilt = True
        bounds = self.lane.bounds(self.guild_id)
        me = self.lane.me_id()
        kept = 0
        try:
            history = self.channel.history(
                limit=HISTORY_PAGE, before=discord.Object(before) if before else None
            )
            async for message in history:  # newest first
                if message.id in self.conversation or not message.content.strip():
                    continue
                if message.author.id == me or (not message.author.bot and mentions_me(message, me)):
                    self.conversation.add(line_of(message, me, bounds.message_chars))
                    kept += 1
                    if kept >= bounds.history_messages:  # older ones would not be kept
                        break
        except discord.HTTPException as exc:
            log.warning("text_history_unread", channel_id=self.channel_id, status=exc.status)

    async def _typing(self) -> None:
        while True:
            with contextlib.suppress(discord.HTTPException):
                await self.channel.typing()
            await asyncio.sleep(TYPING_EVERY_S)

    async def _turn(self) -> None:
        lane = self.lane
        bounds = lane.bounds(self.guild_id)
        batch = self._take_pending()
        if lane.budget is not None and (spent := lane.budget.out_window(self.guild_id)) is not None:
            await self._out_of_budget(batch, spent[0])
            return
        times = TurnTimes()
        usage = Usage()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + bounds.reply_timeout_s
        typing = lane.owner.spawn(self._typing(), f"text-typing-{self.channel_id}")
        thought: Thought | None = None
        words: str
        try:
            started = time.monotonic()
            try:
                async with asyncio.timeout_at(deadline):
                    await lane.in_flight.acquire(self.guild_id)
            except TimeoutError:
                times.queue_ms = _ms(started)
                words = TOO_SLOW
            else:
                times.queue_ms = _ms(started)
                try:
                    thought = await self._think(batch, bounds, deadline, usage)
                    words = thought.text or EMPTY
                except TimeoutError:
                    words = TOO_SLOW
                    log.warning(
                        "text_reply_timed_out", channel_id=self.channel_id, after_s=bounds.reply_timeout_s
                    )
                except Exception as exc:
                    words = FAILED
                    log.warning(
                        "text_reply_failed",
                        channel_id=self.channel_id,
                        error=f"{type(exc).__name__}: {str(exc)[:200]}",
                    )
                finally:
                    times.model_ms = _ms(started) - times.queue_ms
                    await lane.in_flight.release(self.guild_id)
        finally:
            typing.cancel()
        posted_at = time.monotonic()
        newest = batch[-1]
        sent = await self._post(newest.message, words, thought.still if thought else None)
        times.post_ms = _ms(posted_at)
        if sent is not None:
            self.conversation.add(line_of(sent, lane.me_id(), bounds.message_chars))
        decision: Decision = "answered" if sent is not None and thought is not None else "failed"
        for mention in batch[:-1]:
            lane.receipt(mention.message, "folded", times, None)
        lane.receipt(newest.message, decision, times, usage)
        metrics.text_reply_latency(time.monotonic() - newest.arrived)

    async def _out_of_budget(self, batch: list[Mention], window: str) -> None:
        """The budget is spent: the first mention of the window gets the one line, the rest
        nothing; no model is asked."""
        lane = self.lane
        times = TurnTimes()
        assert lane.budget is not None
        if lane.budget.first_said(self.guild_id, "text"):
            log.warning("text_budget_spent", guild_id=self.guild_id, window=window)
            posted_at = time.monotonic()
            sent = await self._post(batch[-1].message, out_of_budget(window), None)
            times.post_ms = _ms(posted_at)
            if sent is not None:
                self.conversation.add(line_of(sent, lane.me_id(), lane.bounds(self.guild_id).message_chars))
        for mention in batch:
            lane.receipt(mention.message, "budget", times, None)

    async def _think(
        self, batch: list[Mention], bounds: LaneBounds, deadline: float, usage: Usage
    ) -> Thought:
        """The model's reply to ``batch``; mentions that came while the turn waited for its slot,
        or that arrive before the model answered, join ``batch`` (in place, so a turn that times
        out still answers them). One that arrives before the answer cancels the request; the model
        is asked again, once the channel is quiet (:meth:`_quiet`), with all of them (at most
        ``max_redo`` times). Raises TimeoutError past ``deadline``."""
        place = Place(str(self.guild_id), str(self.channel_id), whole_guild=True)
        redo = 0
        async with asyncio.timeout_at(deadline):
            while True:
                batch.extend(self._take_pending())
                self.arrived.clear()
                asked = [m.line for m in batch]
                thinking = self.lane.owner.spawn(
                    self.lane.thinker(place, self.conversation.lines, asked, usage),
                    f"text-think-{self.channel_id}",
                    report_failure=False,
                )
                try:
                    if redo < bounds.max_redo:
                        woke = self.lane.owner.spawn(self.arrived.wait(), f"text-woke-{self.channel_id}")
                        try:
                            await asyncio.wait({thinking, woke}, return_when=asyncio.FIRST_COMPLETED)
                        finally:
                            woke.cancel()
                    if thinking.done() or redo >= bounds.max_redo:
                        return await thinking
                finally:
                    if not thinking.done():
                        thinking.cancel()
                        with contextlib.suppress(asyncio.CancelledError):
                            await asyncio.wait({thinking})
                redo += 1
                await self._quiet(bounds)
                log.info(
                    "text_turn_redone",
                    channel_id=self.channel_id,
                    redo=redo,
                    mentions=len(batch) + len(self.pending),
                )

    async def _quiet(self, bounds: LaneBounds) -> None:
        """Return once no mention has arrived for ``burst_quiet_s``, or ``burst_max_wait_s`` after
        the call, whichever comes first (a burst that never stops is still answered)."""
        loop = asyncio.get_running_loop()
        until = loop.time() + bounds.burst_max_wait_s
        while (left := until - loop.time()) > 0:
            self.arrived.clear()
            try:
                async with asyncio.timeout(min(bounds.burst_quiet_s, left)):
                    await self.arrived.wait()
            except TimeoutError:
                return

    async def _post(
        self, to: discord.Message, words: str, still: tuple[str, bytes] | None
    ) -> discord.Message | None:
        """The reply, in parts of at most 2 000 characters, the first a Discord reply to ``to``
        carrying the picture; a refused picture is sent again without it, saying so."""
        chunks = parts(words) or [EMPTY]
        mentions = only_author(to.author)
        first: discord.Message | None = None
        for index, chunk in enumerate(chunks):
            try:
                if index == 0:
                    first = await self._send_first(to, chunk, still, mentions)
                else:
                    await self.channel.send(chunk, allowed_mentions=mentions)
            except discord.HTTPException as exc:
                log.warning(
                    "text_reply_not_posted", channel_id=self.channel_id, status=exc.status, code=exc.code
                )
                return first
        return first

    async def _send_first(
        self,
        to: discord.Message,
        chunk: str,
        still: tuple[str, bytes] | None,
        mentions: discord.AllowedMentions,
    ) -> discord.Message:
        if still is not None:
            mime, data = still
            name = "screen." + ("png" if mime == "image/png" else "jpg")
            try:
                return await to.reply(
                    chunk, file=discord.File(io.BytesIO(data), filename=name), allowed_mentions=mentions
                )
            except discord.HTTPException as exc:
                log.warning(
                    "text_picture_not_sent", channel_id=self.channel_id, status=exc.status, code=exc.code
                )
                chunk = clip_with(chunk, PICTURE_FAILED)
        return await to.reply(chunk, allowed_mentions=mentions)


def clip_with(chunk: str, note: str, limit: int = 2000) -> str:
    room = limit - len(note) - 1
    return (chunk if len(chunk) <= room else chunk[: room - 1] + "…") + "\n" + note


def _ms(since: float) -> int:
    return int((time.monotonic() - since) * 1000)


class TextLane:
    """Every channel's lane in this process, their limits and caps."""

    def __init__(
        self,
        settings: Any,
        thinker: Thinker,
        me_id: Callable[[], int],
        receipt: Receipt,
        switches: Switches,
        *,
        budget: Ceiling | None = None,
        room: RoomIngress | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings  # bot.config.TextSettings
        self.budget = budget
        self.room = room  # where an admitted mention also reaches the server's play (issue 36)
        self.thinker = thinker
        self.me_id = me_id
        self.receipt = receipt
        self.owner = TaskOwner("text-lane")
        self.users = RateWindows(settings.user_per_minute, clock)
        self.channels = RateWindows(settings.channel_per_minute, clock)
        self.in_flight = InFlight(settings.guild_in_flight, settings.process_in_flight)
        self.lanes: dict[int, ChannelLane] = {}
        self.switches = switches  # what moderators said (/clankie text): wins over [text]

    def bounds(self, guild_id: int) -> LaneBounds:
        s = self.settings
        said = self.switches.of(guild_id)
        enabled = s.enabled_in(guild_id) if said.enabled is None else said.enabled
        channels = tuple(s.channels_in(guild_id)) if said.channels is None else said.channels
        return LaneBounds(
            enabled,
            channels,
            s.history_messages,
            s.history_chars,
            s.message_chars,
            s.reply_timeout_s,
            s.max_redo,
            s.burst_quiet_s,
            s.burst_max_wait_s,
        )

    def heard(self, message: discord.Message) -> Decision | None:
        """Judge a message: None when it is not the lane's (no server, a bot's, not mentioning
        him); a decision when it gets no reply; ``"answered"`` when it waits for its turn."""
        me = self.me_id()
        guild = message.guild
        if guild is None or message.author.bot or not mentions_me(message, me):
            return None
        bounds = self.bounds(guild.id)
        where = getattr(message.channel, "parent_id", None) or message.channel.id
        if not bounds.enabled or (
            bounds.channels and where not in bounds.channels and message.channel.id not in bounds.channels
        ):
            self.receipt(message, "off", TurnTimes(), None)
            return "off"
        if not self.users.allow(message.author.id) or not self.channels.allow(message.channel.id):
            self.receipt(message, "rate_limited", TurnTimes(), None)
            return "rate_limited"
        lane = self.lanes.get(message.channel.id)
        if lane is None:
            lane = self.lanes[message.channel.id] = ChannelLane(
                self, message.channel, guild.id, message.channel.id
            )
        line = line_of(message, me, bounds.message_chars)
        if self.room is not None:  # a room line for the server's play, if it plays (bot.play.room_lines)
            self.room(guild.id, message.author.id, message.author.display_name, line.text)
        lane.take(Mention(message, line))
        return "answered"

    async def idle(self) -> None:
        """Return once no channel has a turn waiting or in flight (every receipt written)."""
        while busy := [lane.worker for lane in self.lanes.values() if lane.worker and not lane.worker.done()]:
            await asyncio.wait(busy)

    async def close(self) -> None:
        await self.owner.close()
