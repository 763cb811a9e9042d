"""The story card (docs/architecture.md §7): a bounded projection of a journey, never the
journal itself.

:class:`StoryProjector` folds header and turn lines into the card's state in O(1) per line
and keeps only bounded state (≤16 maps, ≤8 moments), so the live play loop can feed it each
turn it writes and ask for the card at any time at constant cost. Sittings of one journey
are joined by feeding them in order, or by :meth:`StoryProjector.joined`.

Projection rules:
- ``startedAt`` is the first sitting's; ``sessionId``, ``environmentId`` (V3, else the V2
  ``world``, else null) and ``scenarioId`` are the latest sitting's.
- ``turnsTaken`` counts every turn of every sitting; ``lastTurnAt`` is the latest turn's ``at``.
- ``objective`` is the latest turn's objective (null when it was cleared).
- ``maps`` are the last 16 distinct maps seen, oldest first: the ``location.map`` of the
  turn's decision observation, then of its newest observation (post-action, else
  pre-action, else decision); when the newest names none, any map newly listed in
  ``progressAfter.maps``.
- ``moments`` are the last 8 turns that wanted to speak, each paired with the effect its words
  were decided on: ``{at, effect, toward: objective, said}``. A decision is made on what the
  turns before it did, not on its own action's effect (which comes after it), so the effect is
  the latest one of the sitting before the speaking turn (a turn with no effect, whose mind
  failed, changed nothing to decide on); a moment needs one that changed something (an effect of
  ``"nothing changed"``, the words both dialects write for a turn that changed nothing, is no
  moment), so the sitting's first turn has none. ``said`` is the turn's ``speak`` (null when
  it wanted to speak without words). So "We won our first battle!", said on the turn after the
  battle was won, is kept with the effect that won it, whatever that turn's own action did.
- ``metrics`` (card V2) are the world's progress metrics as last seen: the newest V3 turn's
  ``progressAfter.metrics`` (else its ``progressBefore.metrics``) that names any, across the
  journey's sittings; ``{}`` when no turn carried one (older journals, worlds without metrics).
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Iterable
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    StringConstraints,
    model_serializer,
)

from journal.schema import (
    Header,
    HeaderV2,
    HeaderV3,
    MetricName,
    MetricValue,
    Stage,
    TurnV1,
    TurnV2,
    TurnV3,
    TurnV5,
)

MAX_MAPS = 16
MAX_MOMENTS = 8
NO_CHANGE = "nothing changed"  # a turn's effect when it changed nothing (our dialect and the original's)

__all__ = ["MAX_MAPS", "MAX_MOMENTS", "StoryCard", "StoryMoment", "StoryProjector"]


class StoryMoment(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    at: str
    effect: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    toward: Annotated[str, StringConstraints(max_length=160)] | None
    said: Annotated[str, StringConstraints(max_length=400)] | None = None


class RoomCount(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    heard: int = Field(ge=0)
    heeded: int = Field(ge=0)


class StoryCard(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schemaVersion: Literal[2] = 2
    sessionId: str
    environmentId: str | None
    scenarioId: str
    startedAt: str
    turnsTaken: int = Field(ge=0)
    lastTurnAt: str | None
    objective: Annotated[str, StringConstraints(max_length=160)] | None
    maps: list[Annotated[str, StringConstraints(max_length=64)]] = Field(max_length=MAX_MAPS)
    moments: list[StoryMoment] = Field(max_length=MAX_MOMENTS)
    metrics: dict[MetricName, MetricValue] = Field(default_factory=dict)
    roomLines: RoomCount | None = None
    """What the room said to him and he heeded, in sittings that record it (turn version 5);
    absent from the card of a journey that records none, so older cards read as they did."""

    @model_serializer(mode="wrap")
    def _without_absent_room(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        if out.get("roomLines", 0) is None:
            del out["roomLines"]
        return out


def _stage_map(stage: Stage | None) -> str | None:
    """The ``location.map`` of a stage's newest observation, if it names one."""
    if stage is None or not stage.observations:
        return None
    location: Any = stage.observations[-1].state.get("location")
    if isinstance(location, dict):
        name = location.get("map")
        if isinstance(name, str) and name:
            return name[:64]
    return None


def _turn_maps(turn: TurnV2) -> tuple[str | None, str | None]:
    """The map the turn started on (decision stage) and the one it ended on (newest stage)."""
    ev = turn.evidence
    newest = next(
        (s for s in (ev.postAction, ev.immediatePreAction, ev.decision) if s is not None and s.observations),
        None,
    )
    return _stage_map(ev.decision), _stage_map(newest)


