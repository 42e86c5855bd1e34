"""Sealing the private held-out record to the maintainer's public key (libsodium sealed boxes).

On a public repository anyone can read job summaries and artifacts. The verify job may keep
the held-out evidence as an artifact only when it is sealed: an anonymous sender encrypts to
an X25519 public key the maintainer supplies (``crypto_box_seal``), and only the holder of the
private key opens it. Needs the ``heldout`` extra (PyNaCl); without it verify keeps the digest
alone. Keys travel as standard base64 of their 32 raw bytes.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from chimera.errors import ConfigError, MissingExtraError

KEY_BYTES = 32


def _decode_key(text: str, what: str) -> bytes:
    try:
        raw = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ConfigError(f"the held-out {what} key is not base64: {exc}") from exc
    if len(raw) != KEY_BYTES:
        raise ConfigError(
            f"the held-out {what} key is {len(raw)} bytes; an X25519 key is {KEY_BYTES}"
        )
    return raw


def _nacl() -> Any:
    try:
        import nacl.public
    except ImportError as exc:
        raise MissingExtraError("sealing held-out evidence", "heldout") from exc
    return nacl.public


def generate_keypair() -> tuple[str, str]:
    """A new ``(public, private)`` pair, base64. The maintainer keeps the private key."""
    public = _nacl()
    key = public.PrivateKey.generate()
    encode = base64.b64encode
    return encode(bytes(key.public_key)).decode(), encode(bytes(key)).decode()


def seal_record(record: dict[str, Any], public_key: str) -> bytes:
    """``record`` as canonical JSON, sealed to ``public_key`` (base64 X25519).

    Raises:
        ConfigError: the key is not base64 of 32 bytes.
        MissingExtraError: PyNaCl is not installed (the ``heldout`` extra).
    """
    public = _nacl()
    box = public.SealedBox(public.PublicKey(_decode_key(public_key, "public")))
    data = json.dumps(record, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return bytes(box.encrypt(data))


def open_record(sealed: bytes, private_key: str) -> dict[str, Any]:
    """Open a sealed record with the maintainer's private key (base64).

    Raises:
        ConfigError: the key is malformed, or the data was not sealed to it (or is damaged).
        MissingExtraError: PyNaCl is not installed.
    """
    public = _nacl()
    import nacl.exceptions

    box = public.SealedBox(public.PrivateKey(_decode_key(private_key, "private")))
    try:
        data = box.decrypt(sealed)
    except nacl.exceptions.CryptoError as exc:
        raise ConfigError("the sealed held-out record does not open with this key") from exc
    loaded = json.loads(data.decode("utf-8"))
    if not isinstance(loaded, dict):
        raise ConfigError("the sealed held-out record is not a JSON object")
    return loaded
