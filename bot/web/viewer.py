"""Viewer credentials for the Discord Activity (docs/architecture.md §10 "The Activity").

A credential says: Discord proved that user U, in activity instance I, is watching server G,
until T. It is ``v1.<payload>.<signature>`` (base64url), the payload ``{"u", "g", "i", "exp"}``
and the signature HMAC-SHA256 over ``v1.<payload>``. It travels as the ``X-Clankie-Viewer``
header (not a cookie: inside Discord's iframe a cookie would need ``SameSite=None;
Partitioned``), or as the first message of a live WebSocket, and lives at most 15 minutes
(``[activity] credential_ttl_s``); the page renews it, and renewal asks Discord again whether
the viewer is still in the instance.

**The key** is derived from the application's client secret (HMAC-SHA256 of a fixed label with
the secret as key), not drawn at random per process: every ``clankie run`` process of one
application shares that secret, so a credential made by one process is accepted by all of them,
whichever process a reverse proxy sends a request to, and a restart does not sign every viewer
out. Rotating the client secret in the Developer Portal invalidates every credential at once.
The secret itself never leaves this module's key derivation. Still URLs are signed with a second
key derived the same way under another label, so a still signature can never pass as a
credential.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from dataclasses import dataclass

import orjson

from bot.web.ids import ascii_digits

HEADER = "X-Clankie-Viewer"
MAX_TTL_S = 900.0
STILL_TTL_S = 120  # a signed still URL is good this long
_CREDENTIAL_LABEL = b"clankie/activity/viewer-credential/v1"
_STILL_LABEL = b"clankie/activity/still-url/v1"
_VERSION = "v1"


class CredentialRefused(Exception):
    """A credential that is not ours, is malformed, or has expired (a sentence for the page)."""


@dataclass(frozen=True)
class Viewer:
    user_id: int
    guild_id: int
    instance_id: str
    expires_at: float


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class ViewerKeys:
    """Makes and checks viewer credentials and still signatures with keys derived from the
    client secret."""

    def __init__(self, client_secret: str, ttl_s: float = 600.0) -> None:
        if not client_secret:
            raise ValueError("a client secret is needed to sign viewer credentials")
        if not 0 < ttl_s <= MAX_TTL_S:
            raise ValueError(f"a viewer credential lives at most {MAX_TTL_S:g} s (got {ttl_s:g})")
        secret = client_secret.encode("utf-8")
        self._credential_key = hmac.new(secret, _CREDENTIAL_LABEL, hashlib.sha256).digest()
        self._still_key = hmac.new(secret, _STILL_LABEL, hashlib.sha256).digest()
        self.ttl_s = ttl_s

    def issue(self, user_id: int, guild_id: int, instance_id: str, now: float) -> tuple[str, Viewer]:
        viewer = Viewer(user_id, guild_id, instance_id, float(int(now + self.ttl_s)))
        body = {"u": str(user_id), "g": str(guild_id), "i": instance_id, "exp": int(viewer.expires_at)}
        signed = f"{_VERSION}.{_b64(orjson.dumps(body))}"
        mac = hmac.new(self._credential_key, signed.encode("ascii"), hashlib.sha256).digest()
        return f"{signed}.{_b64(mac)}", viewer

    def check(self, credential: str, now: float) -> Viewer:
        """The viewer a credential names, or :class:`CredentialRefused` saying why not."""
        version, _, rest = credential.strip().partition(".")
        payload, _, mac_text = rest.partition(".")
        if version != _VERSION or not payload or not mac_text:
            raise CredentialRefused("the viewer credential is not one this server made")
        try:
            mac = _unb64(mac_text)
            expected = hmac.new(self._credential_key, f"{version}.{payload}".encode("ascii"), hashlib.sha256)
        except (binascii.Error, ValueError, UnicodeEncodeError):
            raise CredentialRefused("the viewer credential is not one this server made") from None
        if not hmac.compare_digest(mac, expected.digest()):
            raise CredentialRefused("the viewer credential is not one this server made")
        try:
            body = orjson.loads(_unb64(payload))
            viewer = Viewer(int(body["u"]), int(body["g"]), str(body["i"]), float(body["exp"]))
        except (binascii.Error, ValueError, KeyError, TypeError, orjson.JSONDecodeError):
            raise CredentialRefused("the viewer credential is not one this server made") from None
        if viewer.expires_at <= now:
            raise CredentialRefused("the viewer credential has expired; the page renews it")
        return viewer

    def _still_mac(self, guild_id: int, version: str, expires: int) -> str:
        text = f"{guild_id}|{version}|{expires}".encode()
        return hmac.new(self._still_key, text, hashlib.sha256).hexdigest()[:32]

    def still_query(self, guild_id: int, version: str, now: float) -> dict[str, str]:
        """The query that lets an ``<img>`` fetch server ``guild_id``'s still for
        :data:`STILL_TTL_S` seconds; ``version`` (the frame's hash) busts the proxy's cache."""
        expires = int(now) + STILL_TTL_S
        return {"v": version, "exp": str(expires), "sig": self._still_mac(guild_id, version, expires)}

    def still_allowed(self, guild_id: int, query: dict[str, str], now: float) -> bool:
        """True when the query is a still URL this server signed for ``guild_id`` and it has not
        expired. Whatever a client wrote there is an answer, never an exception: an expiry that
        is not ASCII digits or a signature that is not ASCII (``hmac.compare_digest`` raises
        TypeError on non-ASCII text) is simply not ours."""
        exp, sig, version = query.get("exp", ""), query.get("sig", ""), query.get("v", "")
        if not ascii_digits(exp) or not sig.isascii() or not version.isascii():
            return False
        expires = int(exp)
        mac = self._still_mac(guild_id, version, expires)
        return expires > now and hmac.compare_digest(mac.encode("ascii"), sig.encode("ascii"))
