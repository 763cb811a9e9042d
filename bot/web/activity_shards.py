"""Which process's surface a server's Discord Activity belongs on (docs/architecture.md §10 "The
Activity", "Several processes").

Discord's URL mapping sends every Activity to one root; each ``clankie run`` owns only the servers
of its shards, ``(guild_id >> 22) % shard_count``. With ``[cluster] shard_prefix`` (e.g.
``/s{shard}/``) a process knows where, from the public host's root, the process that runs any
shard is reached through the reverse proxy, so the root it serves redirects a server it does not
own there, with Discord's whole query (the SDK needs ``frame_id``, ``instance_id``, …) and one
more parameter, :data:`ROUTED`, that says it was sent: a process that gets a routed launch for a
server it does not own either (the proxy and the config disagree) answers a sentence instead of
sending it round again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

ROUTED = "clankie_routed"  # the query parameter a redirect adds: the shard it was sent for


@dataclass(frozen=True)
class ShardRoutes:
    """This process's shards and the template of every shard's prefix. ``shard_count`` None or
    ``shard_ids`` None: this process runs every shard, so it owns every server."""

    shard_count: int | None = None
    shard_ids: frozenset[int] | None = None
    prefix: str | None = None  # "/s{shard}/"

    @classmethod
    def from_settings(cls, settings: Any) -> ShardRoutes:
        shards = settings.discord
        ids = frozenset(shards.shard_ids) if shards.shard_ids is not None else None
        return cls(shards.shard_count, ids, settings.cluster.shard_prefix)

    def shard_of(self, guild_id: int) -> int | None:
        """The shard Discord sends the server's events on (its gateway documentation,
        "Sharding"), when the count is known."""
        return (guild_id >> 22) % self.shard_count if self.shard_count else None

    def owns(self, guild_id: int) -> bool:
        shard = self.shard_of(guild_id)
        return shard is None or self.shard_ids is None or shard in self.shard_ids

    def prefix_of(self, shard: int) -> str | None:
        return self.prefix.replace("{shard}", str(shard), 1) if self.prefix is not None else None

    def elsewhere(self, guild_id: int) -> tuple[int, str] | None:
        """The owning shard and its prefix when another process owns the server and the prefix
        is configured; None when it is this process's (or nowhere else is known)."""
        shard = self.shard_of(guild_id)
        if shard is None or self.owns(guild_id):
            return None
        prefix = self.prefix_of(shard)
        return (shard, prefix) if prefix is not None else None

    def problem(self, public_url: str | None) -> str | None:
        """What is wrong with this process's ``[web] public_url`` against ``shard_prefix``: its
        path must be the prefix of one of its own shards, or a redirect to it would land on
        another process; None when they agree (or either is unset)."""
        if self.prefix is None or public_url is None or self.shard_count is None:
            return None
        mine = sorted(self.shard_ids) if self.shard_ids is not None else list(range(self.shard_count))
        path = urlsplit(public_url).path or "/"
        if not path.endswith("/"):
            path += "/"
        wanted = [p for s in mine if (p := self.prefix_of(s)) is not None]
        if path in wanted:
            return None
        return (
            f"[web] public_url's path is {path}, but [cluster] shard_prefix {self.prefix!r} puts this "
            f"process's shards ({', '.join(map(str, mine))}) at {', '.join(wanted)}: make them agree, "
            f"or the Activity is redirected to another process"
        )

    def launch_location(self, guild_id: int, query_string: str) -> str | None:
        """Where the root opened by Discord for ``guild_id`` is redirected: the owning shard's
        prefix with the whole query and :data:`ROUTED`; None when this process serves it."""
        found = self.elsewhere(guild_id)
        if found is None:
            return None
        shard, prefix = found
        return f"{prefix}?{query_string}&{ROUTED}={shard}" if query_string else f"{prefix}?{ROUTED}={shard}"


__all__ = ["ROUTED", "ShardRoutes"]
