"""The README's "Run him in your own server", walked as written, from a fresh copy of the
repository's files, against the Discord and OpenAI fakes — until `clankie doctor` says
"✓ all checks pass".

Every line of the section's `sh` blocks is run, in order, in that copy: `export`s go into the
environment, the configuration file is written by the README's own `cat > … <<'EOF'`, and each
`clankie …` is the real command line in a process of its own (`clankie run` in the background
until the next step stops it with Ctrl-C, as a person would). What the fakes substitute goes in
through the environment and the configuration only: `DISCORD_API_URL` and `OPENAI_BASE_URL` name
the fakes, the token and key are the ones the fakes accept, the server id is the fake's, and the
web port is a free one. What a person does in Discord between the commands the test does on the
fake: it authorizes the link `clankie invite` printed and runs `/play start` and `/play stop`
while `clankie run` runs. `make venv` and `. .venv/bin/activate` are the virtualenv this test
runs in (its `bin` goes first on `PATH`). `/voice join` is the one step not walked: the fake has no
voice server to connect him to (the voice tests in tests/mouth/ cover that path).
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.fakes.discord import DiscordFake
from tests.fakes.discord.model import CONNECT, SPEAK
from tests.fakes.openai import FakeOpenAI
from tests.web.browser import need_chromium

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## Run him in your own server"
SERVER_ID = "123456789012345678"  # the README's placeholder for the copied server id
KEY = "sk-walk-key"


def walk_commands(readme: str) -> list[str]:
    """The section's shell commands in order; a heredoc is one command with its body."""
    start = readme.index(SECTION)
    end = readme.index("\n## ", start + len(SECTION))
    blocks = re.findall(r"```sh\n(.*?)```", readme[start:end], re.S)
    commands: list[str] = []
    for block in blocks:
        lines = block.splitlines()
        while lines:
            line = lines.pop(0)
            heredoc = re.search(r"<<'(\w+)'$", line)
            if heredoc:
                body = []
                while lines and lines[0] != heredoc.group(1):
                    body.append(lines.pop(0))
                lines.pop(0)
                line = "\n".join([line, *body, heredoc.group(1)])
            if line.strip():
                commands.append(line)
    return commands


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Running:
    """A background `clankie run`: its stderr lines, and a wait for one of them."""

    proc: asyncio.subprocess.Process
    lines: list[str] = field(default_factory=list)
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def read(self) -> None:
        assert self.proc.stderr is not None
        async for raw in self.proc.stderr:
            async with self.changed:
                self.lines.append(raw.decode(errors="replace").rstrip("\n"))
                self.changed.notify_all()
        async with self.changed:
            self.changed.notify_all()

    async def wait_for(self, pattern: str, within: float = 30.0) -> str:
        def found() -> str | None:
            return next((x for x in self.lines if re.search(pattern, x)), None)

        def ready() -> bool:
            return found() is not None or self.proc.returncode is not None

        async with asyncio.timeout(within), self.changed:
            await self.changed.wait_for(ready)
        line = found()
        assert line is not None, f"clankie run ended without {pattern!r}:\n" + "\n".join(self.lines)
        return line

    async def interrupt(self) -> int:
        self.proc.send_signal(signal.SIGINT)  # Ctrl-C
        return await asyncio.wait_for(self.proc.wait(), 30)


