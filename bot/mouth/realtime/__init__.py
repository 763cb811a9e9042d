"""The mouth's OpenAI Realtime (GA) session and its parts.

* ``session``            — ``MouthSession``: one Realtime socket per voice channel; room audio
                           in, model audio to the playback buffer, barge-in, reconnect
* ``connection``         — the socket (``Connection``): opened, its events handed on, reopened
                           with backoff, rotated
* ``configuration``      — what the session asks to be (``Configuration``): briefing, floor,
                           tools, truncation policy, the fallbacks; the transcription model in use
* ``server_events``      — every server event to the part that keeps its story (``ServerEvents``)
* ``interruptions``      — when speech in the room cuts him off (``Interruptions``)
* ``turn_answers``       — the floor's verdicts put to the server as creates (``TurnAnswers``)
* ``response_slot``      — one response at a time (``ResponseSlot``): sent, merged or following
* ``client_events``      — the client events sent, as plain dicts in the GA shapes
* ``responses``          — which response answers whom (``ResponseBook``)
* ``tool_runner``        — tool calls on the mouth surface (``ToolRunner``)
* ``floor_turns``        — the floor on the session's side (``FloorTurns``): each committed turn
                           decided (answered / offered / listened) and receipted
* ``transcripts``        — the room's words per committed item (``InputTranscripts``), in memory only
* ``narration_receipts`` — receipts of narration responses (``NarrationReceipts``: requested /
                           failed / done / played)
"""
