"""Makes the `openai_fake` fixture available to the usage tests."""

from tests.fakes.openai.fixtures import openai_fake  # noqa: F401
