"""`clankie doctor` against the Discord and OpenAI fakes: every check passes on a good setup,
and each kind of broken setup gets its ✗ with the fix, exit 1."""

from __future__ import annotations

import socket

from pydantic import SecretStr

from bot.text.switches import Switch, Switches
from bot.worlds.browser.settings import BrowserSettings
from tests.fakes.discord.model import ATTACH_FILES, CONNECT, SEND_MESSAGES, SPEAK, VIEW_CHANNEL
from tests.fakes.discord.model import READ_MESSAGE_HISTORY as HISTORY
from tests.setup.conftest import Setup, line

NAMES = [
    "Discord token",
    "intents",
    "test server",
    "server permissions",
    "slash commands",
    "OpenAI key",
    "models",
    "Chromium",
    "libopus",
    "davey",
    "state",
    "web port",
]


async def test_a_good_setup_passes_every_check_and_exits_0(setup: Setup) -> None:
    await setup.sync()
    code, lines = await setup.doctor(channel="Lounge")
    assert code == 0, lines
    assert lines[-1] == "✓ all checks pass"
    assert [x[0] for x in lines[:-1]] == ["✓"] * 13
    assert [x[2:].split(":")[0] for x in lines[:-1]] == [*NAMES[:4], "voice channel", *NAMES[4:]]
    fake = setup.discord
    assert line(lines, "Discord token") == (
        f"✓ Discord token: accepted: bot Clankie, application {fake.application_id}"
    )
    assert line(lines, "intents") == (
        "✓ intents: he asks for guilds, voice_states, guild_messages; none is privileged, nothing to enable"
    )
    assert line(lines, "test server") == f"✓ test server: the bot is in Clankie Test Server ({fake.guild.id})"
    assert (
        line(lines, "voice channel")
        == "✓ voice channel: Create Invite, View Channels, Connect, Speak in Lounge"
    )
    assert line(lines, "models").startswith("✓ models: gpt-4.1-mini (the captain")
    assert setup.openai.models.requests == 1
    # the doctor reads, never writes: no command sync, no message
    writes = [r for r in fake.requests if r.method != "GET"]
    assert [r.operation for r in writes] == ["bulk_set_guild_application_commands"]  # setup.sync()


async def test_a_token_discord_rejects_is_the_first_cross_and_the_rest_are_not_checked(setup: Setup) -> None:
    setup.settings.discord.token = SecretStr("not-the-token")
    code, lines = await setup.doctor()
    assert code == 1 and lines[-1] == "✗ 5 of 12 checks failed"
    assert line(lines, "Discord token") == (
        "✗ Discord token: Discord rejected the token (401) — fix: copy a fresh token from the "
        "Developer Portal (your application → Bot → Reset Token) into DISCORD_TOKEN"
    )
    for name in NAMES[1:5]:
        assert line(lines, name) == f"✗ {name}: not checked: the token was not accepted"
    assert all(x.startswith("✓") for x in lines[5:-1]), lines
    assert "not-the-token" not in "\n".join(lines)
    (login,) = setup.discord.requests_to("get_my_user")
    assert login.status == 401


async def test_no_token_says_which_variable(setup: Setup) -> None:
    setup.settings.discord.token = None
    _code, lines = await setup.doctor()
    assert line(lines, "Discord token") == (
        "✗ Discord token: DISCORD_TOKEN is not set — fix: export DISCORD_TOKEN=<the bot's token>"
    )


async def test_a_bot_not_in_the_test_server_is_told_to_invite_it(setup: Setup) -> None:
    await setup.sync()
    await setup.discord.remove_bot()
    gid = setup.discord.guild.id
    code, lines = await setup.doctor(channel="Lounge")
    assert code == 1
    assert line(lines, "test server") == (
        f"✗ test server: the bot is not in server {gid} — fix: add him with the link "
        f"`clankie invite --guild {gid}` prints"
    )
    assert line(lines, "server permissions").startswith("✗ server permissions: not checked")
    assert line(lines, "voice channel").startswith("✗ voice channel: not checked")


async def test_no_test_server_says_how_to_find_its_id(setup: Setup) -> None:
    setup.settings.discord.test_guild_id = None
    _code, lines = await setup.doctor()
    assert line(lines, "test server").startswith(
        "✗ test server: [discord] test_guild_id is not set — fix: set [discord] test_guild_id to "
        "your server's id (Discord: User Settings → Advanced → Developer Mode on"
    )
    # with no test server, the global commands are compared
    assert line(lines, "slash commands").startswith("✗ slash commands: every server (global) differs")
    assert line(lines, "slash commands").endswith("fix: run `clankie sync --global`")


