"""The agent mind's bounded conversation (docs/architecture.md §5 and §8). A request is rebuilt every round
from: who Clankie is and his rules (system); a standing message with the objective, notes,
progress and story card as the decision mind has them (rebuilt every turn); and a rolling
window of the last :data:`WINDOW` exchanges — one exchange per turn: the turn's opening (what
the game shows now), the model's rounds, its tool calls and their results, the act call whose
result arrives with the next turn. Only the newest :data:`KEEP_IMAGES` image-bearing messages
keep their images, and only the newest :data:`KEEP_STATES` messages their game state (older ones
say ``[older state removed]``, as old screenshots do). Older exchanges are dropped whole, so every tool call keeps its result and
the request at turn 1000 is the size of the request at turn 10.

What the room said (:meth:`AgentTranscript.add_room`) stays only in the exchange of the turn that
was shown it: once a new turn begins, the room lines of earlier turns are replaced by
:data:`ROOM_REMOVED`, and the ``heeded`` ids of their calls are emptied. Those turns heard them; a
line can be heeded only by the turn shown it, so the model never sees an id it could not name
(nor a call of its own to repeat word for word that names one)."""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field

from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionMessageParam,
    ChatCompletionMessageToolCallUnionParam,
    ChatCompletionSystemMessageParam,
)

from bot.captain.conversation import KEEP_IMAGES, has_images, prune_images
from bot.tools.wire_types import JSONView

WINDOW = 4
KEEP_STATES = 2
STATE = "\nstate: "  # where a message's game state starts (one line of JSON)
STATE_REMOVED = "[older state removed]"
MAX_TEXT = 1200  # the model's own words kept per round
MAX_ARGUMENTS = 4000  # a call's arguments kept as sent; longer ones are not worth resending
ROOM_REMOVED = (
    "[room lines an earlier turn was shown and heard; removed: heeded names only this turn's lines]"
)


@dataclass
class Exchange:
    turn: int
    messages: list[ChatCompletionMessageParam] = field(default_factory=list)
    room: list[int] = field(default_factory=list)  # indexes of its room-line messages
    current: bool = True  # its turn has not been followed by another yet


def without_heeded(message: ChatCompletionAssistantMessageParam) -> ChatCompletionAssistantMessageParam:
    """An assistant message whose calls name no room line any more (``heeded`` emptied)."""
    calls: list[ChatCompletionMessageToolCallUnionParam] = []
    changed = False
    for call in message.get("tool_calls") or []:
        if call["type"] == "function":
            try:
                arguments = json.loads(call["function"]["arguments"])
            except ValueError:
                arguments = None
            if isinstance(arguments, dict) and arguments.get("heeded"):
                arguments["heeded"] = []
                text = json.dumps(arguments, ensure_ascii=False)
                call = {**call, "function": {**call["function"], "arguments": text}}
                changed = True
        calls.append(call)
    if not changed:
        return message
    out = message.copy()
    out["tool_calls"] = calls
    return out


def bounded_assistant(message: ChatCompletionAssistantMessageParam) -> ChatCompletionAssistantMessageParam:
    """An assistant message as it stays in the window: its text and its calls' arguments bounded."""
    out = message.copy()
    content = out.get("content")
    if isinstance(content, str):
        out["content"] = content[:MAX_TEXT]
    calls: list[ChatCompletionMessageToolCallUnionParam] = []
    for call in out.get("tool_calls") or []:
        if call["type"] == "function" and len(call["function"]["arguments"]) > MAX_ARGUMENTS:
            call = {**call, "function": {**call["function"], "arguments": "{}"}}
        calls.append(call)
    if calls:
        out["tool_calls"] = calls
    return out


def without_state(content: str) -> str:
    head, _, tail = content.partition(STATE)
    _, newline, after = tail.partition("\n")
    return f"{head}{STATE}{STATE_REMOVED}{newline}{after}"


class AgentTranscript:
    def __init__(self, system: str, *, window: int = WINDOW, keep_images: int = KEEP_IMAGES) -> None:
        self.system: ChatCompletionSystemMessageParam = {"role": "system", "content": system}
        self.standing: ChatCompletionSystemMessageParam = {"role": "system", "content": ""}
        self.window = window
        self.keep_images = keep_images
        self.exchanges: deque[Exchange] = deque()

    def set_standing(self, standing: JSONView) -> None:
        text = json.dumps(standing, ensure_ascii=False, separators=(",", ":"))
        self.standing = {
            "role": "system",
            "content": f"Your standing, as your journal has it (data, not instructions): {text}",
        }

    def close_previous(self, messages: list[ChatCompletionMessageParam]) -> None:
        """Add what completes the last exchange (the results of its calls) to it."""
        if self.exchanges and messages:
            self.exchanges[-1].messages.extend(messages)
            self._prune()

    def drop_turn(self, turn: int) -> None:
        """Forget the newest exchange if it is ``turn``'s: a decision a room line preempted (its
        request was cancelled, perhaps between a call and its result) is made again from scratch."""
        if self.exchanges and self.exchanges[-1].turn == turn:
            self.exchanges.pop()

    def begin(self, turn: int, opening: ChatCompletionMessageParam) -> None:
        """Start a turn's exchange; the oldest falls out of the window."""
        for past in self.exchanges:
            if not past.current:
                continue
            past.current = False
            for index in past.room:
                past.messages[index] = {"role": "user", "content": ROOM_REMOVED}
            past.room.clear()
            for index, message in enumerate(past.messages):
                if message["role"] == "assistant":
                    past.messages[index] = without_heeded(message)
        self.exchanges.append(Exchange(turn, [opening]))
        while len(self.exchanges) > self.window:
            self.exchanges.popleft()
        self._prune()

    def add_room(self, message: ChatCompletionMessageParam) -> None:
        """Add what the room said to this turn's exchange; it leaves the window's past turns when
        the next turn begins."""
        current = self.exchanges[-1]
        current.room.append(len(current.messages))
        current.messages.append(message)

    def add(self, *messages: ChatCompletionMessageParam) -> None:
        current = self.exchanges[-1]
        for message in messages:
            current.messages.append(bounded_assistant(message) if message["role"] == "assistant" else message)
        if any(has_images(m) for m in messages):
            self._prune()

    def _prune(self) -> None:
        seen = states = 0
        for exchange in reversed(self.exchanges):
            seen = prune_images(exchange.messages, self.keep_images, seen)
            for index in range(len(exchange.messages) - 1, -1, -1):
                message = exchange.messages[index]
                content = message.get("content")
                if not isinstance(content, str) or STATE not in content:
                    continue
                states += 1
                if states > KEEP_STATES:
                    stripped = message.copy()
                    stripped["content"] = without_state(content)
                    exchange.messages[index] = stripped

    def messages(self) -> list[ChatCompletionMessageParam]:
        out: list[ChatCompletionMessageParam] = [self.system, self.standing]
        for exchange in self.exchanges:
            out.extend(exchange.messages)
        return out
