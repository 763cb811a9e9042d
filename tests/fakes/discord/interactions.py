"""INTERACTION_CREATE payloads for slash commands, and the handle a test awaits for the reply.

The command is looked up in what the bot registered through the bulk-overwrite routes, so a
test can only invoke what the bot really declared, with option types taken from that
declaration. Values are checked the way Discord's client would (type, choices, ranges,
required) unless `validate=False` is passed to send something the client would never allow.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .model import EPHEMERAL, FakeChannel, FakeGuild, FakeMember, FakeMessage, FakeRole, FakeUser

if TYPE_CHECKING:
    from .server import DiscordFake

SUB_COMMAND, SUB_COMMAND_GROUP = 1, 2
STRING, INTEGER, BOOLEAN, USER, CHANNEL, ROLE, MENTIONABLE, NUMBER = 3, 4, 5, 6, 7, 8, 9, 10

# Interaction callback types.
CHANNEL_MESSAGE = 4
DEFERRED_CHANNEL_MESSAGE = 5
DEFERRED_UPDATE_MESSAGE = 6
UPDATE_MESSAGE = 7
AUTOCOMPLETE_RESULT = 8
MODAL = 9
LAUNCH_ACTIVITY = 12  # InteractionCallbackTypes LAUNCH_ACTIVITY (activities.py)


class CommandError(ValueError):
    """The test asked for a command or option value Discord's client would not send."""


@dataclass
class Callback:
    """What the bot posted to /interactions/{id}/{token}/callback."""

    type: int
    data: dict[str, Any]
    message: FakeMessage | None

    @property
    def deferred(self) -> bool:
        return self.type in (DEFERRED_CHANNEL_MESSAGE, DEFERRED_UPDATE_MESSAGE)

    @property
    def flags(self) -> int:
        return int(self.data.get("flags") or 0)

    @property
    def ephemeral(self) -> bool:
        return bool(self.flags & EPHEMERAL)

    @property
    def content(self) -> str:
        return str(self.data.get("content") or "")


@dataclass
class InteractionHandle:
    """One dispatched interaction. Await `response()` for the callback, `followups()` for
    follow-up messages, `original()` for the original response message after edits."""

    fake: DiscordFake
    id: int
    token: str
    payload: dict[str, Any]
    channel: FakeChannel
    callback: Callback | None = None
    followup_messages: list[FakeMessage] = field(default_factory=list)
    original_edits: int = 0
    member: FakeMember | None = None  # who invoked it (a launched Activity opens for them)
    expired: bool = False
    """The token's 15 minutes are over (set by a test, in place of waiting them out): every
    webhook request with it is refused 401, code 50027 "Invalid Webhook Token", as Discord does
    (discord/discord-api-docs#6851; the body as in germanoeich/nirn-proxy#23)."""

    async def response(self, within: float = 5.0) -> Callback:
        await self.fake.wait_until(lambda: self.callback is not None, within, f"callback for {self}")
        assert self.callback is not None
        return self.callback

    async def followups(self, count: int = 1, within: float = 5.0) -> list[FakeMessage]:
        """Wait until at least `count` follow-ups exist; return all of them, oldest first."""
        await self.fake.wait_until(
            lambda: len(self.followup_messages) >= count, within, f"{count} follow-up(s) for {self}"
        )
        return list(self.followup_messages)

    async def original(self, edits: int = 0, within: float = 5.0) -> FakeMessage:
        """The original response message once it exists and has been edited `edits` times."""

        def ready() -> bool:
            return (
                self.callback is not None
                and self.callback.message is not None
                and self.original_edits >= edits
            )

        await self.fake.wait_until(ready, within, f"original response with {edits} edit(s) for {self}")
        assert self.callback is not None and self.callback.message is not None
        return self.callback.message

    async def reply_text(self, within: float = 5.0) -> str:
        """The text the person finally sees: the callback message, or for a deferred reply
        the first edit of the original or the first follow-up, whichever comes first."""
        cb = await self.response(within)
        if not cb.deferred:
            return cb.content

        def answered() -> bool:
            return self.original_edits > 0 or bool(self.followup_messages)

        await self.fake.wait_until(answered, within, f"reply after defer for {self}")
        if self.original_edits > 0 and cb.message is not None:
            return cb.message.content
        return self.followup_messages[0].content

    def __str__(self) -> str:
        return f"interaction {self.id} ({command_label(self.payload)})"


def command_label(payload: dict[str, Any]) -> str:
    data = payload.get("data") or {}
    parts = [str(data.get("name"))]
    options = data.get("options") or []
    while options and options[0].get("type") in (SUB_COMMAND, SUB_COMMAND_GROUP):
        parts.append(options[0]["name"])
        options = options[0].get("options") or []
    return "/" + " ".join(parts)


def find_command(commands: list[dict[str, Any]], path: str) -> tuple[dict[str, Any], list[str]]:
    names = path.strip().lstrip("/").split()
    if not names:
        raise CommandError("empty command path")
    for cmd in commands:
        if cmd.get("name") == names[0] and cmd.get("type", 1) == 1:
            return cmd, names[1:]
    known = sorted(str(c.get("name")) for c in commands)
    raise CommandError(f"/{names[0]} is not registered; the bot registered {known}")


