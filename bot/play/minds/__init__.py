"""Minds that decide a turn: ``autopilot`` (deterministic, offline) and ``openai``."""
