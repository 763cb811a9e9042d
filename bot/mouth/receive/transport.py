"""Transport (UDP) decryption for Discord voice receive.

discord.py 2.7.1 offers ``aead_xchacha20_poly1305_rtpsize`` first among its supported modes
and Discord retired the ``xsalsa20_*`` modes in November 2024, so that is the mode a live
connection negotiates (``aead_aes256_gcm_rtpsize`` is not in discord.py's list, and would need
the ``cryptography`` package besides). Layout of an ``*_rtpsize`` packet::

    | RTP header + CSRCs + 4-byte extension header (clear, AAD) | ciphertext + 16-byte tag | nonce(4) |

The 4-byte nonce suffix is a big-endian counter, zero-padded to 24 bytes for XChaCha20.
The key and mode are read from the live connection for every packet (they change when the
connection is re-established); the cipher object is rebuilt only when the key bytes change.
"""

from __future__ import annotations

import nacl.exceptions
import nacl.secret

from bot.mouth.receive.rtp import MalformedPacket, RtpHeader, strip_extension_and_padding

XCHACHA_MODE = "aead_xchacha20_poly1305_rtpsize"
SUPPORTED_MODES = frozenset({XCHACHA_MODE})
NONCE_SUFFIX_LEN = 4
TAG_LEN = 16


class TransportDecryptError(ValueError):
    """The packet did not authenticate under the connection's key (or the mode is unknown)."""


class TransportDecryptor:
    """Removes the transport encryption; returns the media payload (Opus or a DAVE frame)."""

    def __init__(self) -> None:
        self._key: bytes | None = None
        self._box: nacl.secret.Aead | None = None

    def _box_for(self, key: bytes) -> nacl.secret.Aead:
        if self._box is None or key != self._key:
            if len(key) != nacl.secret.Aead.KEY_SIZE:
                raise TransportDecryptError(f"voice secret key has {len(key)} bytes, expected 32")
            self._box = nacl.secret.Aead(key)
            self._key = key
        return self._box

    def decrypt(self, data: bytes, header: RtpHeader, mode: str, key: bytes) -> bytes:
        if mode != XCHACHA_MODE:
            raise TransportDecryptError(
                f"voice encryption mode {mode!r} is not supported by the receiver "
                f"(supported: {', '.join(sorted(SUPPORTED_MODES))})"
            )
        body_end = len(data) - NONCE_SUFFIX_LEN
        if body_end - header.clear_len < TAG_LEN:
            raise MalformedPacket(
                f"RTP datagram of {len(data)} bytes has no room for a {TAG_LEN}-byte tag and "
                f"{NONCE_SUFFIX_LEN}-byte nonce after its {header.clear_len}-byte header"
            )
        nonce = data[body_end:] + bytes(nacl.secret.Aead.NONCE_SIZE - NONCE_SUFFIX_LEN)
        try:
            plaintext = self._box_for(key).decrypt(
                data[header.clear_len : body_end], data[: header.clear_len], nonce
            )
        except nacl.exceptions.CryptoError as exc:
            raise TransportDecryptError(f"packet from ssrc {header.ssrc} failed to authenticate") from exc
        return strip_extension_and_padding(header, plaintext)
