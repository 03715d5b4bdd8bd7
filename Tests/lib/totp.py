"""RFC 6238 codes as an authenticator app computes them, for the scripts that answer TOTP factors."""

import base64
import hashlib
import hmac
import struct
import time


def totp(secret, step=30, digits=6, at=None):
    """The code of base32 `secret` at `at` (now by default), with SHA-1."""
    key = base64.b32decode(secret + "=" * (-len(secret) % 8), casefold=True)
    counter = int((time.time() if at is None else at) // step)
    digest = hmac.new(key, struct.pack(">Q", counter), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    value = struct.unpack(">I", digest[offset : offset + 4])[0] & 0x7FFFFFFF
    return str(value % 10**digits).zfill(digits)