async def test_missing_connect_and_speak_are_named_with_the_fix(setup: Setup) -> None:
    fake = setup.discord
    await setup.sync()
    await fake.set_permissions(
        fake.guild.everyone_role, VIEW_CHANNEL | SEND_MESSAGES | ATTACH_FILES | HISTORY
    )
    gid = fake.guild.id
    code, lines = await setup.doctor()
    assert code == 1 and lines[-1] == "✗ 1 of 12 checks failed"
    assert line(lines, "server permissions") == (
        "✗ server permissions: missing Create Invite, Connect, Speak — fix: give his role Create Invite, "
        "Connect, Speak (Server "
        f"Settings → Roles), or authorize again: add him with the link `clankie invite --guild {gid}` prints"
    )
    # authorizing the invite link gives his own role exactly what he needs
    from bot.setup.invite import invite_url

    await fake.authorize(invite_url(fake.application_id, gid))
    code, lines = await setup.doctor()
    assert code == 0, lines


async def test_a_voice_channel_that_denies_connect_or_speak_is_named(setup: Setup) -> None:
    fake = setup.discord
    await setup.sync()
    await fake.set_overwrite(fake.voice_channel, fake.guild.everyone_role, deny=CONNECT | SPEAK)
    code, lines = await setup.doctor(channel="lounge")  # names match case-insensitively
    assert code == 1
    assert line(lines, "server permissions").startswith("✓")
    assert line(lines, "voice channel") == (
        "✗ voice channel: missing Connect, Speak in Lounge — fix: Edit Channel Lounge → "
        "Permissions: allow his role Connect, Speak"
    )
    bot_role = await fake.add_role("Clankie")
    await fake.set_roles(fake.bot_member, [bot_role])
    await fake.set_overwrite(fake.voice_channel, bot_role, allow=CONNECT | SPEAK)
    code, lines = await setup.doctor(channel=str(fake.voice_channel.id))  # or by id
    assert code == 0, lines

    _code, lines = await setup.doctor(channel="Nowhere")
    assert line(lines, "voice channel") == (
        "✗ voice channel: no voice channel 'Nowhere' in the test server — fix: name one of: Lounge"
    )


async def test_stale_commands_are_named_and_clankie_sync_fixes_them(setup: Setup) -> None:
    fake = setup.discord
    _code, lines = await setup.doctor()
    assert line(lines, "slash commands") == (
        "✗ slash commands: the test server differs from this code: it has none of his commands "
        "(/play, /share, /clankie, /voice) — fix: run `clankie sync` (or restart `clankie run`)"
    )
    await setup.sync()
    held = fake.commands[fake.guild.id]
    play = next(c for c in held if c["name"] == "play")
    play["options"] = [o for o in play["options"] if o["name"] != "story"]  # an older /play
    fake.commands[fake.guild.id] = [c for c in held if c["name"] != "voice"] + [
        {**play, "name": "old", "id": "1"}
    ]
    _code, lines = await setup.doctor()
    assert line(lines, "slash commands") == (
        "✗ slash commands: the test server differs from this code: /play differs; /voice is "
        "missing; /old is not in this code — fix: run `clankie sync` (or restart `clankie run`)"
    )
    await setup.sync()
    code, _lines = await setup.doctor()
    assert code == 0


async def test_a_model_the_key_cannot_use_is_named_with_ones_it_can(setup: Setup) -> None:
    await setup.sync()
    setup.openai.models.ids = ["gpt-4.1-mini", "gpt-4o-mini", "gpt-realtime-mini"]
    code, lines = await setup.doctor()
    assert code == 1
    assert line(lines, "models") == (
        "✗ models: gpt-realtime is not one of this key's models — fix: set [openai] "
        "realtime_model to one that is (gpt-realtime-mini)"
    )


async def test_a_key_openai_refuses_is_named(setup: Setup) -> None:
    setup.openai.models.api_key = "sk-the-real-one"
    _code, lines = await setup.doctor()
    found = line(lines, "OpenAI key")
    assert found.startswith(f"✗ OpenAI key: {setup.openai.base_url} refused the key (401: Incorrect API key")
    assert found.endswith("— fix: set OPENAI_API_KEY to a valid key") and "sk-test-key" not in found
    assert line(lines, "models") == "✗ models: not checked: the key was refused"
    setup.settings.openai.api_key = None
    setup.settings.openai.base_url = None
    _code, lines = await setup.doctor()
    assert line(lines, "OpenAI key").startswith("✗ OpenAI key: OPENAI_API_KEY is not set — fix: export")


async def test_no_chromium_is_named_with_where_it_was_looked_for(setup: Setup) -> None:
    missing = setup.tmp / "no-chromium"
    setup.settings.world_settings(BrowserSettings).chromium_path = str(missing)
    _code, lines = await setup.doctor()
    assert line(lines, "Chromium") == (
        f"✗ Chromium: no Chromium at {missing} — fix: install it (Debian/Ubuntu: apt-get install "
        "chromium), or set [browser] chromium_path"
    )
    broken = setup.tmp / "chromium"
    broken.write_text("#!/bin/sh\necho 'cannot open display' >&2\nexit 3\n")
    broken.chmod(0o755)
    setup.settings.world_settings(BrowserSettings).chromium_path = str(broken)
    _code, lines = await setup.doctor()
    assert line(lines, "Chromium").startswith(f"✗ Chromium: {broken} does not run (cannot open display)")


