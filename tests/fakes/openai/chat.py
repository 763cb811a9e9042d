"""`POST /v1/chat/completions` of the fake: every request recorded and validated, every answer
taken from a script the test provides (a queue of replies, or a responder callable)."""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam, ChatCompletionToolUnionParam
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

from .sequence import sequence_problem
from .strict import rejection, strict_schemas
from .validate import ModelChecker, UnionChecker, strict_validator

_MESSAGES = UnionChecker(ChatCompletionMessageParam, "role", "chat message")
_TOOLS = UnionChecker(ChatCompletionToolUnionParam, "type", "tool")
_BODY = strict_validator(CompletionCreateParamsNonStreaming)
ANSWERS = ModelChecker(ChatCompletion, "chat completion")  # what the API sends: no unknown keys


@dataclass(frozen=True)
class Text:
    """An assistant reply with text content."""

    content: str
    finish_reason: str = "stop"


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any] | str  # a dict is JSON-encoded; a str is sent as is (may be bad JSON)
    call_id: str | None = None


@dataclass(frozen=True)
class ToolCalls:
    """An assistant reply that calls tools (optionally with some text beside the calls)."""

    calls: tuple[ToolCall, ...]
    content: str | None = None


def tool_call(
    name: str, arguments: dict[str, Any] | str | None = None, call_id: str | None = None
) -> ToolCalls:
    """One tool call: `tool_call("pokeagent_observe", {})`."""
    return ToolCalls((ToolCall(name, {} if arguments is None else arguments, call_id),))


@dataclass(frozen=True)
class Structured:
    """Structured output: `value` JSON-encoded as the message content (for `response_format`)."""

    value: Any


@dataclass(frozen=True)
class Malformed:
    """A raw body sent as is (e.g. truncated JSON or a wrong shape; `intercepted.py` has the
    pages and fixed answers of what stands in front of an endpoint)."""

    body: bytes
    status: int = 200
    content_type: str = "application/json"
    charset: str | None = None


@dataclass(frozen=True)
class Redirect:
    """A redirect away from the endpoint (a captive portal sending the request to its login
    page, `intercepted.py`); the client follows it."""

    location: str
    status: int = 302


@dataclass(frozen=True)
class HttpError:
    """An HTTP error with an OpenAI-style error body."""

    status: int
    message: str = "fake error"
    type: str = "server_error"
    code: str | None = None


@dataclass(frozen=True)
class Hang:
    """Never answer; the client must time out. Released when the fake shuts down."""


Reply = Text | ToolCalls | Structured | Malformed | Redirect | HttpError | Hang
Responder = Callable[[dict[str, Any]], Reply | Awaitable[Reply]]


@dataclass
class ChatRequest:
    number: int
    body: Any  # the parsed JSON (Any: a bad body is recorded too)
    headers: dict[str, str]
    arrived: float = 0.0  # time.perf_counter() as the request reached the fake (before reading it)
    answered: float = 0.0  # …and as its answer was ready to go back (0: none yet)

    @property
    def messages(self) -> list[dict[str, Any]]:
        messages = self.body.get("messages") if isinstance(self.body, dict) else None
        return messages if isinstance(messages, list) else []

    @property
    def tool_names(self) -> list[str]:
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        return [t.get("function", {}).get("name", "") for t in tools or [] if isinstance(t, dict)]


