"""The fake's OAuth2 code grant, Bearer ``/users/@me`` and activity instances (activity_routes.py)
answer what Discord's OpenAPI description (and, for ``/oauth2/token``, its OAuth2 docs) says, and
refuse as Discord does."""

from __future__ import annotations

from typing import Any

import aiohttp
import jsonschema

from .activity_routes import Fault
from .server import DiscordFake


async def call(fake: DiscordFake, method: str, path: str, auth: str, **kwargs: Any) -> tuple[int, Any]:
    async with (
        aiohttp.ClientSession() as http,
        http.request(
            method, fake.api_base + path, headers={"Authorization": auth} if auth else {}, **kwargs
        ) as resp,
    ):
        return resp.status, await resp.json(content_type=None)


def form(fake: DiscordFake, code: str) -> dict[str, str]:
    return {
        "client_id": str(fake.application_id),
        "client_secret": fake.activity.client_secret,
        "grant_type": "authorization_code",
        "code": code,
    }


async def test_a_code_becomes_an_access_token_once_and_names_its_user() -> None:
    async with DiscordFake() as fake:
        code = fake.activity.code_for(fake.member.user)
        status, token = await call(fake, "POST", "/oauth2/token", "", data=form(fake, code))
        assert status == 200 and token["token_type"] == "Bearer" and token["scope"] == "identify"
        status, again = await call(fake, "POST", "/oauth2/token", "", data=form(fake, code))
        assert (status, again["error"]) == (400, "invalid_grant")  # a code is good once
        status, me = await call(fake, "GET", "/users/@me", f"Bearer {token['access_token']}")
        op = fake.contract.find("GET", "/users/@me")
        assert op is not None and status == 200 and me["id"] == str(fake.member.id)
        assert fake.contract.check_answer(op, status, me) == ()
        assert (await call(fake, "GET", "/users/@me", "Bearer not-a-token"))[0] == 401
        wrong = form(fake, fake.activity.code_for(fake.member.user)) | {"client_secret": "guess"}
        status, body = await call(fake, "POST", "/oauth2/token", "", data=wrong)
        assert (status, body["error"]) == (401, "invalid_client")
        assert fake.problems() == []


async def test_a_json_body_is_refused_and_recorded_as_a_violation() -> None:
    async with DiscordFake() as fake:
        code = fake.activity.code_for(fake.member.user)
        status, body = await call(fake, "POST", "/oauth2/token", "", json=form(fake, code))
        assert (status, body["error"]) == (400, "unsupported_grant_type")
        assert [v.operation for v in fake.violations] == ["oauth2_token"]


async def test_an_activity_instance_conforms_to_the_spec_and_needs_the_bot_token() -> None:
    async with DiscordFake() as fake:
        instance = fake.activity.launch(fake.guild, fake.voice_channel, [fake.member.user])
        path = f"/applications/{fake.application_id}/activity-instances/{instance.instance_id}"
        status, body = await call(fake, "GET", path, f"Bot {fake.token}")
        op = fake.contract.find("GET", path)
        assert op is not None and op.operation_id == "applications_get_activity_instance" and status == 200
        assert fake.contract.check_answer(op, status, body) == ()
        assert body["location"]["guild_id"] == str(fake.guild.id) and body["users"] == [str(fake.member.id)]
        assert instance.instance_id.startswith("i-") and f"-gc-{fake.guild.id}-" in instance.instance_id
        token = fake.activity.code_for(fake.member.user)
        assert (await call(fake, "GET", path, f"Bearer {token}"))[0] == 401  # a user's token may not
        gone = f"/applications/{fake.application_id}/activity-instances/i-1-gc-1-1"
        assert (await call(fake, "GET", gone, f"Bot {fake.token}"))[0] == 404
        fake.activity.fail_next("applications_get_activity_instance", Fault(429, retry_after=2.5))
        status, limited = await call(fake, "GET", path, f"Bot {fake.token}")
        ratelimited = {"$ref": "#/components/schemas/RatelimitedResponse"}  # the spec's 429 answer
        schema = {"allOf": [ratelimited], "components": fake.contract.spec["components"]}
        assert status == 429 and list(jsonschema.Draft202012Validator(schema).iter_errors(limited)) == []
        assert fake.problems() == []
