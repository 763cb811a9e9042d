"""The play journal (DESIGN §6–§7, §9).

- ``journal.schema`` — every line kind and version; ``journal.actions`` — the live catalogs.
- ``journal.writer`` — :class:`JournalWriter`: live, validated, append-only, fsynced.
- ``journal.reader`` — :func:`read_journal` / :func:`read_many`: archival and strict.
- ``journal.story`` / ``journal.journeys`` — the story card, :class:`StoryProjector` and the
  incremental :class:`JourneyIndex`.
- ``journal.evaluate`` — the offline evaluator (its verdict rules); ``journal.report`` — its
  report, built as the journal streams by; ``journal.narration`` — the receipt trail folded by
  delivery; ``journal.oplog`` — event log and receipts.
- ``journal.cli`` — ``clankie journal runs|story|sight|eval|compare``.
"""

from journal.journeys import JourneyIndex, RunInfo
from journal.reader import Journal, JournalError, read_journal, read_many
from journal.story import StoryCard, StoryProjector
from journal.writer import JournalLineTooLarge, JournalWriteError, JournalWriter

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
