"""Makes the `openai_fake` fixture available to the captain tests, and closes their captains."""

from collections.abc import AsyncIterator

import pytest

from bot.captain.consult import Captain
from tests.fakes.openai.fixtures import openai_fake  # noqa: F401


@pytest.fixture(autouse=True)
async def captains_closed(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[list[Captain]]:
    """Every captain a test makes is closed after it, as Character.close closes the bot's: an
    open client's pool would otherwise be closed by the garbage collector on a later test's loop."""
    made: list[Captain] = []
    init = Captain.__init__

    def tracked(self: Captain, *args: object, **kwargs: object) -> None:
        init(self, *args, **kwargs)  # type: ignore[arg-type]
        made.append(self)

    monkeypatch.setattr(Captain, "__init__", tracked)
    yield made
    for captain in made:
        await captain.aclose()
