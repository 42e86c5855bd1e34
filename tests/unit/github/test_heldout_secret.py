"""The held-out secret written for the verify job: a spec file's YAML or a folder bundle, in a
fresh private folder; a malformed bundle is one line that never quotes the secret."""

from __future__ import annotations

import base64
import io
import stat
import tarfile
from pathlib import Path

import pytest

from chimera.errors import ConfigError
from chimera.github.verify.heldout import DEFAULT_FOLDER, folder_name, materialize

SECRET_WORD = "SECRET-REQ-91f2"
YAML = f"requirements:\n  - id: {SECRET_WORD}\n    contains: {{path: a.py, pattern: x}}\n"


def tar_b64(members: list[tarfile.TarInfo], data: dict[str, bytes] | None = None) -> str:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        for info in members:
            body = (data or {}).get(info.name, b"")
            info.size = len(body) if info.isfile() else 0
            tar.addfile(info, io.BytesIO(body) if info.isfile() else None)
    return base64.b64encode(raw.getvalue()).decode()


def regular(name: str) -> tarfile.TarInfo:
    return tarfile.TarInfo(name)


def test_yaml_is_written_as_one_spec_file_in_a_private_folder(tmp_path: Path) -> None:
    folder = materialize(YAML, tmp_path)
    assert folder.name == DEFAULT_FOLDER and folder.parent.parent == tmp_path
    assert (folder / "heldout.yaml").read_text() == YAML
    assert stat.S_IMODE(folder.parent.stat().st_mode) == 0o700
    # Each call gets its own folder.
    assert materialize(YAML, tmp_path) != folder


def test_a_folder_bundle_is_unpacked_with_subfolders(tmp_path: Path) -> None:
    sub = tarfile.TarInfo("./tests")
    sub.type = tarfile.DIRTYPE
    secret = tar_b64(
        [regular("./hidden.yaml"), sub, regular("./tests/check.py")],
        {"./hidden.yaml": YAML.encode(), "./tests/check.py": b"print(1)\n"},
    )
    # A secret pasted with line breaks (base64 -w76) reads the same.
    wrapped = "\n".join(secret[i : i + 76] for i in range(0, len(secret), 76))
    folder = materialize(wrapped + "\n", tmp_path, "held")
    assert folder.name == "held"
    assert (folder / "hidden.yaml").read_text() == YAML
    assert (folder / "tests" / "check.py").read_text() == "print(1)\n"


@pytest.mark.parametrize(
    ("member", "why"),
    [
        ("../escape.yaml", "leaves its folder"),
        ("/etc/escape.yaml", "leaves its folder"),
        ("link", "a link or a special file"),
    ],
)
def test_a_bundle_that_leaves_its_folder_or_links_is_refused(
    tmp_path: Path, member: str, why: str
) -> None:
    info = regular(member)
    if member == "link":
        info.type = tarfile.SYMTYPE
        info.linkname = "/etc/passwd"
    secret = tar_b64([info], {member: YAML.encode()})
    with pytest.raises(ConfigError, match=why) as caught:
        materialize(secret, tmp_path)
    assert SECRET_WORD not in str(caught.value)
    assert not (tmp_path / "escape.yaml").exists()


def test_an_empty_secret_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="empty"):
        materialize("  \n", tmp_path)


def test_the_folder_name_comes_from_the_configured_dir() -> None:
    assert folder_name("specs-heldout") == "specs-heldout"
    assert folder_name("/srv/private/hidden-checks") == "hidden-checks"
    assert folder_name(None) == DEFAULT_FOLDER
    assert folder_name("..") == DEFAULT_FOLDER
