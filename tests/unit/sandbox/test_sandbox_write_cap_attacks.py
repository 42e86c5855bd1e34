"""The total write cap against an attacker (the closing pass over issue 32's row 8): the cap
counts what the merge writes into the workspace, not only the pages the overlay's tmpfs held.

Before the fix a sparse file (``truncate -s``: no pages) or many hard links to one file (one
inode's pages) passed the tmpfs's measure and were merged as full copies — 201 MiB landed
under an 8 MiB cap — and a tree nested past Python's recursion limit crashed the merge
half-way while the command's result said its writes were reverted. Each attack is run in the
real bubblewrap sandbox; what held before is kept here too (many small files, fallocate)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chimera.sandbox import Sandbox, SandboxLimits, bwrap_available, probe_bwrap
from chimera.sandbox.capped import MAX_DEPTH, measure
from chimera.sandbox.limits import MIB

bwrap = pytest.mark.skipif(
    not bwrap_available(), reason=f"bubblewrap unusable: {probe_bwrap().reason}"
)


def _capped(ws: Path, cap_mib: int = 8) -> Sandbox:
    limits = SandboxLimits(write_cap_bytes=cap_mib * MIB, file_bytes=4 * MIB)
    sandbox = Sandbox(ws, mode="bwrap", limits=limits)
    assert not sandbox.write_cap_unavailable, sandbox.write_cap_unavailable
    return sandbox


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "kept.txt").write_text("before\n", encoding="utf-8")
    return ws


def _disk(ws: Path) -> int:
    return sum(p.lstat().st_size for p in ws.rglob("*") if p.is_file() and not p.is_symlink())


def _cap_line(output: str) -> str:
    (line,) = [x for x in output.splitlines() if x.startswith("chimera sandbox:")]
    return line


@pytest.mark.bwrap
@bwrap
@pytest.mark.parametrize(
    "attack",
    [
        # 40 sparse files of 4 MiB (the per-file limit): no pages on the tmpfs, 160 MiB merged.
        "for i in $(seq 1 40); do truncate -s 4M sparse$i; done",
        # One 1 MiB file and 40 hard links to it: one inode's pages, 41 MiB merged.
        "head -c 1048576 /dev/urandom > big; for i in $(seq 1 40); do ln big link$i; done",
        # Written files grown by a hole: 6 MiB of pages, 48 MiB merged.
        "for i in $(seq 1 12); do head -c 524288 /dev/zero > h$i; truncate -s 4M h$i; done",
    ],
    ids=["sparse-files", "hard-links", "truncated-up"],
)
def test_bytes_the_merge_would_write_count_against_the_cap(tmp_path: Path, attack: str) -> None:
    ws = _workspace(tmp_path)
    res = _capped(ws).run(f"{attack}; exit 0", cwd=ws, timeout=120)
    assert not res.ok
    line = _cap_line(res.output)
    assert "past its write cap of 8 MiB" in line and "reverted" in line, line
    assert sorted(p.name for p in ws.iterdir()) == ["kept.txt"]
    assert _disk(ws) < MIB


@pytest.mark.bwrap
@bwrap
def test_a_tree_nested_past_the_merge_depth_is_refused_whole(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    depth = MAX_DEPTH + 20
    res = _capped(ws).run(
        f"echo one > first.txt; mkdir -p d; cd d; for i in $(seq 1 {depth}); do mkdir a; "
        "cd a || exit 3; done; echo deep > f.txt",
        cwd=ws,
        timeout=120,
    )
    assert not res.ok
    assert "Traceback" not in res.output and "RecursionError" not in res.output
    line = _cap_line(res.output)
    assert f"more than {MAX_DEPTH}" in line and "nothing was merged" in line, line
    # Nothing of it reached the workspace: not the deep tree, not the file written first.
    assert sorted(p.name for p in ws.iterdir()) == ["kept.txt"]


@pytest.mark.bwrap
@bwrap
def test_nesting_within_the_depth_is_merged(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    res = _capped(ws).run(
        "mkdir -p d; cd d; for i in $(seq 1 60); do mkdir a; cd a || exit 3; done; "
        "echo deep > f.txt",
        cwd=ws,
        timeout=120,
    )
    assert res.ok, res.output
    assert (ws / "d" / Path(*["a"] * 60) / "f.txt").read_text(encoding="utf-8") == "deep\n"


@pytest.mark.bwrap
@bwrap
@pytest.mark.parametrize(
    "attack",
    [
        # Held before the fix, and still: many small files (a page each), fallocate.
        "mkdir many; for i in $(seq 1 2500); do echo x > many/f$i || break; done",
        "for i in 1 2 3 4; do fallocate -l 3M f$i || echo NOSPACE; done",
    ],
    ids=["many-small-files", "fallocate"],
)
def test_pages_still_count(tmp_path: Path, attack: str) -> None:
    ws = _workspace(tmp_path)
    res = _capped(ws).run(f"{attack}; exit 0", cwd=ws, timeout=120)
    assert not res.ok
    assert "past its write cap" in _cap_line(res.output)
    assert sorted(p.name for p in ws.iterdir()) == ["kept.txt"]


def test_measure_counts_every_name_in_full_and_the_depth(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    with (tmp_path / "sparse").open("wb") as handle:
        handle.truncate(5 * MIB)
    (tmp_path / "a" / "b" / "one").write_bytes(b"x" * 1000)
    for i in range(3):
        os.link(tmp_path / "a" / "b" / "one", tmp_path / f"link{i}")
    (tmp_path / "ln").symlink_to("a/b/one")
    (tmp_path / "a" / "b" / "c").mkdir()
    total, depth = measure(str(tmp_path))
    assert total == 5 * MIB + 4 * 1000 + len("a/b/one")
    assert depth == 3


@pytest.mark.bwrap
@bwrap
def test_what_the_command_can_learn_of_the_cap_it_cannot_reach(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Held, kept as the attacker's record: the overlay's upper folder and the launch folder
    are named in ``/proc/self/mountinfo`` but lie in the host's temporary folder, which the
    sandbox never mounts; the parent's secrets are in no ``/proc`` entry; a held-out folder
    is in no mount, no argument and no listing."""
    monkeypatch.setenv("CHIMERA_CANARY_SECRET", "canary-7f3a")
    ws = _workspace(tmp_path)
    (ws / "specs-heldout-q9").mkdir()
    (ws / "specs-heldout-q9" / "h.yaml").write_text("requirements: []\n")
    sandbox = Sandbox(
        ws, mode="bwrap", limits=SandboxLimits(write_cap_bytes=8 * MIB),
        hidden=[ws / "specs-heldout-q9"],
    )  # fmt: skip
    res = sandbox.run(
        "upper=$(sed -n 's/.*upperdir=\\([^,]*\\).*/\\1/p' /proc/self/mountinfo); "
        'echo "upper:$upper"; ls -la "$upper" "${upper%/mnt/upper}" 2>&1; '
        "cat /proc/1/environ /proc/self/environ /proc/1/cmdline /proc/self/mountinfo "
        "| tr '\\0' '\\n'; ls -la; ls /proc/*/fd 2>&1 | head -50; echo end",
        cwd=ws,
        timeout=60,
    )
    assert "end" in res.output
    upper = next(line for line in res.output.splitlines() if line.startswith("upper:"))[6:]
    assert upper.startswith("/") and "No such file or directory" in res.output
    assert "canary-7f3a" not in res.output and "CHIMERA_CANARY_SECRET" not in res.output
    assert "specs-heldout-q9" not in res.output
    assert (ws / "specs-heldout-q9" / "h.yaml").is_file()  # hidden, not gone
