"""The browser world: a Chromium page driven through Playwright (docs/architecture.md §4 "browser").

``BrowserWorld(url)`` opens ``url`` (http(s), or ``builtin:2048[?seed=N]``) in headless Debian
Chromium at 1280×800 (or a smaller ``viewport``). ``observe()`` reads URL, title, visible text,
an outline of interactive elements with refs, ``game = {name, board, over}`` while a 2048 board
is on screen — read by sight on any page (:mod:`.watch_2048`), never from a page's markup — and
``metrics``: the ``score`` the page shows and the board's ``bestTile`` (:mod:`.metrics`); the
scene is always ``"page"``. Chromium is the process's shared one, a browser context per world,
or with ``ws_endpoint`` a connection of the world's own to a Playwright server, both through the
one Playwright driver of the process (:mod:`.browsers`). ``still()`` is a PNG of the viewport,
``still_region(box)`` one of a part of it. ``act()`` applies one
BROWSER_CATALOG action and never raises: problems come back as refusals —

- ``page_not_open``: the world was closed (or never started);
- ``browser_crashed``: the page crashed or the browser died; the world reopened the start URL
  (``data.reopened``), so the session goes on with the next observation (the play loop also
  refuses so a decision made on the page before it was reopened: ``info.reopen_refusal``);
- ``navigated_away``: the page had left the start origin; the world went back to the start URL
  and the action was not applied — act again;
- ``ref_not_found``, ``outside_viewport``, ``key_not_typable``, ``unsupported_action``: from
  applying the action to the page (:mod:`.actions`); ``browser_error`` (source ``exception``)
  for anything Playwright itself reports.

``observe()`` raises WorldUnavailable only when the world is closed or a crashed page could not
be reopened; after a crash it reopens the start URL itself, also after one it finds as it reads
(a page closed or a browser disconnected under the read, before Playwright reported it): then it
reopens and reads again, keeping only the first line of Playwright's error. ``state["epoch"]`` counts the
reopenings (0: the page first opened), and the first observation after one says what happened in
``state["notice"]``, for people, with the numbers the old game had and the new one has: "the
browser died; reopened the page (score 40 → 0 · best tile 16 → 2)" (:mod:`bot.worlds.base`).
"""

from __future__ import annotations

import asyncio
import uuid
from typing import TypedDict

from playwright.async_api import Browser, BrowserContext, Page, Playwright, Route
from playwright.async_api import Error as PlaywrightError
from pydantic import BaseModel

from bot.worlds.base import ActionResult, Observation, Still, WorldUnavailable
from bot.worlds.browser.actions import apply_action, refuse
from bot.worlds.browser.browsers import CHROMIUM_ARGS, Browsers, endpoint_shown, launch_refusal_hint
from bot.worlds.browser.info import INFO
from bot.worlds.browser.metrics import SCOREBOARD_JS, reopened_notice, score_of
from bot.worlds.browser.model_2048 import max_tile
from bot.worlds.browser.page_state import PageSnapshot, PageState
from bot.worlds.browser.pages import BUILTIN_ORIGIN, builtin_file_for, origin_of, resolve_url
from bot.worlds.browser.snapshot import SNAPSHOT_JS, snapshot_args
from bot.worlds.browser.watch_2048 import BoardWatch, game_seen
from journal.actions import BROWSER_CATALOG, BROWSER_VIEWPORT

ADAPTER_VERSION = "browser/1"
__all__ = ["CHROMIUM_ARGS", "BrowserWorld"]  # CHROMIUM_ARGS: the quiet offline flags, from .browsers
NAVIGATION_TIMEOUT_MS = 15_000
ACTION_TIMEOUT_MS = 10_000
SNAPSHOT_ATTEMPTS = 4
# The page's reading (SNAPSHOT_JS) and its score display (SCOREBOARD_JS) in one evaluate.
READ_JS = f"(args) => ({{ snap: ({SNAPSHOT_JS.strip()})(args), scoreboard: ({SCOREBOARD_JS.strip()})() }})"


class PageRead(TypedDict):
    """What ``READ_JS`` returns."""

    snap: PageSnapshot
    scoreboard: object


def first_line(exc: BaseException) -> str:
    """An error's first line: Playwright appends its call log and the browser's log after it."""
    return str(exc).split("\n", 1)[0]


