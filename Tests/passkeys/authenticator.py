"""A WebAuthn authenticator and client in software, written from the spec (WebAuthn Level 3 §5.8.1, §6.1, §6.5), for
the compatibility scripts that drive a vendor SDK against Verity: it answers standard JSON creation and request options
with the standard JSON serialisation of a `PublicKeyCredential` (attestation `none`, P-256 / ES256), and keeps its
credentials and their counters in memory. Its switches make the answers a real authenticator or a hostile client can
send: no UV, BE/BS, another origin, a flipped signature bit, a counter that stays or goes back.

    from authenticator import Authenticator
    device = Authenticator()
    credential = device.create(creation_options, "https://example.com")       # dict, ready for json.dumps
    assertion = device.get(request_options, "https://example.com")

Both take the options as a JSON string or an already decoded dict, in the standard form (`publicKey` at the top, as
Twilio wraps it, is accepted too). Needs `cbor2` and `cryptography`, which PyPI `webauthn` brings.
"""

import base64
import hashlib
import json
import os
import struct

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

FLAG_UP = 0x01
FLAG_UV = 0x04
FLAG_BE = 0x08
FLAG_BS = 0x10
FLAG_AT = 0x40


def b64url(data: bytes) -> str:
    """Base64url without padding, as WebAuthn's JSON forms carry bytes."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def from_b64url(text: str) -> bytes:
    """The bytes of a base64url string, padded or not."""
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _options(options) -> dict:
    """The options as a dict, unwrapped from a `publicKey` member when a server sends them that way."""
    if isinstance(options, (str, bytes)):
        options = json.loads(options)
    return options.get("publicKey", options)


class UnknownCredential(Exception):
    """An assertion was asked for and the authenticator holds none of the credentials the options allow."""


class Credential:
    """One discoverable credential: its id, key, relying party, user handle and signature counter."""

    def __init__(self, rp_id: str, user_handle: bytes):
        self.id = os.urandom(16)
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.rp_id = rp_id
        self.user_handle = user_handle
        self.counter = 0


class Authenticator:
    """A platform authenticator with its client. Every switch is an attribute a test may change between ceremonies.

    - `user_verified`, `user_present`, `backup_eligible`, `backed_up`: the UV, UP, BE and BS flags it reports.
    - `counting`: whether the signature counter rises by one per signature (off: it stays as it is, zero for a new
      credential, as synced passkeys send).
    - `flip_signature_bit`: the next signatures have one bit flipped, so they no longer verify.
    - `rp_id`: sign for this relying-party id instead of the one the options name.
    """

    def __init__(self):
        self.user_verified = True
        self.user_present = True
        self.backup_eligible = False
        self.backed_up = False
        self.counting = True
        self.flip_signature_bit = False
        self.rp_id = None
        self.credentials = {}

    def create(self, options, origin: str) -> dict:
        """Makes a credential for the creation options (§6.3.2 from the client's side, §5.1.3) and answers the
        registration `PublicKeyCredential` JSON, attestation `none`."""
        options = _options(options)
        rp_id = self.rp_id or options["rp"]["id"]
        excluded = {from_b64url(item["id"]) for item in options.get("excludeCredentials", [])}
        if any(credential_id in self.credentials for credential_id in excluded):
            raise ValueError("the authenticator already holds an excluded credential (InvalidStateError)")
        credential = Credential(rp_id, from_b64url(options["user"]["id"]))
        self.credentials[credential.id] = credential
        numbers = credential.key.public_key().public_numbers()
        cose_key = {1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")}
        attested = bytes(16) + struct.pack(">H", len(credential.id)) + credential.id + cbor2.dumps(cose_key)
        authenticator_data = self._authenticator_data(credential, attested=True) + attested
        client_data = self._client_data("webauthn.create", options["challenge"], origin)
        attestation_object = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": authenticator_data})
        return self._credential_json(
            credential,
            {
                "clientDataJSON": b64url(client_data),
                "attestationObject": b64url(attestation_object),
                "transports": ["internal"],
            },
        )

    def get(self, options, origin: str, credential_id: bytes = None) -> dict:
        """Signs an assertion for the request options with a credential they allow (or `credential_id`, allowed or
        not, for hostile answers) (§6.3.3) and answers the authentication `PublicKeyCredential` JSON."""
        options = _options(options)
        if credential_id is None:
            allowed = [from_b64url(item["id"]) for item in options.get("allowCredentials", [])]
            rp_id = self.rp_id or options.get("rpId")
            held = [cid for cid in (allowed or self.credentials) if cid in self.credentials]
            held = [cid for cid in held if allowed or rp_id is None or self.credentials[cid].rp_id == rp_id]
            if not held:
                raise UnknownCredential()
            credential_id = held[0]
        credential = self.credentials.get(credential_id)
        if credential is None:
            raise UnknownCredential()
        authenticator_data = self._authenticator_data(credential, attested=False)
        client_data = self._client_data("webauthn.get", options["challenge"], origin)
        signature = credential.key.sign(
            authenticator_data + hashlib.sha256(client_data).digest(), ec.ECDSA(hashes.SHA256())
        )
        if self.flip_signature_bit:
            signature = signature[:-1] + bytes([signature[-1] ^ 0x01])
        return self._credential_json(
            credential,
            {
                "clientDataJSON": b64url(client_data),
                "authenticatorData": b64url(authenticator_data),
                "signature": b64url(signature),
                "userHandle": b64url(credential.user_handle),
            },
        )

    def set_counter(self, credential_id: bytes, counter: int) -> None:
        """Sets a credential's counter, so the next signature carries `counter` (+1 when counting): a cloned
        authenticator's regression."""
        self.credentials[credential_id].counter = counter

    @staticmethod
    def _credential_json(credential: Credential, response: dict) -> dict:
        """The `PublicKeyCredential` JSON (`toJSON()`, §5.1) around a ceremony's `response`."""
        return {
            "id": b64url(credential.id),
            "rawId": b64url(credential.id),
            "type": "public-key",
            "authenticatorAttachment": "platform",
            "clientExtensionResults": {},
            "response": response,
        }

    def _authenticator_data(self, credential: Credential, attested: bool) -> bytes:
        """rpIdHash, flags and the counter (§6.1); AT when `attested`."""
        flags = FLAG_AT if attested else 0
        flags |= FLAG_UP if self.user_present else 0
        flags |= FLAG_UV if self.user_verified else 0
        flags |= FLAG_BE if self.backup_eligible else 0
        flags |= FLAG_BS if self.backed_up else 0
        if self.counting:
            credential.counter += 1
        rp_id_hash = hashlib.sha256(credential.rp_id.encode("utf-8")).digest()
        return rp_id_hash + bytes([flags]) + struct.pack(">I", credential.counter)

    @staticmethod
    def _client_data(ceremony: str, challenge: str, origin: str) -> bytes:
        """The client data JSON a browser sends (§5.8.1.1's limited verification form, members in the spec's order)."""
        return json.dumps(
            {"type": ceremony, "challenge": b64url(from_b64url(challenge)), "origin": origin, "crossOrigin": False},
            separators=(",", ":"),
        ).encode("utf-8")
