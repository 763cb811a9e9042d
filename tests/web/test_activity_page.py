"""The activity page in real headless Chromium while a sandbox session plays."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from pydantic import SecretStr

from bot.config import WebSettings
from bot.play.play_host import PlayHost, StartRequest
from bot.web.app import WebSurface
from bot.web.share_store import ShareStore
from tests.web.browser import chromium
from tests.web.sandbox import sandbox_playing, settings_for

SCREENSHOT = Path("/tmp/activity_page.png")
PHONE = {"width": 412, "height": 915}
DESKTOP = {"width": 1440, "height": 900}

FIRST_TURN = "() => { const li = document.querySelector('#turns li'); return li ? +li.dataset.turn : 0; }"
STORY_TURNS = "() => +document.getElementById('story-turns').textContent || 0"
SHOWN_FRAME = "() => document.getElementById('still').dataset.sha || null"


@asynccontextmanager
async def served(tmp_path: Path, token: str | None = None) -> AsyncIterator[tuple[PlayHost, str]]:
    """A play host and its web surface on loopback; yields the host and the page's URL."""
    secret = SecretStr(token) if token else None
    settings = settings_for(tmp_path, web=WebSettings(port=0, token=secret))
    host = PlayHost(settings)
    handle = await WebSurface(settings, host, ShareStore()).start()
    try:
        yield host, handle.url
    finally:
        await handle.close()


async def watch_page_follow_play(page, url: str) -> None:
    await page.goto(url)
    await page.wait_for_function(
        "() => { const i = document.getElementById('still'); return !i.hidden && i.complete && i.naturalWidth > 0; }",
        timeout=20_000,
    )
    await page.wait_for_function(f"() => ({FIRST_TURN})() > 0 && ({STORY_TURNS})() > 0", timeout=20_000)
    turn0, story0 = await page.evaluate(FIRST_TURN), await page.evaluate(STORY_TURNS)
    src0, frame0 = await page.get_attribute("#still", "src"), await page.evaluate(SHOWN_FRAME)
    assert src0 and "/v1/embodiment/sessions/live/still" in src0 and frame0
    await page.wait_for_function(
        f"() => ({FIRST_TURN})() >= {turn0 + 2} && ({STORY_TURNS})() >= {story0 + 2}", timeout=30_000
    )
    assert await page.evaluate(FIRST_TURN) > turn0
    assert await page.evaluate(STORY_TURNS) > story0
    # the picture follows play too (the sandbox screen changes as he walks and talks)
    await page.wait_for_function(f"() => ({SHOWN_FRAME})() !== {frame0!r}", timeout=30_000)