@dataclass
class ChatFake:
    """The scripted chat-completions endpoint. Use `script(...)` or set `responder`.

    Like the real API, a request whose `strict: true` schema (response format or tool) breaks
    strict mode's rules is answered HTTP 400 (and recorded as a violation: our code must never
    send one); and since the real API's answer then always conforms to that schema, a scripted
    reply that does not is recorded as a violation too (the script asked the impossible). Set
    `ignore_strict` to play an endpoint that accepts `strict` and ignores it (Ollama, a vLLM
    without guided decoding): no schema check, and any reply goes."""

    replies: list[Reply] = field(default_factory=list)
    ignore_strict: bool = False
    responder: Responder | None = None
    requests: list[ChatRequest] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    hanging: int = 0
    usage: dict[str, Any] | None = None  # every answer's `usage` (None: chat_usage(1, 1))
    _release: asyncio.Event = field(default_factory=asyncio.Event)
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def script(self, *replies: Reply) -> None:
        """Queue replies; each request takes the next one (the responder is used when empty)."""
        self.replies.extend(replies)

    async def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[ChatRequest]:  # noqa: ASYNC109
        """Wait until at least `count` requests (hung ones included) have arrived."""
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: len(self.requests) >= count), timeout)
        return self.requests[:count]

    def release_hangs(self) -> None:
        self._release.set()

    def _validate(self, where: str, body: Any) -> list[str]:
        if not isinstance(body, dict):
            return [f"{where}: body must be a JSON object"]
        problems: list[str] = []
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            problems.append(f"{where}: messages must be a non-empty list")
        else:
            for i, message in enumerate(messages):
                problem = _MESSAGES.problem(message, f"{where} messages[{i}]")
                if problem:
                    problems.append(problem)
        tools = body.get("tools")
        if tools is not None:
            if not isinstance(tools, list):
                problems.append(f"{where}: tools must be a list")
            else:
                for i, tool in enumerate(tools):
                    problem = _TOOLS.problem(tool, f"{where} tools[{i}]")
                    if problem:
                        problems.append(problem)
        if body.get("stream"):
            problems.append(f"{where}: stream=true is not supported by this fake")
        elif not problems:
            try:
                _BODY.validate_python(body)
            except Exception as exc:  # pydantic ValidationError: keep its first lines
                problems.append(f"{where}: request body: {str(exc)[:800]}")
        return problems

    async def handle(self, request: web.Request) -> web.StreamResponse:
        arrived = time.perf_counter()
        raw = await request.read()
        before = len(self.violations)
        number = len(self.requests) + 1
        where = f"chat request #{number}"
        try:
            body: Any = json.loads(raw)
        except ValueError as exc:
            body = raw.decode("utf-8", "replace")
            self.violations.append(f"{where}: body is not JSON: {exc}")
        else:
            shape = self._validate(where, body)
            self.violations.extend(shape)
        record = ChatRequest(number, body, {k.lower(): v for k, v in request.headers.items()}, arrived)
        async with self._changed:
            self.requests.append(record)
            self._changed.notify_all()
        out_of_order = None if len(self.violations) > before else sequence_problem(record.messages)
        if out_of_order is not None:
            self.violations.append(f"{where}: {out_of_order}")
            return _error(400, out_of_order, "invalid_request_error", None, "messages")
        refused = None if self.ignore_strict else rejection(body)
        if refused is not None:
            self.violations.append(f"{where}: strict schema refused: {refused.message}")
            return _error(400, refused.message, "invalid_request_error", refused.code, refused.param)
        reply = await self._next_reply(record)
        if reply is None:
            self.violations.append(f"{where}: no scripted reply left and no responder")
            return _error(500, "the fake has no scripted reply for this request", "fake_unscripted")
        if not self.ignore_strict:
            self.violations.extend(_off_schema(where, reply, body))
        answer = await self._answer(reply, body)
        record.answered = time.perf_counter()
        return answer

    async def _next_reply(self, record: ChatRequest) -> Reply | None:
        if self.replies:
            return self.replies.pop(0)
        if self.responder is None:
            return None
        result = self.responder(record.body if isinstance(record.body, dict) else {})
        if inspect.isawaitable(result):
            result = await result
        return result

    async def _answer(self, reply: Reply, body: Any) -> web.StreamResponse:
        model = body.get("model", "fake-model") if isinstance(body, dict) else "fake-model"
        if isinstance(reply, Hang):
            self.hanging += 1
            try:
                await self._release.wait()
            finally:
                self.hanging -= 1
            return _error(503, "the fake released a hung request", "fake_released")
        if isinstance(reply, Malformed):
            return web.Response(
                status=reply.status, body=reply.body, content_type=reply.content_type, charset=reply.charset
            )
        if isinstance(reply, Redirect):
            return web.Response(status=reply.status, headers={"Location": reply.location})
        if isinstance(reply, HttpError):
            return _error(reply.status, reply.message, reply.type, reply.code)
        message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
        finish = "stop"
        if isinstance(reply, Text):
            message["content"] = reply.content
            finish = reply.finish_reason
        elif isinstance(reply, Structured):
            message["content"] = json.dumps(reply.value)
        else:
            message["content"] = reply.content
            message["tool_calls"] = [
                {
                    "id": call.call_id or f"call_{next(self._ids)}",
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": call.arguments
                        if isinstance(call.arguments, str)
                        else json.dumps(call.arguments),
                    },
                }
                for call in reply.calls
            ]
            finish = "tool_calls"
        number = next(self._ids)
        answer = {
            "id": f"chatcmpl-fake{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            "usage": self.usage if self.usage is not None else chat_usage(1, 1),
        }
        problem = ANSWERS.problem(answer, f"chat answer chatcmpl-fake{number}")
        if problem is not None:  # the script (or `usage`) asks for an answer the API cannot send
            self.violations.append(problem)
            return _error(500, problem, "fake_invalid_answer")
        return web.json_response(answer)


def chat_usage(prompt: int, completion: int, cached: int = 0) -> dict[str, Any]:
    """A chat completion's `usage` as the real API sends it (openai/types/completion_usage.py
    `CompletionUsage`: the cached tokens are part of `prompt_tokens`, told in
    `prompt_tokens_details.cached_tokens`). Every answer's `usage` is checked against that type
    with unknown keys refused (`ANSWERS`)."""
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _error(
    status: int, message: str, type_: str, code: str | None = None, param: str | None = None
) -> web.Response:
    return web.json_response(
        {"error": {"message": message, "type": type_, "param": param, "code": code}}, status=status
    )


def _off_schema(where: str, reply: Reply, body: Any) -> list[str]:
    """A scripted reply that a strict request's schema rules out (the real API cannot send it)."""
    from jsonschema import Draft202012Validator

    response, tools = strict_schemas(body)
    found: list[str] = []

    def check(schema: dict[str, Any], raw: Any, what: str) -> None:
        try:
            value = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            found.append(f"{where}: scripted {what} is not JSON, but strict mode guarantees JSON")
            return
        error = next(iter(Draft202012Validator(schema).iter_errors(value)), None)
        if error is not None:
            path = "/".join(str(p) for p in error.absolute_path) or "<root>"
            found.append(
                f"{where}: scripted {what} breaks the strict schema at {path}: {error.message[:200]}"
            )

    if response is not None and isinstance(reply, Structured):
        check(response, reply.value, "structured output")
    elif response is not None and isinstance(reply, Text):
        check(response, reply.content, "text answer to a strict response format")
    if isinstance(reply, ToolCalls):
        for call in reply.calls:
            if call.name in tools:
                check(tools[call.name], call.arguments, f"{call.name} call")
            elif tools:
                found.append(
                    f"{where}: scripted call of {call.name!r}, a tool this strict request does not offer"
                )
    return found
