"""Who a client of the Activity's open routes is (bot/web/client_limits.py): the peer, or, from
a trusted proxy only, the nearest untrusted address its forwarding header names."""

from __future__ import annotations

from unittest import mock

import pytest
from aiohttp.test_utils import make_mocked_request
from multidict import CIMultiDict
from pydantic import ValidationError

from bot.config import WebSettings
from bot.web.client_limits import ClientLimits, ForwardedHeader, KeyedRate, networks


def client(
    peer: str, headers: dict[str, str], trusted: list[str], header: ForwardedHeader = "X-Forwarded-For"
) -> str:
    transport = mock.Mock()
    transport.get_extra_info.side_effect = lambda name, default=None: (
        (peer, 1234) if name == "peername" else default
    )
    request = make_mocked_request(
        "POST", "/v1/activity/session", headers=CIMultiDict(headers), transport=transport
    )
    return ClientLimits(trusted_proxies=networks(trusted), forwarded_header=header).client_of(request)


@pytest.mark.parametrize(
    ("peer", "headers", "trusted", "header", "counted"),
    [
        ("192.0.2.7", {"X-Forwarded-For": "198.51.100.1"}, [], "X-Forwarded-For", "192.0.2.7"),
        ("192.0.2.7", {"X-Forwarded-For": "198.51.100.1"}, ["10.0.0.0/8"], "X-Forwarded-For", "192.0.2.7"),
        ("10.0.0.2", {"X-Forwarded-For": "198.51.100.1"}, ["10.0.0.0/8"], "X-Forwarded-For", "198.51.100.1"),
        (
            "10.0.0.2",
            {"X-Forwarded-For": "6.6.6.6, 198.51.100.1, 10.0.0.9"},
            ["10.0.0.0/8"],
            "X-Forwarded-For",
            "198.51.100.1",
        ),
        ("10.0.0.2", {"X-Forwarded-For": "not-an-address"}, ["10.0.0.0/8"], "X-Forwarded-For", "10.0.0.2"),
        ("10.0.0.2", {}, ["10.0.0.0/8"], "X-Forwarded-For", "10.0.0.2"),
        # with Forwarded chosen, X-Forwarded-For (which the proxy does not manage) is not read
        ("10.0.0.2", {"X-Forwarded-For": "6.6.6.6"}, ["10.0.0.0/8"], "Forwarded", "10.0.0.2"),
        (
            "10.0.0.2",
            {"Forwarded": 'for=6.6.6.6, for="198.51.100.1:4711";proto=https'},
            ["10.0.0.0/8"],
            "Forwarded",
            "198.51.100.1",
        ),
        (
            "10.0.0.2",
            {"Forwarded": 'for="[2001:db8:1:2::5]:443"'},
            ["10.0.0.0/8"],
            "Forwarded",
            "2001:db8:1:2::/64",
        ),
        (
            "2001:db8:aa:bb:1::9",
            {},
            [],
            "X-Forwarded-For",
            "2001:db8:aa:bb::/64",
        ),  # an IPv6 subscriber's block
        ("::ffff:192.0.2.7", {}, [], "X-Forwarded-For", "192.0.2.7"),
    ],
)
def test_the_client_counted(
    peer: str, headers: dict[str, str], trusted: list[str], header: ForwardedHeader, counted: str
) -> None:
    assert client(peer, headers, trusted, header) == counted


def test_a_bucket_per_key_refills_and_forgets_the_longest_idle() -> None:
    rate = KeyedRate(burst=2, every_s=6.0, max_keys=2)
    assert [rate.take("a", 0.0), rate.take("a", 0.0)] == [None, None]
    assert rate.take("a", 0.0) == 6.0
    assert rate.take("a", 3.0) == 3.0
    assert rate.take("a", 6.0) is None
    rate.take("b", 6.0)
    rate.take("c", 6.0)  # three keys: "a", the longest idle, is forgotten (a full bucket again)
    assert [rate.take("a", 6.0), rate.take("a", 6.0)] == [None, None]


def test_what_is_given_back_is_not_counted() -> None:
    rate = KeyedRate(burst=1, every_s=6.0)
    for _ in range(5):
        assert rate.take("shared", 0.0) is None
        rate.give_back("shared")
    assert rate.take("shared", 0.0) is None and rate.take("shared", 0.0) == 6.0
    rate.give_back("shared")
    rate.give_back("shared")  # never above the burst
    assert rate.take("shared", 0.0) is None and rate.take("shared", 0.0) == 6.0


def test_a_trusted_proxy_that_is_not_an_address_is_refused() -> None:
    assert WebSettings(trusted_proxies=["127.0.0.1", "10.0.0.0/8", "::1"]).trusted_proxies
    with pytest.raises(ValidationError, match="trusted_proxies: 'nginx' is not an IP address or network"):
        WebSettings(trusted_proxies=["nginx"])
    with pytest.raises(ValidationError, match="forwarded_header"):
        WebSettings(forwarded_header="X-Real-IP")  # type: ignore[arg-type]
