"""Launching an Activity on the fake (activities.py), driven with raw aiohttp: the Entry Point
command a global overwrite may not drop (400, code 50240), callback type 12 and its answer, and
embedded-application invites — each answer checked against the OpenAPI description."""

from __future__ import annotations

from typing import Any

import aiohttp

from .model import CREATE_INSTANT_INVITE, FakeOverwrite
from .server import DiscordFake

SLASH = {"name": "play", "description": "Clankie plays a game", "type": 1}


async def call(fake: DiscordFake, method: str, path: str, **kwargs: Any) -> tuple[int, Any]:
    headers = {"Authorization": f"Bot {fake.token}"}
    async with (
        aiohttp.ClientSession() as http,
        http.request(method, fake.api_base + path, headers=headers, **kwargs) as resp,
    ):
        return resp.status, await resp.json(content_type=None) if resp.status != 204 else None


def answer_problems(fake: DiscordFake, method: str, path: str, status: int, body: Any) -> tuple[str, ...]:
    op = fake.contract.find(method, path)
    assert op is not None
    return fake.contract.check_answer(op, status, body)


async def test_a_global_overwrite_must_keep_the_entry_point() -> None:
    async with DiscordFake() as fake:
        path = f"/applications/{fake.application_id}/commands"
        assert (await call(fake, "PUT", path, json=[SLASH]))[0] == 200  # no Entry Point yet: fine
        entry = fake.launcher.enable(fake)
        status, body = await call(fake, "PUT", path, json=[SLASH])
        assert (status, body["code"]) == (400, 50240)
        assert {c["type"] for c in fake.commands[None]} == {1, 4}  # nothing changed
        kept = {k: entry[k] for k in ("id", "type", "name", "handler")}
        status, body = await call(fake, "PUT", path, json=[SLASH, kept])
        assert status == 200 and [c["id"] for c in body if c["type"] == 4] == [entry["id"]]
        # a guild's overwrite has no Entry Point to keep
        guild_path = f"/applications/{fake.application_id}/guilds/{fake.guild.id}/commands"
        assert (await call(fake, "PUT", guild_path, json=[SLASH]))[0] == 200
        assert fake.problems() == []


async def test_callback_12_launches_in_the_members_call_and_answers_the_instance() -> None:
    async with DiscordFake() as fake:
        await fake.set_voice_state(fake.member, fake.voice_channel)
        data = {"id": "1", "name": "play", "type": 1}
        handle = await fake.send_raw_interaction(2, data, by=fake.member)
        path = f"/interactions/{handle.id}/{handle.token}/callback"
        status, body = await call(fake, "POST", path, json={"type": 12}, params={"with_response": "1"})
        assert (status, body["code"]) == (400, 50035)  # a new application has no Activity
        assert handle.callback is None and fake.launcher.launched == []

        fake.launcher.enable(fake)
        handle = await fake.send_raw_interaction(2, data, by=fake.member)
        path = f"/interactions/{handle.id}/{handle.token}/callback"
        status, body = await call(fake, "POST", path, json={"type": 12}, params={"with_response": "1"})
        assert status == 200 and answer_problems(fake, "POST", path, status, body) == ()
        (launched,) = fake.launcher.launched
        assert body["resource"] == {"type": 12, "activity_instance": {"id": launched.instance_id}}
        assert body["interaction"]["activity_instance_id"] == launched.instance_id
        instance = fake.activity.instances[launched.instance_id]
        assert instance.channel is fake.voice_channel and instance.users == [fake.member.id]
        assert handle.callback is not None and handle.callback.type == 12
        assert fake.problems() == []


async def test_an_embedded_invite_opens_the_activity_in_a_voice_channel_only() -> None:
    async with DiscordFake() as fake:
        fake.launcher.enable(fake)
        body = {"max_age": 3600, "target_type": 2, "target_application_id": str(fake.application_id)}
        path = f"/channels/{fake.voice_channel.id}/invites"
        status, invite = await call(fake, "POST", path, json=body)
        assert status == 200 and answer_problems(fake, "POST", path, status, invite) == ()
        assert invite["target_type"] == 2 and invite["target_application"]["id"] == str(fake.application_id)
        assert invite["channel"]["id"] == str(fake.voice_channel.id) and invite["max_age"] == 3600

        text = f"/channels/{fake.text_channel.id}/invites"
        status, refused = await call(fake, "POST", text, json=body)
        assert (status, refused["code"]) == (400, 50035) and "target_type" in refused["errors"]
        other_app = body | {"target_application_id": "42"}
        status, refused = await call(fake, "POST", path, json=other_app)
        assert (status, refused["code"]) == (400, 50035)

        fake.voice_channel.overwrites.append(FakeOverwrite(fake.guild.id, 0, deny=CREATE_INSTANT_INVITE))
        status, refused = await call(fake, "POST", path, json=body)
        assert (status, refused["code"]) == (403, 50013)
        status, refused = await call(fake, "POST", "/channels/1/invites", json=body)
        assert (status, refused["code"]) == (404, 10003)
        assert len(fake.launcher.invites) == 1 and fake.problems() == []
