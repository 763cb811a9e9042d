"""Which response answers whom: the bookkeeping of the mouth's responses.

Every `response.create` the mouth sends is a `Request` (origin narration / tool follow-up, the
speaker it answers, the narration's delivery id). A `response.created` is matched to its request
by the metadata echoed back, or — when the server does not echo metadata — to the oldest
pending request; a response nobody requested was started by the server's VAD and answers the
newest committed user turn, so its speaker is that turn's dominant speaker. Tool calls inside a
response run on behalf of that response's speaker (None for narration: ask_clankie refuses).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from bot.tools.context import Speaker

Origin = Literal["user", "narration", "tool"]
Kind = Literal["answer", "offer", "acknowledgement"]
MAX_TRACKED = 128


@dataclass
class Request:
    event_id: str
    origin: Origin
    speaker: Speaker | None = None
    delivery_id: str | None = None
    run_id: str | None = None
    turn: int | None = None
    offered: bool = False  # an offered turn's: `stay_silent` is among its tools
    acknowledge: bool = False  # his name said alone: asks for a short acknowledgement only

    @property
    def kind(self) -> Kind:
        """What a turn's response is asked to do: answer, offer (may decline) or acknowledge."""
        return "offer" if self.offered else "acknowledgement" if self.acknowledge else "answer"


@dataclass
class Response:
    id: str
    origin: Origin
    speaker: Speaker | None = None
    delivery_id: str | None = None
    run_id: str | None = None
    turn: int | None = None
    audio_items: list[str] = field(default_factory=list)
    status: str | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)
    tools_pending: int = 0
    play_settled: bool = False  # the narration's `played` receipt is written
    done_at: float | None = None  # loop time of response.done (or of the socket's loss)
    request_id: str | None = None  # the event id of the `response.create` it answers (None: the VAD's)
    declined: bool = False  # he called stay_silent: none of its audio goes to the room
    offered: bool = False  # answers an offered turn (bot.mouth.realtime.offers)

    @property
    def narration(self) -> bool:
        return self.origin == "narration" and self.delivery_id is not None


class ResponseBook:
    def __init__(self) -> None:
        self.pending: deque[Request] = deque()
        self.responses: OrderedDict[str, Response] = OrderedDict()
        self.item_owner: OrderedDict[str, str] = OrderedDict()  # audio item id -> response id
        self.echoes_metadata = False
        self.last_user_speaker: Speaker | None = None

    def requested(self, request: Request) -> None:
        self.pending.append(request)

    def request_failed(self, event_id: str) -> Request | None:
        """An `error` naming one of our `response.create` events: that request is gone."""
        for request in self.pending:
            if request.event_id == event_id:
                self.pending.remove(request)
                return request
        return None

    def created(self, response_id: str, metadata: Mapping[str, object] | None) -> Response:
        request: Request | None = None
        tag = (metadata or {}).get("clankie_request")
        if isinstance(tag, str):
            self.echoes_metadata = True
            request = self.request_failed(tag)
        elif self.pending and not self.echoes_metadata:
            request = self.pending.popleft()
        if request is None:
            response = Response(response_id, "user", self.last_user_speaker)
        else:
            response = Response(
                response_id,
                request.origin,
                request.speaker,
                request.delivery_id,
                request.run_id,
                request.turn,
                request_id=request.event_id,
                offered=request.offered,
            )
        self.responses[response_id] = response
        while len(self.responses) > MAX_TRACKED:
            self.responses.popitem(last=False)
        return response

    def get(self, response_id: str | None) -> Response | None:
        return self.responses.get(response_id) if response_id else None

    def audio(self, response_id: str, item_id: str) -> None:
        response = self.responses.get(response_id)
        if response is not None and item_id not in response.audio_items:
            response.audio_items.append(item_id)
            self.item_owner[item_id] = response_id
            while len(self.item_owner) > MAX_TRACKED * 4:
                self.item_owner.popitem(last=False)

    def owner_of(self, item_id: str) -> Response | None:
        return self.get(self.item_owner.get(item_id))

    def unsettled_narrations(self) -> list[Response]:
        return [r for r in self.responses.values() if r.narration and not r.play_settled]

    def drop_connection(self) -> tuple[list[Request], list[Response]]:
        """The socket is gone: pending requests never get a response; open responses never end."""
        requests = list(self.pending)
        self.pending.clear()
        open_ = [r for r in self.responses.values() if not r.done.is_set()]
        for response in open_:
            response.status = "failed"
            response.done.set()
        self.echoes_metadata = False
        self.last_user_speaker = None
        return requests, open_