def build_command_data(
    command: dict[str, Any],
    sub_path: list[str],
    values: Mapping[str, Any],
    guild: FakeGuild,
    *,
    validate: bool,
) -> dict[str, Any]:
    """The `data` object of an application command interaction."""
    resolved: dict[str, dict[str, Any]] = {}
    node = command
    chain: list[dict[str, Any]] = []
    for name in sub_path:
        subs = [o for o in node.get("options") or [] if o.get("type") in (SUB_COMMAND, SUB_COMMAND_GROUP)]
        match = next((o for o in subs if o["name"] == name), None)
        if match is None:
            raise CommandError(
                f"/{command['name']} has no subcommand {name!r}; it has {[o['name'] for o in subs]}"
            )
        chain.append(match)
        node = match
    declared = node.get("options") or []
    if any(o.get("type") in (SUB_COMMAND, SUB_COMMAND_GROUP) for o in declared):
        subs = [o["name"] for o in declared]
        raise CommandError(f"/{' '.join([command['name'], *sub_path])} needs a subcommand: {subs}")
    leaf = [_option(declared, name, value, resolved, validate=validate) for name, value in values.items()]
    if validate:
        missing = [o["name"] for o in declared if o.get("required") and o["name"] not in values]
        if missing:
            raise CommandError(f"required option(s) missing: {missing}")
    options: list[dict[str, Any]] = leaf
    for sub in reversed(chain):
        options = [{"name": sub["name"], "type": sub["type"], "options": options}]
    data: dict[str, Any] = {
        "id": str(command["id"]),
        "name": command["name"],
        "type": 1,
        "options": options,
    }
    if command.get("guild_id"):
        data["guild_id"] = str(command["guild_id"])
    if resolved:
        data["resolved"] = resolved
    return data


def _option(
    declared: list[dict[str, Any]],
    name: str,
    value: Any,
    resolved: dict[str, dict[str, Any]],
    *,
    validate: bool,
) -> dict[str, Any]:
    spec = next((o for o in declared if o["name"] == name), None)
    if spec is None:
        if validate:
            raise CommandError(f"unknown option {name!r}; declared: {[o['name'] for o in declared]}")
        spec = {"name": name, "type": STRING}
    kind = int(spec["type"])
    wire = _resolve(kind, value, resolved) if kind in (USER, CHANNEL, ROLE, MENTIONABLE) else value
    if validate:
        _check_value(spec, kind, value)
    return {"name": name, "type": kind, "value": wire}


def _check_value(spec: dict[str, Any], kind: int, value: Any) -> None:
    name = spec["name"]
    expected = {STRING: (str,), INTEGER: (int,), BOOLEAN: (bool,), NUMBER: (int, float)}.get(kind)
    if expected is not None:
        if not isinstance(value, expected) or (kind in (INTEGER, NUMBER) and isinstance(value, bool)):
            raise CommandError(f"option {name!r} takes {expected[-1].__name__}, got {value!r}")
    choices = spec.get("choices")
    if choices and value not in [c["value"] for c in choices]:
        raise CommandError(f"option {name!r}={value!r} is not one of {[c['value'] for c in choices]}")
    if kind in (INTEGER, NUMBER):
        low, high = spec.get("min_value"), spec.get("max_value")
        if (low is not None and value < low) or (high is not None and value > high):
            raise CommandError(f"option {name!r}={value!r} is outside [{low}, {high}]")
    if kind == STRING:
        low, high = spec.get("min_length"), spec.get("max_length")
        if (low is not None and len(value) < low) or (high is not None and len(value) > high):
            raise CommandError(f"option {name!r} length {len(value)} is outside [{low}, {high}]")


def _resolve(kind: int, value: Any, resolved: dict[str, dict[str, Any]]) -> str:
    if isinstance(value, FakeMember) and kind in (USER, MENTIONABLE):
        resolved.setdefault("users", {})[str(value.id)] = value.user.payload()
        member = value.payload(with_user=False, with_permissions=True)
        resolved.setdefault("members", {})[str(value.id)] = member
        return str(value.id)
    if isinstance(value, FakeUser) and kind in (USER, MENTIONABLE):
        resolved.setdefault("users", {})[str(value.id)] = value.payload()
        return str(value.id)
    if isinstance(value, FakeRole) and kind in (ROLE, MENTIONABLE):
        resolved.setdefault("roles", {})[str(value.id)] = value.payload()
        return str(value.id)
    if isinstance(value, FakeChannel) and kind == CHANNEL:
        channel = value.payload()
        channel["permissions"] = str((1 << 53) - 1)
        resolved.setdefault("channels", {})[str(value.id)] = channel
        return str(value.id)
    raise CommandError(
        f"option of type {kind} needs a FakeMember/FakeUser/FakeRole/FakeChannel, got {value!r}"
    )


def interaction_payload(
    fake: DiscordFake,
    *,
    interaction_id: int,
    token: str,
    data: dict[str, Any],
    member: FakeMember,
    channel: FakeChannel,
) -> dict[str, Any]:
    guild = member.guild
    channel_data = channel.payload()
    channel_data["permissions"] = str(member.permissions)
    bot_member = guild.members.get(fake.bot_user.id)
    return {
        "id": str(interaction_id),
        "application_id": str(fake.application_id),
        "type": 2,
        "data": data,
        "guild_id": str(guild.id),
        "guild": {"id": str(guild.id), "locale": "en-US", "features": []},
        "channel_id": str(channel.id),
        "channel": channel_data,
        "member": member.payload(with_permissions=True),
        "token": token,
        "version": 1,
        "app_permissions": str(bot_member.permissions if bot_member else 0),
        "locale": "en-US",
        "guild_locale": "en-US",
        "entitlements": [],
        "authorizing_integration_owners": {"0": str(guild.id)},
        "context": 0,
        "attachment_size_limit": 10 * 1024 * 1024,
    }


def new_token() -> str:
    return "aW50ZXJhY3Rpb246" + secrets.token_urlsafe(48)
