"""The last stage of a turn, **settle** (docs/architecture.md §5): what the turn changes in
what play carries (objective, notes, progress, signals), whether he may speak
(:class:`bot.play.speech.SpeechPolicy`), and the two things the turn becomes — its journal line
and the immutable :class:`SettledTurn` its subscribers hear (the journal sink writes the line
first; narration, the page and the terminal hear the settled turn after). The record's counts
(turns taken, accepted) grow only once the line is written (:meth:`Settler.recorded`): a turn
the disk refused is no turn of the record."""

from __future__ import annotations

from dataclasses import dataclass

from bot.play.journal_lines import turn_line
from bot.play.observing import Before, PlayMemory
from bot.play.progress import location_of, progress_json
from bot.play.settled_turn import SettledTurn, recent_entry
from bot.play.speech import SpeechPolicy
from bot.play.turn import TurnRecord
from journal.line_dicts import Provenance, TurnV5Line


@dataclass(frozen=True)
class Settled:
    """A settled turn and the journal line it is written as."""

    turn: SettledTurn
    line: TurnV5Line


class Settler:
    """The settle stage of one session."""

    def __init__(
        self,
        memory: PlayMemory,
        speech: SpeechPolicy,
        session_id: str,
        run_id: str,
        *,
        keep_words: bool = False,
    ) -> None:
        self.memory = memory
        self.keep_words = keep_words  # [play] keep_room_words
        self.speech = speech
        self.session_id = session_id
        self.run_id = run_id

    def settle(self, rec: TurnRecord, before: Before, provenance: Provenance) -> Settled:
        memory, d = self.memory, rec.decision
        objective_changed = False
        if d is not None and rec.outcome in ("accepted", "rejected_by_adapter"):
            if d.sets_objective and d.objective != memory.objective:
                memory.objective, objective_changed = d.objective, True
            if d.sets_notes:
                memory.notes = d.notes
        progressed = False
        if rec.post is not None:
            progressed = memory.progress.update(rec.post.state).progressed
        post_loc = location_of(rec.post.state) if rec.post is not None else None
        memory.signals.settle(
            progressed=progressed,
            effect=rec.effect,
            state_key=(*post_loc, rec.post.scene) if post_loc and rec.post else None,
            refused_direction=rec.refused_dir,
            objective_changed=objective_changed or before.retired,
            has_objective=memory.objective is not None,
        )
        speech = self.speech.speech(rec.turn, d, rec.effect, memory.objective)
        progress_after = memory.progress.snapshot()
        line = turn_line(
            rec,
            provenance=provenance,
            objective=memory.objective,
            notes=memory.notes,
            retired=before.retired,
            speech=speech,
            signals=before.signals,
            progress_before=before.progress,
            progress_after=progress_after,
            keep_words=self.keep_words,
        )
        settled = SettledTurn(
            session_id=self.session_id,
            run_id=self.run_id,
            turn=rec.turn,
            outcome=rec.outcome,
            intent=d.intent if d is not None else "",
            monologue=d.monologue if d is not None else "",
            objective=memory.objective,
            action=rec.action or (d.action if d else None),
            effect=rec.effect,
            detail=rec.detail,
            speak=speech.speak,
            speak_wanted=speech.wanted,
            speak_suppressed=speech.suppressed,
            delivery_id=speech.delivery_id,
            narration=speech.narration,
            progress=progress_json(progress_after),
            frame_sha256=rec.decision_still.sha256 if rec.decision_still else None,
            at=line["at"],
            room=tuple(
                {
                    "id": r.id,
                    "source": r.source,
                    "name": r.name,
                    "words": r.words,
                    "heeded": r.id in rec.heeded,
                }
                for r in rec.room
            ),
        )
        return Settled(settled, line)

    def recorded(self, settled: SettledTurn) -> None:
        """The turn's journal line was written: it counts (``turnsTaken``, ``accepted``)."""
        self.memory.turns_taken += 1
        if settled.outcome == "accepted":
            self.memory.accepted += 1

    def heard(self, settled: SettledTurn) -> None:
        """The settled turn as the mind will see it among recent turns."""
        self.memory.recent_for_mind.append(recent_entry(settled))
