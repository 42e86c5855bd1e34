"""The verify job's held-out requirements: one secret in, a public line and a sealed record out.

The maintainer keeps the held-out specs in one repository (or environment) secret, mapped by
the workflow into the verify step's ``heldout-specs`` input only (``CHIMERA_HELDOUT_SPECS``).
Its value is either

* **a spec file's YAML** (``requirements:`` ...), written as ``heldout.yaml``; or
* **a folder**, as base64 of a gzipped tar (``tar -czf - -C specs-heldout . | base64 -w0``),
  for held-out checks that need files of their own (a hidden test module a ``command`` runs).

:func:`materialize` writes it to a fresh mode-0700 folder under ``$RUNNER_TEMP``, outside
both trees verify checks: the sandbox binds only the tree a command runs on, so the folder is
seen only by the held-out ``command`` checks, each in a disposable copy
(:func:`chimera.core.heldout.evaluate_heldout`). What leaves the job is
:meth:`~chimera.core.heldout.HeldOutVerdict.public` (the verdict, "a held-out check failed",
a salted digest) and, when the maintainer supplies an X25519 public key, the private record
sealed to it (:func:`seal`): the only place a held-out id or its evidence is ever written.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import io
import re
import tarfile
import tempfile
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from chimera.errors import ConfigError

if TYPE_CHECKING:
    from chimera.core.heldout import HeldOutVerdict

__all__ = [
    "DEFAULT_FOLDER",
    "MAX_BUNDLE_BYTES",
    "SEALED_DIR",
    "SEALED_FILE",
    "folder_name",
    "materialize",
    "seal",
]

DEFAULT_FOLDER = "specs-heldout"
"""The held-out folder's name (where held-out ``command`` checks find it in their copy),
unless the base commit's ``[tool.chimera.heldout] dir`` names another."""
SEALED_DIR = "chimera-heldout-sealed"
"""Under ``$RUNNER_TEMP``: the folder ``action.yml`` uploads as
``<artifact-name>-heldout-attempt-<n>``."""
SEALED_FILE = "heldout.sealed"
MAX_BUNDLE_BYTES = 8_000_000
"""The unpacked size limit of a folder bundle, in bytes (a secret holds at most 48 KB)."""
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def folder_name(configured: str | None) -> str:
    """The held-out folder's name: the last part of ``[tool.chimera.heldout] dir`` when it
    is a plain name, else :data:`DEFAULT_FOLDER`."""
    name = PurePosixPath(configured or "").name
    return name if _NAME.fullmatch(name) else DEFAULT_FOLDER


def _tar_bytes(text: str) -> bytes | None:
    """The gzipped tar in ``text`` (base64), or ``None`` when ``text`` is not one."""
    packed = "".join(text.split())
    if not packed or len(packed) % 4:
        return None
    try:
        raw = base64.b64decode(packed, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw if raw[:2] == b"\x1f\x8b" else None


def _extract(raw: bytes, dest: Path) -> None:
    # Only regular files and folders, each inside dest; never a link, device or absolute path.
    try:
        data = gzip.decompress(raw)
    except (OSError, EOFError) as exc:
        raise ConfigError("CHIMERA_HELDOUT_SPECS: the folder bundle is not valid gzip") from exc
    if len(data) > MAX_BUNDLE_BYTES * 2:
        raise ConfigError("CHIMERA_HELDOUT_SPECS: the folder bundle is too large")
    total = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            for member in tar.getmembers():
                parts = PurePosixPath(member.name).parts
                rel = [p for p in parts if p not in ("", ".")]
                if member.name.startswith("/") or ".." in rel:
                    raise ConfigError("CHIMERA_HELDOUT_SPECS: a bundle path leaves its folder")
                if not rel:
                    continue
                target = dest.joinpath(*rel)
                if member.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                if not member.isfile():
                    raise ConfigError(
                        "CHIMERA_HELDOUT_SPECS: the bundle holds a link or a special file"
                    )
                total += member.size
                if total > MAX_BUNDLE_BYTES:
                    raise ConfigError("CHIMERA_HELDOUT_SPECS: the folder bundle is too large")
                source = tar.extractfile(member)
                assert source is not None  # a regular file always has content
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(source.read())
    except tarfile.TarError as exc:
        raise ConfigError("CHIMERA_HELDOUT_SPECS: the folder bundle is not a tar") from exc


def materialize(bundle: str, parent: Path | None, name: str = DEFAULT_FOLDER) -> Path:
    """Write the secret's held-out specs to ``<parent>/<unique>/<name>``; returns that folder.

    Args:
        bundle: the secret's value (a spec file's YAML, or base64 of a gzipped tar).
        parent: ``$RUNNER_TEMP`` (``None``: the system's temporary folder).
        name: the folder's name (:func:`folder_name`).

    Raises:
        ConfigError: the value is empty or a malformed bundle. The message never quotes the
            value: job logs are public on a public repository.
    """
    if not bundle.strip():
        raise ConfigError("CHIMERA_HELDOUT_SPECS is empty")
    # mkdtemp makes it mode 0700: readable by this job's user alone.
    unique = Path(tempfile.mkdtemp(prefix="chimera-heldout-", dir=parent))
    folder = unique / name
    folder.mkdir()
    raw = _tar_bytes(bundle)
    if raw is not None:
        _extract(raw, folder)
    else:
        (folder / "heldout.yaml").write_text(bundle, encoding="utf-8")
    return folder


def seal(verdict: HeldOutVerdict, public_key: str, runner_temp: Path | None) -> Path:
    """The private record of ``verdict`` sealed to ``public_key`` (base64 X25519), written to
    ``<runner_temp>/chimera-heldout-sealed/heldout.sealed``; returns the file.

    Raises:
        ConfigError: the key is malformed.
        MissingExtraError: PyNaCl (the ``heldout`` extra) is not installed.
    """
    from chimera.core.heldout.seal import seal_record

    data = seal_record(verdict.private(), public_key)
    out = (runner_temp or Path(tempfile.gettempdir())) / SEALED_DIR
    out.mkdir(parents=True, exist_ok=True)
    path = out / SEALED_FILE
    path.write_bytes(data)
    return path
