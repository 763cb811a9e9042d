"""Asking Discord who is watching (docs/architecture.md §10 "The Activity").

Three requests prove an Activity viewer: the OAuth2 code the page got from ``authorize`` is
exchanged at ``POST {api}/oauth2/token`` (a form: ``client_id``, ``client_secret``,
``grant_type=authorization_code``, ``code``; Discord refuses JSON there), the access token names
the viewer at ``GET {api}/users/@me`` (``Bearer``), and the bot token reads the instance at ``GET
{api}/applications/{application_id}/activity-instances/{instance_id}`` (``{location: {guild_id,
…}, users: [...]}``). ``{api}`` is ``[discord] api_url``, else discord.py's ``Route.BASE``.

Every request goes through the process's one :class:`~bot.web.discord_limiter.DiscordLimiter`
(a global rate, a cap on concurrent requests, one shared back-off after a 429), and instance
lookups through :class:`~bot.web.discord_limiter.SharedLookups` (kept a few seconds, one request
for concurrent lookups of an instance).

Whatever goes wrong comes back as :class:`DiscordRefused`: one plain sentence for the page and
the HTTP status to answer it with. A 429 is honoured: its ``retry_after`` pauses every request,
and is waited out once when it is short (at most the limiter's ``MAX_WAIT_S``), otherwise the
page is told when to try again (429 and ``Retry-After``); our own limits, when a caller would
wait longer, answer 503 and ``Retry-After``. No secret, code or access token is ever put in a
sentence or a log line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import discord.http
import structlog
from discord.types.user import User

from bot import metrics
from bot.web.discord_limiter import DiscordLimiter, NotNow, SharedLookups
from bot.web.ids import snowflake

log = structlog.get_logger("clankie.web.activity")


class DiscordRefused(Exception):
    """Discord could not prove the viewer: ``sentence`` for the page, ``status`` to answer with,
    ``retry_after`` (seconds) when trying again later may work."""

    def __init__(self, sentence: str, status: int = 502, retry_after: float | None = None) -> None:
        super().__init__(sentence)
        self.sentence = sentence
        self.status = status
        self.retry_after = retry_after


@dataclass(frozen=True)
class Instance:
    guild_id: int | None
    channel_id: int | None
    users: frozenset[int]


def api_base(configured: str | None) -> str:
    return (configured or discord.http.Route.BASE).rstrip("/")


class DiscordProof:
    """The three requests, over one aiohttp session (made on first use, closed by :meth:`close`)."""

    def __init__(
        self,
        *,
        api_url: Callable[[], str],
        application_id: Callable[[], int | None],
        client_secret: str,
        bot_token: str,
        timeout_s: float = 10.0,
        limiter: DiscordLimiter | None = None,
        instances: SharedLookups[str, Instance] | None = None,
    ) -> None:
        self._api_url = api_url
        self._application_id = application_id
        self._client_secret = client_secret
        self._bot_token = bot_token
        self.timeout_s = timeout_s
        self._session: aiohttp.ClientSession | None = None
        self.limiter = limiter or DiscordLimiter()
        self.instances: SharedLookups[str, Instance] = instances or SharedLookups()

    def application_id(self) -> int:
        found = self._application_id()
        if found is None:
            raise DiscordRefused(
                "The bot has not learned its application id yet; try again in a moment.", 503, 5.0
            )
        return found

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def exchange(self, code: str) -> str:
        """The access token Discord gives for the page's authorization code."""
        form = {
            "client_id": str(self.application_id()),
            "client_secret": self._client_secret,
            "grant_type": "authorization_code",
            "code": code,
        }
        body = await self._call("token", "POST", "/oauth2/token", data=form)
        token = body.get("access_token") if isinstance(body, dict) else None
        if not isinstance(token, str) or not token:
            raise DiscordRefused("Discord's answer to the sign-in carried no access token.", 502)
        return token

    async def viewer(self, access_token: str) -> User:
        """Who signed in: Discord's user object for the access token (its ``id`` checked)."""
        body: User = await self._call("user", "GET", "/users/@me", bearer=access_token)
        if not isinstance(body, dict) or snowflake(body.get("id")) is None:
            raise DiscordRefused("Discord did not say who you are.", 502)
        return body

    async def instance(self, instance_id: str) -> Instance:
        """Where the instance runs and who is in it: Discord's answer of the last few seconds,
        or the one request already asking, or a new one."""
        return await self.instances.get(instance_id, lambda: self._instance(instance_id))

    async def _instance(self, instance_id: str) -> Instance:
        path = f"/applications/{self.application_id()}/activity-instances/{instance_id}"
        body = await self._call("instance", "GET", path, bot=True)
        if not isinstance(body, dict) or not isinstance(body.get("users"), list):
            raise DiscordRefused("Discord's answer about this activity was not understood.", 502)
        location = body.get("location") if isinstance(body.get("location"), dict) else {}
        assert isinstance(location, dict)
        return Instance(
            guild_id=_int(location.get("guild_id")),
            channel_id=_int(location.get("channel_id")),
            users=frozenset(u for u in (_int(x) for x in body["users"]) if u is not None),
        )

    async def _call(
        self,
        what: str,
        method: str,
        path: str,
        *,
        data: dict[str, str] | None = None,
        bearer: str | None = None,
        bot: bool = False,
    ) -> Any:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        headers = {"User-Agent": "DiscordBot (https://github.com/clankie, 1) clankie-activity"}
        if bearer is not None:
            headers["Authorization"] = f"Bearer {bearer}"
        if bot:
            headers["Authorization"] = f"Bot {self._bot_token}"
        url = api_base(self._api_url()) + path
        waited = False
        while True:
            try:
                async with (
                    self.limiter.turn(),
                    self._session.request(
                        method,
                        url,
                        data=data,  # a dict is sent form-encoded (application/x-www-form-urlencoded)
                        headers=headers,
                        timeout=aiohttp.ClientTimeout(total=self.timeout_s),
                    ) as response,
                ):
                    status = response.status
                    try:
                        body = await response.json(content_type=None)
                    except ValueError:
                        body = None
                    retry_after = _retry_after(response.headers, body) if status == 429 else None
            except NotNow as exc:
                raise _not_now(what, exc) from None
            except TimeoutError:
                log.warning("activity_discord_timeout", step=what, timeout_s=self.timeout_s)
                raise DiscordRefused(
                    f"Discord did not answer within {self.timeout_s:g} seconds; try again in a moment.", 504
                ) from None
            except aiohttp.ClientError as exc:
                log.warning("activity_discord_unreachable", step=what, error=type(exc).__name__)
                raise DiscordRefused("Discord could not be reached; try again in a moment.", 502) from None
            if status == 429 and retry_after is not None:
                log.info("activity_discord_rate_limited", step=what, retry_after=retry_after)
                self.limiter.back_off(retry_after)  # every caller waits it out, not only this one
                metrics.activity_limited("rate_limited")
                if not waited:
                    waited = True
                    continue  # the limiter's turn waits out a short back-off, refuses a long one
                raise DiscordRefused(
                    f"Discord is busy; try again in {max(1, round(retry_after))} seconds.", 429, retry_after
                )
            if status < 400:
                return body
            log.warning("activity_discord_refused", step=what, status=status)
            raise DiscordRefused(_refusal(what, status), 502 if status >= 500 else _page_status(what, status))


