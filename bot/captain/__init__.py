"""The captain's engine: a bounded tool loop with images in tool results (docs/architecture.md
§8). :mod:`.consult` ``Captain``, :mod:`.engine` ``CaptainEngine``, :mod:`.conversation`
``Conversation``; the package itself imports none of them (nor the OpenAI client)."""
