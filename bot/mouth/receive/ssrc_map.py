"""SSRC → Discord user mapping, fed by voice-websocket events.

The voice gateway tells us who sends on which SSRC:

* op 5 SPEAKING ``{user_id, ssrc, speaking}`` — sent for other users when they start sending;
* op 12 (client video/SSRC announce) ``{user_id, audio_ssrc, video_ssrc, …}`` — also carries
  the audio SSRC;
* op 11 CLIENTS_CONNECT ``{user_ids: [...]}`` and op 13 CLIENT_DISCONNECT ``{user_id}`` —
  who is in the call (no SSRC).

After a rejoin SPEAKING is not always resent, so users present in the call but without an SSRC
are kept as *candidates*: the pipeline can identify an unknown SSRC by which candidate's DAVE
key opens its frames (see ``pipeline``). Written from the event-loop thread, read from
the socket-reader thread, hence the lock.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

OP_SPEAKING = 5
OP_CLIENTS_CONNECT = 11
OP_CLIENT_SSRC = 12
OP_CLIENT_DISCONNECT = 13


class SsrcMap:
    def __init__(self, own_user_id: int | None = None) -> None:
        self._lock = threading.Lock()
        self._user_by_ssrc: dict[int, int] = {}
        self._ssrc_by_user: dict[int, int] = {}
        self._present: set[int] = set()
        self.own_user_id = own_user_id

    def user_for(self, ssrc: int) -> int | None:
        return self._user_by_ssrc.get(ssrc)

    def ssrc_for(self, user_id: int) -> int | None:
        return self._ssrc_by_user.get(user_id)

    def bind(self, ssrc: int, user_id: int) -> None:
        if ssrc == 0 or user_id == self.own_user_id:
            return
        with self._lock:
            old_ssrc = self._ssrc_by_user.get(user_id)
            if old_ssrc is not None and old_ssrc != ssrc:
                self._user_by_ssrc.pop(old_ssrc, None)
            old_user = self._user_by_ssrc.get(ssrc)
            if old_user is not None and old_user != user_id:
                self._ssrc_by_user.pop(old_user, None)
            self._user_by_ssrc[ssrc] = user_id
            self._ssrc_by_user[user_id] = ssrc
            self._present.add(user_id)

    def add_present(self, user_ids: Iterable[int]) -> None:
        with self._lock:
            self._present.update(u for u in user_ids if u != self.own_user_id)

    def forget_user(self, user_id: int) -> int | None:
        """Drop a user who left; returns the SSRC they used, if known."""
        with self._lock:
            self._present.discard(user_id)
            ssrc = self._ssrc_by_user.pop(user_id, None)
            if ssrc is not None:
                self._user_by_ssrc.pop(ssrc, None)
            return ssrc

    def unbound_candidates(self, extra: Iterable[int] = ()) -> list[int]:
        """Users known to be in the call (plus ``extra``) who have no SSRC yet, in stable order."""
        with self._lock:
            pool = self._present.union(extra)
            return sorted(u for u in pool if u not in self._ssrc_by_user and u != self.own_user_id)

    def apply_ws_message(self, msg: Mapping[str, Any]) -> int | None:
        """Update from one voice-websocket JSON message.

        Returns the SSRC of a user who disconnected (so its decoder can be dropped), else None.
        Malformed payloads are ignored: the gateway is not ours to validate, and a bad event
        must not stop the voice connection.
        """
        op = msg.get("op")
        data = msg.get("d")
        if not isinstance(data, Mapping):
            return None
        try:
            if op == OP_SPEAKING:
                self.bind(int(data["ssrc"]), int(data["user_id"]))
            elif op == OP_CLIENT_SSRC:
                self.bind(int(data.get("audio_ssrc") or 0), int(data["user_id"]))
            elif op == OP_CLIENTS_CONNECT:
                self.add_present(int(u) for u in data.get("user_ids", ()))
            elif op == OP_CLIENT_DISCONNECT:
                return self.forget_user(int(data["user_id"]))
        except (KeyError, TypeError, ValueError):
            return None
        return None
