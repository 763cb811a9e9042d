"""Messages people write, as Discord delivers them to a bot without the Message Content intent.

Sources (and /work/shared/FACTS.md, "Text messages without the Message Content intent"):

- discord-api-docs, Gateway → "Gateway Intents": ``GUILD_MESSAGES`` (1 << 9) carries
  MESSAGE_CREATE for guild channels, ``DIRECT_MESSAGES`` (1 << 12) for DMs; neither is
  privileged. ``MESSAGE_CONTENT`` (1 << 15) is.
- discord-api-docs, Resources → Channel/Message object, the note on ``content``, ``embeds``,
  ``attachments``, ``components`` (and ``poll``): an app without the Message Content intent gets
  them empty, except in messages that mention the app, in DMs with it, and in messages it sent
  itself. A reply that pings its author lists him in ``mentions``, so it is a mention. Discord's
  2022 "Message Content Privileged Intent FAQ" says the same, and that it holds for REST too
  (``GET /channels/{id}/messages``): there the application's Message Content flag in the
  portal decides (``GATEWAY_MESSAGE_CONTENT`` 1 << 18, ``…_LIMITED`` 1 << 19).
- discord-api-docs, Channel → "Allowed Mentions Object": ``parse`` (``users``, ``roles``,
  ``everyone``), ``users``, ``roles``, ``replied_user`` decide who a message pings, whatever its
  text says; without ``allowed_mentions`` every mention in the text pings.
"""

from __future__ import annotations

import re
from typing import Any

GUILD_MESSAGES = 1 << 9
DIRECT_MESSAGES = 1 << 12
MESSAGE_CONTENT = 1 << 15
APP_MESSAGE_CONTENT = (1 << 18) | (1 << 19)  # application flags: GATEWAY_MESSAGE_CONTENT(_LIMITED)
HIDDEN_WITHOUT_CONTENT = ("content", "embeds", "attachments", "components")

USER_MENTION = re.compile(r"<@!?(\d+)>")
ROLE_MENTION = re.compile(r"<@&(\d+)>")


def content_visible(payload: dict[str, Any], bot_id: int, *, may_read: bool) -> bool:
    """Whether a bot sees this message's content: it may read all (the intent, or the portal
    flag for REST), or the message is its own, a DM, or mentions it."""
    if may_read or payload.get("guild_id") is None:
        return True
    if str(payload["author"]["id"]) == str(bot_id):
        return True
    return any(str(u.get("id")) == str(bot_id) for u in payload.get("mentions") or [])


def as_seen(payload: dict[str, Any], bot_id: int, *, may_read: bool) -> dict[str, Any]:
    """The message as the bot receives it: ``content``, ``embeds``, ``attachments`` and
    ``components`` emptied when it may not see them (the same for a ``referenced_message``)."""
    out = dict(payload)
    if not content_visible(payload, bot_id, may_read=may_read):
        out.update(content="", embeds=[], attachments=[], components=[])
    referenced = payload.get("referenced_message")
    if isinstance(referenced, dict):
        out["referenced_message"] = as_seen(referenced, bot_id, may_read=may_read)
    return out


def gateway_receives(intents: int, payload: dict[str, Any]) -> bool:
    """Whether a session with ``intents`` gets MESSAGE_CREATE for this message at all."""
    wanted = DIRECT_MESSAGES if payload.get("guild_id") is None else GUILD_MESSAGES
    return bool(intents & wanted)


def pinged(
    content: str,
    allowed: dict[str, Any] | None,
    *,
    replied_to: int | None,
    role_ids: set[int],
) -> tuple[set[int], set[int], bool]:
    """Who a message pings under ``allowed_mentions``: (user ids, role ids, everyone/here).

    Per the Allowed Mentions Object: with no ``allowed_mentions`` every mention in the text
    pings and the replied-to author is pinged; with one, user mentions ping only when ``parse``
    holds ``users`` or the id is in ``users``, roles likewise, ``@everyone``/``@here`` only when
    ``parse`` holds ``everyone``, and the replied-to author only when ``replied_user`` is true."""
    users = {int(u) for u in USER_MENTION.findall(content)}
    roles = {int(r) for r in ROLE_MENTION.findall(content)} & role_ids
    everyone = "@everyone" in content or "@here" in content
    if allowed is None:
        return users | ({replied_to} if replied_to else set()), roles, everyone
    parse = set(allowed.get("parse") or [])
    listed_users = {int(u) for u in allowed.get("users") or []}
    listed_roles = {int(r) for r in allowed.get("roles") or []}
    out_users = users if "users" in parse else users & listed_users
    out_roles = roles if "roles" in parse else roles & listed_roles
    if replied_to and allowed.get("replied_user"):
        out_users = out_users | {replied_to}
    return out_users, out_roles, everyone and "everyone" in parse