async def test_activity_page_follows_a_sandbox_session(tmp_path: Path) -> None:
    async with served(tmp_path) as (host, url), chromium() as browser:
        page = await browser.new_page(viewport=PHONE, device_scale_factor=1)
        problems: list[str] = []  # what a person would see in the console: none
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("response", lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        async with sandbox_playing(host, pace_seconds=0.4):
            await watch_page_follow_play(page, url)
            size = await page.evaluate(
                "() => { const i = document.getElementById('still'); return [i.naturalWidth, i.naturalHeight]; }"
            )
            assert size == [240, 160]
            assert (await page.text_content("#state")).startswith("playing sandbox")
            assert await page.text_content("#objective") != "—"
            badges = await page.locator("#turns .badge").all_text_contents()
            assert badges and all(
                b in ("accepted", "rejected by adapter", "invalid decision", "mind failed") for b in badges
            )
            actions = await page.locator("#turns code").all_text_contents()
            assert actions and all("(" in a for a in actions)
            # readable on a phone: nothing wider than the screen, text no smaller than 12 px
            assert await page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
            smallest = await page.evaluate(
                "() => Math.min(...[...document.querySelectorAll('main dd, main li, main h2')]"
                ".map(e => parseFloat(getComputedStyle(e).fontSize)))"
            )
            assert smallest >= 12
            assert await page.text_content("#transport") == "live"
            shot = await page.screenshot(path=str(SCREENSHOT), full_page=True)
            assert len(shot) > 10_000
            assert problems == []
            # on a wide screen the title lines up with the cards under it
            await page.set_viewport_size(DESKTOP)
            lefts = await page.evaluate(
                "() => ['h1', '#screen', 'footer span'].map(s => document.querySelector(s)"
                ".getBoundingClientRect().left)"
            )
            assert lefts[0] > 100 and abs(lefts[0] - lefts[1]) <= 1 and abs(lefts[2] - lefts[1]) <= 1, lefts
        # play stopped: the page says so and the last turns stay readable
        await page.wait_for_function(
            "() => document.getElementById('state').textContent === 'not playing'", timeout=10_000
        )
        assert await page.locator("#turns li").count() > 0
        await page.wait_for_function(
            "() => document.getElementById('story-empty').textContent === 'Not playing right now. The last story:'",
            timeout=10_000,
        )
        assert await page.is_visible("#story-empty") and await page.is_visible("#story-card")
        assert (await page.text_content("#still-caption")).startswith("last seen ")


async def test_activity_page_polls_without_server_sent_events(tmp_path: Path) -> None:
    async with (
        served(tmp_path) as (host, url),
        chromium() as browser,
        sandbox_playing(host, pace_seconds=0.3),
    ):
        page = await browser.new_page()
        await page.add_init_script("delete window.EventSource;")
        await watch_page_follow_play(page, url)
        assert await page.text_content("#transport") == "updating every 2 s"


async def test_the_still_shown_is_the_settled_turns_picture(tmp_path: Path) -> None:
    """After a turn settles the page shows what the action led to, not the frame the decision
    was made on (a long pace keeps the world still while the page is read)."""
    async with served(tmp_path) as (host, url), chromium() as browser:
        async with sandbox_playing(host, pace_seconds=60) as (first,):
            assert host.active is not None
            after_action = await host.active.world.still()
            assert first.frame_sha256 != after_action.sha256  # turn 1 leaves the bedroom
            page = await browser.new_page(viewport=PHONE)
            await page.goto(url)
            await page.wait_for_function(f"() => ({FIRST_TURN})() === 1", timeout=20_000)
            await page.wait_for_function(
                f"() => ({SHOWN_FRAME})() === {after_action.sha256!r}", timeout=20_000
            )
            shown = await page.evaluate(
                "() => { const i = document.getElementById('still'); return i.complete && i.naturalWidth; }"
            )
            assert shown == 240


async def test_the_page_carries_the_web_token_on_every_request(tmp_path: Path) -> None:
    token = "page-token-for-tests"
    async with served(tmp_path, token) as (host, url), chromium() as browser:
        async with sandbox_playing(host, pace_seconds=0.3):
            page = await browser.new_page(viewport=PHONE)
            refused = await page.goto(url)
            assert refused is not None and refused.status == 401
            await watch_page_follow_play(page, f"{url}?token={token}")
            assert await page.text_content("#transport") == "live"


LAST_SEEN = Path("/tmp/activity_page_after_play.png")


async def test_after_play_the_page_keeps_the_last_picture_story_and_turns(tmp_path: Path) -> None:
    """A short session plays to its end before anyone looks; a watcher who arrives afterwards
    sees the last picture (captioned with when it was seen), the story card and the turns."""
    async with served(tmp_path) as (host, url), chromium() as browser:
        await host.start(StartRequest(world="sandbox", mind="autopilot", turns=6, pace_seconds=0.3))
        assert await host.wait() is not None and host.active is None
        session = host.session
        assert session is not None and session.last_still is not None
        last_sha = session.last_still.sha256
        page = await browser.new_page(viewport=DESKTOP, device_scale_factor=1)
        problems: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("response", lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        await page.goto(url)
        await page.wait_for_function(f"() => ({SHOWN_FRAME})() === {last_sha!r}", timeout=20_000)
        await page.wait_for_function(
            "() => { const i = document.getElementById('still'); return i.complete && i.naturalWidth === 240; }",
            timeout=20_000,
        )
        await page.wait_for_function(f"() => ({STORY_TURNS})() === 6", timeout=20_000)
        assert await page.text_content("#state") == "not playing"
        caption = await page.text_content("#still-caption")
        assert caption.startswith("last seen ") and await page.is_visible("#still-caption")
        assert not await page.is_visible("#no-still")
        assert await page.text_content("#story-empty") == "Not playing right now. The last story:"
        assert await page.text_content("#story-objective") not in ("", "—")
        turns = await page.locator("#turns li").evaluate_all("(lis) => lis.map((li) => +li.dataset.turn)")
        assert turns == [6, 5, 4, 3, 2, 1]
        assert problems == []
        await page.screenshot(path=str(LAST_SEEN), full_page=True)
