"""Wire-level fakes of external services, served on 127.0.0.1 for tests."""
