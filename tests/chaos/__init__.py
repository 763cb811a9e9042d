"""Chaos probes (issue 24): each fault done for real on loopback, asserting what the user sees,
what the journal and the event log say, and that no settled turn is lost."""
