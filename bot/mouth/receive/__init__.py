"""Voice receive for discord.py 2.7.1 with DAVE: per-speaker 24 kHz mono PCM frames.

Decision: our own small receiver, not discord-ext-voice-recv. That package (0.5.2a179, alpha,
last release 2025-06) removes only the transport encryption; DAVE lives in its open pull
requests (#54, #58, #62), which call ``vc._connection.dave_session.decrypt(user_id,
davey.MediaType.audio, payload)`` after transport decryption, skip SSRCs not yet mapped to a
user and let unencrypted (passthrough) frames through. The problems reported from the field
with DAVE receive, in that package and in other libraries' receive paths (discord.net, disgo,
py-cord), would have to be patched in a vendored fork anyway: RTP padding left on the payload
hides DAVE's trailing ``0xFAFA`` marker, so a few percent of frames fail to decrypt (padding
must be stripped after transport decryption, before DAVE; packets that are all padding carry
no audio); SSRCs stay unmapped after a rejoin because SPEAKING is not resent; a session object
cached across a re-key decrypts nothing; audio stops arriving after ~60 s in which the bot sent
nothing. What receive needs from discord.py is small — a socket listener, the voice websocket
hook, the secret key/mode and the current ``dave_session`` — and is isolated in
``bot.mouth.discord_voice``, the one adapter over discord.py's voice internals. The rest is ours
and tested byte-for-byte:

* ``rtp``           — classify RTP/RTCP/other, parse the header, strip extension + padding
                      (an all-padding packet is dropped without counting as a loss)
* ``transport``     — ``aead_xchacha20_poly1305_rtpsize`` (the mode discord.py negotiates)
* ``dave``          — DAVE open with the session current *at this packet*; passthrough rules
* ``opus_decoders`` — one Opus decoder per SSRC, decoding straight to 24 kHz mono (the
                      model's format; libopus into a reused buffer), loss concealment,
                      exact 960-byte frames
* ``ssrc_map``      — SSRC→user from SPEAKING (op 5) / op 12, presence from ops 11/13
* ``pipeline``      — the steps chained, counters, unknown-SSRC identification by DAVE key
* ``keepalive``     — Opus silence bursts while idle so Discord keeps delivering audio
* ``receiver``      — ``VoiceReceiver``: the above wired to a ``VoiceClient``; ``loop_sink``

Needs libopus at runtime (Debian: ``libopus0``; discord.py loads it via ctypes). Frames arrive
only while someone sends: a pause in speech is a pause in frames, not filler silence.
"""
