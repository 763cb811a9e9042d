"""The original service's dialect described for the readers (journal/dialect.py): registered
by journal/__init__.py beside ours.

It claims a header naming ``environmentSessionId`` (ours name ``sessionId``, never that key);
its lines are read by journal/original/reader.py, judged in our turn model
(journal/original/translate.py) with its own narration settlement
(journal/original/narration.py), fed to the story card by journal/original/story.py; its
event-log lines have no ``schemaVersion`` and its receipts carry their ``deliveryId`` inside
``data`` (journal/original/trails.py).
"""

from __future__ import annotations

from collections.abc import Mapping

from journal.dialect import Dialect, RunFacts, TrailLines
from journal.original.actions import ORIGINAL_ACTION_KINDS
from journal.original.narration import original_narration
from journal.original.reader import OriginalChecker, original_journey_id, parse_original_line, read_original
from journal.original.schema import HeaderV3, OriginalHeader
from journal.original.story import feed_original
from journal.original.trails import OriginalEvent, OriginalReceipt
from journal.original.translate import original_facts, payload

__all__ = ["ORIGINAL"]


def _run(header: OriginalHeader) -> RunFacts:
    environment = header.environmentId if isinstance(header, HeaderV3) else None
    return RunFacts(header.environmentSessionId, environment, None, None)


def _claims(header: Mapping[str, object]) -> bool:
    return "environmentSessionId" in header


ORIGINAL = Dialect(
    name="original",
    file_name=r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z-[A-Za-z0-9_-]+\.jsonl",
    claims=_claims,
    parse=parse_original_line,
    checker=OriginalChecker,
    journey_id=original_journey_id,
    run=_run,
    read=read_original,
    catalog=ORIGINAL_ACTION_KINDS,
    payload=payload,
    facts=original_facts,
    narration=original_narration,
    feed=feed_original,
    events=TrailLines(OriginalEvent, lambda line: "schemaVersion" not in line),
    receipts=TrailLines(OriginalReceipt, lambda line: "deliveryId" not in line),
)