def _not_now(what: str, refused: NotNow) -> DiscordRefused:
    seconds = max(1, round(refused.retry_after))
    log.info("activity_discord_limited", step=what, why=refused.why, retry_after=seconds)
    metrics.activity_limited("backoff" if refused.why == "discord" else "busy")
    when = f"{seconds} second{'s' if seconds != 1 else ''}"
    if refused.why == "discord":
        return DiscordRefused(f"Discord is busy; try again in {when}.", 429, refused.retry_after)
    return DiscordRefused(
        f"Clankie is asking Discord about many viewers at once; try again in {when}.",
        503,
        refused.retry_after,
    )


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _retry_after(headers: Any, body: Any) -> float:
    if isinstance(body, dict) and isinstance(body.get("retry_after"), (int, float)):
        return max(0.0, float(body["retry_after"]))
    try:
        return max(0.0, float(headers.get("Retry-After", "1")))
    except ValueError:
        return 1.0


def _page_status(what: str, status: int) -> int:
    if what == "instance" and status == 404:
        return 403
    return 401 if what in ("token", "user") else 502


def _refusal(what: str, status: int) -> str:
    if status >= 500:
        return f"Discord had a problem ({status}) while checking who you are; try again in a moment."
    if what == "token":
        return "Discord did not accept the sign-in from this activity; close it and open it again."
    if what == "user":
        return "Discord did not say who you are; close the activity and open it again."
    if status == 404:
        return "Discord says this activity is not running any more."
    return f"Discord refused to say who is in this activity ({status})."
