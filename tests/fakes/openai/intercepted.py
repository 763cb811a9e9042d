"""What a chat-completions client gets back when something other than a model endpoint answers
at its address: answers a real network sends, each named with where it comes from.

- **A captive portal** (hotel or café Wi-Fi, a login-gated network). RFC 6585 §6.1: status 511
  exists "to mitigate problems caused by 'captive portals' to software (especially non-browser
  agents) that is expecting a response from the server that a request was made to, not the
  intervening network infrastructure": every intercepted request goes to the portal's "login
  server", and a portal that does not send 511 answers it as if it were the server asked — its
  login page with ``200 text/html``, or a redirect to it. :func:`captive_portal_page` is §6's
  own example page; :func:`captive_portal_511` is §6's example response whole (status 511); :func:`captive_portal_redirect` sends the request to a login server that
  answers it (:class:`LoginServer`).
- **A load balancer's fixed response** in front of the endpoint (a maintenance rule, a health
  route). AWS Elastic Load Balancing ``FixedResponseActionConfig``: any 2XX, 4XX or 5XX status,
  a content type of ``text/plain | text/css | text/html | application/javascript |
  application/json`` and a message of up to 1024 characters, sent as configured — nothing
  checks that a message labelled ``application/json`` is JSON. :func:`fixed_response`.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from .chat import Malformed, Redirect

RFC6585_PAGE = b"""<html>
   <head>
      <title>Network Authentication Required</title>
      <meta http-equiv="refresh"
            content="0; url=https://login.example.net/">
   </head>
   <body>
      <p>You need to <a href="https://login.example.net/">
      authenticate with the local network</a> in order to gain
      access.</p>
   </body>
</html>
"""
"""RFC 6585 §6's example body (there with status 511; a portal that predates 511 answers 200)."""


def captive_portal_page() -> Malformed:
    """The portal's login page in place of the endpoint's answer: ``200 text/html``."""
    return Malformed(RFC6585_PAGE, 200, "text/html", "utf-8")


def captive_portal_511() -> Malformed:
    """A portal that does what RFC 6585 §6 asks: ``511 Network Authentication Required`` with
    its login page (§6's example response, ``text/html``)."""
    return Malformed(RFC6585_PAGE, 511, "text/html", "utf-8")


def captive_portal_redirect(login_url: str) -> Redirect:
    """The portal's other habit: ``302`` to its login server (the client follows, with GET)."""
    return Redirect(login_url)


ALB_TYPES = ("text/plain", "text/css", "text/html", "application/javascript", "application/json")


def fixed_response(message: str, content_type: str = "text/plain", status: int = 200) -> Malformed:
    """An ELB fixed-response action's answer, within the limits the API enforces."""
    if content_type not in ALB_TYPES or len(message) > 1024 or status // 100 not in (2, 4, 5):
        raise ValueError("not a fixed response an ELB listener can be configured with")
    return Malformed(message.encode(), status, content_type)


class LoginServer:
    """The portal's login server on 127.0.0.1 (ephemeral port): any GET is its login page,
    ``200 text/html``. ``seen`` keeps the paths asked for (the redirect's query included)."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self._runner: web.AppRunner | None = None
        self.port = 0

    def url(self, path: str = "/login") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    async def _page(self, request: web.Request) -> web.Response:
        self.seen.append(request.path_qs)
        return web.Response(body=RFC6585_PAGE, content_type="text/html", charset="utf-8")

    async def __aenter__(self) -> LoginServer:
        app = web.Application()
        app.router.add_get("/{tail:.*}", self._page)
        self._runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server: Any = site._server
        self.port = server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
