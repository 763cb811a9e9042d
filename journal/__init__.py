"""The play journal (docs/architecture.md §6–§7, §9).

- ``journal.schema`` — every line kind and version; ``journal.actions`` — the live catalogs.
- ``journal.writer`` — :class:`JournalWriter`: live, validated, append-only, fsynced.
- ``journal.reader`` — :func:`read_journal` / :func:`read_many`: archival and strict;
  ``journal.jsonl`` — the bounded line reading every reader shares.
- ``journal.dialect`` — the dialects a journal may be in and which one it is;
  ``journal.ours`` — ours; ``journal.original`` — the original service's.
- ``journal.story`` / ``journal.journeys`` — the story card, :class:`StoryProjector` and the
  incremental :class:`JourneyIndex`.
- ``journal.evaluate`` — the offline evaluator; ``journal.verdicts`` — its one rule set, on our
  turn model; ``journal.report`` — its report, built as the journal streams by;
  ``journal.narration`` — the receipt trail folded by delivery; ``journal.oplog`` — event log
  and receipts; ``journal.compare`` — two sittings side by side.
- ``journal.cli`` — ``clankie journal runs|story|sight|eval|compare``.

This module is where the dialects are registered, and the one module of the core that
imports journal/original/: the original's modules build on the core, never the other way.
"""

from journal import dialect
from journal.journeys import JourneyIndex, RunInfo
from journal.original.dialect import ORIGINAL
from journal.ours import OURS
from journal.reader import Journal, JournalError, read_journal, read_many
from journal.story import StoryCard, StoryProjector
from journal.writer import JournalLineTooLarge, JournalWriteError, JournalWriter

dialect.register(OURS)  # the default: a header no other dialect claims is ours
dialect.register(ORIGINAL)

__all__ = [
    "Journal",
    "JournalError",
    "JournalLineTooLarge",
    "JournalWriteError",
    "JournalWriter",
    "JourneyIndex",
    "RunInfo",
    "StoryCard",
    "StoryProjector",
    "read_journal",
    "read_many",
]
