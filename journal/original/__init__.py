"""The original service's trails, read as a second dialect (docs/architecture.md §6, issue 14).

The original Clankie service (TypeScript) wrote its own play journals, lifecycle events and
voice receipts. An operator moving to this bot brings that archive; these modules read it
as strictly as our own journals, and nothing here ever writes it.

These modules build on the journal core and the core never imports them: the dialect is
described in the core's terms (:data:`journal.original.dialect.ORIGINAL`, a
:class:`journal.dialect.Dialect`) and journal/__init__.py registers it.

- ``journal.original.actions`` — the original's action catalog (emulator + body actions).
- ``journal.original.observations`` — its decoded emulator observations (msgspec).
- ``journal.original.evidence`` — a V2 turn's evidence packet (msgspec).
- ``journal.original.schema`` — header V1–V3, turn V1–V2, summary V1–V2 (pydantic).
- ``journal.original.reader`` — :func:`read_original` and the per-line validator.
- ``journal.original.trails`` — its event-log lines (DomainEvent) and voice receipts.
- ``journal.original.translate`` — its turn lines read in our turn model, for our verdicts.
- ``journal.original.narration`` — its own settlement of a turn's narration.
- ``journal.original.story`` — the story card fed from its lines.
- ``journal.original.dialect`` — :data:`ORIGINAL`, all of the above for the readers.
- ``journal.original.samples`` — generated lines of every kind, for tests and the benchmark.
"""
