"""Tool calls from the realtime model, run on the MOUTH surface only.

A call (`response.function_call_arguments.done`) is dispatched through the shared registry with
the context of the response it came in: the speaker is the dominant speaker of the user turn
that response answers, or None for narration and nothing-asked responses (so `ask_clankie`
refuses locally). A name that is not on the mouth surface is refused by the registry: the model
gets an error output and nothing runs. Images in a result (look_at_screen's live still) follow
the output as a user message with the caption and an `input_image` part. When every call of the
response has its output and the response is over, one `response.create` asks the model to go on
(through the session's response slot: it follows whatever response is then in progress).
Each call runs as a task of the runner's `TaskOwner`; `close()` stops the calls still running.
A call that does not answer within its tool's time limit gets the registry's "did not answer"
as its output, and the model goes on as after any other output. A call of a *quiet* tool
(`stay_silent`: he declined the turn) gets its output and nothing more — no `response.create`
follows, so the declined turn stays silent.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable

import structlog
from openai.types.realtime import RealtimeClientEventParam, ResponseCreateEventParam

from bot.mouth.realtime.client_events import function_output, image_message, response_create
from bot.mouth.realtime.responses import Request, Response, ResponseBook
from bot.tasks import TaskOwner
from bot.tools.base import Surface, ToolResult
from bot.tools.context import Speaker, ToolContext
from bot.tools.registry import ToolRegistry
from bot.tools.silence import STAY_SILENT_NAME

log = structlog.get_logger("clankie.mouth.tools")

MOUTH: Surface = "mouth"
RESPONSE_DONE_WAIT_S = 30.0
MAX_OUTPUT_CHARS = 16_000

Send = Callable[[RealtimeClientEventParam], Awaitable[bool]]
Ask = Callable[[Request, ResponseCreateEventParam], Awaitable[str | None]]  # the session's slot
ContextFor = Callable[[Surface, Speaker | None], ToolContext]


class ToolRunner:
    def __init__(
        self,
        registry: ToolRegistry,
        context_for: ContextFor,
        book: ResponseBook,
        send: Send,
        quiet: frozenset[str] = frozenset({STAY_SILENT_NAME}),
        ask: Ask | None = None,
    ) -> None:
        self.registry = registry
        self.quiet = quiet
        self.context_for = context_for
        self.book = book
        self.send = send
        self.ask = ask  # the follow-up's create goes through the session's response slot
        self.calls: list[tuple[str, Speaker | None, bool]] = []  # (name, speaker, is_error), newest last
        self._tasks = TaskOwner("mouth-tools")

    def call(self, response_id: str | None, call_id: str, name: str, arguments: str | None) -> None:
        """Start one call in the background (a consult may take seconds; events keep flowing)."""
        response = self.book.get(response_id)
        if response is not None:
            response.tools_pending += 1
        self._tasks.spawn(self._run(response, call_id, name, arguments), f"mouth-tool-{name[:40]}")

    async def _run(self, response: Response | None, call_id: str, name: str, arguments: str | None) -> None:
        speaker = response.speaker if response is not None else None
        try:
            result = await self.registry.dispatch(name, arguments, self.context_for(MOUTH, speaker))
        except Exception as exc:  # dispatch never raises by contract; the session must not die anyway
            log.exception("mouth_tool_failed", tool=name[:80])
            result = ToolResult.error(f"error: {name[:80]} failed ({type(exc).__name__}).")
        self.calls.append((name, speaker, result.is_error))
        log.info(
            "mouth_tool_call",
            tool=name[:80],
            speaker=speaker.id if speaker else None,
            error=result.is_error,
            images=len(result.images),
        )
        text = result.text[:MAX_OUTPUT_CHARS]
        if result.images:
            text += " [screenshot attached below]"
        sent = await self.send(function_output(call_id, text))
        if sent and result.images:
            sent = await self.send(image_message(result.images, result.text))
        if name in self.quiet:
            if response is not None:
                response.tools_pending -= 1
            return  # he chose silence: the model is not asked to go on
        if response is None:
            if sent:
                await self._continue(None)
            return
        response.tools_pending -= 1
        if response.tools_pending > 0 or not sent:
            return
        try:
            await asyncio.wait_for(response.done.wait(), RESPONSE_DONE_WAIT_S)
        except TimeoutError:
            log.warning("mouth_tool_response_never_done", response_id=response.id)
        if response.status in ("failed", "cancelled"):
            return  # the socket went away, or the room talked over him: the output waits for the next turn
        await self._continue(response.speaker)

    async def _continue(self, speaker: Speaker | None) -> None:
        event_id = "evt_tool_" + uuid.uuid4().hex[:16]
        request = Request(event_id, "tool", speaker)
        if self.ask is not None:
            await self.ask(request, response_create(event_id, "tool"))
            return
        self.book.requested(request)
        if not await self.send(response_create(event_id, "tool")):
            self.book.request_failed(event_id)

    async def close(self) -> None:
        await self._tasks.close()
