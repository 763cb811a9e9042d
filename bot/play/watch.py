"""What the rest of the character reads of a play session as it plays (docs/architecture.md
§5, §10): the last picture and observation, the last settled turns, the live story card, and the
feed of settled turns. :class:`PlaySession` is a :class:`Watched`; the state machine writes here
and nothing here drives play."""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncGenerator, Callable

from bot.play.feed import TurnFeed
from bot.play.settled_turn import SettledTurn
from bot.worlds.base import Observation, Still
from journal.journeys import StoryProjector
from journal.json_types import JSONValue

RECENT_KEPT = 20


class Watched:
    def __init__(self, story: StoryProjector, metric_labels: dict[str, str]) -> None:
        self.story = story
        self.metric_labels = metric_labels
        self.last: SettledTurn | None = None
        self.last_still: Still | None = None
        self.last_observation: Observation | None = None
        self._recent: deque[SettledTurn] = deque(maxlen=RECENT_KEPT)
        self._card: tuple[int, dict[str, JSONValue] | None] = (-1, None)
        self._feed = TurnFeed()

    @property
    def recent(self) -> list[SettledTurn]:
        return list(self._recent)

    def subscribe(self) -> AsyncGenerator[SettledTurn, None]:
        """An async stream of settled turns; ends when the session ends."""
        return self._feed.subscribe()

    def add_listener(self, callback: Callable[[SettledTurn], None]) -> None:
        """Call ``callback`` synchronously with every settled turn (cheaper than a stream)."""
        self._feed.add_listener(callback)

    def story_card(self) -> dict[str, JSONValue] | None:
        """The live card as JSON, built once per settled turn however often it is read."""
        if self._card[0] != self.story.turns_taken or self._card[1] is None:
            card = self.story.card()
            self._card = (self.story.turns_taken, card.model_dump(mode="json") if card is not None else None)
        return self._card[1]

    def publish(self, settled: SettledTurn) -> None:
        self.last = settled
        self._recent.append(settled)
        self._feed.publish(settled)

    def close_feed(self) -> None:
        self._feed.close()
