"""Transport (UDP) decryption for Discord voice receive.

discord.py 2.7.1 offers ``aead_xchacha20_poly1305_rtpsize`` first among its supported modes
and Discord retired the ``xsalsa20_*`` modes in November 2024, so that is the mode a live
connection negotiates (``aead_aes256_gcm_rtpsize`` is not in discord.py's list, and would need
the ``cryptography`` package besides). Layout of an ``*_rtpsize`` packet::

    | RTP header + CSRCs + 4-byte extension header (clear, AAD) | ciphertext + 16-byte tag | nonce(4) |

The 4-byte nonce suffix is a big-endian counter, zero-padded to 24 bytes for XChaCha20.
The key and mode are read from the live connection for every packet (they change when the
connection is re-established); a key is checked once, when it changes.

libsodium is called through PyNaCl's compiled binding (``nacl._sodium``, the module PyNaCl's
own ``nacl.bindings`` wraps; PyNaCl is held to 1.5.x by discord.py 2.7.x) into one reused output
buffer: PyNaCl's wrapper re-checks types, formats four error messages and allocates a buffer
for every call, which costs twice the decryption itself at voice packet sizes.
"""

from __future__ import annotations

import nacl.bindings  # imported first: it runs sodium_init()
from nacl._sodium import ffi, lib

from bot.mouth.receive.rtp import MalformedPacket, RtpHeader, strip_extension_and_padding

XCHACHA_MODE = "aead_xchacha20_poly1305_rtpsize"
SUPPORTED_MODES = frozenset({XCHACHA_MODE})
NONCE_SUFFIX_LEN = 4
TAG_LEN = nacl.bindings.crypto_aead_xchacha20poly1305_ietf_ABYTES  # 16
KEY_LEN = nacl.bindings.crypto_aead_xchacha20poly1305_ietf_KEYBYTES  # 32
_NONCE_PAD = bytes(nacl.bindings.crypto_aead_xchacha20poly1305_ietf_NPUBBYTES - NONCE_SUFFIX_LEN)
MAX_DATAGRAM = 65_536  # a UDP datagram's payload is shorter
_open = lib.crypto_aead_xchacha20poly1305_ietf_decrypt


class TransportDecryptError(ValueError):
    """The packet did not authenticate under the connection's key (or the mode is unknown)."""


class TransportDecryptor:
    """Removes the transport encryption; returns the media payload (Opus or a DAVE frame)."""

    def __init__(self) -> None:
        self._key: bytes | None = None  # the last key seen, checked
        self._plain = ffi.new("unsigned char[]", MAX_DATAGRAM)
        self._plain_len = ffi.new("unsigned long long *")

    def _checked(self, key: bytes) -> bytes:
        if key != self._key:
            if len(key) != KEY_LEN:
                raise TransportDecryptError(f"voice secret key has {len(key)} bytes, expected {KEY_LEN}")
            self._key = key
        return key

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
        clear_len = header.clear_len
        failed = _open(
            self._plain,
            self._plain_len,
            ffi.NULL,
            data[clear_len:body_end],
            body_end - clear_len,
            data[:clear_len],
            clear_len,
            data[body_end:] + _NONCE_PAD,
            self._checked(key),
        )
        if failed:
            raise TransportDecryptError(f"packet from ssrc {header.ssrc} failed to authenticate")
        plaintext = ffi.buffer(self._plain, self._plain_len[0])[:]
        return strip_extension_and_padding(header, plaintext)
