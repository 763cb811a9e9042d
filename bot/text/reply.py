"""What he posts: the words cut to Discord's 2 000 characters per message (split, at most a few
messages, the last clipped), and ``allowed_mentions`` that can ping nobody but the author he
answers, whatever the words say (Discord's Allowed Mentions Object: ``parse: []``, ``users:
[author]``, ``replied_user: true``)."""

from __future__ import annotations

import discord

MAX_CHARS = 2000  # Discord: a message's content is at most 2 000 characters
MAX_PARTS = 3
PICTURE_FAILED = "(I tried to show you my screen, but the picture could not be sent.)"


def only_author(author: discord.abc.Snowflake) -> discord.AllowedMentions:
    return discord.AllowedMentions(everyone=False, roles=False, users=[author], replied_user=True)


def parts(text: str, limit: int = MAX_CHARS, most: int = MAX_PARTS) -> list[str]:
    """``text`` in messages of at most ``limit`` characters, split at a line or a space where
    one is near; at most ``most`` of them, the last clipped with an ellipsis."""
    out: list[str] = []
    rest = text.strip()
    while rest and len(out) < most:
        if len(rest) <= limit:
            out.append(rest)
            return out
        if len(out) == most - 1:
            out.append(rest[: limit - 1].rstrip() + "…")
            return out
        cut = max(rest.rfind("\n", 0, limit), rest.rfind(" ", 0, limit))
        if cut < limit // 2:
            cut = limit
        out.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    return out
