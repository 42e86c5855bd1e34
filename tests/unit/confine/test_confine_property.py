"""Paths built from untrusted parts stay under their root, whatever the parts (the closing
attacker's pass over issue 32's row 1, property-based): ``..`` and absolute parts, backslashes,
control characters, Unicode look-alikes of ``.`` and ``/`` (which are plain characters, not
separators), long names, and links already in the root that point out of it or loop. And
files read from a folder another job filled never follow a link, nor copy a hard link's
other name out of reach (held; kept as the attacker's record)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chimera.confine import confined, copy_tree, read_regular
from chimera.errors import UnsafePathError

PIECES = st.sampled_from(
    [
        "..", ".", "", "/", "//", "\\", "a", "b", "out", "loop", "in", "\u2024", "\u2025",
        "\uff0e\uff0e", "\u2215", "\uff0f", "\u29f8", "\x00", "\n", "\x7f", "\u202e",
        "A" * 255, "é", "e\u0301", "~", "$HOME", "%2e%2e", ".git",
    ]
)  # fmt: skip
PARTS = st.lists(st.lists(PIECES, min_size=1, max_size=5).map("".join), min_size=1, max_size=4)
SETTINGS = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    top = tmp_path / "root"
    (top / "in").mkdir(parents=True)
    (top / "out").symlink_to(tmp_path)  # a link inside the root pointing out of it
    (top / "loop").symlink_to("loop")  # a link to itself
    (top / "in" / "up").symlink_to("../..")
    return top


@SETTINGS
@given(parts=PARTS)
def test_confined_never_leaves_its_root(root: Path, parts: list[str]) -> None:
    base = root.resolve()
    try:
        found = confined(root, *parts, what="run id")
    except (UnsafePathError, OSError, RuntimeError, ValueError):
        return
    assert found == base or base in found.parents, (parts, found)


def test_read_regular_never_follows_a_link_anywhere_on_the_way(tmp_path: Path) -> None:
    secret = tmp_path / "secret.env"
    secret.write_text("TOKEN=hunter2\n")
    art = tmp_path / "art"
    (art / "run").mkdir(parents=True)
    (art / "summary.md").symlink_to(secret)
    (art / "dir").symlink_to(tmp_path)
    (art / "run" / "state.json").write_text("{}")
    for rel in ("summary.md", "dir/secret.env", "run/../summary.md"):
        with pytest.raises(UnsafePathError):
            read_regular(art, rel)
    assert read_regular(art, "run/state.json") == b"{}"


def test_copy_tree_copies_a_hard_link_as_its_content_only(tmp_path: Path) -> None:
    """A hard link in a downloaded folder is one more regular file: the copy holds its bytes,
    never a link to the original (which the copy's later writes could change)."""
    outside = tmp_path / "outside.txt"
    outside.write_text("original\n")
    src = tmp_path / "src"
    src.mkdir()
    os.link(outside, src / "linked.txt")
    dest = tmp_path / "dest"
    copy_tree(src, dest)
    (dest / "linked.txt").write_text("changed\n")
    assert outside.read_text() == "original\n"
    assert (dest / "linked.txt").stat().st_nlink == 1
