"""The story card (journal/story.py) fed from the original's journal lines.

Same projection rules as for our own journals; what each reads in the original's lines:
``sessionId`` is the header's ``environmentSessionId``; ``environmentId`` the V3 header's
(null before V3); a turn's maps are the ``position.mapId`` of the overworld observation of
its decision stage and of its newest stage (post-action, else pre-action, else decision),
else what ``progressAfter.maps`` newly lists.
"""

from __future__ import annotations

from journal.original.observations import Overworld
from journal.original.reader import original_journey_id
from journal.original.schema import (
    HeaderV1,
    HeaderV3,
    OriginalHeader,
    OriginalLine,
    OriginalTurn,
    Stage,
    TurnV1,
    TurnV2,
)
from journal.story import StoryProjector

__all__ = ["feed_original", "feed_original_header", "feed_original_turn", "stage_position"]


def stage_position(stage: Stage | None) -> Overworld | None:
    """The stage's overworld observation (where the player stood), if it has one."""
    if stage is None:
        return None
    for obs in stage.observations:
        if isinstance(obs, Overworld):
            return obs
    return None


def _map(stage: Stage | None) -> str | None:
    obs = stage_position(stage)
    return obs.data.position.mapId[:64] if obs is not None else None


def feed_original_header(projector: StoryProjector, header: OriginalHeader) -> None:
    environment = header.environmentId if isinstance(header, HeaderV3) else None
    projector.begin(
        original_journey_id(header),
        header.environmentSessionId,
        header.scenarioId,
        environment,
        header.startedAt,
    )


def feed_original_turn(projector: StoryProjector, line: OriginalTurn) -> None:
    body = line.turn
    if not isinstance(line, TurnV2):
        projector.fold(line.at, body.objective, body.speakWanted, body.effect, speak=body.speak)
        return
    ev = line.evidence
    newest = next(
        (s for s in (ev.postAction, ev.immediatePreAction, ev.decision) if s is not None and s.observations),
        None,
    )
    after = ev.progressAfter
    projector.fold(
        line.at,
        body.objective,
        body.speakWanted,
        body.effect,
        _map(ev.decision),
        _map(newest),
        after.maps if after is not None else None,
        speak=body.speak,
    )


def feed_original(projector: StoryProjector, line: OriginalLine) -> None:
    """Fold one line of the original's journal: the first header begins the sitting, a turn
    is folded, the summary adds nothing.

    Its reader reads a file whatever the order of its lines (journal/original/reader.py): a
    later header is not another sitting (the first is the run's, as the origin's evaluator
    takes it), and a turn before the header has no sitting to join yet, so the card, which
    begins at the header, leaves it out (the evaluation judges it, and lists it as an anomaly).
    """
    if isinstance(line, TurnV1):
        if projector.journey_id is not None:
            feed_original_turn(projector, line)
    elif isinstance(line, HeaderV1) and projector.journey_id is None:
        feed_original_header(projector, line)
