"""What the surface's answers say about themselves (docs/architecture.md §10): who may frame its
pages and what they may load (Content-Security-Policy), and that an answer made for one viewer's
credential is kept by no cache.

**The pages.** Both pages load only their own origin's scripts, styles, pictures and
connections (fetch, EventSource, WebSocket: ``connect-src 'self'``, which covers ``ws:``/``wss:``
to the same host), run no inline script or ``eval``, have no plugins, post no form, and resolve
relative addresses only inside their origin (``base-uri 'self'``: a server's page says
``<base href="../../">``). The local page may be framed only by its own origin
(``frame-ancestors 'self'``). The Activity may be framed only by Discord's clients —
:data:`DISCORD_CLIENT_ORIGINS`, the web client and its ptb/canary builds on discord.com and the
old discordapp.com, and ``*.discordsays.com`` where Discord nests activities — plus the origins
``[activity] extra_frame_ancestors`` names (none by default; the tests name their stand-in for
the Discord client, ``http://localhost:3333``). Discord's desktop client is the web client in
Electron, so its frame's ancestor is https://discord.com too; the mobile apps open the Activity
as a top-level page, which ``frame-ancestors`` does not restrict.

**Credentialed answers.** An answer to a request that carried the viewer credential or a still
URL's signature, and the answers that hand out credentials (session, renewal), carry
``Cache-Control: private, no-store`` and ``Vary: X-Clankie-Viewer``: neither Discord's proxy
nor any cache in between may keep one viewer's answer and hand it to another.
"""

from __future__ import annotations

from collections.abc import Iterable

from aiohttp import web

from bot.web.viewer import HEADER

DISCORD_CLIENT_ORIGINS = (
    "https://discord.com",
    "https://*.discord.com",  # ptb.discord.com, canary.discord.com
    "https://discordapp.com",
    "https://*.discordapp.com",
    "https://*.discordsays.com",  # an activity's own proxy origin, where Discord nests frames
)
CREDENTIALED_CACHE = "private, no-store"
# set on a request whose answer is made for one viewer's credential or a signed still URL
CREDENTIALED: web.RequestKey[bool] = web.RequestKey("clankie_credentialed", bool)


def content_policy(frame_ancestors: Iterable[str]) -> str:
    """The pages' Content-Security-Policy, framed only by ``frame_ancestors``."""
    return "; ".join(
        (
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self' data:",  # data: is the page's empty favicon
            "connect-src 'self'",
            "object-src 'none'",
            "base-uri 'self'",
            "form-action 'none'",
            "frame-ancestors " + " ".join(frame_ancestors),
        )
    )


LOCAL_PAGE_POLICY = content_policy(["'self'"])


def activity_policy(extra_frame_ancestors: Iterable[str] = ()) -> str:
    """The Activity page's policy: framed by Discord's clients and the extra origins named."""
    return content_policy([*DISCORD_CLIENT_ORIGINS, *extra_frame_ancestors])


async def mark_credentialed(request: web.BaseRequest, response: web.StreamResponse) -> None:
    """``on_response_prepare``: a credentialed answer is kept by no cache and varies with the
    credential's header (set here, as the answer's headers go out, so it holds for every answer
    — a handler's, a refusal, a WebSocket's upgrade — whatever headers its maker chose)."""
    if request.get(CREDENTIALED):
        response.headers["Cache-Control"] = CREDENTIALED_CACHE
        vary = response.headers.get("Vary")
        if vary is None:
            response.headers["Vary"] = HEADER
        elif HEADER.lower() not in (v.strip().lower() for v in vary.split(",")):
            response.headers["Vary"] = f"{vary}, {HEADER}"
