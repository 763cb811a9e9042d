"""What Clankie relies on in discord.py beyond its public API — only here (docs/architecture.md §13).

discord.py tells a bot *that* a shard's gateway connection ended (``on_shard_disconnect``) and
that it is back (``on_shard_resumed``, ``on_shard_ready``), and raises
:class:`discord.ConnectionClosed` (with ``code``) out of ``connect`` when it gives up. It does not
say *why* a connection it reconnects after ended, so:

- :func:`how_closed` reads the closed socket the shard still holds while ``shard_disconnect`` is
  dispatched (``ShardInfo._parent`` → ``Shard.ws`` → ``DiscordWebSocket._close_code`` and its
  aiohttp socket's public ``close_code``);
- :data:`STOPS_ON` are the close codes discord.py does not reconnect after
  (``DiscordWebSocket._can_handle_close``; 4014 is raised as ``PrivilegedIntentsRequired``);
- :data:`RECONNECT_LOGGER` names discord.py's logger whose records at error level are all
  reconnects it makes by itself (``Shard._handle_disconnect``, ``AutoShardedClient.launch_shard``).

Each fact is of the discord.py version pinned in pyproject.toml (:data:`TESTED_WITH`);
tests/test_discord_seam.py checks every one against the installed discord.py, on its code and over a
real gateway connection to the wire-level fake, and fails naming the fact and the version when one
no longer holds. Nothing here imports discord.py at run time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from discord import AutoShardedClient

TESTED_WITH = "2.7.1"  # pyproject.toml: discord.py[voice]>=2.7.1,<2.8

# Discord's "Gateway Close Event Codes" marked "Reconnect: false", which discord.py 2.7.1 ends
# ``connect`` on (gateway.py ``_can_handle_close``: 4004, 4010–4013 raise ConnectionClosed;
# shard.py ``_handle_disconnect``: 4014 raises PrivilegedIntentsRequired).
STOPS_ON = frozenset({4004, 4010, 4011, 4012, 4013, 4014})

# The close code a websocket carries when it ended with no close frame (RFC 6455 §7.4.1: 1006
# "MUST NOT be set as a status code in a Close control frame", aiohttp's
# ``WSCloseCode.ABNORMAL_CLOSURE``).
NO_CLOSE_FRAME = 1006

# discord.py's logger (logging.getLogger(__name__) in discord/shard.py) whose error records —
# "Attempting a reconnect for shard ID …" (Shard._handle_disconnect) and "Failed to connect for
# shard_id …" (AutoShardedClient.launch_shard) — are all reconnects it goes on to make by itself.
RECONNECT_LOGGER = "discord.shard"


@dataclass(frozen=True, slots=True)
class GatewayClose:
    """How a shard's last gateway connection ended.

    ``by_discord_py``: the code discord.py closed it with itself in order to reconnect (Discord's
    op 7 RECONNECT, an invalid session, a heartbeat Discord did not acknowledge); None when it
    did not. ``code``: the close code on the socket — Discord's close frame, :data:`NO_CLOSE_FRAME`
    when the connection ended without one, None when the socket never saw a close (a write to
    a reset connection failed first)."""

    by_discord_py: int | None
    code: int | None

    @property
    def final(self) -> bool:
        """Discord closed it with a code discord.py does not reconnect after (it raises out of
        ``connect`` next)."""
        return self.by_discord_py is None and self.code in STOPS_ON

    @property
    def without_close_frame(self) -> bool:
        return self.by_discord_py is None and self.code in (None, NO_CLOSE_FRAME)


def how_closed(client: AutoShardedClient, shard_id: int) -> GatewayClose | None:
    """How shard ``shard_id``'s connection ended; None when this client has no such shard.

    Call it from ``on_shard_disconnect``: discord.py dispatches that event while the shard still
    holds the socket that closed (shard.py ``Shard._handle_disconnect`` and ``reidentify``
    dispatch before they replace ``Shard.ws``), and discord.py's own ``DiscordWebSocket.close``
    is the only place ``_close_code`` is set (gateway.py)."""
    info = client.get_shard(shard_id)
    if info is None:
        return None
    ws = info._parent.ws
    return GatewayClose(by_discord_py=ws._close_code, code=ws.socket.close_code)


__all__ = ["NO_CLOSE_FRAME", "RECONNECT_LOGGER", "STOPS_ON", "TESTED_WITH", "GatewayClose", "how_closed"]
