"""Ids from outside are ASCII digits (bot/web/ids.py): what ``str.isdigit()`` also takes is not
an id, and never an exception."""

from __future__ import annotations

import pytest

from bot.web.ids import ascii_digits, snowflake
from bot.web.share_types import Place

NOT_IDS = ["²", "١٢٣", "１２３", "123²", "", " 1", "1 ", "-1", "+1", "1_000", "1" * 21, "12.0"]


@pytest.mark.parametrize("text", NOT_IDS)
def test_what_isdigit_or_int_would_take_is_not_an_id(text: str) -> None:
    assert not ascii_digits(text)
    assert snowflake(text) is None
    assert Place.of(text).guild_int is None  # a share's place: no ValueError either


def test_ascii_digits_are_ids_whether_given_as_text_or_number() -> None:
    assert snowflake("1578991394960179202") == 1578991394960179202
    assert snowflake(1578991394960179202) == 1578991394960179202
    assert snowflake("9" * 20) == int("9" * 20)
    assert snowflake(True) is None and snowflake(None) is None and snowflake(1.0) is None
    assert Place.of(42).guild_int == 42
