"""How often one client may ask the Activity's routes to talk to Discord (docs/architecture.md §10
"The Activity"): sign-ins (``POST /v1/activity/session``) per client address, and renewals per
(viewer, instance). A sign-in that proves its viewer is given back, so people who share an
address (a household, Discord's proxy) do not use up each other's allowance; refused ones count.

A client's address is the connection's peer, unless the peer is one of ``[web]
trusted_proxies``: then it is read from the header ``[web] forwarded_header`` names
(``X-Forwarded-For``, or RFC 7239 ``Forwarded``'s ``for=``), from the right, skipping the
trusted proxies' own addresses, so what a client wrote into the header itself is never believed.
An IPv6 client is counted by its /64, the block one subscriber usually holds.
"""

from __future__ import annotations

import ipaddress
from collections import OrderedDict
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Literal

from aiohttp import web

SIGN_INS_BURST = 10  # sign-ins one client address may make at once
SIGN_IN_EVERY_S = 6.0  # then one more this often (ten a minute)
RENEW_EVERY_S = 8.0  # one renewal per (viewer, instance) this often (the page retries after 10 s)
MAX_CLIENTS = 8192  # clients remembered at most (the longest idle go first)

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
ForwardedHeader = Literal["X-Forwarded-For", "Forwarded"]


class KeyedRate:
    """A bucket per key: ``burst`` at once, then one every ``every_s`` seconds; at most
    ``max_keys`` kept (a key forgotten is a full bucket, which is what a quiet key has)."""

    def __init__(self, burst: int, every_s: float, max_keys: int = MAX_CLIENTS) -> None:
        self.burst = burst
        self.every_s = every_s
        self.max_keys = max_keys
        self._buckets: OrderedDict[Hashable, tuple[float, float]] = OrderedDict()  # tokens, at

    def take(self, key: Hashable, now: float) -> float | None:
        """None when ``key`` may go now (and it is counted); else the seconds until it may."""
        tokens, at = self._buckets.get(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + max(0.0, now - at) / self.every_s)
        if tokens < 1:
            self._buckets[key] = (tokens, now)
            self._buckets.move_to_end(key)
            return (1 - tokens) * self.every_s
        self._buckets[key] = (tokens - 1, now)
        self._buckets.move_to_end(key)
        while len(self._buckets) > self.max_keys:
            self._buckets.popitem(last=False)
        return None

    def give_back(self, key: Hashable) -> None:
        """Return the one :meth:`take` counted (a sign-in that proved its viewer costs nothing)."""
        found = self._buckets.get(key)
        if found is not None:
            tokens, at = found
            self._buckets[key] = (min(float(self.burst), tokens + 1), at)


def networks(addresses: Iterable[str]) -> tuple[Network, ...]:
    """``[web] trusted_proxies`` as networks (an address alone is a network of one)."""
    return tuple(ipaddress.ip_network(a.strip(), strict=False) for a in addresses)


@dataclass
class ClientLimits:
    """The Activity's per-client limits, and who the client is."""

    trusted_proxies: tuple[Network, ...] = ()
    forwarded_header: ForwardedHeader = "X-Forwarded-For"
    sign_ins: KeyedRate = field(default_factory=lambda: KeyedRate(SIGN_INS_BURST, SIGN_IN_EVERY_S))
    renewals: KeyedRate = field(default_factory=lambda: KeyedRate(1, RENEW_EVERY_S))

    def client_of(self, request: web.Request) -> str:
        """The client's address as counted: its /64 for IPv6, ``"unknown"`` without a peer."""
        peer = _address(request.remote)
        if peer is None:
            return "unknown"
        if self._trusted(peer):
            for hop in reversed(self._forwarded_for(request)):
                found = _address(hop)
                if found is None:
                    break  # a hop we cannot read: believe nothing further left
                peer = found
                if not self._trusted(found):
                    break
        if isinstance(peer, ipaddress.IPv6Address):
            if peer.ipv4_mapped is not None:
                return str(peer.ipv4_mapped)
            return str(ipaddress.ip_network(f"{peer}/64", strict=False))
        return str(peer)

    def _trusted(self, address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
        return any(address in network for network in self.trusted_proxies)

    def _forwarded_for(self, request: web.Request) -> list[str]:
        """The hops the trusted proxy's header lists, nearest the client first."""
        values = request.headers.getall(self.forwarded_header, [])
        if self.forwarded_header == "X-Forwarded-For":
            return [hop.strip() for value in values for hop in value.split(",")]
        hops: list[str] = []
        for value in values:
            for element in value.split(","):
                for pair in element.split(";"):
                    name, _, found = pair.partition("=")
                    if name.strip().lower() == "for":
                        hops.append(_forwarded_node(found.strip().strip('"')))
        return hops


def _forwarded_node(node: str) -> str:
    """RFC 7239 §6's node without its port: ``[2001:db8::1]:443`` → ``2001:db8::1``,
    ``192.0.2.7:80`` → ``192.0.2.7``."""
    if node.startswith("["):
        return node[1 : node.find("]")] if "]" in node else node
    return node.split(":", 1)[0] if node.count(":") == 1 else node


def _address(text: str | None) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address((text or "").strip())
    except ValueError:
        return None
