"""The mouth's OpenAI Realtime (GA) session and its parts.

* ``session``            — ``MouthSession``: one Realtime socket per voice channel; room audio
                           in, model audio to the playback buffer, barge-in, reconnect
* ``client_events``      — the client events sent, as plain dicts in the GA shapes
* ``responses``          — which response answers whom (``ResponseBook``)
* ``tool_runner``        — tool calls on the mouth surface (``ToolRunner``)
* ``floor_turns``        — the floor on the session's side (``FloorTurns``): each committed turn
                           decided (answered / offered / listened) and receipted
* ``transcripts``        — the room's words per committed item (``InputTranscripts``), in memory only
* ``narration_receipts`` — receipts of narration responses (``NarrationReceipts``: requested /
                           failed / done / played)
"""
