"""The Playwright driver every browser world of a process shares, and the browsers it holds
(docs/architecture.md §4 "browser", §14).

Playwright's Python API drives a Node process (the driver) that talks to the browsers. One
driver serves any number of browsers and connections, so a process needs one, not one per
session: :class:`Browsers` starts it lazily for the first browser world that starts and stops
it when the last one has closed (a reference count). :meth:`Browsers.shared` is the process's.
Playwright objects belong to the event loop that made them: the bot runs one loop; a process
that runs loops one after another (``asyncio.run`` twice, a test suite) starts afresh on the
next, and using it from a second loop while worlds on another one hold it is refused.

Two ways to get a browser:

- :meth:`Browsers.local` — Chromium launched on this machine, **one shared by every session**,
  each session in a browser context of its own (cookies, storage and cache apart, as in separate
  profiles; pages still get renderer processes of their own). A second Chromium would cost a
  browser process, GPU process, network and storage services and zygotes again (hundreds of MB,
  docs/architecture.md §14); a context costs its pages. A crash of the shared browser ends every
  session's page; each world reopens its start URL, and the first to ask launches the new one.
- :meth:`Browsers.remote` — a connection of its own per session to a Playwright server
  (``playwright run-server``, or browserless) at ``[browser] ws_endpoint``, through the same
  shared driver. The server launches a browser per connection and counts its clients
  (``--max-clients``) by connection, so one session's dropped connection ends only that session.

A ``playwright run-server`` (Playwright 1.65) filters what a client asks to launch: the
``x-playwright-launch-options`` header (or a ``launch-options`` query parameter on the
endpoint, which wins over the header) keeps ``executablePath``, ``args`` and
``chromiumSandbox`` only when the server was started with ``--unsafe`` (``filterLaunchOptions``
in ``playwright/driver/package/lib/coreBundle.js``, the ``run-server`` command's ``--unsafe``
option beside it). Without it the server looks for its own downloaded browser, which Debian's
Chromium is not; :func:`launch_refusal_hint` says so in the refusal.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from urllib.parse import urlsplit

from playwright.async_api import Browser, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
CONNECT_TIMEOUT_MS = 30_000  # a server launches a browser for each connection before it answers
LAUNCH_OPTIONS_HEADER = "x-playwright-launch-options"


def endpoint_shown(ws_endpoint: str) -> str:
    """The endpoint as a message may show it: no user info and no query (browserless takes its
    token there)."""
    parts = urlsplit(ws_endpoint)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port is not None else ""
    return f"{parts.scheme}://{host}{port}{parts.path or '/'}"


def launch_options(chromium_path: str) -> dict[str, object]:
    """What a session asks a Playwright server to launch: Chromium at ``chromium_path`` on the
    server's machine, headless, with the quiet offline flags (kept only by an ``--unsafe``
    server; see the module's notes)."""
    return {"executablePath": chromium_path, "headless": True, "args": list(CHROMIUM_ARGS)}


def launch_refusal_hint(reason: str, chromium_path: str) -> str:
    """A hint for a server's refusal to launch; empty when there is none to give."""
    if "Executable doesn't exist" in reason:
        return (
            f" (the server did not use {chromium_path}: a playwright run-server launches the "
            "executable a client names only when started with --unsafe)"
        )
    return ""


class Browsers:
    """One Playwright driver and the Chromium launched through it, shared by browser worlds."""

    def __init__(self) -> None:
        self._loop: weakref.ref[asyncio.AbstractEventLoop] | None = None
        self._lock = asyncio.Lock()
        self._pw: Playwright | None = None
        self._users = 0
        self._launched: dict[str, Browser] = {}  # by executable path
        self.drivers_started = 0  # drivers started on the current event loop

    @classmethod
    def shared(cls) -> Browsers:
        """The process's Browsers, ready for the running event loop."""
        _PROCESS._bind(asyncio.get_running_loop())
        return _PROCESS

    def _bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """Serve ``loop``: what was held on a loop that has ended is dropped (its driver ended
        with its loop's tasks, or can no longer be reached)."""
        owner = self._loop() if self._loop is not None else None
        if owner is loop:
            return
        if owner is not None and not owner.is_closed() and self._users:
            raise RuntimeError("the process's browsers are held by worlds on another event loop")
        self._loop = weakref.ref(loop)
        self._lock = asyncio.Lock()
        self._pw, self._users, self._launched, self.drivers_started = None, 0, {}, 0

    @property
    def users(self) -> int:
        """How many worlds hold the driver now."""
        return self._users

    @property
    def playwright(self) -> Playwright | None:
        """The running driver's Playwright, or None while no world holds it."""
        return self._pw

    async def acquire(self) -> Playwright:
        """Hold the driver (starting it if no world does); pair with :meth:`release`."""
        self._bind(asyncio.get_running_loop())
        async with self._lock:
            if self._pw is None:
                self._pw = await async_playwright().start()
                self.drivers_started += 1
            self._users += 1
            return self._pw

    async def release(self) -> None:
        """Let go of the driver; the last to let go closes the launched browsers and the driver."""
        async with self._lock:
            if self._users == 0:
                raise RuntimeError("Browsers.release without a matching acquire")
            self._users -= 1
            if self._users or self._pw is None:
                return
            pw, launched = self._pw, list(self._launched.values())
            self._pw = None
            self._launched.clear()
            for browser in launched:
                try:
                    await browser.close()
                except PlaywrightError:
                    pass
            try:
                await pw.stop()
            except PlaywrightError:
                pass

    async def local(self, chromium_path: str) -> Browser:
        """The Chromium at ``chromium_path`` that every session here shares, launched (again, if
        it went away) on first need; raises Playwright's error when it cannot start."""
        async with self._lock:
            pw = self._held()
            browser = self._launched.get(chromium_path)
            if browser is None or not browser.is_connected():
                self._launched.pop(chromium_path, None)
                browser = await pw.chromium.launch(
                    executable_path=chromium_path, headless=True, args=list(CHROMIUM_ARGS)
                )
                self._launched[chromium_path] = browser
            return browser

    async def remote(self, ws_endpoint: str, chromium_path: str) -> Browser:
        """A connection of this session's own to the Playwright server at ``ws_endpoint``, asking
        it to launch ``chromium_path``; raises Playwright's error when it cannot connect."""
        pw = self._held()
        headers = {LAUNCH_OPTIONS_HEADER: json.dumps(launch_options(chromium_path))}
        return await pw.chromium.connect(ws_endpoint, timeout=CONNECT_TIMEOUT_MS, headers=headers)

    def _held(self) -> Playwright:
        if self._pw is None:
            raise RuntimeError("no browser world holds the Playwright driver (acquire it first)")
        return self._pw


_PROCESS = Browsers()
