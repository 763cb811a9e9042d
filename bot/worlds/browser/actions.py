"""How one browser catalog action becomes mouse and keyboard input on a Playwright page.

:func:`apply_action` turns ``click{x, y}`` / ``click{ref}``, ``press{key, hold_ms}``, ``type{text}``
and ``scroll{dy}`` into input on a live page and says what happened (:class:`ActionResult`).
What the page is and whether it may be acted on at all (closed, crashed, navigated away) is the
world's business (:mod:`bot.worlds.browser.world`); Playwright errors raised here are handled
there. Refusals made here:

- ``ref_not_found``: the ref is not in the last outline or its element is gone or hidden;
- ``outside_viewport``: click coordinates beyond a viewport smaller than the catalog's bounds;
- ``key_not_typable``: a character on no keyboard key, asked to be held;
- ``unsupported_action``: a kind the browser does not do.
"""

from __future__ import annotations

import asyncio
import time

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page
from pydantic import BaseModel

from bot.worlds.base import ActionResult
from bot.worlds.browser.keys import playwright_key
from bot.worlds.browser.page_state import Clicked, ClickTarget
from bot.worlds.browser.snapshot import REF_ATTRIBUTE, TARGET_JS
from journal.actions import BROWSER_CATALOG, Click, Press, Scroll, TypeText

# Resolves once the page has drawn two more frames (with window.scrollY, for a scroll): a page
# that updates in requestAnimationFrame, as the original 2048 does, has shown what an action
# did by then, and callbacks it queued first run first. A page that draws no frames (throttled)
# is waited for FRAMES_WAIT_MS at most.
FRAMES_WAIT_MS = 250
AFTER_TWO_FRAMES_JS = (
    "() => new Promise((ok) => {"
    " const at = () => ok(Math.round(window.scrollY));"
    f" const timer = setTimeout(at, {FRAMES_WAIT_MS});"
    " requestAnimationFrame(() => requestAnimationFrame(() => { clearTimeout(timer); at(); }));"
    " })"
)


async def apply_action(
    page: Page, action: BaseModel, refs: set[str], viewport: tuple[int, int]
) -> ActionResult:
    """Apply one validated catalog action to ``page``; ``refs`` are the last outline's refs."""
    if isinstance(action, Click):
        result = await _click(page, action, refs, viewport)
    elif isinstance(action, Press):
        result = await _press(page, action)
    elif isinstance(action, TypeText):
        await page.keyboard.type(action.text)
        result = done(typed=len(action.text))
    elif isinstance(action, Scroll):
        await page.mouse.wheel(0, action.dy)
        return done(scrolledBy=action.dy, scrollY=await page.evaluate(AFTER_TWO_FRAMES_JS))
    else:
        kind = getattr(action, "kind", type(action).__name__)
        return refuse(
            "unsupported_action",
            f"the browser world does not do {kind!r}; its actions are {', '.join(BROWSER_CATALOG.kinds)}",
        )
    if result.ok:  # what the page draws on its next frames belongs to this action's effect
        try:
            await page.evaluate(AFTER_TWO_FRAMES_JS)
        except PlaywrightError:
            pass  # the action took the page elsewhere (a link): the next observation says where
    return result


async def _click(page: Page, action: Click, refs: set[str], viewport: tuple[int, int]) -> ActionResult:
    if action.ref is not None:
        if action.ref not in refs:
            return refuse(
                "ref_not_found",
                f"ref {action.ref!r} is not in the last outline; observe again and use a listed ref",
            )
        handle = await page.query_selector(f"[{REF_ATTRIBUTE}='{action.ref}']")
        if handle is None:
            return refuse(
                "ref_not_found", f"the element of ref {action.ref!r} has left the page; observe again"
            )
        await handle.scroll_into_view_if_needed()
        box = await handle.bounding_box()
        if box is None or box["width"] <= 0 or box["height"] <= 0:
            return refuse("ref_not_found", f"the element of ref {action.ref!r} is not visible; observe again")
        x = int(box["x"] + box["width"] / 2)
        y = int(box["y"] + box["height"] / 2)
    else:
        assert action.x is not None and action.y is not None
        x, y = action.x, action.y
        if x >= viewport[0] or y >= viewport[1]:
            return refuse(
                "outside_viewport", f"({x}, {y}) is outside the {viewport[0]}x{viewport[1]} viewport"
            )
    target: ClickTarget | None = await page.evaluate(TARGET_JS, [x, y])
    await page.mouse.move(x, y)
    await page.mouse.down()
    await page.mouse.up()
    data: Clicked = {"clicked": [x, y], "target": target}
    if action.ref is not None:
        data["ref"] = action.ref
    return done(**data)


async def _press(page: Page, action: Press) -> ActionResult:
    key = playwright_key(action.key)
    started = time.monotonic()
    try:
        await page.keyboard.down(key)
    except PlaywrightError as exc:
        if "Unknown key" not in str(exc):
            raise
        if action.hold_ms:
            return refuse(
                "key_not_typable",
                f"{action.key!r} is not on the keyboard layout, so it cannot be held; press it without hold_ms",
            )
        await page.keyboard.insert_text(action.key)
        return done(key=action.key, heldMs=0, inserted=True)
    if action.hold_ms:
        await asyncio.sleep(action.hold_ms / 1000)
    await page.keyboard.up(key)
    held = round((time.monotonic() - started) * 1000)
    return done(key=action.key, heldMs=held if action.hold_ms else 0)


def done(**data: object) -> ActionResult:
    return ActionResult(ok=True, source="environment", data=data)


def refuse(code: str, detail: str, **data: object) -> ActionResult:
    return ActionResult(ok=False, source="body", refusal=code, detail=detail, data=data)
