"""The REST operations the fake implements, keyed by the spec's path templates."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aiohttp import web

from .activities import LaunchedActivity, entry_point_dropped, launch
from .guild_routes import send_refusal
from .interactions import (
    AUTOCOMPLETE_RESULT,
    CHANNEL_MESSAGE,
    DEFERRED_CHANNEL_MESSAGE,
    DEFERRED_UPDATE_MESSAGE,
    LAUNCH_ACTIVITY,
    MODAL,
    UPDATE_MESSAGE,
    Callback,
    InteractionHandle,
)
from .messages import APP_MESSAGE_CONTENT, as_seen, pinged
from .model import ATTACH_FILES, EPHEMERAL, READ_MESSAGE_HISTORY, FakeMessage
from .rest import BEARER_USER, RestApi, error, json_response, no_content

if TYPE_CHECKING:
    from .server import DiscordFake

Files = list[tuple[str, bytes]]

APP = "/applications/{application_id}"
HOOK = "/webhooks/{webhook_id}/{webhook_token}"
CHANNEL = "/channels/{channel_id}"


def token_expired() -> web.Response:
    """An interaction token past its 15 minutes (see ``InteractionHandle.expired``)."""
    return error(401, 50027, "Invalid Webhook Token")


def install(api: RestApi, fake: DiscordFake) -> None:
    r = _Routes(fake)
    api.route("GET", "/gateway", r.gateway)
    api.route("GET", "/gateway/bot", r.gateway_bot)
    api.route("GET", "/users/@me", r.me)
    api.route("GET", "/oauth2/applications/@me", r.application)
    api.route("POST", "/users/@me/channels", r.create_dm)
    api.route("GET", "/applications/@me", r.application)
    for template in (f"{APP}/commands", f"{APP}/guilds/{{guild_id}}/commands"):
        api.route("PUT", template, r.put_commands)
        api.route("GET", template, r.get_commands)
    api.route("POST", "/interactions/{interaction_id}/{interaction_token}/callback", r.callback)
    api.route("POST", HOOK, r.followup)
    for template in (f"{HOOK}/messages/@original", f"{HOOK}/messages/{{message_id}}"):
        api.route("GET", template, r.get_hook_message)
        api.route("PATCH", template, r.edit_hook_message)
        api.route("DELETE", template, r.delete_hook_message)
    api.route("POST", f"{CHANNEL}/messages", r.post_message)
    api.route("GET", f"{CHANNEL}/messages", r.list_messages)
    api.route("GET", f"{CHANNEL}/messages/{{message_id}}", r.get_message)
    api.route("PATCH", f"{CHANNEL}/messages/{{message_id}}", r.edit_message)
    api.route("DELETE", f"{CHANNEL}/messages/{{message_id}}", r.delete_message)
    api.route("POST", f"{CHANNEL}/typing", r.typing)


class _Routes:
    def __init__(self, fake: DiscordFake) -> None:
        self.fake = fake

    # ---- identity ----------------------------------------------------------------------------

    async def gateway(
        self, request: web.Request, params: dict[str, str], body: Any, files: Files
    ) -> web.Response:
        return json_response({"url": self.fake.gateway_url})

    async def gateway_bot(
        self, request: web.Request, params: dict[str, str], body: Any, files: Files
    ) -> web.Response:
        # GatewayBotResponse (shards.py): recommended shards, and how many IDENTIFYs may start per 5 s
        return json_response(self.fake.session_start_limit.payload(self.fake.gateway_url))

    async def me(self, request: web.Request, params: dict[str, str], body: Any, files: Files) -> web.Response:
        me = {"verified": True, "mfa_enabled": False, "locale": "en-US"}  # UserPIIResponse
        user = request.get(BEARER_USER) or self.fake.bot_user  # Bearer: the token's user (rest.py)
        return json_response(user.payload() | me)

    async def application(
        self, request: web.Request, params: dict[str, str], body: Any, files: Files
    ) -> web.Response:
        fake = self.fake
        return json_response(
            {
                "id": str(fake.application_id),
                "name": fake.bot_user.username,
                "icon": None,
                "description": "",
                "summary": "",
                "type": None,
                "bot": fake.bot_user.payload(),
                "bot_public": False,
                "bot_require_code_grant": False,
                "owner": fake.owner.user.payload(),
                "team": None,
                "verify_key": "0" * 64,
                # PrivateApplicationResponse.flags: the privileged intents enabled in the portal
                "flags": fake.application_flags,
                "flags_new": str(fake.application_flags),
                "role_connections_verification_url": None,
                "approximate_user_install_count": 0,
                "approximate_user_authorization_count": 0,
                "explicit_content_filter": 0,
                "eligible_oauth2_scopes": [],
                "rpc_origins": [],
                "interactions_endpoint_url": None,
                "redirect_uris": [],
                "tags": [],
                "approximate_guild_count": len(fake.guilds),
            }
        )

    # ---- application commands ---------------------------------------------------------------

    def _check_app(self, params: dict[str, str]) -> web.Response | None:
        if params.get("application_id") != str(self.fake.application_id):
            return error(403, 50001, "Missing Access")
        guild_id = params.get("guild_id")
        if guild_id is not None and int(guild_id) not in self.fake.guilds:
            return error(403, 50001, "Missing Access")
        return None

    async def put_commands(
        self, request: web.Request, params: dict[str, str], body: Any, files: Files
    ) -> web.Response:
        denied = self._check_app(params)
        if denied is not None:
            return denied
        fake = self.fake
        key = int(params["guild_id"]) if "guild_id" in params else None
        if key is None:  # a global overwrite may not drop the Entry Point command (activities.py)
            refused = entry_point_dropped(fake.commands.get(None, []), body or [])
            if refused is not None:
                return refused
        previous = {(c["name"], c["type"]): c for c in fake.commands.get(key, [])}
        stored = []
        for cmd in body or []:
            kind = int(cmd.get("type") or 1)
            old = previous.get((cmd["name"], kind))
            full = {
                "description": "",
                "options": [],
                "default_member_permissions": None,
                "nsfw": False,
                **cmd,
                "id": old["id"] if old else str(fake.ids.next()),
                "type": kind,
                "application_id": str(fake.application_id),
                "version": str(fake.ids.next()),
            }
            if key is not None:
                full["guild_id"] = str(key)
            stored.append(full)
        fake.commands[key] = stored
        return json_response(stored)

    async def get_commands(
        self, request: web.Request, params: dict[str, str], body: Any, files: Files
    ) -> web.Response:
        denied = self._check_app(params)
        if denied is not None:
            return denied
        key = int(params["guild_id"]) if "guild_id" in params else None
        return json_response(self.fake.commands.get(key, []))

    # ---- interactions and their webhooks ----------------------------------------------------

    def _handle(self, interaction_id: str, token: str) -> InteractionHandle | None:
        handle = self.fake.interactions.get(int(interaction_id)) if interaction_id.isdigit() else None
        return handle if handle is not None and handle.token == token else None

    def _handle_by_token(self, params: dict[str, str]) -> InteractionHandle | None:
        if params["webhook_id"] != str(self.fake.application_id):
            return None
        return next((h for h in self.fake.interactions.values() if h.token == params["webhook_token"]), None)

    def _new_message(self, handle: InteractionHandle, body: dict[str, Any], files: Files) -> FakeMessage:
        fake = self.fake
        message = FakeMessage(
            fake.ids.next(),
            handle.channel.id,
            fake.bot_user,
            dict(body),
            files,
            webhook_id=fake.application_id,
        )
        fake.messages[message.id] = message
        return message

    async def callback(
        self, request: web.Request, params: dict[str, str], body: Any, files: Files
    ) -> web.Response:
        handle = self._handle(params["interaction_id"], params["interaction_token"])
        if handle is None:
            return error(404, 10062, "Unknown interaction")
        if handle.callback is not None:
            return error(400, 40060, "Interaction has already been acknowledged.")
        kind = int(body["type"])
        data = dict(body.get("data") or {})
        message = None
        launched: LaunchedActivity | None = None
        if kind == LAUNCH_ACTIVITY:
            assert handle.member is not None
            outcome = launch(self.fake, handle.member)
            if isinstance(outcome, web.Response):
                return outcome  # refused: the interaction stays unanswered, as on Discord
            launched = outcome
        if kind in (CHANNEL_MESSAGE, DEFERRED_CHANNEL_MESSAGE):
            message = self._new_message(
                handle, data if kind == CHANNEL_MESSAGE else {"flags": data.get("flags", 0)}, files
            )
        handle.callback = Callback(kind, data, message)
        if request.query.get("with_response") not in ("1", "true", "True"):
            return no_content()
        answer: dict[str, Any] = {
            "interaction": {
                "id": str(handle.id),
                "type": handle.payload["type"],
                "response_message_loading": kind == DEFERRED_CHANNEL_MESSAGE,
                "response_message_ephemeral": bool(int(data.get("flags") or 0) & EPHEMERAL),
            }
        }
        if message is not None:
            answer["interaction"]["response_message_id"] = str(message.id)
            answer["resource"] = {"type": kind, "message": message.payload()}
        elif launched is not None:
            answer["interaction"]["activity_instance_id"] = launched.instance_id
            answer["resource"] = {"type": kind, "activity_instance": {"id": launched.instance_id}}
        elif kind in (DEFERRED_UPDATE_MESSAGE, UPDATE_MESSAGE, AUTOCOMPLETE_RESULT, MODAL):
            answer["resource"] = {"type": kind}
        return json_response(answer)

    async def followup(
        self, request: web.Request, params: dict[str, str], body: Any, files: Files
    ) -> web.Response:
        handle = self._handle_by_token(params)
        if handle is None:
            return error(404, 10015, "Unknown Webhook")
        if handle.expired:
            return token_expired()
        if handle.callback is None:
            return error(404, 10015, "Unknown Webhook")  # Discord refuses follow-ups before the callback
        message = self._new_message(handle, dict(body or {}), files)
        handle.followup_messages.append(message)
        if request.query.get("wait") in ("1", "true", "True"):
            return json_response(message.payload())
        return no_content()

    def _hook_message(self, params: dict[str, str]) -> tuple[InteractionHandle | None, FakeMessage | None]:
        handle = self._handle_by_token(params)
        if handle is None:
            return None, None
        message_id = params.get("message_id")
        if message_id is None:
            return handle, handle.callback.message if handle.callback else None
        found = next((m for m in handle.followup_messages if str(m.id) == message_id), None)
        if (
            found is None
            and handle.callback
            and handle.callback.message
            and str(handle.callback.message.id) == message_id
        ):
            found = handle.callback.message
        return handle, found

    async def get_hook_message(
        self, request: web.Request, params: dict[str, str], body: Any, files: Files
    ) -> web.Response:
        handle, message = self._hook_message(params)
        if handle is not None and handle.expired:
            return token_expired()
        if message is None or message.deleted:
            return error(404, 10008, "Unknown Message")
        return json_response(message.payload())

    async def edit_hook_message(
        self, request: web.Request, params: dict[str, str], body: Any, files: Files
    ) -> web.Response:
        handle, message = self._hook_message(params)
        if handle is not None and handle.expired:
            return token_expired()
        if handle is None or message is None or message.deleted:
            return error(404, 10008, "Unknown Message")
        message.edit(dict(body or {}), files)
        if handle.callback is not None and message is handle.callback.message:
            handle.original_edits += 1
        return json_response(message.payload())

    async def delete_hook_message(
        self, request: web.Request, params: dict[str, str], body: Any, files: Files
    ) -> web.Response:
        handle, message = self._hook_message(params)
        if handle is not None and handle.expired:
            return token_expired()
        if message is None or message.deleted:
            return error(404, 10008, "Unknown Message")
        message.deleted = True
        return no_content()

    # ---- channel messages ---------------------------------------------------------------------

    def _channel_ok(self, params: dict[str, str]) -> bool:
        channel_id = int(params["channel_id"]) if params["channel_id"].isdigit() else -1
        return channel_id in self.fake.dm_channels or any(
            channel_id in g.channels for g in self.fake.guilds.values()
        )

    async def create_dm(
        self, request: web.Request, params: dict[str, str], body: Any, files: Files
    ) -> web.Response:
        fake = self.fake
        recipient_id = int(body["recipient_id"])
        user = next(
            (g.members[recipient_id].user for g in fake.guilds.values() if recipient_id in g.members), None
        )
        if user is None:
            return error(400, 50033, "Invalid Recipient(s)")
        channel_id = next((c for c, u in fake.dm_channels.items() if u.id == user.id), None)
        if channel_id is None:
            channel_id = fake.ids.next()
            fake.dm_channels[channel_id] = user
        return json_response(
            {
                "id": str(channel_id),
                "type": 1,
                "last_message_id": None,
                "flags": 0,
                "recipients": [user.payload()],
            }
        )

    async def post_message(
        self, request: web.Request, params: dict[str, str], body: Any, files: Files
    ) -> web.Response:
        """Create Message: ``message_reference`` makes it a reply (the referenced message must be
        in the channel: 400 50035 otherwise, as Discord's "Unknown message" form error),
        ``allowed_mentions`` decides whom it pings (messages.py ``pinged``), files need Attach
        Files and a reply Read Message History (Discord's permissions table: 403 50013). The
        bot's own message is dispatched back to it as MESSAGE_CREATE, as Discord does.
        ``fake.refuse_uploads`` (a status) refuses any body with files, e.g. 413 40005
        "Request entity too large"."""
        if not self._channel_ok(params):
            return error(404, 10003, "Unknown Channel")
        fake = self.fake
        channel_id = int(params["channel_id"])
        recipient = fake.dm_channels.get(channel_id)
        if recipient is not None and recipient.id in fake.dms_closed:
            return error(403, 50007, "Cannot send messages to this user")
        refused = send_refusal(fake, channel_id)
        if refused is not None:
            return refused
        if files and fake.refuse_uploads is not None:
            return error(fake.refuse_uploads, 40005, "Request entity too large")
        body = dict(body or {})
        guild = next((g for g in fake.guilds.values() if channel_id in g.channels), None)
        have = guild.members[fake.bot_user.id].permissions_in(guild.channels[channel_id]) if guild else -1
        if files and not have & ATTACH_FILES:
            return error(403, 50013, "Missing Permissions")
        reference = None
        ref = body.get("message_reference")
        if isinstance(ref, dict):
            if not have & READ_MESSAGE_HISTORY:
                return error(403, 50013, "Missing Permissions")
            reference = fake.messages.get(int(ref["message_id"]))
            if reference is None or reference.channel_id != channel_id or reference.deleted:
                return error(400, 50035, "Invalid Form Body: message_reference: Unknown message")
        users, roles, everyone = pinged(
            str(body.get("content") or ""),
            body.get("allowed_mentions"),
            replied_to=reference.author.id if reference is not None else None,
            role_ids=set(guild.roles) if guild else set(),
        )
        members = guild.members if guild else {}
        message = FakeMessage(
            fake.ids.next(),
            channel_id,
            fake.bot_user,
            body,
            files,
            reference=reference,
            guild_id=guild.id if guild else None,
            member=members.get(fake.bot_user.id),
            mentions=[members[u].user for u in sorted(users) if u in members],
            mention_roles=sorted(roles),
            mention_everyone=everyone,
        )
        fake.messages[message.id] = message
        if guild is not None:
            await fake.dispatch("MESSAGE_CREATE", message.event())
        return json_response(message.payload())

    async def list_messages(
        self, request: web.Request, params: dict[str, str], body: Any, files: Files
    ) -> web.Response:
        """List Messages, newest first, ``before`` an id and at most ``limit`` (1–100, default
        50); without Read Message History an empty list. Content is emptied as for the gateway,
        by the application's Message Content flag (messages.py)."""
        if not self._channel_ok(params):
            return error(404, 10003, "Unknown Channel")
        fake = self.fake
        channel_id = int(params["channel_id"])
        guild = next((g for g in fake.guilds.values() if channel_id in g.channels), None)
        if guild is not None:
            me = guild.members[fake.bot_user.id]
            if not me.permissions_in(guild.channels[channel_id]) & READ_MESSAGE_HISTORY:
                return json_response([])
        before = int(request.query["before"]) if request.query.get("before", "").isdigit() else None
        found = [
            m
            for m in fake.messages.values()
            if m.channel_id == channel_id
            and not m.deleted
            and not m.ephemeral
            and (before is None or m.id < before)
        ]
        limit = max(1, min(100, int(request.query.get("limit", "50"))))
        may_read = bool(fake.application_flags & APP_MESSAGE_CONTENT)
        newest = sorted(found, key=lambda m: m.id, reverse=True)[:limit]
        return json_response([as_seen(m.event(), fake.bot_user.id, may_read=may_read) for m in newest])

    async def typing(
        self, request: web.Request, params: dict[str, str], body: Any, files: Files
    ) -> web.Response:
        """Trigger Typing Indicator: 204, counted per channel in ``fake.typing``."""
        if not self._channel_ok(params):
            return error(404, 10003, "Unknown Channel")
        refused = send_refusal(self.fake, int(params["channel_id"]))
        if refused is not None:
            return refused
        channel_id = int(params["channel_id"])
        self.fake.typing[channel_id] = self.fake.typing.get(channel_id, 0) + 1
        return no_content()

    def _message(self, params: dict[str, str]) -> FakeMessage | None:
        message = (
            self.fake.messages.get(int(params["message_id"])) if params["message_id"].isdigit() else None
        )
        if message is None or message.deleted or str(message.channel_id) != params["channel_id"]:
            return None
        return message

    async def get_message(
        self, request: web.Request, params: dict[str, str], body: Any, files: Files
    ) -> web.Response:
        message = self._message(params)
        if message is None:
            return error(404, 10008, "Unknown Message")
        may_read = bool(self.fake.application_flags & APP_MESSAGE_CONTENT)  # as for history (messages.py)
        return json_response(as_seen(message.event(), self.fake.bot_user.id, may_read=may_read))

    async def edit_message(
        self, request: web.Request, params: dict[str, str], body: Any, files: Files
    ) -> web.Response:
        message = self._message(params)
        if message is None:
            return error(404, 10008, "Unknown Message")
        message.edit(dict(body or {}), files)
        return json_response(message.payload())

    async def delete_message(
        self, request: web.Request, params: dict[str, str], body: Any, files: Files
    ) -> web.Response:
        message = self._message(params)
        if message is None:
            return error(404, 10008, "Unknown Message")
        message.deleted = True
        return no_content()
