"""The only place the receive path touches discord.py internals (checked against 2.7.1).

discord.py has no receive API. What it does offer, and what is used here:

Private (may change in any release; re-check when discord.py moves):
* ``VoiceClient._connection`` — the ``discord.voice_state.VoiceConnectionState``.
* ``VoiceConnectionState.add_socket_listener(cb)`` / ``remove_socket_listener(cb)`` — ``cb(bytes)``
  is called on discord.py's ``SocketReader`` thread for every UDP datagram (RTP, RTCP, IP
  discovery). The reader survives reconnects but is stopped by a full ``disconnect()``.
* ``VoiceConnectionState.secret_key`` (``list[int]``, ``MISSING`` until SESSION_DESCRIPTION) and
  ``.mode`` (negotiated transport mode).
* ``VoiceConnectionState.dave_session`` (``davey.DaveSession`` or None) and
  ``.dave_protocol_version`` (0 = no E2EE). Read on every packet, never cached: discord.py
  re-initialises the session on every MLS epoch/transition and may replace the object.
* ``VoiceConnectionState.dave_downgraded`` — True from the execute (op 22) of a downgrade to
  protocol 0 until the execute of the next upgrade. discord.py sets ``dave_protocol_version``
  back to 1 already at prepare-epoch (op 24), before the new group's keys exist and before the
  senders start encrypting at op 22; in that window the call is still plain, so the adapter
  reports E2EE as off while ``dave_downgraded`` holds (plain frames pass as plain Opus,
  DAVE-marked ones are still opened).
* ``VoiceConnectionState.hook`` — coroutine ``hook(ws, msg)`` that each new
  ``DiscordVoiceWebSocket`` stores as ``ws._hook`` and awaits after handling every JSON message;
  the current socket's ``ws._hook`` is set too. This is how SPEAKING (op 5) and the client
  connect/disconnect ops reach us; discord.py itself ignores them.

Public: ``VoiceClient.send_audio_packet(opus, encode=False)`` (keepalive), ``is_playing()``,
``is_connected()``, ``user``, ``channel.members``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

import discord

from bot.mouth.receive.dave import DaveSessionLike, davey_version_problem, survivable

log = logging.getLogger(__name__)

CHECKED_DISCORD_VERSION = "2.7.1"
_REQUIRED_STATE_ATTRS = (
    "add_socket_listener",
    "remove_socket_listener",
    "secret_key",
    "mode",
    "dave_session",
    "dave_protocol_version",
    "dave_downgraded",
    "hook",
)

WsHook = Callable[[Any, Mapping[str, Any]], Awaitable[None]]


class DiscordVoiceAdapter:
    """Wraps a connected (or connecting) ``discord.VoiceClient`` for the receiver."""

    def __init__(self, voice_client: Any) -> None:
        if not discord.__version__.startswith("2.7."):
            log.warning(
                "voice receive was checked against discord.py %s; running %s",
                CHECKED_DISCORD_VERSION,
                discord.__version__,
            )
        problem = davey_version_problem()
        if problem is not None:
            raise RuntimeError(problem)
        state = getattr(voice_client, "_connection", None)
        missing = [a for a in _REQUIRED_STATE_ATTRS if state is None or not hasattr(state, a)]
        if missing:
            raise RuntimeError(
                f"discord.py {discord.__version__} voice connection lacks {', '.join(missing)}; "
                f"voice receive needs the internals of discord.py {CHECKED_DISCORD_VERSION}"
            )
        self._vc = voice_client
        self._state: Any = state
        self._previous_hook: WsHook | None = None
        self._our_hook: WsHook | None = None

    # --- per-packet reads (ConnectionView) -------------------------------------------------
    def transport(self) -> tuple[str, bytes] | None:
        key = self._state.secret_key
        mode = self._state.mode
        if not key or not mode:  # MISSING is falsy
            return None
        return str(mode), bytes(key)

    def dave(self) -> tuple[DaveSessionLike | None, int]:
        """The current session and the DAVE version in force: 0 while the call is plain, which
        includes the window of an upgrade from op 24 until its op 22 (``dave_downgraded``)."""
        state = self._state
        version = 0 if state.dave_downgraded else int(state.dave_protocol_version or 0)
        return state.dave_session, version

    def candidate_user_ids(self) -> Iterable[int]:
        ids: set[int] = set()
        session = self._state.dave_session
        if session is not None:
            try:
                ids.update(int(u) for u in session.get_user_ids())
            except BaseException as exc:  # no group yet, or a panic in davey's Rust code
                if not survivable(exc):
                    raise
                log.debug("DAVE group user ids unavailable: %s", exc)
        ids.update(self.channel_member_ids())
        return ids

    # --- identity ---------------------------------------------------------------------------
    def own_user_id(self) -> int | None:
        user = getattr(self._vc, "user", None)
        return getattr(user, "id", None)

    def channel_member_ids(self) -> list[int]:
        channel = getattr(self._vc, "channel", None)
        members = getattr(channel, "members", None) or []
        return [m.id for m in members]

    # --- socket listener --------------------------------------------------------------------
    def add_packet_listener(self, callback: Callable[[bytes], Any]) -> None:
        self._state.add_socket_listener(callback)

    def remove_packet_listener(self, callback: Callable[[bytes], Any]) -> None:
        self._state.remove_socket_listener(callback)

    # --- voice websocket hook ---------------------------------------------------------------
    def install_ws_hook(self, on_message: Callable[[Mapping[str, Any]], None]) -> None:
        """Call ``on_message(msg)`` for every voice-websocket JSON message, chaining any hook."""
        if self._our_hook is not None:
            raise RuntimeError("voice websocket hook already installed")
        previous: WsHook | None = self._state.hook

        async def hook(ws: Any, msg: Mapping[str, Any]) -> None:
            if previous is not None:
                await previous(ws, msg)
            try:
                on_message(msg)
            except Exception:
                log.exception("voice receive websocket handler failed for op %s", msg.get("op"))

        self._previous_hook, self._our_hook = previous, hook
        self._state.hook = hook
        ws = self._state.ws
        if ws:  # MISSING before the first connect
            ws._hook = hook

    def remove_ws_hook(self) -> None:
        if self._our_hook is None:
            return
        if self._state.hook is self._our_hook:
            self._state.hook = self._previous_hook
        ws = self._state.ws
        if ws and ws.__dict__.get("_hook") is self._our_hook:
            if self._previous_hook is not None:
                ws._hook = self._previous_hook
            else:
                del ws._hook  # back to the class's no-op hook
        self._our_hook = self._previous_hook = None

    # --- keepalive --------------------------------------------------------------------------
    def may_send_keepalive(self) -> bool:
        return bool(self._vc.is_connected()) and not self._vc.is_playing()

    def send_opus_frame(self, frame: bytes) -> None:
        self._vc.send_audio_packet(frame, encode=False)
