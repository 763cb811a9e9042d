"""``clankie play`` as a process a person or a script runs: a failure is said once on stderr,
whatever failed (a world that cannot start, a key the endpoint refuses, an endpoint that keeps
answering with something that is no chat completion), and a reader of standard output that goes
away early (``clankie play … | head``) ends it quietly wherever it was printing — no
traceback, exit 141 as after SIGPIPE, the journal closed with its summary."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.cli import build_parser
from bot.config import load_settings
from bot.play.play_host import PlayHost
from bot.play.terminal import run_play
from journal.reader import read_journal
from tests.fakes.openai import FakeOpenAI, HttpError
from tests.fakes.openai.intercepted import captive_portal_page

ROOT = Path(__file__).resolve().parents[2]
CLANKIE = [sys.executable, "-c", "import sys; from bot.cli import main; sys.exit(main(sys.argv[1:]))"]
KEY = "sk-test-not-real"
READER_GONE = 141  # 128 + SIGPIPE


def env_for(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of a person's shell: no configuration of ours but the state directory
    (and so the default log level of ``clankie play``, warnings and errors, on stderr)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CLANKIE_", "DISCORD_"))}
    env.update({"CLANKIE_STATE": str(tmp_path / "state"), "PYTHONPATH": str(ROOT), **extra})
    return env


def journal_of(tmp_path: Path) -> Any:
    [path] = (tmp_path / "state" / "play").glob("*.jsonl")
    return read_journal(path)


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port nothing listens on, held for the test (bound, never listening: a
    connection to it is refused, and no other process can take it meanwhile)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def test_a_world_that_cannot_start_is_one_line_on_stderr(tmp_path: Path, closed_port: int) -> None:
    url = f"http://127.0.0.1:{closed_port}"
    done = subprocess.run(
        [*CLANKIE, "play", "--world", "pokeagent", "--url", url, "--turns", "2"],
        cwd=ROOT,
        env=env_for(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert line.startswith(f"clankie: play failed: no PokeAgent server answers at {url} (")
    assert line.endswith("start the emulator server or fix the URL")
    assert "session ended: failed after 0 turns" in done.stdout


async def clankie_play(tmp_path: Path, fake: FakeOpenAI, turns: int) -> tuple[int, str, str]:
    """``clankie play`` with the openai mind against the fake (served by this test's loop)."""
    proc = await asyncio.create_subprocess_exec(
        *CLANKIE,
        *f"play --world sandbox --mind openai --turns {turns} --pace 0".split(),
        cwd=ROOT,
        env=env_for(tmp_path, OPENAI_API_KEY=KEY, OPENAI_BASE_URL=fake.base_url),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_a_refused_key_is_one_line_on_stderr(tmp_path: Path, openai_fake: FakeOpenAI) -> None:
    openai_fake.chat.responder = lambda body: HttpError(
        401, "Incorrect API key provided: sk-test*****real.", "invalid_request_error", "invalid_api_key"
    )
    code, out, err = await clankie_play(tmp_path, openai_fake, turns=50)
    endpoint = openai_fake.base_url.rstrip("/")
    assert code == 1 and "session ended: failed after 1 turns" in out
    assert err.splitlines() == [
        f"clankie: play failed: the model endpoint {endpoint} answered HTTP 401 (check OPENAI_API_KEY)"
    ]
    assert KEY not in out + err and "*****" not in out + err  # nor the server's echo of it


async def test_a_mind_that_failed_repeatedly_is_one_line_on_stderr(
    tmp_path: Path, openai_fake: FakeOpenAI
) -> None:
    openai_fake.chat.responder = lambda body: captive_portal_page()
    code, out, err = await clankie_play(tmp_path, openai_fake, turns=50)
    assert code == 1 and "session ended: failed after 3 turns" in out
    [line] = err.splitlines()
    assert line.startswith("clankie: play failed: 3 turns in a row: the model endpoint ")
    assert journal_of(tmp_path).summary.reason == line.removeprefix("clankie: play failed: ")


@pytest.mark.parametrize("lines", [0, 2], ids=["before-the-first-line", "after-the-first-turn"])
def test_a_reader_that_goes_away_ends_play_quietly(tmp_path: Path, lines: int) -> None:
    """A real pipe whose reader reads ``lines`` lines and closes it; play goes on long enough
    (300 turns) that a later print finds the pipe closed."""
    proc = subprocess.Popen(
        [*CLANKIE, *"play --world sandbox --mind autopilot --turns 300 --pace 0.01".split()],
        cwd=ROOT,
        env=env_for(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    seen = [proc.stdout.readline() for _ in range(lines)]
    proc.stdout.close()  # like `| head -n LINES`
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == READER_GONE, err
    assert err == ""  # no traceback, no "Exception ignored" at the interpreter's exit
    assert lines == 0 or seen[0].startswith(b"playing sandbox")
    summary = journal_of(tmp_path).summary
    assert summary is not None and summary.outcome == "stopped" and summary.turnsTaken < 300


async def test_a_reader_gone_after_the_last_turn_meets_the_end_line_quietly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The pipe's reader reads every turn and closes it before ``session ended`` is printed
    (held there for certain: the command's wait for play returns only once the reader closed)."""
    turns = 3
    read_fd, write_fd = os.pipe()
    closed = threading.Event()
    seen: list[bytes] = []

    def reader() -> None:
        last = f"turn {turns:>4} ".encode()
        with os.fdopen(read_fd, "rb") as pipe:
            while (line := pipe.readline()) and not line.startswith(last):
                seen.append(line)
            seen.append(line)
        closed.set()

    wait = PlayHost.wait

    async def wait_for_play_then_the_reader(self: PlayHost) -> str | None:
        outcome = await wait(self)
        assert await asyncio.to_thread(closed.wait, 30)
        return outcome

    monkeypatch.setattr(PlayHost, "wait", wait_for_play_then_the_reader)
    settings = load_settings(None, env={"CLANKIE_STATE": str(tmp_path / "state")})
    args = build_parser().parse_args(
        f"play --world sandbox --mind autopilot --turns {turns} --pace 0".split()
    )
    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    with os.fdopen(write_fd, "w", encoding="utf-8") as out:
        assert await run_play(args, settings, out) == READER_GONE
        thread.join(5)
        out.write("after the end\n")
        out.flush()  # the descriptor is /dev/null now: nothing raises, even at close
    assert seen[0].startswith(b"playing sandbox") and seen[-1].startswith(f"turn {turns:>4} ".encode())
    assert capsys.readouterr().err == ""
    summary = journal_of(tmp_path).summary
    assert summary is not None and summary.outcome == "budget_exhausted" and summary.turnsTaken == turns
