"""Fixtures shared by the journal tests."""

from tests.faults import small_tmpfs  # noqa: F401  (fixture)
