"""The voice gateway's side of DAVE's MLS group: the external sender.

Discord's voice gateway is the MLS *external sender* of every call's group (DAVE protocol,
daveprotocol.com, "dave_mls_external_sender_package (25)" and "dave_mls_proposals (27)"): it
announces its signature key and identity, then proposes adding and removing members, signing
each proposal itself; members commit the proposals and the gateway relays the winning commit
(op 29) and the welcome (op 30). This module builds exactly those bytes, from RFC 9420 (MLS):

* ``ExternalSender`` (RFC 9420 §12.1.8.1): ``SignaturePublicKey signature_key<V>`` + ``Credential``
  (``uint16 credential_type = basic(1)``, ``opaque identity<V>``);
* a proposal is an ``MLSMessage`` (§6) of wire format ``mls_public_message(1)`` whose
  ``FramedContent`` (§6) has ``sender_type = external(2)``, ``sender_index`` = the sender's
  index in the group's ``external_senders`` extension (0), ``content_type = proposal(2)``, and
  an ``Add`` (§12.1.1, ``proposal_type 1`` + the joiner's ``KeyPackage``) or ``Remove``
  (§12.1.3, ``proposal_type 3`` + ``uint32 removed`` leaf index);
* its signature is ``SignWithLabel(.., "FramedContentTBS", FramedContentTBS)`` (§5.1.2, §6.1):
  ``FramedContentTBS`` = version + wire format + ``FramedContent``, with no group context for an
  external sender; ``SignContent`` = ``opaque label<V> = "MLS 1.0 " + label`` + ``opaque
  content<V>``; DAVE v1's ciphersuite is ``MLS_128_DHKEMP256_AES128GCM_SHA256_P256`` (2), so
  ECDSA P-256 / SHA-256 with a DER signature, and the public key as an uncompressed SEC1 point;
  a public message from an external sender carries no membership tag (§6.2);
* ``<V>`` vectors carry a QUIC-style variable-length size (§2.1.2);
* the op 27 payload is ``uint8 operation_type`` then, for append, the proposal messages as one
  ``<V>`` vector (daveprotocol.com; davey reads it as ``VLBytes`` of concatenated messages);
* the group id is the channel id as 8 big-endian bytes (libdave; davey ``common_init``).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

MLS10 = 1
WIRE_PUBLIC_MESSAGE = 1
SENDER_EXTERNAL = 2
CONTENT_PROPOSAL = 2
PROPOSAL_ADD = 1
PROPOSAL_REMOVE = 3
CREDENTIAL_BASIC = 1
APPEND, REVOKE = 0, 1


def varint(n: int) -> bytes:
    if n < 1 << 6:
        return bytes([n])
    if n < 1 << 14:
        return struct.pack(">H", n | 0x4000)
    if n < 1 << 30:
        return struct.pack(">I", n | 0x8000_0000)
    raise ValueError(f"MLS vector of {n} bytes is too long")


def vec(data: bytes) -> bytes:
    return varint(len(data)) + data


def group_id(channel_id: int) -> bytes:
    return struct.pack(">Q", channel_id)


@dataclass
class ExternalSender:
    """The gateway's P-256 signing key and basic credential."""

    identity: bytes = b"discord-voice-gateway"
    key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))

    def public_key(self) -> bytes:
        return self.key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )

    def package(self) -> bytes:
        """The ``ExternalSender`` struct sent in op 25."""
        return vec(self.public_key()) + struct.pack(">H", CREDENTIAL_BASIC) + vec(self.identity)

    def _sign_with_label(self, label: bytes, content: bytes) -> bytes:
        sign_content = vec(b"MLS 1.0 " + label) + vec(content)
        return self.key.sign(sign_content, ec.ECDSA(hashes.SHA256()))

    def proposal(self, channel_id: int, epoch: int, proposal: bytes) -> bytes:
        """One signed ``MLSMessage`` carrying ``proposal`` from this external sender."""
        content = (
            vec(group_id(channel_id))
            + struct.pack(">Q", epoch)
            + struct.pack(">BI", SENDER_EXTERNAL, 0)
            + vec(b"")  # authenticated_data
            + bytes([CONTENT_PROPOSAL])
            + proposal
        )
        header = struct.pack(">HH", MLS10, WIRE_PUBLIC_MESSAGE)
        signature = self._sign_with_label(b"FramedContentTBS", header + content)
        return header + content + vec(signature)

    def add(self, channel_id: int, epoch: int, key_package: bytes) -> bytes:
        return self.proposal(channel_id, epoch, struct.pack(">H", PROPOSAL_ADD) + key_package)

    def remove(self, channel_id: int, epoch: int, leaf_index: int) -> bytes:
        return self.proposal(channel_id, epoch, struct.pack(">HI", PROPOSAL_REMOVE, leaf_index))


def proposals_payload(messages: list[bytes]) -> bytes:
    """The body of op 27 (after the opcode) appending ``messages``."""
    return bytes([APPEND]) + vec(b"".join(messages))


def form_group(sender: ExternalSender, channel_id: int, sessions: list[Any]) -> None:
    """Bring ``davey`` sessions into one group as the gateway does for a new call: the first
    commits the external sender's Add proposals for the others, who are welcomed."""
    import davey

    package = sender.package()
    for session in sessions:
        session.set_external_sender(package)
    first, *rest = sessions
    if not rest:
        return
    epoch = int(first.epoch or 0)
    adds = [sender.add(channel_id, epoch, s.get_serialized_key_package()) for s in rest]
    result = first.process_proposals(davey.ProposalsOperationType.append, proposals_payload(adds)[1:])
    first.process_commit(result.commit)
    for session in rest:
        session.process_welcome(result.welcome)
