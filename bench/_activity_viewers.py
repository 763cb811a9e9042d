"""Many Activity viewers in one process of their own (for bench/activity.py), so their cost is
not counted as the bot's: each holds a live WebSocket to one server's play, sends its viewer
credential first, and reads every message.

Run as ``python bench/_activity_viewers.py <surface url> <guild id>`` with the credentials on
stdin (a JSON list, one line). It prints ``connected <n>`` once every viewer has had its first
status, then obeys lines on stdin: ``stills <k>`` (each viewer fetches the picture of each of the
next ``k`` distinct frames by its signed URL; answers ``fetched <n> <distinct frames>``) and
``quit`` (answers ``messages <n>`` and exits).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import aiohttp


class Viewer:
    def __init__(self, http: aiohttp.ClientSession, base: str, guild: str, credential: str) -> None:
        self.http, self.base, self.guild, self.credential = http, base, guild, credential
        self.messages = 0
        self.first = asyncio.Event()
        self.fetch_left = 0
        self.fetched = 0
        self.asked: set[str] = set()  # still URLs asked for, by frame
        self.frames: set[str] = set()  # frames served (their ETags)
        self.done = asyncio.Event()

    async def run(self) -> None:
        async with self.http.ws_connect(f"{self.base}v1/guilds/{self.guild}/embodiment/live") as ws:
            await ws.send_str(json.dumps({"credential": self.credential}))
            async for message in ws:
                body: dict[str, Any] = json.loads(message.data)
                self.messages += 1
                if body["type"] == "error":
                    raise SystemExit(f"refused: {body['message']}")
                status = body.get("data") if body["type"] == "status" else body.get("status")
                if not status:
                    continue
                self.first.set()
                url = status.get("stillUrl")
                if self.fetch_left and url and url.split("&exp=")[0] not in self.asked:
                    self.asked.add(url.split("&exp=")[0])
                    async with self.http.get(self.base + url, headers={"Accept": "image/*"}) as r:
                        assert r.status == 200, r.status
                        await r.read()
                        self.frames.add(r.headers["ETag"])  # the frame served (the newest by then)
                    self.fetched += 1
                    self.fetch_left -= 1
                    if not self.fetch_left:
                        self.done.set()


async def main() -> None:
    base, guild = sys.argv[1], sys.argv[2]
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    credentials = json.loads(await reader.readline())
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as http:
        viewers = [Viewer(http, base, guild, c) for c in credentials]
        tasks = [asyncio.create_task(v.run()) for v in viewers]
        await asyncio.gather(*(v.first.wait() for v in viewers))
        print(f"connected {len(viewers)}", flush=True)
        while line := (await reader.readline()).decode().strip():
            if line.startswith("stills "):
                for v in viewers:
                    v.done.clear()
                    v.fetch_left = int(line.split()[1])
                await asyncio.gather(*(v.done.wait() for v in viewers))
                frames = set().union(*(v.frames for v in viewers))
                print(f"fetched {sum(v.fetched for v in viewers)} {len(frames)}", flush=True)
            elif line == "quit":
                break
        print(f"messages {sum(v.messages for v in viewers)}", flush=True)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


if __name__ == "__main__":
    asyncio.run(main())
