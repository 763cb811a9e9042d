from __future__ import annotations

import pytest

from bot.url_patterns import allowed, parse_pattern

CASES = [
    ("builtin:*", "builtin:2048", True),
    ("builtin:*", "builtin:2048?seed=3", True),
    ("builtin:2048", "builtin:2048?seed=3", True),
    ("builtin:2048", "builtin:tetris", False),
    ("builtin:*", "http://clankie.local/2048.html", False),
    ("https://play2048.co/*", "https://play2048.co/", True),
    ("https://play2048.co/*", "https://play2048.co/?mode=classic", True),
    ("https://play2048.co/*", "https://PLAY2048.co/deep/page.html", True),
    ("https://play2048.co/*", "https://play2048.co:443/", True),
    ("https://play2048.co/*", "https://play2048.co:8443/", False),
    ("https://play2048.co/*", "http://play2048.co/", False),
    ("https://play2048.co/*", "https://play2048.co.evil.example/", False),
    ("https://play2048.co/*", "https://evil.example/?https://play2048.co/", False),
    ("https://play2048.co/*", "https://play2048.co@evil.example/", False),
    ("https://play2048.co/*", "https://user:pw@play2048.co/", False),
    ("https://play2048.co", "https://play2048.co", True),
    ("https://play2048.co", "https://play2048.co/other", False),
    ("http://127.0.0.1:*/*", "http://127.0.0.1:8123/2048/index.html", True),
    ("http://127.0.0.1:*/*", "http://127.0.0.1/", True),
    ("http://127.0.0.1:*/*", "http://127.0.0.1:1@evil.example/", False),
    ("http://127.0.0.1:*/*", "http://127.0.0.1:notaport/", False),
    ("http://127.0.0.1:*/*", "http://127.0.0.10:80/", False),
    ("https://*.example.com/games/*", "https://a.b.example.com/games/2048", True),
    ("https://*.example.com/games/*", "https://example.com/games/2048", False),
    ("https://*.example.com/games/*", "https://evilexample.com/games/2048", False),
    ("https://*.example.com/games/*", "https://a.example.com/news/", False),
    ("http://[::1]:*/*", "http://[::1]:9000/x", True),
    ("http://[::1]:*/*", "http://[::2]:9000/x", False),
]


@pytest.mark.parametrize(("pattern", "url", "expected"), CASES)
def test_a_url_is_matched_by_its_parts(pattern: str, url: str, expected: bool) -> None:
    assert allowed(url, [parse_pattern(pattern)]) is expected


@pytest.mark.parametrize(
    ("pattern", "says"),
    [
        ("ftp://example.com/*", "starts with http://, https:// or builtin:"),
        ("play2048.co/*", "starts with http://, https:// or builtin:"),
        ("https://user@play2048.co/*", "may not name a user"),
        ("https://play 2048.co/*", "is not a host name"),
        ("https://*/*", "is not a host name"),
        ("http://127.0.0.1:99999/*", "port must be a number from 1 to 65535"),
        ("builtin:", "builtin:NAME or builtin:*"),
        ("builtin:../x", "builtin:NAME or builtin:*"),
    ],
)
def test_a_bad_pattern_says_what_is_wrong(pattern: str, says: str) -> None:
    with pytest.raises(ValueError, match=says) as caught:
        parse_pattern(pattern)
    assert repr(pattern.strip()) in str(caught.value)


def test_no_pattern_allows_nothing() -> None:
    assert not allowed("builtin:2048", [])
