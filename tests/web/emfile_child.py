"""A guarded web surface in a process of its own whose descriptors can be used up on command,
so ``accept()`` fails with EMFILE for real (``python -m tests.web.emfile_child STATE_DIR``).

Commands on stdin, answers as JSON lines on stdout: ``burn`` (open /dev/null until EMFILE),
``release`` (close them again), ``stats`` (then exit). The first time the event loop reports an
error it prints ``{"loop_error": …}``. Logs (JSON) go to stderr."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import sys
from pathlib import Path
from typing import Any

from bot import logs
from bot.play.play_host import PlayHost
from bot.web.app import make_app
from bot.web.guard import serve
from bot.web.limits import WebLimits
from bot.web.share_store import ShareStore
from tests.web.sandbox import settings_for


def say(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


async def main(state: Path) -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
    logs.configure(json=True, stream=sys.stderr)
    loop = asyncio.get_running_loop()
    errors = [0]

    def count(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        errors[0] += 1
        if errors[0] == 1:
            say(loop_error=str(context.get("message")))
        loop.default_exception_handler(context)

    loop.set_exception_handler(count)
    runner, port = await serve(
        make_app(PlayHost(settings_for(state)), ShareStore()), "127.0.0.1", 0, WebLimits()
    )
    say(port=port)
    burned: list[int] = []
    while command := (await loop.run_in_executor(None, sys.stdin.readline)).strip():
        if command == "burn":
            try:
                while True:
                    burned.append(os.open(os.devnull, os.O_RDONLY))
            except OSError:
                say(burned=len(burned))
        elif command == "release":
            for fd in burned:
                os.close(fd)
            burned.clear()
            say(released=True)
        elif command == "stats":
            say(loop_errors=errors[0])
            break
    await runner.cleanup()


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
