"""Our own journal dialect (``clankie``, journal/schema.py) described for the readers
(journal/dialect.py), and our turn lines read in our turn model (journal/verdicts.py).

What a V2+ turn line gives the verdicts: "pre" is the last observation of
``immediatePreAction``, else of ``decision``; "post" the last of ``postAction``; a location
is ``state.location`` {map, x, y} and its ``facing``; carried out is ``actionResult.ok``;
the refusal is ``actionResult.refusal``; progress is ``progressBefore``/``progressAfter``
(tiles, maps, milestones, and from V3 the metrics); stalled is ``signals.stalledForTurns``.
``objectiveRetired`` is set by the play loop on the turn decided right after it retired the
objective (bot/play/observing.py): that turn's objective is the new one, or none, so the
retirement counts for this turn's change and for the next's (a new objective set a turn later).
A V1 turn has no evidence packet: every play verdict is
unknown.

A turn whose action is retired has every verdict unknown, its narration included
(docs/architecture.md §9); our narration rule is journal/narration.py's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from journal.actions import LIVE_ACTION_KINDS
from journal.dialect import Dialect, RunFacts
from journal.json_types import JSONValue
from journal.narration import Receipts, narration_verdict
from journal.reader import LineChecker, journey_id_of, parse_line, read_journal
from journal.schema import (
    ActionResultRecord,
    Header,
    HeaderV1,
    HeaderV2,
    HeaderV3,
    ObservationRecord,
    ProgressV2,
    Turn,
    TurnV1,
    TurnV2,
)
from journal.schema import Progress as ProgressV1  # turn V2's: no metrics
from journal.story import StoryProjector
from journal.verdicts import Progress, Reached, Seen, TurnFacts

__all__ = ["OURS", "our_facts"]


def _payload(action: Any) -> dict[str, JSONValue] | None:
    if action is None:
        return None
    data: dict[str, JSONValue] = action.model_dump(mode="json")
    return data


def _last(stage: Any) -> ObservationRecord | None:
    if stage is None or not stage.observations:
        return None
    last: ObservationRecord = stage.observations[-1]
    return last


def _where(obs: ObservationRecord | None) -> tuple[tuple[Any, Any, Any] | None, Any]:
    """(map, x, y) and facing of an observation's ``state.location``; (None, None) without one."""
    loc = obs.state.get("location") if obs is not None else None
    if not isinstance(loc, dict) or "x" not in loc or "y" not in loc:
        return None, None
    return (loc.get("map"), loc.get("x"), loc.get("y")), loc.get("facing")


def _progress(p: ProgressV1) -> Progress:
    """V3+ progress is the turn model's as it is; V2's has no metrics."""
    return p if isinstance(p, ProgressV2) else Reached(p.distinctTiles, p.maps, p.milestones, {})


def our_facts(line: Turn) -> TurnFacts:
    """One of our turn lines in our turn model (the module docstring)."""
    body = line.turn
    action = _payload(body.action)
    if not isinstance(line, TurnV2):
        return _facts(body, action, None, None)
    ev = line.evidence
    pre = _last(ev.immediatePreAction) or _last(ev.decision)
    place_before, facing_before = _where(pre)
    place_after, facing_after = _where(_last(ev.postAction))
    seen = Seen(
        carried_out=ev.actionResult.ok if ev.actionResult is not None else None,
        progress_before=_progress(ev.progressBefore),
        progress_after=_progress(ev.progressAfter) if ev.progressAfter is not None else None,
        stalled_for=ev.signals.stalledForTurns,
        refused_here=ev.signals.refusedHere,
        scene=pre.scene if pre is not None else None,
        place_before=place_before,
        facing_before=facing_before,
        place_after=place_after,
        facing_after=facing_after,
    )
    return _facts(body, action, ev.progressBefore.milestones, seen, _refusal(ev.actionResult))


def _refusal(result: ActionResultRecord | None) -> str | None:
    """The action result's refusal code (an open field of the record), when it names one."""
    code = (result.model_extra or {}).get("refusal") if result is not None else None
    return code if isinstance(code, str) else None


def _facts(
    body: Any,
    action: dict[str, JSONValue] | None,
    milestones: list[str] | None,
    seen: Seen | None,
    refusal: str | None = None,
) -> TurnFacts:
    return TurnFacts(
        outcome=body.outcome,
        objective=body.objective,
        action=action,
        action_is_input=True,  # every kind of our catalog is input to the world
        retired_before=body.objectiveRetired,
        retired_after=body.objectiveRetired,
        milestones=milestones,
        seen=seen,
        refusal=refusal,
    )


def _narration(line: Turn, receipts: Receipts | None, retired: bool) -> str:
    return "unknown" if retired else narration_verdict(line, receipts)


def _run(header: Header) -> RunFacts:
    environment = header.environmentId if isinstance(header, HeaderV3) else None
    if isinstance(header, HeaderV2):
        return RunFacts(header.sessionId, environment, header.world, header.mind)
    return RunFacts(header.sessionId, environment, None, None)


def _feed(projector: StoryProjector, line: Any) -> None:
    if isinstance(line, TurnV1 | TurnV2):
        projector.feed_turn(line)
    elif isinstance(line, HeaderV1):
        projector.feed_header(line)


def _read(path: Path) -> Any:
    return read_journal(path)


OURS = Dialect(
    name="clankie",
    file_name=r"\d{8}T\d{6}Z-[A-Za-z0-9_.:-]+\.jsonl",  # journal/writer.py: <start stamp>-<runId>.jsonl
    claims=None,  # the default: every header no other dialect claims
    parse=parse_line,
    checker=LineChecker,
    journey_id=journey_id_of,
    run=_run,
    read=_read,
    catalog=LIVE_ACTION_KINDS,
    payload=_payload,
    facts=our_facts,
    narration=_narration,
    feed=_feed,
)
