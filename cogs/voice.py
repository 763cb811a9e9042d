"""``/voice join`` and ``/voice leave`` (docs/architecture.md §12, §13): the Discord glue of the
mouth.

Per voice channel a :class:`VoiceLink` ties together the discord.py ``VoiceClient`` (DAVE via
``davey``), the DAVE-aware receive path (``VoiceReceiver`` → the session's room mixer), the
playback ``AudioSource`` (the session's playback buffer) and one :class:`MouthSession`. All the
mouth's behaviour lives in ``bot.mouth``; this module only connects it to Discord:

- join: the caller must be in a voice channel (else an ephemeral error); the bot connects
  un-deafened (it must hear), starts receive and playback (talk spurts only while there is
  audio) and opens the realtime session. The answer comes within ``connect_timeout``: a
  connect that takes longer (or whose caller went away) fails the join at once and finishes
  (or is undone) in the background (``Voice.connect_within``);
- leave: on ``/voice leave``, or by itself once nobody (no human) has been in the channel for
  ``[voice] idle_leave_seconds``;
- a dropped voice connection (the bot's own voice state goes away without a leave, or the
  client stays disconnected past discord.py's own reconnects) is rejoined with backoff; the
  realtime session and its conversation survive the rejoin. Nothing here raises into the bot.

Each server's play has its own relay (``bot.mouth.play_relay``), made with that server's play
host: it routes the server's settled turns to the mouth in that server's call (or refuses them
with a receipt, in that server's receipt trail, when there is none). Narration never crosses
servers. ``[limits] voice_calls`` caps the calls one process joins at once.

Tasks (``bot.tasks.TaskOwner``): each link owns its watchdog, its rejoin and its receivers'
keepalives, and ends them when it closes; the cog owns the connects given up on (each finishes,
or is undone, in the background) and ends them when it unloads. The receipts of every relay and
mouth are appended by one writer thread (``bot.mouth.receipts.WRITER``); the cog, their owner,
closes it when it unloads, after them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import Any

import discord
import structlog
from discord import app_commands
from discord.ext import commands

from bot import metrics
from bot.character import Character
from bot.mouth.discord_audio import VoicePlayback
from bot.mouth.play_relay import PlayRelay
from bot.mouth.presence import Backoff, IdleTimer
from bot.mouth.realtime.session import MouthSession
from bot.mouth.receipts import WRITER as RECEIPT_WRITER
from bot.mouth.receive.receiver import VoiceReceiver, loop_sink
from bot.tasks import TaskOwner
from cogs import character_of

log = structlog.get_logger("clankie.discord.voice")

Channel = discord.VoiceChannel | discord.StageChannel
Connector = Callable[[Channel], Coroutine[Any, Any, discord.VoiceClient]]

NOT_IN_VOICE = "Join a voice channel first, then use `/voice join` and I'll come to you."
NOT_HERE = "I'm not in a voice channel in this server."
NO_VOICE_MODEL = "My voice needs an OpenAI API key (OPENAI_API_KEY) and none is set up here."
STILL_LEAVING = "I'm still backing out of my last try to join; ask me again in a few seconds."
CONNECT_TIMEOUT_S = 20.0
WATCHDOG_S = 15.0


async def _leave_quietly(vc: discord.VoiceClient) -> None:
    with contextlib.suppress(Exception):
        await vc.disconnect(force=True)


class VoiceLink:
    """One voice channel: the VoiceClient, receive, playback and the MouthSession."""

    def __init__(self, cog: Voice, channel: Channel, session: MouthSession) -> None:
        self.cog = cog
        self.channel = channel
        self.session = session
        self.vc: discord.VoiceClient | None = None
        self.receiver: VoiceReceiver | None = None
        self.playback: VoicePlayback | None = None
        self.leaving = False
        self.opened = False  # joined once; only then is a lost connection a drop to rejoin
        self.rejoins = 0
        self.closed = asyncio.Event()
        self.rejoined = asyncio.Event()  # set at each successful rejoin
        self.idle = IdleTimer(cog.settings.voice.idle_leave_seconds, self._idle_leave)
        self.tasks = TaskOwner("voice-link")  # the watchdog, the rejoin, the receivers' keepalives
        self._rejoin_task: asyncio.Task[None] | None = None

    @property
    def guild_id(self) -> int:
        return self.channel.guild.id

    async def open(self) -> None:
        self.attach(await self.cog.connect_within(self.channel))
        await self.session.start()
        self.cog.relay_of(self.guild_id).attach(self.session)
        self.opened = True
        metrics.call_opened(self.guild_id)
        self.tasks.spawn(self._watch(), f"voice-watchdog-{self.guild_id}")
        self.people_changed()

    def attach(self, vc: discord.VoiceClient) -> None:
        self.vc = vc
        self.receiver = VoiceReceiver(
            vc, loop_sink(asyncio.get_running_loop(), self.session.feed), tasks=self.tasks
        )
        self.receiver.start()
        self.playback = VoicePlayback(vc, self.session.playback, asyncio.get_running_loop())
        self.playback.start()  # talk spurts only while there is audio

    def detach(self) -> discord.VoiceClient | None:
        if self.receiver is not None:
            self.receiver.stop()
            self.receiver = None
        if self.playback is not None:
            self.playback.stop()
            self.playback = None
        vc, self.vc = self.vc, None
        if vc is not None:
            vc.stop()
        return vc

    async def close(self, reason: str) -> None:
        if self.leaving:
            return
        self.leaving = True
        if self.opened:
            metrics.call_closed(self.guild_id)
        log.info("voice_leave", guild_id=self.guild_id, channel=self.channel.name, reason=reason)
        self.tasks.cancel()  # not the caller: a rejoin that gives up closes the link itself
        await self.idle.close()
        self.cog.relay_of(self.guild_id).detach(self.session)
        vc = self.detach()
        if vc is not None:
            with contextlib.suppress(Exception):
                await vc.disconnect(force=True)
        await self.tasks.close()
        await self.session.close()
        if self.cog.links.get(self.guild_id) is self:
            del self.cog.links[self.guild_id]
        self.closed.set()

    # -- presence -----------------------------------------------------------------------------
    def people(self) -> int:
        me = self.cog.bot.user.id if self.cog.bot.user else None
        count = 0
        for user_id in self.channel.voice_states:
            member = self.channel.guild.get_member(user_id)
            if user_id != me and not (member is not None and member.bot):
                count += 1
        return count

    def people_changed(self) -> None:
        if not self.leaving:
            self.idle.people(self.people())

    async def _idle_leave(self) -> None:
        await self.close("alone in the channel")

    # -- a dropped voice connection -------------------------------------------------------------
    def dropped(self, why: str) -> None:
        rejoining = self._rejoin_task is not None and not self._rejoin_task.done()
        if self.leaving or not self.opened or rejoining:
            return
        log.warning("voice_dropped", guild_id=self.guild_id, why=why)
        self._rejoin_task = self.tasks.spawn(self._rejoin(), f"voice-rejoin-{self.guild_id}")

    async def _rejoin(self) -> None:
        for delay in self.cog.backoff.delays():
            old = self.detach()
            if old is not None:
                with contextlib.suppress(Exception):
                    await old.disconnect(force=True)
            await asyncio.sleep(delay)
            if self.leaving:
                return
            if self.people() == 0:
                await self.close("alone after a dropped connection")
                return
            try:
                self.attach(await self.cog.connect_within(self.channel))
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
            await asyncio.sleep(self.cog.watchdog_s)
            vc = self.vc
            down = down + 1 if vc is not None and not vc.is_connected() else 0
            if down >= 2:  # past discord.py's own reconnect attempts
                down = 0
                self.dropped("voice client stayed disconnected")


class Voice(commands.Cog):
    """Clankie's mouth in a voice channel."""

    voice = app_commands.Group(name="voice", description="Clankie in your voice channel", guild_only=True)

    def __init__(
        self,
        bot: commands.Bot,
        character: Character,
        *,
        connector: Connector | None = None,
        openai_client: Any | None = None,
    ) -> None:
        self.bot = bot
        self.character = character
        self.settings = character.settings
        self.connector: Connector = connector or self._connect
        self.openai_client = openai_client
        self.connect_timeout = CONNECT_TIMEOUT_S
        self.watchdog_s = WATCHDOG_S
        self.backoff = Backoff()
        self.links: dict[int, VoiceLink] = {}
        # per guild: a connect given up on, still finishing (or being undone) in the background
        self.late_connects: dict[int, asyncio.Task[None]] = {}
        self.connects = TaskOwner("voice-connect")
        self.relays: dict[int, PlayRelay] = {}  # per server: its play's turns to its call's mouth

    def relay_of(self, guild_id: int) -> PlayRelay:
        """The relay of a server's play (made and started on first use)."""
        relay = self.relays.get(guild_id)
        if relay is None:
            host = self.character.play_of(guild_id)
            relay = self.relays[guild_id] = PlayRelay(
                host,
                host.paths.receipts,
                cooldown_s=self.settings.voice.narration_cooldown_s,
                update_interval_s=self.settings.voice.play_update_interval_s,
            )
            relay.start()
        return relay

    def _play_began(self, guild_id: int | None) -> None:
        """Every server that plays has a relay from its first session on, so a turn that wants
        to speak with no call to speak in still leaves its refusal receipt."""
        if guild_id is not None:
            self.relay_of(guild_id)

    async def cog_load(self) -> None:
        self.character.plays.on_host(self._play_began)

    async def cog_unload(self) -> None:
        for link in list(self.links.values()):
            await link.close("unloading")
        await self.connects.close()
        for relay in list(self.relays.values()):
            await relay.close()
        await RECEIPT_WRITER.close()  # every relay and mouth that wrote receipts is closed: end their thread

    async def _connect(self, channel: Channel) -> discord.VoiceClient:
        return await channel.connect(timeout=self.connect_timeout, reconnect=True, self_deaf=False)

    async def connect_within(self, channel: Channel) -> discord.VoiceClient:
        """The connector, answered within ``connect_timeout`` whatever it does after.

        discord.py's ``connect(timeout=t)`` raises only after its own cleanup, which waits up to
        another ``t`` for Discord to confirm the disconnect, so a failed join took twice what
        ``/voice join`` promises. Here the join fails at ``connect_timeout`` and the connect
        goes on in the background: its cleanup finishes there, and a client that connects after
        all is disconnected again.
        """
        guild_id = channel.guild.id
        # its outcome is taken here, or by _finish_late: the owner need not report it
        task = self.connects.spawn(self.connector(channel), f"voice-connect-{guild_id}", report_failure=False)
        try:
            done, _ = await asyncio.wait({task}, timeout=self.connect_timeout)
        except asyncio.CancelledError:  # the caller went away (a link closed mid-rejoin)
            self._give_up(guild_id, task)
            raise
        if task in done:
            return task.result()
        self._give_up(guild_id, task)
        raise TimeoutError(f"voice connect to {channel.id} took over {self.connect_timeout:g} s")

    def _give_up(self, guild_id: int, connect: asyncio.Task[discord.VoiceClient]) -> None:
        if not self.connects.closed:  # else the unload is ending the connect already
            self.late_connects[guild_id] = self.connects.spawn(
                self._finish_late(guild_id, connect), f"voice-late-connect-{guild_id}"
            )

    async def _finish_late(self, guild_id: int, connect: asyncio.Task[discord.VoiceClient]) -> None:
        """A connect given up on: let it finish, and leave again if it connected after all."""
        try:
            try:
                vc = await connect
            except Exception as exc:
                log.info("voice_connect_gave_up", error=f"{type(exc).__name__}: {exc}")
                return
            log.info("voice_connect_late", channel=getattr(vc.channel, "name", None))
            await _leave_quietly(vc)  # connected after the join had failed: leave
        finally:
            if self.late_connects.get(guild_id) is asyncio.current_task():
                del self.late_connects[guild_id]

    def _voice_ready(self) -> bool:
        cfg = self.settings.openai
        return self.openai_client is not None or cfg.api_key is not None or cfg.base_url is not None

    def _session_for(self, channel: Channel) -> MouthSession:
        guild = channel.guild

        def name_of(user_id: int) -> str | None:
            member = guild.get_member(user_id)
            return member.display_name if member is not None else None

        return MouthSession(
            self.character.in_call(guild.id, channel.id),
            receipt_path=self.character.play_of(guild.id).paths.receipts,
            client=self.openai_client,
            name_of=name_of,
            label=f"{guild.id}/{channel.id}",
        )

    # -- commands -------------------------------------------------------------------------------
    @voice.command(name="join", description="Bring Clankie into your voice channel")
    async def join(self, interaction: discord.Interaction) -> None:
        user = interaction.user
        state = user.voice if isinstance(user, discord.Member) else None
        channel = state.channel if state is not None else None
        if channel is None or interaction.guild is None:
            await interaction.response.send_message(NOT_IN_VOICE, ephemeral=True)
            return
        if not self._voice_ready():
            await interaction.response.send_message(NO_VOICE_MODEL, ephemeral=True)
            return
        if interaction.guild.id in self.late_connects:  # discord.py still undoing the last try
            await interaction.response.send_message(STILL_LEAVING, ephemeral=True)
            return
        existing = self.links.get(interaction.guild.id)
        if existing is not None and existing.channel.id == channel.id and not existing.leaving:
            await interaction.response.send_message(
                f"I'm already here in **{channel.name}**.", ephemeral=True
            )
            return
        cap = self.settings.limits.voice_calls
        elsewhere = [g for g, held in self.links.items() if g != interaction.guild.id and not held.leaving]
        if existing is None and len(elsewhere) >= cap:
            await interaction.response.send_message(
                f"Every voice call this process may join is taken by other servers ([limits] voice_calls = "
                f"{cap}); try again when one of them ends.",
                ephemeral=True,
            )
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        if existing is not None:
            await existing.close("moving to another channel")
        link = VoiceLink(self, channel, self._session_for(channel))
        self.links[interaction.guild.id] = link
        try:
            await link.open()
        except Exception as exc:
            self.links.pop(interaction.guild.id, None)
            log.warning("voice_join_failed", channel=channel.name, error=f"{type(exc).__name__}: {exc}")
            why = "it timed out" if isinstance(exc, TimeoutError) else type(exc).__name__
            # answer first, clean up after: the caller is not kept waiting on the cleanup
            await interaction.followup.send(f"I couldn't join **{channel.name}** ({why}).", ephemeral=True)
            await link.close("join failed")
            return
        log.info("voice_join", guild_id=interaction.guild.id, channel=channel.name, by=user.id)
        await interaction.followup.send(f"Joined **{channel.name}**. I'm listening!", ephemeral=True)

    @voice.command(name="leave", description="Send Clankie out of the voice channel")
    async def leave(self, interaction: discord.Interaction) -> None:
        link = self.links.get(interaction.guild.id) if interaction.guild is not None else None
        if link is None:
            await interaction.response.send_message(NOT_HERE, ephemeral=True)
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        await link.close(f"/voice leave by {interaction.user.id}")
        await interaction.followup.send(f"Left **{link.channel.name}**. Bye for now!", ephemeral=True)

    # -- voice states -----------------------------------------------------------------------------
    @commands.Cog.listener()
    async def on_voice_state_update(
        self, member: discord.Member, before: discord.VoiceState, after: discord.VoiceState
    ) -> None:
        link = self.links.get(member.guild.id)
        if link is None or link.leaving:
            return
        if self.bot.user is not None and member.id == self.bot.user.id:
            if after.channel is None:
                link.dropped("the bot's voice state left the channel")
            elif after.channel.id != link.channel.id and isinstance(after.channel, Channel):
                link.channel = after.channel  # moved by a moderator: follow
                link.people_changed()
            return
        if before.channel is not None and before.channel.id == link.channel.id:
            if after.channel is None or after.channel.id != link.channel.id:
                link.session.forget(member.id)
        link.people_changed()


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(Voice(bot, character_of(bot)))