class StoryProjector:
    """Incremental story card state of one journey; every operation is O(1)."""

    def __init__(self) -> None:
        self.journey_id: str | None = None
        self.session_id: str | None = None
        self.environment_id: str | None = None
        self.scenario_id: str | None = None
        self.started_at: str | None = None
        self.turns_taken = 0
        self.last_turn_at: str | None = None
        self.objective: str | None = None
        self._maps: OrderedDict[str, None] = OrderedDict()
        self._moments: deque[StoryMoment] = deque(maxlen=MAX_MOMENTS)
        self.metrics: dict[str, int | float] = {}
        self._decided_on: str | None = None  # the sitting's latest effect: what a decision now sees
        self.room: tuple[int, int] | None = None  # room lines (heard, heeded), once a turn records them

    # -- feeding ---------------------------------------------------------------------

    def feed_header(self, header: Header) -> None:
        """Begin a sitting. A header of another journey is refused (ValueError)."""
        if isinstance(header, HeaderV3):
            environment: str | None = header.environmentId
        elif isinstance(header, HeaderV2):
            environment = header.world
        else:
            environment = None
        journey = header.journeyId if isinstance(header, HeaderV3) else header.runId
        self.begin(journey, header.sessionId, header.scenarioId, environment, header.startedAt)

    def begin(
        self, journey: str, session: str, scenario: str, environment: str | None, started_at: str
    ) -> None:
        """Begin a sitting of any journal dialect (see :meth:`feed_header`)."""
        if self.journey_id is not None and journey != self.journey_id:
            raise ValueError(f"header of journey {journey!r} fed to the story of journey {self.journey_id!r}")
        self.journey_id = journey
        self.session_id = session
        self.scenario_id = scenario
        self.environment_id = environment
        if self.started_at is None:
            self.started_at = started_at
        self._decided_on = None  # a new sitting's first decision sees a fresh start, nothing done

    def feed_turn(self, line: TurnV1 | TurnV2) -> None:
        """Fold one turn line (any version, e.g. a TurnV2Write the loop just wrote)."""
        body = line.turn
        if isinstance(line, TurnV5):
            heard, heeded = self.room or (0, 0)
            self.room = (heard + len(line.evidence.room.heard), heeded + len(line.evidence.room.heeded))
        if isinstance(line, TurnV2):
            started, current = _turn_maps(line)
            after = line.evidence.progressAfter
            metrics = None
            if isinstance(line, TurnV3):
                metrics = (line.evidence.progressAfter or line.evidence.progressBefore).metrics
            self.fold(
                line.at,
                body.objective,
                body.speakWanted,
                body.effect,
                started,
                current,
                after.maps if after is not None else None,
                metrics,
                speak=body.speak,
            )
        else:
            self.fold(line.at, body.objective, body.speakWanted, body.effect, speak=body.speak)

    def fold(
        self,
        at: str,
        objective: str | None,
        speak_wanted: bool,
        effect: str | None,
        started_map: str | None = None,
        current_map: str | None = None,
        maps_after: list[str] | None = None,
        metrics: dict[str, int | float] | None = None,
        *,
        speak: str | None = None,
    ) -> None:
        """Fold one turn of any journal dialect: when, toward what, what it did, where, and
        what it said.

        ``started_map``/``current_map`` are the maps the turn began and ended on, when its
        evidence names them; ``maps_after`` the maps its progress lists after the action;
        ``metrics`` the world's progress metrics the turn ended with (kept when non-empty);
        ``speak`` the words of a turn that wanted to speak.
        """
        if self.journey_id is None:
            raise ValueError("feed_header must come before feed_turn")
        self.turns_taken += 1
        self.last_turn_at = at
        self.objective = objective
        if started_map is not None:
            self._see(started_map)
        if current_map is not None:
            self._see(current_map)
        elif maps_after is not None:
            for name in maps_after[-MAX_MAPS:]:
                if name not in self._maps:
                    self._see(name[:64])
        if metrics:
            self.metrics = metrics
        decided_on = self._decided_on
        if speak_wanted and decided_on and decided_on != NO_CHANGE:
            self._moments.append(StoryMoment(at=at, effect=decided_on, toward=objective, said=speak))
        if effect:
            self._decided_on = effect

    def _see(self, name: str) -> None:
        self._maps[name] = None
        self._maps.move_to_end(name)
        while len(self._maps) > MAX_MAPS:
            self._maps.popitem(last=False)

    # -- reading ---------------------------------------------------------------------

    @property
    def maps(self) -> list[str]:
        return list(self._maps)

    @property
    def moments(self) -> list[StoryMoment]:
        return list(self._moments)

    def card(self) -> StoryCard | None:
        """The card so far, or None before any header was fed."""
        if self.session_id is None or self.scenario_id is None or self.started_at is None:
            return None
        return StoryCard(
            sessionId=self.session_id,
            environmentId=self.environment_id,
            scenarioId=self.scenario_id,
            startedAt=self.started_at,
            turnsTaken=self.turns_taken,
            lastTurnAt=self.last_turn_at,
            objective=self.objective,
            maps=list(self._maps),
            moments=list(self._moments),
            metrics=dict(self.metrics),
            roomLines=RoomCount(heard=self.room[0], heeded=self.room[1]) if self.room is not None else None,
        )

    def copy(self) -> StoryProjector:
        twin = StoryProjector()
        twin.__dict__.update(self.__dict__)
        twin._maps = OrderedDict(self._maps)
        twin._moments = deque(self._moments, maxlen=MAX_MOMENTS)
        return twin

    @classmethod
    def joined(cls, sittings: Iterable[StoryProjector]) -> StoryProjector:
        """One projector for consecutive sittings (each projected on its own), in order.

        Cost is O(sittings), independent of how many turns they hold.
        """
        out = cls()
        for part in sittings:
            if part.journey_id is None:
                continue
            if out.journey_id is not None and part.journey_id != out.journey_id:
                raise ValueError("sittings of different journeys cannot be joined")
            out.journey_id = part.journey_id
            out.session_id = part.session_id
            out.environment_id = part.environment_id
            out.scenario_id = part.scenario_id
            if out.started_at is None:
                out.started_at = part.started_at
            if part.turns_taken:
                out.turns_taken += part.turns_taken
                out.last_turn_at = part.last_turn_at
                out.objective = part.objective
            for name in part._maps:
                out._see(name)
            out._moments.extend(part._moments)
            if part.metrics:
                out.metrics = part.metrics
            if part.room is not None:
                heard, heeded = out.room or (0, 0)
                out.room = (heard + part.room[0], heeded + part.room[1])
            out._decided_on = part._decided_on
        return out
