"""The fake's spec checks and REST behaviour, driven with raw aiohttp (no discord.py client)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp

from tests.fakes.discord import DiscordFake
from tests.fakes.discord.contract import SPEC_PATH, default_contract
from tests.fakes.discord.fixtures import discord_fake  # noqa: F401  (fixture)


def test_spec_and_its_license_ship_with_the_repo() -> None:
    assert SPEC_PATH.parent == Path(__file__).parent and SPEC_PATH.stat().st_size > 1_000_000
    license_text = SPEC_PATH.with_name("discord-openapi.LICENSE").read_text()
    assert license_text.startswith("MIT License") and "Copyright 2023 Discord" in license_text


def test_operations_resolve_by_method_and_template_with_literals_first() -> None:
    contract = default_contract()
    me = contract.find("GET", "/users/@me")
    assert me is not None and me.operation_id == "get_my_user"
    other = contract.find("GET", "/users/42")
    assert other is not None and other.params == {"user_id": "42"}
    original = contract.find("PATCH", "/webhooks/1/tok/messages/@original")
    assert original is not None and original.template.endswith("/messages/@original")
    assert contract.find("GET", "/interactions/1/tok/callback") is None  # only POST exists
    assert contract.find("GET", "/no/such/thing") is None


def test_bodies_are_checked_and_errors_say_where() -> None:
    contract = default_contract()
    callback = contract.find("POST", "/interactions/1/tok/callback")
    assert callback is not None
    ok = {"type": 4, "data": {"content": "hi", "flags": 64}}
    assert contract.check(callback, "/x", ok, has_body=True) is None
    bad = contract.check(callback, "/x", {"type": 4, "data": {"content": 5}}, has_body=True)
    assert bad is not None and bad.errors == ("at data/content: 5 is not of type 'string', 'null'",)
    sync = contract.find("PUT", "/applications/1/guilds/2/commands")
    assert sync is not None
    missing = contract.check(sync, "/x", None, has_body=False)
    assert missing is not None and missing.errors == ("request body is required",)
    too_long = contract.check(sync, "/x", [{"name": "x" * 40, "description": "d"}], has_body=True)
    assert too_long is not None and "at 0/name" in too_long.errors[0]


def test_only_integer_attachment_ids_are_tolerated() -> None:
    contract = default_contract()
    create = contract.find("POST", "/channels/1/messages")
    assert create is not None
    as_sent: dict[str, Any] = {"content": "x", "attachments": [{"id": 0, "filename": "a.png"}]}
    assert contract.check(create, "/x", as_sent, has_body=True) is None
    assert as_sent["attachments"][0]["id"] == 0  # the caller's body is not modified
    wrong = contract.check(create, "/x", {"attachments": [{"id": "abc", "filename": "a.png"}]}, has_body=True)
    assert wrong is not None and "attachments/0/id" in wrong.errors[0]
    callback = contract.find("POST", "/interactions/1/tok/callback")
    assert callback is not None
    in_callback = {"type": 4, "data": {"content": "x", "attachments": [{"id": 0, "filename": "a.png"}]}}
    assert contract.check(callback, "/x", in_callback, has_body=True) is None
    flags = contract.check(create, "/x", {"content": "x", "flags": "64"}, has_body=True)
    assert flags is not None and "at flags" in flags.errors[0]


def auth(fake: DiscordFake) -> dict[str, str]:
    return {"Authorization": f"Bot {fake.token}"}


async def test_json_answers_have_the_exact_content_type(discord_fake: DiscordFake) -> None:  # noqa: F811
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{discord_fake.api_base}/users/@me", headers=auth(discord_fake)) as resp:
            assert resp.status == 200 and resp.headers["Content-Type"] == "application/json"
            assert (await resp.json())["id"] == str(discord_fake.bot_user.id)
        async with http.get(f"{discord_fake.api_base}/gateway/bot", headers=auth(discord_fake)) as resp:
            assert (await resp.json())["url"] == discord_fake.gateway_url


async def test_bot_routes_need_the_token(discord_fake: DiscordFake) -> None:  # noqa: F811
    async with aiohttp.ClientSession() as http:
        async with http.get(
            f"{discord_fake.api_base}/users/@me", headers={"Authorization": "Bot nope"}
        ) as resp:
            assert resp.status == 401


async def test_malformed_and_invalid_bodies_are_violations(discord_fake: DiscordFake) -> None:  # noqa: F811
    url = f"{discord_fake.api_base}/channels/{discord_fake.text_channel.id}/messages"
    headers = auth(discord_fake) | {"Content-Type": "application/json"}
    form = aiohttp.FormData()
    form.add_field("payload_json", '{"content": ["not", "a", "string"]}', content_type="application/json")
    form.add_field("files[0]", b"data", filename="a.bin")
    async with aiohttp.ClientSession() as http:
        async with http.post(url, data=b"{not json", headers=headers) as resp:
            assert resp.status == 400
        async with http.post(url, data=form, headers=auth(discord_fake)) as resp:
            assert resp.status == 400 and (await resp.json())["code"] == 50035
    first, second = discord_fake.violations
    assert "body is not JSON" in first.errors[0]
    assert second.operation == "create_message" and "at content" in second.errors[0]
    assert discord_fake.channel_messages(discord_fake.text_channel) == []  # nothing was stored
    discord_fake.violations.clear()


async def test_unknown_interactions_and_early_followups_are_refused(discord_fake: DiscordFake) -> None:  # noqa: F811
    base = discord_fake.api_base
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{base}/interactions/1/bogus/callback", json={"type": 5}) as resp:
            assert resp.status == 404 and (await resp.json())["code"] == 10062
        async with http.post(
            f"{base}/webhooks/{discord_fake.application_id}/bogus", json={"content": "x"}
        ) as resp:
            assert resp.status == 404
    assert discord_fake.violations == [] and discord_fake.unknown_routes == []


async def test_bulk_overwrite_keeps_ids_of_commands_that_stay(discord_fake: DiscordFake) -> None:  # noqa: F811
    url = f"{discord_fake.api_base}/applications/{discord_fake.application_id}/commands"
    first_body = [{"name": "alpha", "description": "a"}, {"name": "beta", "description": "b"}]
    async with aiohttp.ClientSession(headers=auth(discord_fake)) as http:
        async with http.put(url, json=first_body) as resp:
            first = await resp.json()
        async with http.put(url, json=[{"name": "beta", "description": "b2"}]) as resp:
            second = await resp.json()
        async with http.get(url) as resp:
            listed = await resp.json()
        other_app = url.replace(str(discord_fake.application_id), "1")
        async with http.put(other_app, json=[]) as resp:
            assert resp.status == 403
    assert [c["name"] for c in first] == ["alpha", "beta"] and all(c["id"].isdigit() for c in first)
    assert second[0]["id"] == first[1]["id"] and second[0]["description"] == "b2"
    assert listed == second == discord_fake.commands[None]
    assert discord_fake.commands.get(discord_fake.guild.id) is None