class BrowserWorld:
    info = INFO  # what the play loop reads about this world (bot/worlds/browser/info.py)
    name = INFO.name
    catalog = BROWSER_CATALOG

    def __init__(
        self,
        url: str,
        *,
        chromium_path: str = "/usr/bin/chromium",
        ws_endpoint: str | None = None,
        browsers: Browsers | None = None,
        static_base_url: str | None = None,
        viewport: tuple[int, int] = BROWSER_VIEWPORT,
    ) -> None:
        if not (200 <= viewport[0] <= BROWSER_VIEWPORT[0] and 200 <= viewport[1] <= BROWSER_VIEWPORT[1]):
            raise ValueError(
                f"viewport {viewport[0]}x{viewport[1]} is outside 200x200 … "
                f"{BROWSER_VIEWPORT[0]}x{BROWSER_VIEWPORT[1]} (clicks are bounded by the largest)"
            )
        self._viewport = viewport
        self._target = resolve_url(url, static_base_url)
        self._requested_url = url
        self._chromium_path = chromium_path  # on the server's machine when ws_endpoint is set
        self._ws_endpoint = ws_endpoint
        self._browsers = browsers  # None: the process's own (Browsers.shared()), taken at start
        self._holding: Browsers | None = None  # whose driver this world holds while started
        self._origin = origin_of(self._target.url)
        self._session_id = uuid.uuid4().hex
        self._pw: Playwright | None = None
        self._browser: Browser | None = None
        self._context: BrowserContext | None = None
        self._page: Page | None = None
        self._browser_version = ""
        self._closed = False
        self._broken: str | None = None  # why the current page is unusable, if it is
        self._landed = False
        self._refs: set[str] = set()
        self._lock = asyncio.Lock()
        self._board = BoardWatch()  # the 2048 board on screen, read by sight
        self._epoch = 0  # how many times the page was reopened after it was lost
        self._metrics: dict[str, int] = {}  # the metrics the last observation read
        self._lost: tuple[str, dict[str, int]] | None = None  # a reopening not told yet: why, old metrics

    @property
    def provenance(self) -> dict[str, str | int | float | bool | None]:
        return {
            "body": self.name,
            "sessionId": self._session_id,
            "adapterVersion": ADAPTER_VERSION,
            "url": self._requested_url,
            "startUrl": self._target.url,
            "builtin": self._target.builtin,
            "browserVersion": self._browser_version or None,
            "viewport": f"{self._viewport[0]}x{self._viewport[1]}",
        }

    # --- lifecycle -----------------------------------------------------------------------

    async def start(self) -> None:
        if self._closed:
            raise WorldUnavailable("this browser world was closed; make a new one")
        try:
            browsers = self._browsers or Browsers.shared()
            self._pw = await browsers.acquire()
            self._holding = browsers  # held: _shutdown lets go of it
            await self._launch()
        except (PlaywrightError, OSError) as exc:
            launched = self._browser is not None
            await self._shutdown()
            reason = first_line(exc)
            if launched:
                message = f"Chromium could not open {self._target.url}: {reason}"
            elif self._ws_endpoint is not None:
                hint = launch_refusal_hint(reason, self._chromium_path)
                message = f"could not use the Playwright server at {endpoint_shown(self._ws_endpoint)}: {reason}{hint}"
            else:
                message = f"could not start Chromium at {self._chromium_path}: {reason}"
            raise WorldUnavailable(message) from exc

    async def _launch(self) -> None:
        assert self._pw is not None and self._holding is not None
        if self._browser is None or not self._browser.is_connected():
            if self._browser is not None:
                self._browser.remove_listener("disconnected", self._browser_lost)
            if self._ws_endpoint is not None:
                self._browser = await self._holding.remote(self._ws_endpoint, self._chromium_path)
            else:
                self._browser = await self._holding.local(self._chromium_path)
            self._browser_version = self._browser.version
            self._browser.on("disconnected", self._browser_lost)
            self._context = None
        if self._context is None:
            self._context = await self._browser.new_context(
                viewport={"width": self._viewport[0], "height": self._viewport[1]}
            )
            if self._target.serve_locally:
                await self._context.route(f"{BUILTIN_ORIGIN}/**", self._serve_builtin)
        page = await self._context.new_page()
        page.set_default_timeout(ACTION_TIMEOUT_MS)
        page.on("crash", lambda p: self._page_lost(p, "the page crashed"))
        page.on("close", lambda p: self._page_lost(p, "the page was closed"))
        self._page = page
        self._broken = None
        self._refs = set()
        await page.goto(self._target.url, timeout=NAVIGATION_TIMEOUT_MS, wait_until="load")
        if not self._landed:
            # The start URL may redirect (http → https, a login page's home): its landing origin is home.
            self._origin = origin_of(page.url) or self._origin
            self._landed = True

    def _page_lost(self, page: Page, why: str) -> None:
        if page is self._page:  # events of a page we already replaced are old news
            self._mark_broken(why)

    def _browser_lost(self, browser: Browser) -> None:
        # Its pages report "closed" first; the browser's end is the better explanation.
        if browser is self._browser and not self._closed:
            self._broken = (
                "the browser process went away"
                if self._ws_endpoint is None
                else f"the connection to the Playwright server at {endpoint_shown(self._ws_endpoint)} closed"
            )

    def _mark_broken(self, why: str) -> None:
        if not self._closed and self._broken is None:
            self._broken = why

    @staticmethod
    async def _serve_builtin(route: Route) -> None:
        path = builtin_file_for(route.request.url)
        if path is None:
            await route.fulfill(status=404, content_type="text/plain", body="no such builtin page")
            return
        await route.fulfill(status=200, content_type="text/html; charset=utf-8", body=path.read_bytes())

    async def close(self) -> None:
        self._closed = True
        await self._shutdown()

    async def _shutdown(self) -> None:
        """Close this world's page and context (and its connection, if remote), then let go of the
        shared driver; a shared local Chromium stays for the other sessions."""
        page, context, browser, holding = self._page, self._context, self._browser, self._holding
        self._page = self._context = self._browser = self._pw = self._holding = None
        if browser is not None:
            browser.remove_listener("disconnected", self._browser_lost)
        own_connection = browser if browser is not None and self._ws_endpoint is not None else None
        for closer in (
            page.close if page is not None and not page.is_closed() else None,
            context.close if context is not None else None,
            own_connection.close if own_connection is not None else None,
            holding.release if holding is not None else None,
        ):
            if closer is None:
                continue
            try:
                await closer()
            except PlaywrightError:
                pass

    async def _recover(self) -> str | None:
        """Reopen the start URL after a crash; returns why it was needed, or None if all is well.
        The old game is gone from here on (a new epoch), whether the reopening works or not; the
        next observation tells of it (``state["notice"]``)."""
        why = self._broken
        if why is None:
            return None
        if self._lost is None:  # a second try after a failed reopening is the same loss
            self._epoch += 1
            self._lost = (why, dict(self._metrics))
        old = self._page
        self._page = None
        if old is not None and not old.is_closed():
            try:
                await old.close()
            except PlaywrightError:
                pass
        await self._launch()
        return why

    # --- observation ---------------------------------------------------------------------

    async def observe(self) -> Observation:
        async with self._lock:
            if self._closed or self._pw is None:
                raise WorldUnavailable(
                    "the browser page is not open (the world is closed or was never started)"
                )
            known = self._broken is not None  # a loss already heard of: _look reopens the page first
            try:
                return await self._look()
            except PlaywrightError as exc:
                if not self._lost_while_looking(exc) or known:
                    raise WorldUnavailable(f"could not read the browser page: {first_line(exc)}") from exc
            # The page or its browser went away as it was read (a kill Playwright had not
            # reported yet): reopen it and look again, so this observation tells of it.
            try:
                return await self._look()
            except PlaywrightError as exc:
                self._lost_while_looking(exc)
                raise WorldUnavailable(f"could not read the browser page: {first_line(exc)}") from exc

    def _lost_while_looking(self, exc: PlaywrightError) -> bool:
        """After a failed read: is the page gone (closed, crashed, or its browser disconnected)?
        If so it is marked broken, with only the first line of Playwright's error."""
        browser_gone = self._browser is not None and not self._browser.is_connected()
        if browser_gone and self._browser is not None:
            self._browser_lost(self._browser)
        elif self._page is None or self._page.is_closed():
            self._mark_broken(f"the page stopped answering: {first_line(exc)}")
        return self._broken is not None

    async def _look(self) -> Observation:
        """Reopen the page if it was lost, then read it (the lock is held)."""
        await self._recover()
        assert self._page is not None
        page = self._page
        snap, scoreboard = await self._snapshot(page)
        score = score_of(scoreboard, snap["text"])
        board = await self._board.board(lambda clip: self._png(page, clip), self._viewport)
        self._refs = {item["ref"] for item in snap["outline"]}
        state: PageState = {
            "url": snap["url"],
            "title": snap["title"],
            "text": snap["text"],
            "textTruncated": snap["textTruncated"],
            "outline": snap["outline"],
            "outlineTotal": snap["outlineTotal"],
            "scrollY": snap["scrollY"],
            "viewport": {"width": self._viewport[0], "height": self._viewport[1]},
            "offsite": origin_of(snap["url"]) != self._origin,
        }
        game = game_seen(board, self._board.sees_board, snap["text"])
        if game is not None:
            state["game"] = game
        read = {"score": score, "bestTile": max_tile(board) if board else None}
        metrics = {k: v for k, v in read.items() if v is not None}
        if metrics:
            state["metrics"] = metrics
        state["epoch"] = self._epoch
        if self._lost is not None:
            why, before = self._lost
            self._lost = None
            state["notice"] = reopened_notice(why, before, metrics)
        self._metrics = metrics
        return Observation.of(state, "page")

    @staticmethod
    async def _snapshot(page: Page) -> tuple[PageSnapshot, str | None]:
        """Read the page and its score display in one script (one round trip: a Chromium on
        another machine pays for each); a navigation under way destroys the script's context, so
        wait and retry."""
        for attempt in range(SNAPSHOT_ATTEMPTS):
            try:
                read: PageRead = await page.evaluate(READ_JS, snapshot_args())
                scoreboard = read["scoreboard"]
                return read["snap"], scoreboard if isinstance(scoreboard, str) else None
            except PlaywrightError as exc:
                if "context was destroyed" not in str(exc) or attempt == SNAPSHOT_ATTEMPTS - 1:
                    raise
                await page.wait_for_load_state("load", timeout=NAVIGATION_TIMEOUT_MS)
        raise AssertionError("unreachable")

    async def still(self) -> Still | None:
        return await self._screenshot(None)

    async def still_region(self, region: tuple[int, int, int, int]) -> Still | None:
        """A still of part of the viewport (x, y, width, height in CSS pixels, clamped to the
        viewport): cheaper to capture and decode than the whole view, for a mind watching one spot."""
        x, y = max(0, region[0]), max(0, region[1])
        w = min(region[0] + region[2], self._viewport[0]) - x
        h = min(region[1] + region[3], self._viewport[1]) - y
        if w <= 0 or h <= 0:
            return None
        return await self._screenshot((x, y, w, h))

    async def _screenshot(self, clip: tuple[int, int, int, int] | None) -> Still | None:
        async with self._lock:
            page = self._page
            if self._closed or page is None or self._broken is not None:
                return None
            png = await self._png(page, clip)
            if png is None:
                return None
            w, h = (clip[2], clip[3]) if clip is not None else self._viewport
            return Still.of(png, "image/png", w, h)

    @staticmethod
    async def _png(page: Page, clip: tuple[int, int, int, int] | None) -> bytes | None:
        """A PNG of the viewport or of a box of it; None when the page cannot be captured."""
        try:
            if clip is None:
                return await page.screenshot(type="png")
            x, y, width, height = clip
            return await page.screenshot(type="png", clip={"x": x, "y": y, "width": width, "height": height})
        except PlaywrightError:
            return None

    # --- actions -------------------------------------------------------------------------

    async def act(self, action: BaseModel) -> ActionResult:
        async with self._lock:
            if self._closed or self._pw is None:
                return refuse(
                    "page_not_open", "the browser page is not open: the world is closed or was never started"
                )
            if self._broken is not None:
                return await self._refuse_after_crash()
            page = self._page
            assert page is not None
            if origin_of(page.url) != self._origin:
                return await self._go_back(page.url)
            try:
                return await apply_action(page, action, self._refs, self._viewport)
            except PlaywrightError as exc:
                if self._broken is not None or page.is_closed():
                    return await self._refuse_after_crash()
                return ActionResult(
                    ok=False, source="exception", refusal="browser_error", detail=str(exc)[:500]
                )

    async def _refuse_after_crash(self) -> ActionResult:
        why = self._broken or "the page is gone"
        try:
            await self._recover()
            reopened = True
            tail = f"reopened {self._target.url}; observe again and go on"
        except PlaywrightError as exc:
            reopened = False
            tail = f"reopening {self._target.url} failed too: {first_line(exc)}"
        return refuse("browser_crashed", f"{why}; the action was not applied; {tail}", reopened=reopened)

    async def _go_back(self, where: str) -> ActionResult:
        assert self._page is not None
        try:
            await self._page.goto(self._target.url, timeout=NAVIGATION_TIMEOUT_MS, wait_until="load")
            back = True
            tail = f"went back to {self._target.url}; observe again and act on the page"
        except PlaywrightError as exc:
            back = False
            tail = f"going back to {self._target.url} failed: {exc}"
        self._refs = set()
        return refuse(
            "navigated_away",
            f"the page had left {self._origin} (it was at {where}); the action was not applied; {tail}",
            leftTo=where,
            wentBack=back,
        )
