"""A real wheel, built without a build backend or network: for tests of projects that have
dependencies (the Action's set-up step, the sandbox's ``deps_dir``)."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from collections.abc import Mapping
from pathlib import Path

__all__ = ["build_wheel"]


def build_wheel(folder: Path, name: str, version: str, files: Mapping[str, str]) -> Path:
    """Write ``<name>-<version>-py3-none-any.whl`` into ``folder`` and return its path.

    Args:
        folder: an existing folder.
        name: the distribution name (also its import name in the examples here).
        version: its version string.
        files: the wheel's files by their path inside it (``"tinydep/__init__.py"``); the
            ``.dist-info`` folder (METADATA, WHEEL and a RECORD with SHA-256 hashes) is added.

    Returns:
        The wheel, installable by pip (``pip install --no-index PATH``).
    """
    info = f"{name}-{version}.dist-info"
    content = {path: text.encode("utf-8") for path, text in files.items()}
    content[f"{info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()
    )
    content[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: chimera.testing\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n"
    )
    record = []
    for path, data in content.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in content.items():
            archive.writestr(path, data)
        archive.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return wheel
