"""REST under /api/v10: every request is recorded and its body checked against the spec.

Routing goes through the spec's own path templates, so a handler exists only for operations
Discord really has. A request the fake has no handler for gets a 404 and lands in
`fake.unknown_routes`; a body the spec rejects gets Discord's 400 "Invalid Form Body" and lands
in `fake.violations`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aiohttp import BodyPartReader, web

from .contract import Operation, Violation

BEARER_TEMPLATES = frozenset({"/users/@me"})  # routes a user's access token may call (identify)
BEARER_USER: web.RequestKey[Any] = web.RequestKey("bearer_user", object)  # that token's FakeUser

if TYPE_CHECKING:
    from .server import DiscordFake

Handler = Callable[[web.Request, dict[str, str], Any, list[tuple[str, bytes]]], Awaitable[web.Response]]


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: dict[str, str]
    operation: str | None
    body: Any
    files: list[tuple[str, bytes]]
    status: int = 0
    error_code: int | None = None  # the JSON error code of a refusal (e.g. 50013 Missing Permissions)
    arrived: float = 0.0  # time.perf_counter() as the request reached the fake, before any of its work


def json_response(data: Any, status: int = 200) -> web.Response:
    # Exactly "application/json": discord.py parses the body only for that exact header value.
    return web.Response(
        status=status, body=json.dumps(data).encode(), headers={"Content-Type": "application/json"}
    )


def no_content() -> web.Response:
    return web.Response(status=204)


def error(status: int, code: int, message: str) -> web.Response:
    return json_response({"code": code, "message": message}, status=status)


async def read_body(request: web.Request) -> tuple[Any, list[tuple[str, bytes]], bool, str | None]:
    """(json body, uploaded files, whether a body was sent, parse error)."""
    ctype = request.content_type
    if ctype.startswith("multipart/"):
        body: Any = None
        files: list[tuple[str, bytes]] = []
        reader = await request.multipart()
        async for part in reader:
            if not isinstance(part, BodyPartReader):
                return None, files, True, "nested multipart bodies are not something Discord accepts"
            data = await part.read()
            if part.name == "payload_json":
                try:
                    body = json.loads(data)
                except ValueError as exc:
                    return None, files, True, f"payload_json is not JSON: {exc}"
            else:
                files.append((part.filename or str(part.name), bytes(data)))
        return body, files, True, None
    raw = await request.read()
    if not raw:
        return None, [], False, None
    if ctype != "application/json":
        return None, [], True, f"unexpected Content-Type {ctype!r}"
    try:
        return json.loads(raw), [], True, None
    except ValueError as exc:
        return None, [], True, f"body is not JSON: {exc}"


class RestApi:
    def __init__(self, fake: DiscordFake) -> None:
        self.fake = fake
        self.routes: dict[tuple[str, str], Handler] = {}

    def route(self, method: str, template: str, handler: Handler) -> None:
        self.routes[(method, template)] = handler

    async def handle(self, request: web.Request) -> web.Response:
        arrived = time.perf_counter()
        fake = self.fake
        path = "/" + request.match_info["tail"]
        method = request.method
        body, files, has_body, parse_error = await read_body(request)
        op = fake.contract.find(method, path)
        record = RecordedRequest(
            method, path, dict(request.query), op.operation_id if op else None, body, files, arrived=arrived
        )
        fake.requests.append(record)
        response = await self._answer(request, path, op, body, files, has_body, parse_error)
        record.status = response.status
        if response.status >= 400 and isinstance(response.body, bytes):
            try:
                record.error_code = json.loads(response.body).get("code")
            except (ValueError, AttributeError):
                pass
        await fake.notify()
        return response

    async def _answer(
        self,
        request: web.Request,
        path: str,
        op: Operation | None,
        body: Any,
        files: list[tuple[str, bytes]],
        has_body: bool,
        parse_error: str | None,
    ) -> web.Response:
        fake = self.fake
        method = request.method
        if op is None:
            fake.unknown_routes.append(f"{method} {path}")
            return error(404, 0, "404: Not Found")
        if parse_error is not None:
            fake.violations.append(Violation(method, path, op.operation_id, (parse_error,)))
            return error(400, 50109, "The request body contains invalid JSON.")
        violation = fake.contract.check(op, path, body, has_body=has_body)
        if violation is not None:
            fake.violations.append(violation)
            return json_response(
                {
                    "code": 50035,
                    "message": "Invalid Form Body",
                    "errors": {"_errors": list(violation.errors)},
                },
                400,
            )
        handler = self.routes.get((method, op.template))
        if handler is None:
            fake.unknown_routes.append(f"{method} {path}")
            return error(404, 0, "404: Not Found")
        authorization = request.headers.get("Authorization", "")
        if authorization.startswith("Bearer ") and op.template in BEARER_TEMPLATES:
            user = fake.activity.bearer_user(authorization)  # a user's access token (activity_routes.py)
            if user is None:
                return error(401, 0, "401: Unauthorized")
            request[BEARER_USER] = user
        elif not op.template.startswith(("/webhooks/", "/interactions/")):
            if authorization != f"Bot {fake.token}":
                return error(401, 0, "401: Unauthorized")
        fault = await fake.activity.fault(op.operation_id)
        if fault is not None:
            return fault
        return await handler(request, op.params, body, files)
