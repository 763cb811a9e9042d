"""The OpenAI fake for the text lane's tests."""

from tests.fakes.openai.fixtures import openai_fake  # noqa: F401
