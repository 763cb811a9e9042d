"""``clankie demo`` as a user runs it: it prints the activity page's URL, the page answers there,
one Ctrl-C ends play and the process; another address without a web token is refused in one
sentence, before anything listens."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import aiohttp

CLANKIE = [sys.executable, "-c", "import sys; from bot.cli import main; sys.exit(main(sys.argv[1:]))"]
ROOT = Path(__file__).resolve().parents[2]


def env_for(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CLANKIE_", "DISCORD_"))}
    env.update({"CLANKIE_STATE": str(tmp_path / "state"), "PYTHONPATH": str(ROOT)})
    return env


async def demo(tmp_path: Path, *args: str) -> asyncio.subprocess.Process:
    """``clankie demo ARGS``; its stderr goes to ``tmp_path/stderr.txt`` (a pipe nobody reads
    while it plays could fill and stall it)."""
    with (tmp_path / "stderr.txt").open("wb") as err:
        return await asyncio.create_subprocess_exec(
            *CLANKIE,
            "demo",
            *args,
            cwd=ROOT,
            env=env_for(tmp_path),
            stdout=asyncio.subprocess.PIPE,
            stderr=err,
        )


async def read_line_with(proc: asyncio.subprocess.Process, prefix: str) -> str:
    assert proc.stdout is not None
    while True:
        line = (await proc.stdout.readline()).decode()
        assert line, f"the demo ended before printing {prefix!r}"
        if line.startswith(prefix):
            return line.strip()


async def test_demo_prints_its_url_serves_the_page_and_one_ctrl_c_quits(tmp_path: Path) -> None:
    proc = await demo(tmp_path, "--port", "0", "--turns", "5000", "--pace", "0.2")
    try:
        async with asyncio.timeout(60):
            url = (await read_line_with(proc, "activity page: ")).removeprefix("activity page: ")
            assert url.startswith("http://127.0.0.1:") and url.endswith("/")
            await read_line_with(proc, "turn ")
            async with aiohttp.ClientSession() as session:
                async with session.get(url) as page:
                    assert page.status == 200 and "Clankie" in await page.text()
                async with session.get(url + "v1/embodiment/sessions/live") as live:
                    assert (await live.json())["session"]["world"] == "sandbox"
            proc.send_signal(signal.SIGINT)  # one Ctrl-C while he plays
            out, _ = await proc.communicate()
        assert b"session ended: stopped" in out, (tmp_path / "stderr.txt").read_text()[-2000:]
        assert b"stays up" not in out
        assert proc.returncode == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_demo_refuses_another_address_without_a_token(tmp_path: Path) -> None:
    proc = await demo(tmp_path, "--host", "0.0.0.0", "--port", "0")
    async with asyncio.timeout(60):
        out, _ = await proc.communicate()
    assert proc.returncode == 2
    message = (tmp_path / "stderr.txt").read_text().strip()
    assert message.startswith("clankie: refusing to listen on 0.0.0.0") and "[web] token" in message
    assert "Traceback" not in message and len(message.splitlines()) == 1
    assert b"activity page" not in out and b"playing" not in out


async def test_with_a_web_token_the_printed_url_says_how_to_open_it(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[web]\ntoken = "demo-token-not-printed"\n')
    proc = await demo(tmp_path, "--config", str(config), "--port", "0", "--turns", "1", "--exit-when-done")
    async with asyncio.timeout(60):
        out, _ = await proc.communicate()
    assert proc.returncode == 0, (tmp_path / "stderr.txt").read_text()[-2000:]
    [line] = [x for x in out.decode().splitlines() if x.startswith("activity page: ")]
    assert line.endswith("/ (open it as /?token=<your [web] token>)")
    assert b"demo-token-not-printed" not in out