class Walk:
    def __init__(self, clone: Path, home: Path, discord: DiscordFake, openai: FakeOpenAI) -> None:
        self.clone, self.discord, self.openai = clone, discord, openai
        self.port = free_port()
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "LANG": "C.UTF-8",
            "DISCORD_API_URL": discord.api_base,
            "OPENAI_BASE_URL": openai.base_url,
        }
        self.running: Running | None = None
        self.readers: list[asyncio.Task[None]] = []
        self.outputs: dict[str, tuple[int, str, str]] = {}
        self.runs = 0

    def substitute(self, name: str, value: str) -> str:
        return {"DISCORD_TOKEN": self.discord.token, "OPENAI_API_KEY": KEY}.get(name, value)

    async def do(self, command: str) -> None:
        if command == "make venv":
            assert Path(sys.prefix) == ROOT / ".venv", "the walk runs in the virtualenv `make venv` makes"
            return
        if command == ". .venv/bin/activate":
            self.env["PATH"] = f"{ROOT / '.venv' / 'bin'}:{self.env['PATH']}"
            self.env["VIRTUAL_ENV"] = str(ROOT / ".venv")
            return
        if command.startswith("export "):
            name, _, value = command.removeprefix("export ").partition("=")
            (word,) = shlex.split(value.replace("$PWD", str(self.clone)))
            self.env[name] = self.substitute(name, word)
            return
        if command.startswith("cat > "):
            wrote = await asyncio.create_subprocess_exec("bash", "-c", command, cwd=self.clone, env=self.env)
            assert await wrote.wait() == 0
            written = self.clone / shlex.split(command)[2]
            text = written.read_text().replace(SERVER_ID, str(self.discord.guild.id))
            written.write_text(text + f"\n[web]\nport = {self.port}\n")
            return
        argv = shlex.split(command)
        assert argv[0] == "clankie", f"the walk does not know how to run: {command}"
        await self.stop_running()
        if argv[1] == "run":
            await self.start_running(argv)
            return
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=self.clone,
            env=self.env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 120)
        assert proc.returncode is not None
        self.outputs[command] = (proc.returncode, out.decode(), err.decode())
        if argv[1] == "invite":  # the person opens the link and authorizes it
            assert proc.returncode == 0, err.decode()
            (url,) = re.findall(r"https://discord\.com/oauth2/authorize\S+", out.decode())
            await self.discord.authorize(url)

    async def start_running(self, argv: list[str]) -> None:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=self.clone,
            env=self.env,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        self.running = Running(proc)
        self.readers.append(asyncio.create_task(self.running.read()))
        self.runs += 1
        fake = self.discord
        await self.running.wait_for(r"discord_ready .*guilds=1")
        await fake.wait_until(lambda: bool(fake.gateway.live), 10, "the bot's gateway connection")
        await fake.flush()
        if self.runs == 1:  # step 6 synced, step 7: the first play
            await self.running.wait_for(r"commands_synced .*commands=\['play', 'share', 'clankie', 'voice'\]")
            handle = await fake.send_interaction("play start", by=fake.moderator)
            text = await handle.reply_text(within=30)
            assert text.startswith(
                "▶️ Playing **sandbox** with the **autopilot** mind — budget 500 turns / 60 min"
            )
            assert f"Watch: http://127.0.0.1:{self.port}/" in text, text
            stop = await fake.send_interaction("play stop", by=fake.moderator)
            assert "stopped" in (await stop.reply_text(within=30)).lower()
        else:  # step 8: the same commands, so no sync
            await self.running.wait_for(r"commands_up_to_date")
            assert len(fake.requests_to("bulk_set_guild_application_commands")) == 1

    async def stop_running(self) -> None:
        if self.running is not None:
            assert await self.running.interrupt() == 130  # Ctrl-C: stopped cleanly
            self.running = None


@pytest.fixture
async def fakes() -> tuple[DiscordFake, FakeOpenAI]:
    discord_fake, openai_fake = DiscordFake(), FakeOpenAI()
    await discord_fake.start()
    await openai_fake.start()
    # a fresh server: the bot is not in it yet, and @everyone may not use voice
    await discord_fake.remove_bot()
    everyone = discord_fake.guild.everyone_role
    await discord_fake.set_permissions(everyone, everyone.permissions & ~(CONNECT | SPEAK))
    openai_fake.models.api_key = KEY
    yield discord_fake, openai_fake
    await discord_fake.stop()
    await openai_fake.stop()
    discord_fake.assert_clean()
    openai_fake.assert_clean()


def fresh_copy(dest: Path) -> Path:
    """The repository's tracked files as they are in this tree: what a fresh clone holds."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


async def test_a_fresh_clone_following_the_readme_reaches_all_checks_pass(
    tmp_path: Path, fakes: tuple[DiscordFake, FakeOpenAI]
) -> None:
    need_chromium()
    discord_fake, openai_fake = fakes
    clone = fresh_copy(tmp_path / "clankie")
    assert not (clone / "config.toml").exists() and not (clone / ".venv").exists()
    home = tmp_path / "home"
    home.mkdir()
    commands = walk_commands((clone / "README.md").read_text())
    assert (
        commands[:2] == ["make venv", ". .venv/bin/activate"]
        and "clankie doctor --channel Lounge" in commands
    )
    walk = Walk(clone, home, discord_fake, openai_fake)
    try:
        for command in commands:
            await walk.do(command)
        await walk.stop_running()
    finally:
        if walk.running is not None:
            walk.running.proc.kill()
        for reader in walk.readers:
            await reader

    code, out, err = walk.outputs["clankie invite"]
    assert "permissions  3247105:" in out and err == ""
    (done,) = discord_fake.authorizations
    assert done.permissions == 3247105 and done.guild is discord_fake.guild

    code, out, err = walk.outputs["clankie doctor --channel Lounge"]
    lines = out.splitlines()
    assert code == 0, out + err
    assert lines[-1] == "✓ all checks pass"
    assert len(lines) == 14 and all(x.startswith("✓ ") for x in lines), out
    assert f"✓ web port: 127.0.0.1:{walk.port} is free" in lines
    assert KEY not in out + err and discord_fake.token not in out + err

    code, out, _err = walk.outputs["clankie sync --global"]
    assert code == 0 and out.startswith("Synced 4 command(s) globally")
    assert {c["name"] for c in discord_fake.commands[None]} == {"play", "share", "clankie", "voice"}
    assert walk.runs == 2  # steps 6 and 8
    state = home / ".local" / "state" / "clankie"
    played_in = state / "guilds" / str(discord_fake.guild.id) / "journal"  # the server's own play
    assert (state / "commands-synced.json").exists() and list(played_in.glob("*.jsonl"))
