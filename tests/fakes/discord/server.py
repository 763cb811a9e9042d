"""DiscordFake: the loopback Discord (REST + gateway) a real discord.py bot connects to."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import discord
import discord.gateway
import discord.http
import yarl
from aiohttp import web

from . import activities, guild_routes, routes
from .activity_routes import ActivityApi
from .admin import GuildAdmin
from .contract import Contract, Violation, default_contract
from .gateway import Frame, Gateway
from .interactions import InteractionHandle, build_command_data, find_command, interaction_payload, new_token
from .model import (
    EVERYONE_PERMISSIONS,
    MANAGE_GUILD,
    TEXT_CHANNEL,
    VOICE_CHANNEL,
    FakeChannel,
    FakeGuild,
    FakeMember,
    FakeMessage,
    FakeRole,
    FakeUser,
    FakeVoiceState,
    Snowflakes,
)
from .rest import RecordedRequest, RestApi
from .shards import SessionStartLimit


@dataclass
class SeededGuild:
    """A guild `add_guild` made, and who and what is in it."""

    guild: FakeGuild
    moderator_role: FakeRole
    owner: FakeMember
    moderator: FakeMember
    member: FakeMember
    bot_member: FakeMember | None
    text_channel: FakeChannel
    voice_channel: FakeChannel


class DiscordFake(GuildAdmin):
    """A fake Discord on 127.0.0.1 with one guild ready to use.

    The default guild (`fake.guild`) has roles @everyone and "Moderator" (Manage Server), members
    `fake.owner` (guild owner), `fake.moderator` (has the Moderator role), `fake.member` (no
    extra roles) and `fake.bot_member`, a text channel `fake.text_channel` ("general") and a
    voice channel `fake.voice_channel` ("Lounge"). Change it with the async helpers (add_member,
    set_roles, add_role, add_channel, set_voice_state); they work before the bot connects and,
    once it is connected, also dispatch the matching gateway event.
    """

    def __init__(
        self,
        *,
        token: str = "fake-bot-token",
        heartbeat_interval_ms: int = 41250,
        contract: Contract | None = None,
    ) -> None:
        self.token = token
        self.contract = contract or default_contract()
        self.ids = Snowflakes()
        self.bot_user = FakeUser(self.ids.next(), "Clankie", bot=True)
        self.application_id = self.bot_user.id
        self.application_flags = 0
        self.requests: list[RecordedRequest] = []
        self.violations: list[Violation] = []
        self.unknown_routes: list[str] = []
        self.commands: dict[int | None, list[dict[str, Any]]] = {}
        self.interactions: dict[int, InteractionHandle] = {}
        self.messages: dict[int, FakeMessage] = {}
        self.guilds: dict[int, FakeGuild] = {}
        # Direct messages: DM channel id -> recipient (POST /users/@me/channels); users whose
        # DMs are closed get Discord's 403 50007 when the bot posts to their DM channel.
        self.dm_channels: dict[int, FakeUser] = {}
        self.dms_closed: set[int] = set()
        # POST /channels/{id}/typing calls per channel; a status that refuses any message with
        # files (e.g. 413: Discord's "Request entity too large", code 40005), None to accept them
        self.typing: dict[int, int] = {}
        self.refuse_uploads: int | None = None
        self.authorizations = []  # invite links opened and authorized (admin.py)
        self.gateway = Gateway(self, heartbeat_interval_ms)
        self.rest = RestApi(self)
        routes.install(self.rest, self)
        guild_routes.install(self.rest, self)
        # OAuth2 code grant, Bearer /users/@me, activity instances (activity_routes.py)
        self.activity = ActivityApi(self)
        # Launching it (activities.py): off, as a new application's is; `fake.launcher.enable(fake)`
        # is the portal's Activities → Enable (it adds the Entry Point command)
        self.launcher = activities.ActivityLauncher()
        activities.install(self.rest, self)
        # When set (host:port of a voice gateway fake), the bot's voice joins are answered with
        # VOICE_SERVER_UPDATE as well; otherwise only its own VOICE_STATE_UPDATE is echoed.
        self.voice_server_endpoint: str | None = None
        # GET /gateway/bot: `shards` (recommended) and `session_start_limit` (max_concurrency …)
        self.session_start_limit = SessionStartLimit()
        self._changed: asyncio.Condition | None = None
        self._runner: web.AppRunner | None = None
        self.port = 0
        self._build_default_guild()

    def _build_default_guild(self) -> None:
        # Its id puts it on shard 0 whatever the shard count up to 16 (720720 = lcm(1..16)), so
        # `add_guild(..., shard=(k, n))` places another guild beside it on a known shard.
        seeded = self._seed_guild("Clankie Test Server", self.ids.next_on_shard(0, 720720))
        self.moderator_role = seeded.moderator_role
        self.owner, self.moderator, self.member = seeded.owner, seeded.moderator, seeded.member
        self.bot_member = seeded.bot_member
        self.text_channel, self.voice_channel = seeded.text_channel, seeded.voice_channel
        self.guild = seeded.guild

    def _seed_guild(self, name: str, guild_id: int, *, with_bot: bool = True) -> SeededGuild:
        owner = FakeUser(self.ids.next(), "owner")
        guild = FakeGuild(guild_id, name, owner.id, self.ids)
        guild.roles[guild.id] = FakeRole(guild.id, "@everyone", EVERYONE_PERMISSIONS, position=0)
        moderator_role = guild.add_role("Moderator", MANAGE_GUILD)
        seeded = SeededGuild(
            guild=guild,
            moderator_role=moderator_role,
            owner=guild.add_member(owner),
            moderator=guild.add_member(FakeUser(self.ids.next(), "mod"), [moderator_role]),
            member=guild.add_member(FakeUser(self.ids.next(), "pat")),
            bot_member=guild.add_member(self.bot_user) if with_bot else None,
            text_channel=guild.add_channel("general"),
            voice_channel=guild.add_channel("Lounge", VOICE_CHANNEL),
        )
        self.guilds[guild.id] = guild
        return seeded

    async def add_guild(
        self, name: str, *, shard: tuple[int, int] | None = None, with_bot: bool = True
    ) -> SeededGuild:
        """Another guild laid out like the default one (owner, "Moderator" role, a moderator, a
        plain member, "general" and "Lounge"), on shard ``shard = (shard_id, num_shards)`` when
        given. With the bot in it (the default) a connected bot gets its GUILD_CREATE, on the
        guild's shard only."""
        guild_id = self.ids.next() if shard is None else self.ids.next_on_shard(*shard)
        seeded = self._seed_guild(name, guild_id, with_bot=with_bot)
        if with_bot:
            await self.dispatch("GUILD_CREATE", seeded.guild.create_payload())
        return seeded

    # ---- lifecycle -------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def api_base(self) -> str:
        return f"{self.base_url}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gateway"

    @property
    def started(self) -> bool:
        return self._runner is not None

    async def start(self) -> None:
        """Listen on 127.0.0.1 (ephemeral port). Starting a started fake does nothing."""
        if self._runner is not None:
            return
        self._changed = asyncio.Condition()
        app = web.Application()
        app.router.add_get("/gateway", self.gateway.handle)
        self.activity.install(app, self.rest)  # before the catch-all: /oauth2/token is not in the spec
        app.router.add_route("*", "/api/v10/{tail:.*}", self.rest.handle)
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = int(self._runner.addresses[0][1])

    async def stop(self) -> None:
        await self.gateway.close_all()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> DiscordFake:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @contextmanager
    def patched(self) -> Iterator[None]:
        """Point discord.py's REST base and default gateway at this fake, restoring both after."""
        old_base = discord.http.Route.BASE
        old_gateway = discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
        discord.http.Route.BASE = self.api_base
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(self.gateway_url)
        try:
            yield
        finally:
            discord.http.Route.BASE = old_base
            discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = old_gateway

    # ---- waiting and checking --------------------------------------------------------------

    async def notify(self) -> None:
        if self._changed is not None:
            async with self._changed:
                self._changed.notify_all()

    async def wait_until(
        self, predicate: Callable[[], bool], within: float = 5.0, what: str = "condition"
    ) -> None:
        """Wait (event-driven: woken by every request and gateway frame) until predicate holds."""
        assert self._changed is not None, "start the fake first"
        try:
            async with asyncio.timeout(within):
                async with self._changed:
                    await self._changed.wait_for(predicate)
        except TimeoutError:
            raise AssertionError(f"fake Discord: timed out after {within}s waiting for {what}") from None

    async def flush(self, within: float = 5.0) -> None:
        """Return once every connected bot has parsed every event dispatched so far (its cache is
        up to date; listeners it spawned may still be running). Uses the gateway's own
        server-requested heartbeat as a round trip, so no sleeping."""
        targets = await self.gateway.request_heartbeats()
        sessions = self.gateway.sessions

        def done() -> bool:
            return all(sessions[sid].parsed_seq >= seq for sid, seq in targets.items())

        await self.wait_until(done, within, "the bot to parse all dispatched events")

    def problems(self) -> list[str]:
        return (
            [f"contract violation: {v}" for v in self.violations]
            + [f"unknown route: {r}" for r in self.unknown_routes]
            + [f"misrouted gateway command: {m}" for m in self.gateway.misrouted]
        )

    def assert_clean(self) -> None:
        """Fail when the bot sent a body the spec rejects or called a route the fake lacks."""
        problems = self.problems()
        assert not problems, "fake Discord saw problems:\n  " + "\n  ".join(problems)

    def requests_to(self, operation: str) -> list[RecordedRequest]:
        """Recorded requests for one spec operationId, e.g. 'bulk_set_guild_application_commands'."""
        return [r for r in self.requests if r.operation == operation]

    def frames_from_bot(self, op: int) -> list[Frame]:
        return [f for f in self.gateway.received if f.op == op]

    async def wait_frame_from_bot(self, op: int, count: int = 1, within: float = 5.0) -> list[Frame]:
        await self.wait_until(
            lambda: len(self.frames_from_bot(op)) >= count, within, f"{count} op {op} frame(s)"
        )
        return self.frames_from_bot(op)

    async def wait_commands(
        self, guild: FakeGuild | None = None, within: float = 5.0
    ) -> list[dict[str, Any]]:
        """Commands registered for `guild` (None: global) once the bot has synced them."""
        key = None if guild is None else guild.id
        await self.wait_until(lambda: key in self.commands, within, f"command sync for {key or 'global'}")
        return self.commands[key]

    # ---- driving the bot -------------------------------------------------------------------

    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        """Send any gateway DISPATCH event to every connected bot."""
        await self.gateway.dispatch(event, data)

    async def send_interaction(
        self,
        command: str,
        options: Mapping[str, Any] | None = None,
        *,
        by: FakeMember | None = None,
        channel: FakeChannel | None = None,
        validate: bool = True,
    ) -> InteractionHandle:
        """Invoke a slash command as `by` (default: the moderator), e.g.
        `await fake.send_interaction("play start", {"world": "sandbox", "turns": 5})`."""
        member = by or self.moderator
        registered = self.commands.get(member.guild.id, []) + self.commands.get(None, [])
        cmd, sub_path = find_command(registered, command)
        data = build_command_data(cmd, sub_path, options or {}, member.guild, validate=validate)
        return await self.send_raw_interaction(2, data, by=member, channel=channel)

    async def send_raw_interaction(
        self,
        kind: int,
        data: dict[str, Any],
        *,
        by: FakeMember | None = None,
        channel: FakeChannel | None = None,
        message: FakeMessage | None = None,
    ) -> InteractionHandle:
        """Dispatch an interaction of any type (3 component, 4 autocomplete, 5 modal submit, …)
        with your own `data`; the envelope (member, channel, permissions, token) is built for you
        and the returned handle tracks its callback like `send_interaction`'s."""
        member = by or self.moderator
        channel = channel or self.text_channel
        interaction_id = self.ids.next()
        token = new_token()
        payload = interaction_payload(
            self, interaction_id=interaction_id, token=token, data=data, member=member, channel=channel
        )
        payload["type"] = kind
        if message is not None:  # a component's interaction carries the message it is on
            payload["message"] = message.payload()
        handle = InteractionHandle(self, interaction_id, token, payload, channel, member=member)
        self.interactions[interaction_id] = handle
        await self.dispatch("INTERACTION_CREATE", payload)
        return handle

    async def press_button(
        self, message: FakeMessage, custom_id: str, *, by: FakeMember | None = None
    ) -> InteractionHandle:
        """Press the button ``custom_id`` on ``message`` as ``by`` (default: the moderator): a
        MESSAGE_COMPONENT interaction (type 3, component type 2) carrying that message, as
        Discord sends it. The button must be on the message."""
        buttons = [
            c
            for row in message.body.get("components") or []
            for c in row.get("components") or []
            if c.get("type") == 2
        ]
        if custom_id not in [b.get("custom_id") for b in buttons]:
            raise ValueError(f"no button {custom_id!r} on message {message.id}: {buttons}")
        channel = next(
            (c for g in self.guilds.values() for c in g.channels.values() if c.id == message.channel_id), None
        )
        data = {"custom_id": custom_id, "component_type": 2}
        return await self.send_raw_interaction(3, data, by=by, channel=channel, message=message)

    async def say(
        self,
        by: FakeMember | FakeUser,
        content: str,
        *,
        channel: FakeChannel | None = None,
        mention_bot: bool = True,
        reply_to: FakeMessage | None = None,
    ) -> FakeMessage:
        """``by`` writes ``content`` in ``channel`` (default: the text channel): the message is
        kept (channel history) and dispatched as MESSAGE_CREATE, emptied per receiving session
        as Discord does without the Message Content intent (messages.py). ``mention_bot``
        prefixes ``<@bot>`` and lists the bot in ``mentions``; a reply (``reply_to``) to one of the
        bot's messages mentions him too (Discord pings a replied-to author by default). ``by``
        may be a FakeUser that is a bot (``FakeUser(..., bot=True)``) in the guild."""
        channel = channel or self.text_channel
        guild = self.guilds[channel.guild_id]
        user = by.user if isinstance(by, FakeMember) else by
        member = guild.members.get(user.id)
        mentions = [self.bot_user] if mention_bot else []
        if reply_to is not None and reply_to.author.id == self.bot_user.id and not mentions:
            mentions = [self.bot_user]
        text = f"<@{self.bot_user.id}> {content}" if mention_bot else content
        message = FakeMessage(
            self.ids.next(),
            channel.id,
            user,
            {"content": text},
            reference=reply_to,
            guild_id=guild.id,
            member=member,
            mentions=mentions,
        )
        self.messages[message.id] = message
        await self.dispatch("MESSAGE_CREATE", message.event())
        return message

    def replies_to(self, message: FakeMessage) -> list[FakeMessage]:
        """The bot's messages that reply to ``message``, oldest first."""
        return [
            m
            for m in self.messages.values()
            if m.reference is message and m.author.id == self.bot_user.id and not m.deleted
        ]

    def bot_messages(self, channel: FakeChannel) -> list[FakeMessage]:
        """The messages the bot posted in ``channel`` (no interaction replies), oldest first."""
        return [m for m in self.channel_messages(channel) if m.author.id == self.bot_user.id]

    async def set_voice_state(
        self,
        member: FakeMember,
        channel: FakeChannel | None,
        *,
        self_stream: bool = False,
        self_mute: bool = False,
        self_deaf: bool = False,
        self_video: bool = False,
    ) -> FakeVoiceState:
        """Move `member` into `channel` (None: disconnect) and dispatch VOICE_STATE_UPDATE."""
        if channel is not None and not channel.is_voice:
            raise ValueError(f"{channel.name} is not a voice channel")
        guild = member.guild
        state = FakeVoiceState(
            member,
            None if channel is None else channel.id,
            f"voice-{member.id}",
            self_mute=self_mute,
            self_deaf=self_deaf,
            self_stream=self_stream,
            self_video=self_video,
        )
        if channel is None:
            guild.voice_states.pop(member.id, None)
        else:
            guild.voice_states[member.id] = state
        await self.dispatch("VOICE_STATE_UPDATE", state.payload(with_guild=True))
        return state

    async def answer_bot_voice_request(self, session_id: str, d: dict[str, Any]) -> None:
        """The bot sent op 4 (join/move/leave voice): echo its VOICE_STATE_UPDATE like Discord does,
        plus VOICE_SERVER_UPDATE when `voice_server_endpoint` is set and it joins a channel."""
        guild = self.guilds.get(int(d["guild_id"]))
        if guild is None:
            return
        channel_id = int(d["channel_id"]) if d.get("channel_id") else None
        me = guild.member(self.bot_user.id)
        state = FakeVoiceState(
            me, channel_id, session_id, self_mute=bool(d.get("self_mute")), self_deaf=bool(d.get("self_deaf"))
        )
        if channel_id is None:
            guild.voice_states.pop(me.id, None)
        else:
            guild.voice_states[me.id] = state
        await self.dispatch("VOICE_STATE_UPDATE", state.payload(with_guild=True))
        if channel_id is not None and self.voice_server_endpoint:
            server = {
                "token": secrets.token_hex(8),
                "guild_id": str(guild.id),
                "endpoint": self.voice_server_endpoint,
            }
            await self.dispatch("VOICE_SERVER_UPDATE", server)

    def voice_channel_of(self, member: FakeMember) -> FakeChannel | None:
        """Where `member` (e.g. `fake.bot_member`) is in voice, per the fake's state."""
        state = member.guild.voice_states.get(member.id)
        return None if state is None or state.channel_id is None else member.guild.channel(state.channel_id)

    async def add_member(
        self,
        name: str,
        roles: Iterable[FakeRole] = (),
        guild: FakeGuild | None = None,
        *,
        user: FakeUser | None = None,
    ) -> FakeMember:
        """A new member of ``guild`` (default: the default guild): a new user called ``name``,
        or ``user`` (e.g. someone already in another guild) joining with those roles."""
        guild = guild or self.guild
        member = guild.add_member(user or FakeUser(self.ids.next(), name), roles)
        await self.dispatch("GUILD_MEMBER_ADD", member.payload() | {"guild_id": str(guild.id)})
        return member

    async def set_roles(self, member: FakeMember, roles: Iterable[FakeRole]) -> None:
        member.role_ids = [r.id for r in roles]
        await self.dispatch("GUILD_MEMBER_UPDATE", member.payload() | {"guild_id": str(member.guild.id)})

    async def add_role(self, name: str, permissions: int = 0, guild: FakeGuild | None = None) -> FakeRole:
        guild = guild or self.guild
        role = guild.add_role(name, permissions)
        await self.dispatch("GUILD_ROLE_CREATE", {"guild_id": str(guild.id), "role": role.payload()})
        return role

    async def add_channel(
        self, name: str, *, voice: bool = False, guild: FakeGuild | None = None
    ) -> FakeChannel:
        guild = guild or self.guild
        channel = guild.add_channel(name, VOICE_CHANNEL if voice else TEXT_CHANNEL)
        await self.dispatch("CHANNEL_CREATE", channel.payload())
        return channel

    async def reconnect(self) -> None:
        """Send op 7 RECONNECT; discord.py reconnects and RESUMEs the session."""
        await self.gateway.reconnect()

    def channel_messages(self, channel: FakeChannel) -> list[FakeMessage]:
        """Messages in the channel (POST /channels/{id}/messages, and people's own from
        :meth:`say`; not interaction replies)."""
        return [
            m
            for m in self.messages.values()
            if m.channel_id == channel.id and m.webhook_id is None and not m.deleted
        ]

    def dm_messages(self, who: FakeMember | FakeUser) -> list[FakeMessage]:
        """Messages the bot sent to `who` by direct message, oldest first."""
        channels = {c for c, user in self.dm_channels.items() if user.id == who.id}
        return [m for m in self.messages.values() if m.channel_id in channels and not m.deleted]

    async def wait_dm(
        self, who: FakeMember | FakeUser, count: int = 1, within: float = 5.0
    ) -> list[FakeMessage]:
        await self.wait_until(
            lambda: len(self.dm_messages(who)) >= count, within, f"{count} DM(s) to {who.id}"
        )
        return self.dm_messages(who)

    async def wait_channel_message(
        self, channel: FakeChannel, count: int = 1, within: float = 5.0
    ) -> list[FakeMessage]:
        await self.wait_until(
            lambda: len(self.channel_messages(channel)) >= count,
            within,
            f"{count} message(s) in #{channel.name}",
        )
        return self.channel_messages(channel)
