"""Held-out requirements in the Action, end to end on the GitHub fake: the held-out specs reach
the verify job alone (one step-scoped secret), a change that special-cases the visible goal is
held, and nothing that names or describes the held-out check leaks into the artifacts, the
logs, the job summary, the outputs, the comment or a pull request. The maintainer's record
leaves only sealed to their key. Needs bubblewrap (verify's strict sandbox); never skipped.
"""

from __future__ import annotations

import base64
import io
import json
import sys
import tarfile
from pathlib import Path
from typing import TYPE_CHECKING

from chimera.core.heldout.seal import generate_keypair, open_record
from chimera.github.verify.heldout import SEALED_DIR, SEALED_FILE

if TYPE_CHECKING:
    import pytest
    from conftest import World

PY = sys.executable
HELD_ID = "total-general-7c1e"
CANARY = "HELDOUT-CANARY-51ab"
CALC = "def add(a, b):\n    return a + b\n"
CHEAT = CALC + "\n\ndef total(xs):\n    return 6\n"  # right for the issue's example only
REAL = CALC + "\n\ndef total(xs):\n    return sum(xs)\n"
CHECK = f"""\
import sys
sys.path.insert(0, ".")
import calc
print("{CANARY}: total([2, 2]) =", calc.total([2, 2]))
assert calc.total([2, 2]) == 4
"""


def heldout_yaml(run: str) -> str:
    return f"""\
# {CANARY}
requirements:
  - id: {HELD_ID}
    title: {CANARY} total adds any list
    depends_on: [keeps-add]
    command: {{run: '{run}'}}
"""


INLINE = heldout_yaml(
    f'{PY} -c "import calc; print(\\"{CANARY}\\"); assert calc.total([2, 2]) == 4"'
)


def bundle(files: dict[str, str]) -> str:
    """A folder as the secret holds it: base64 of a gzipped tar."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return base64.b64encode(raw.getvalue()).decode()


def model(world: World, content: str) -> None:
    world.script_calc(content)


def everything_written(world: World, skip: Path | None = None) -> bytes:
    """Every byte the jobs left under the world's folder (artifacts, job outputs, summaries,
    publish's audit log, checkouts), every comment and pull request on the fake."""
    out = io.BytesIO()
    for path in sorted(world.tmp.rglob("*")):
        if path.is_file() and not path.is_symlink() and path != skip:
            out.write(path.read_bytes())
    repo = world.repo
    for number in repo.issues:
        for body in world.comments(number):
            out.write(body.encode())
    out.write(json.dumps(repo.pulls(), default=str).encode())
    out.write(json.dumps(world.fake.calls, default=str).encode())
    return out.getvalue()


def test_a_special_cased_change_is_held_and_nothing_leaks(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    model(world, CHEAT)
    world.add_total_issue(labels=("chimera",))
    public, private = generate_keypair()
    secret = {"CHIMERA_HELDOUT_SPECS": INLINE, "CHIMERA_HELDOUT_PUBLIC_KEY": public}

    jobs = world.pipeline("issues", world.labeled(1), run=31, verify_env=secret)

    assert jobs["agent"]["status"] == "done"  # the visible goal was met
    assert jobs["verify"]["verdict"] == "held"
    assert jobs["publish"]["status"] == "held"
    assert world.repo.pulls() == [] and world.repo.head_sha("chimera/issue-1") is None
    (comment,) = world.comments(1)
    assert "a held-out check failed" in comment and "no retry" in comment
    assert set(world.repo.issues[1]["labels"]) == {"chimera:failed"}
    # The held-out folder was removed; only the sealed record stays.
    runner = world.tmp / "runner-31"
    assert [p.name for p in runner.glob("chimera-heldout-*")] == [SEALED_DIR]
    sealed = runner / SEALED_DIR / SEALED_FILE
    logs = capsys.readouterr()
    leaked = everything_written(world, skip=sealed) + (logs.out + logs.err).encode()
    for needle in (HELD_ID, CANARY, "total([2, 2])"):
        assert needle.encode() not in leaked, needle
    summary = (world.tmp / "summary-31.md").read_text()
    assert "Held-out requirements: failed" in summary and "sha256:" in summary
    # The maintainer opens the sealed record: which requirement, and its evidence.
    record = open_record(sealed.read_bytes(), private)
    assert [r["id"] for r in record["results"]] == [HELD_ID]
    assert CANARY in record["results"][0]["evidence"]
    assert record["digest"] in summary


def test_a_folder_bundle_with_a_hidden_test_passes_a_real_change(world: World) -> None:
    model(world, REAL)
    world.add_total_issue(labels=("chimera",))
    folder = {
        "hidden.yaml": heldout_yaml(f"{PY} specs-heldout/check_total.py"),
        "check_total.py": CHECK,
    }
    secret = {"CHIMERA_HELDOUT_SPECS": bundle(folder)}

    jobs = world.pipeline("issues", world.labeled(1), run=32, verify_env=secret)

    assert jobs["verify"]["verdict"] == "passed"
    assert jobs["publish"]["status"] == "pr_opened"
    (pull,) = world.repo.pulls()
    assert HELD_ID not in pull["body"] and CANARY not in pull["body"]
    summary = (world.tmp / "summary-32.md").read_text()
    assert "Held-out requirements: passed" in summary
    assert "not kept (no heldout-public-key)" in summary
    assert not (world.tmp / "runner-32" / SEALED_DIR).exists()


def test_the_same_cheat_without_the_secret_is_published(world: World) -> None:
    # The control: without held-out requirements verify has only the visible goal.
    model(world, CHEAT)
    world.add_total_issue(labels=("chimera",))
    jobs = world.pipeline("issues", world.labeled(1), run=33)
    assert jobs["verify"]["verdict"] == "passed"
    assert jobs["publish"]["status"] == "pr_opened"
