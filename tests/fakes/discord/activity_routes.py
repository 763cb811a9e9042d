"""What an Activity's own server asks of Discord to prove a viewer (issue 28): the OAuth2 code
grant, the viewer's identity with their access token, and the activity instance with the bot
token.

- ``POST /oauth2/token`` is not in the OpenAPI description; it is Discord's "OAuth2 →
  Authorization Code Grant" (discord-api-docs, docs/topics/OAuth2.md: "Access Token Exchange
  Example"), whose body is ``application/x-www-form-urlencoded`` with ``grant_type=
  authorization_code``, ``code`` and the client's id and secret (in the body, or HTTP Basic), and
  whose answer is RFC 6749 §5.1's ``{access_token, token_type: "Bearer", expires_in,
  refresh_token, scope}``. A JSON body is refused (FACTS.md "Discord Activities": checked), as
  RFC 6749 §4.1.3 allows only the form; errors are §5.2's ``{error, error_description}``: a code
  that is unknown or was used already ``400 invalid_grant``, a wrong client ``401
  invalid_client``. A code is good once. Every request is recorded in ``fake.requests`` as
  operation ``oauth2_token`` and a JSON body is a contract violation.
- ``GET /users/@me`` (spec ``get_my_user``, security ``OAuth2 identify`` or ``BotToken``) with
  ``Authorization: Bearer <access token>`` answers that token's user (``UserPIIResponse``); the
  auth check is in rest.py, the answer in routes.py ``me``.
- ``GET /applications/{application_id}/activity-instances/{instance_id}`` (spec
  ``applications_get_activity_instance``, security ``BotToken``) answers
  ``EmbeddedActivityInstance``: ``{application_id, instance_id, launch_id, location: {id, kind:
  "gc", channel_id, guild_id}, users: [ids]}``; an instance that is not running is 404 (FACTS.md).

Faults are inputs: :meth:`ActivityApi.fail_next` makes the next request of an operation answer a
given status (a 429 carries Discord's ``RatelimitedResponse`` body, ``retry_after`` in seconds,
with the ``Retry-After`` header, as "Rate Limits" in discord-api-docs says) or wait first (a
timeout).
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from aiohttp import web

from .contract import Violation
from .model import FakeChannel, FakeGuild, FakeUser
from .rest import RecordedRequest, RestApi, error, json_response

if TYPE_CHECKING:
    from .server import DiscordFake

Files = list[tuple[str, bytes]]
TOKEN_OPERATION = "oauth2_token"
INSTANCE = "/applications/{application_id}/activity-instances/{instance_id}"


@dataclass
class Fault:
    status: int = 500
    retry_after: float = 0.0  # a 429's
    delay_s: float = 0.0  # wait this long before answering (a timeout when past the client's)


@dataclass
class FakeInstance:
    """A running activity instance: where it was launched and who is in it now."""

    instance_id: str
    guild: FakeGuild
    channel: FakeChannel
    users: list[int] = field(default_factory=list)
    launch_id: str = field(default_factory=lambda: str(secrets.randbits(60)))

    def payload(self, application_id: int) -> dict[str, Any]:
        return {
            "application_id": str(application_id),
            "instance_id": self.instance_id,
            "launch_id": self.launch_id,
            "location": {
                "id": f"gc-{self.guild.id}-{self.channel.id}",
                "kind": "gc",
                "channel_id": str(self.channel.id),
                "guild_id": str(self.guild.id),
            },
            "users": [str(u) for u in self.users],
        }


class ActivityApi:
    """The fake's OAuth2 and activity-instance state: the client secret it accepts, the codes
    it issued (what the Discord client's AUTHORIZE answers), the access tokens they became, and
    the running instances."""

    def __init__(self, fake: DiscordFake) -> None:
        self.fake = fake
        self.client_secret = "fake-client-secret-" + secrets.token_hex(8)
        self.codes: dict[str, FakeUser] = {}
        self.tokens: dict[str, FakeUser] = {}
        self.instances: dict[str, FakeInstance] = {}
        self._faults: dict[str, deque[Fault]] = {}

    # ---- the world -------------------------------------------------------------------------

    def code_for(self, user: FakeUser) -> str:
        """A fresh authorization code for ``user`` (AUTHORIZE's answer in the Discord client)."""
        code = secrets.token_urlsafe(18)
        self.codes[code] = user
        return code

    def launch(self, guild: FakeGuild, channel: FakeChannel, users: list[FakeUser]) -> FakeInstance:
        """An instance in ``channel`` of ``guild``, its id shaped as Discord's are
        (``i-<launch>-gc-<guild>-<channel>``)."""
        launch = secrets.randbits(60)
        instance = FakeInstance(
            f"i-{launch}-gc-{guild.id}-{channel.id}", guild, channel, [u.id for u in users]
        )
        self.instances[instance.instance_id] = instance
        return instance

    def fail_next(self, operation: str, fault: Fault) -> None:
        """The next request of ``operation`` (``oauth2_token``, ``get_my_user``,
        ``applications_get_activity_instance``) answers with ``fault``."""
        self._faults.setdefault(operation, deque()).append(fault)

    def secrets_seen(self) -> list[str]:
        """Every secret this fake knows: the client secret, codes and access tokens issued."""
        return [self.client_secret, *self.codes, *self.tokens]

    def bearer_user(self, authorization: str) -> FakeUser | None:
        return self.tokens.get(authorization.removeprefix("Bearer ").strip())

    async def fault(self, operation: str | None) -> web.Response | None:
        queue = self._faults.get(operation or "")
        if not queue:
            return None
        fault = queue.popleft()
        if fault.delay_s:
            await asyncio.sleep(fault.delay_s)
        if fault.status == 429:
            return web.Response(
                status=429,
                body=json.dumps(
                    {
                        "message": "You are being rate limited.",
                        "retry_after": fault.retry_after,
                        "global": False,
                        "code": 0,
                    }
                ).encode(),
                headers={
                    "Content-Type": "application/json",
                    "Retry-After": str(max(1, round(fault.retry_after))),
                    "X-RateLimit-Scope": "user",
                },
            )
        if fault.status >= 500:
            return web.Response(status=fault.status, text="upstream connect error", content_type="text/plain")
        return error(fault.status, 0, f"{fault.status}: refused")

    # ---- routes ----------------------------------------------------------------------------

    def install(self, app: web.Application, api: RestApi) -> None:
        app.router.add_post("/api/v10/oauth2/token", self.token)
        api.route("GET", INSTANCE, self.instance)

    async def token(self, request: web.Request) -> web.Response:
        fake = self.fake
        raw = await request.read()
        record = RecordedRequest("POST", "/oauth2/token", dict(request.query), TOKEN_OPERATION, None, [])
        fake.requests.append(record)
        try:
            response = await self._token(request, raw)
        finally:
            await fake.notify()
        record.status = response.status
        return response

    async def _token(self, request: web.Request, raw: bytes) -> web.Response:
        if request.content_type != "application/x-www-form-urlencoded":
            self.fake.violations.append(
                Violation(
                    "POST",
                    "/oauth2/token",
                    TOKEN_OPERATION,
                    (f"the body must be a form, not {request.content_type}",),
                )
            )
            return json_response(
                {"error": "unsupported_grant_type", "error_description": 'Unsupported grant type ""'}, 400
            )
        form = dict(parse_qsl(raw.decode("utf-8", "replace"), keep_blank_values=True))
        fault = await self.fault(TOKEN_OPERATION)
        if fault is not None:
            return fault
        if form.get("grant_type") != "authorization_code":
            return json_response({"error": "unsupported_grant_type"}, 400)
        if (
            form.get("client_id") != str(self.fake.application_id)
            or form.get("client_secret") != self.client_secret
        ):
            return json_response({"error": "invalid_client"}, 401)
        user = self.codes.pop(form.get("code", ""), None)  # a code is good once
        if user is None:
            return json_response(
                {"error": "invalid_grant", "error_description": 'Invalid "code" in request.'}, 400
            )
        access = secrets.token_urlsafe(24)
        self.tokens[access] = user
        return json_response(
            {
                "access_token": access,
                "token_type": "Bearer",
                "expires_in": 604800,
                "refresh_token": secrets.token_urlsafe(24),
                "scope": "identify",
            }
        )

    async def instance(
        self, request: web.Request, params: dict[str, str], body: Any, files: Files
    ) -> web.Response:
        if params["application_id"] != str(self.fake.application_id):
            return error(403, 50001, "Missing Access")
        found = self.instances.get(params["instance_id"])
        if found is None:
            return error(404, 0, "404: Not Found")
        return json_response(found.payload(self.fake.application_id))
