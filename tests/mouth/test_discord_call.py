"""bot.mouth.discord_call: the Discord side of a call refuses what is not discord.py's, naming it.
(Its working path, a real discord.py VoiceClient with receive and playback, is
tests/cogs/test_voice_cog.py's.)"""

from __future__ import annotations

from typing import Any

import pytest

from bot.mouth.discord_call import connect, discord_media
from bot.tasks import TaskOwner
from tests.mouth.call_fakes import VoiceClient, server


async def test_a_channel_that_is_not_discord_pys_is_refused_by_name() -> None:
    (lounge,) = server(1, (10, "Lounge"))
    with pytest.raises(
        TypeError, match=r"discord.py voice or stage channel, not tests\.mouth\.call_fakes\.Channel$"
    ):
        await connect(lounge, 1.0)


async def test_media_on_a_client_that_is_not_discord_pys_is_refused_by_name() -> None:
    (lounge,) = server(1, (10, "Lounge"))
    session: Any = object()
    with pytest.raises(
        TypeError, match=r"discord.py VoiceClient, not tests\.mouth\.call_fakes\.VoiceClient$"
    ):
        discord_media(VoiceClient(lounge), session, TaskOwner("test"))
