"""Offline evaluator (docs/architecture.md §9): per-turn verdicts and the run's terminal, from
evidence only.

Every verdict is a pure function of the journal (plus the event log and the voice receipt
trail when given). Values are ``pass | fail | unknown | not_applicable`` for the six play
verdicts (journal/verdicts.py) and the narration names (journal/narration.py). Missing
evidence — a V1 turn, a stage that did not happen, a receipt file not given — is
``unknown``, never ``pass`` or ``fail``.

A journal of any dialect is evaluated by the same rules: its dialect (journal/dialect.py)
reads each turn line in our turn model, ``unknown`` wherever its evidence does not map
(journal/ours.py, journal/original/translate.py). Only narration is settled by each
dialect's own rule, so a run's counts are the ones its service counted.

Turns whose action is not in the dialect's live catalog (it was read back as a historical
shape, e.g. a retired kind) are reported as themselves with ``decision.actionRetired: true``
and every play verdict ``unknown``; the aggregate counts them in ``retiredActionTurns``.

A verdict needs the turn and the one before it, nothing older: a journal is evaluated as it
streams by (journal/report.py), in memory that does not grow with its turns.

The terminal: the summary line's outcome (source "summary"); else the last
``embodiment.session.stopped|failed`` event of the event log that ends this run (source
"event_log"; its ``data.outcome``, so ``lease_lapsed`` stays distinct from ``failed`` and
``stopped``); else source "none", outcome "unknown".
"""

from __future__ import annotations

from pathlib import Path

from journal.dialect import dialect_of
from journal.ours import OURS
from journal.reader import Journal
from journal.report import VERDICTS, Report, Streamed, TurnRow, TurnSink, evaluated, stream, with_turns

__all__ = ["VERDICTS", "evaluate", "evaluate_each", "evaluate_journal"]


def evaluate_journal(journal: Journal, events: Path | None = None, receipts: Path | None = None) -> Report:
    """Evaluate an already-read journal of ours (see :func:`evaluate`)."""
    rows: list[TurnRow] = []
    done = evaluated(
        OURS,
        journal.path,
        journal.turns,
        lambda: (journal.header, journal.summary),
        events,
        receipts,
        lambda _, row: rows.append(row),
    )
    return with_turns(done.report, rows)


def evaluate_each(
    journal_path: Path | str,
    events: Path | None = None,
    receipts: Path | None = None,
    on_turn: TurnSink | None = None,
) -> Streamed:
    """Evaluate a journal of any dialect in one streamed pass, in memory that does not grow
    with the journal: each turn's row goes to ``on_turn`` as it is judged (journal/report.py).
    Raises JournalError (``path:line: reason``) if any line of the file is invalid."""
    path = Path(journal_path)
    return stream(dialect_of(path), path, events, receipts, on_turn)


def evaluate(journal_path: Path | str, events: Path | None = None, receipts: Path | None = None) -> Report:
    """Read a journal of any dialect (raising JournalError if invalid) and evaluate it.

    ``events`` is the event log, ``receipts`` the voice receipt trail; both optional and
    read tolerantly (a torn line is skipped and listed under ``skippedOperationalLines``).
    The report holds a row per turn; :func:`evaluate_each` hands them out one at a time.
    """
    rows: list[TurnRow] = []
    done = evaluate_each(journal_path, events, receipts, lambda _, row: rows.append(row))
    return with_turns(done.report, rows)