async def test_a_taken_web_port_and_an_unwritable_state_are_named(setup: Setup) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        setup.settings.web.port = port
        blocker = setup.tmp / "a-file"
        blocker.write_text("")
        setup.settings.paths.state_dir = blocker / "state"
        setup.settings.paths.journal_dir = None
        _code, lines = await setup.doctor()
    assert line(lines, "web port") == (
        f"✗ web port: 127.0.0.1:{port} is taken (Address already in use) — fix: stop what listens "
        "there, or set [web] port to a free one"
    )
    assert line(lines, "state") == (
        f"✗ state: cannot write the journal directory at {blocker}/state/play: Not a directory "
        f"({blocker} is not a directory) — fix: fix that path, or point CLANKIE_STATE at a writable directory"
    )


async def test_a_cog_that_cannot_load_is_a_cross_not_a_traceback(setup: Setup, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import bot.app as app

    monkeypatch.setattr(app, "OPTIONAL_EXTENSIONS", ("tests.setup.broken_extension",))
    code, lines = await setup.doctor()
    assert code == 1
    assert line(lines, "slash commands").startswith(
        "✗ slash commands: this code's commands cannot be built (ExtensionFailed: Extension "
        "'tests.setup.broken_extension' raised an error: ImportError: No module named"
    )


async def test_the_text_lanes_channels_are_checked_for_what_it_needs_there(setup: Setup) -> None:
    fake = setup.discord
    await setup.sync()
    setup.settings.text.channels = [fake.text_channel.id]
    await fake.set_overwrite(fake.text_channel, fake.guild.everyone_role, deny=ATTACH_FILES | HISTORY)
    code, lines = await setup.doctor()
    assert code == 1 and line(lines, "server permissions").startswith("✓")
    assert line(lines, "text channels") == (
        "✗ text channels: missing Attach Files, Read Message History in #general — fix: Edit Channel → "
        "Permissions: allow his role what is missing there"
    )
    await fake.set_overwrite(fake.text_channel, fake.guild.everyone_role)
    code, lines = await setup.doctor()
    assert code == 0, lines
    assert line(lines, "text channels") == (
        "✓ text channels: View Channels, Send Messages, Attach Files, Read Message History in #general"
    )
    setup.settings.text.channels = [12345]
    code, lines = await setup.doctor()
    assert "not a channel of the test server" in line(lines, "text channels")


async def test_a_budget_limit_with_an_unpriced_model_is_named_with_the_fix(setup: Setup) -> None:
    await setup.sync()
    setup.settings.budget.daily_usd = 5.0
    code, lines = await setup.doctor()
    assert code == 0 and line(lines, "budget prices").startswith(
        "✓ budget prices: every configured model is priced"
    )
    setup.settings.openai.model = "gpt-4o-mini-2024-07-18"  # a dated snapshot takes its model's price
    setup.openai.models.ids = [*setup.openai.models.ids, "gpt-4o-mini-2024-07-18", "my-local-model"]
    code, lines = await setup.doctor()
    assert code == 0, lines
    setup.settings.openai.model = "my-local-model"
    code, lines = await setup.doctor()
    assert code == 1 and lines[-1].endswith("checks failed")
    assert line(lines, "budget prices") == (
        "✗ budget prices: [openai] model my-local-model (play, the captain, the text lane) has no price "
        'in [prices]: its calls count as $0 against [budget] — fix: add [prices."my-local-model"] with '
        "its per-million-token prices (and source, checked)"
    )
    setup.settings.budget.daily_usd = None  # no limit: nothing to check
    code, lines = await setup.doctor()
    assert code == 0 and not [x for x in lines if "budget prices" in x]


async def test_the_channels_a_moderator_chose_with_clankie_text_are_the_ones_checked(setup: Setup) -> None:
    fake = setup.discord
    await setup.sync()
    guild = fake.guild.id
    switches = Switches(setup.settings.state_dir)  # what `/clankie text on channel:#general` keeps
    await switches.set(guild, Switch(enabled=True, channels=(fake.text_channel.id,)))
    await fake.set_overwrite(fake.text_channel, fake.guild.everyone_role, deny=ATTACH_FILES)
    code, lines = await setup.doctor()  # [text] says every channel; the moderator said #general
    assert code == 1
    assert line(lines, "text channels").startswith("✗ text channels: missing Attach Files in #general")
    setup.settings.text.channels = [fake.text_channel.id]
    await switches.set(guild, Switch(enabled=False, channels=(fake.text_channel.id,)))
    code, lines = await setup.doctor()  # a moderator turned the lane off: nothing to check there
    assert code == 0, lines
    assert not [x for x in lines if x[2:].startswith("text channels")]
