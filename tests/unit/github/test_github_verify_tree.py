"""verify judges the tree of the base commit as a checkout holds it, whatever the commit's
``.gitattributes`` tell ``git archive`` (the closing attacker's pass over issue 32's
"verdicts only from the side that re-derives them"): with ``/specs export-ignore`` (or
``/tests``), an archive of the base left the Spec out, so no requirement was green on the
base and a patch that broke one was ``passed``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from chimera.errors import ChimeraError
from chimera.github.trust.artifacts import make_patch
from chimera.github.trust.basecommit import export_tree, read_base_files
from chimera.github.verify.reverify import judge_patch, prepare_trees
from chimera.runner import LocalRunner

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@e"]
SPEC = (
    "requirements:\n  - id: keeps-add\n    defines: {path: calc.py, symbol: add, kind: function}\n"
)
BLOCK = "requirements:\n  - id: total-defined\n    defines: {path: calc.py, symbol: total}\n"


def _repo(tmp_path: Path, attributes: str) -> tuple[Path, str]:
    root = tmp_path / "repo"
    (root / "specs").mkdir(parents=True)
    (root / "specs" / "app.yaml").write_text(SPEC)
    (root / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_calc.py").write_text("from calc import add\n")
    (root / "stamp.txt").write_text("$Format:%H$\n")
    (root / ".gitattributes").write_text(attributes)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-qm", "base"], cwd=root, check=True)
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()
    return root, sha


ATTRIBUTES = "/specs export-ignore\n/tests export-ignore\nstamp.txt export-subst\n"


def test_export_ignore_leaves_nothing_out_of_the_judged_tree(tmp_path: Path) -> None:
    root, sha = _repo(tmp_path, ATTRIBUTES)
    tree = export_tree(root, sha, tmp_path / "tree")
    assert (tree / "specs" / "app.yaml").read_text() == SPEC
    assert (tree / "tests" / "test_calc.py").is_file()
    assert (tree / "stamp.txt").read_text() == "$Format:%H$\n"  # as committed
    files = read_base_files(root, sha, "specs/", tmp_path / "base-files")
    assert files.spec_dir.is_dir()


def test_a_patch_breaking_a_green_requirement_is_failed_whatever_the_attributes(
    tmp_path: Path,
) -> None:
    root, base = _repo(tmp_path, ATTRIBUTES)
    # The agent's patch: total() added, add() gone.
    (root / "calc.py").write_text("def total(xs):\n    return sum(xs)\n")
    patch = make_patch(root, base)
    subprocess.run(["git", "checkout", "-q", "--force", base], cwd=root, check=True)
    work = tmp_path / "verify"
    g = judge_patch(
        read_base_files(root, base, "specs/", work / "base-files"),
        (BLOCK,),
        prepare_trees(root, base, patch, work),
        spec_path="specs/",
        runner_for=lambda _tree: LocalRunner(),
        patch=patch,
    )
    assert g.before.get("keeps-add") == "passed"
    assert g.verdict == "failed" and any("keeps-add" in r for r in g.reasons), g.reasons


@pytest.mark.parametrize("target", ["/etc/passwd", "../../outside"])
def test_a_link_out_of_the_tree_is_still_refused(tmp_path: Path, target: str) -> None:
    root, _ = _repo(tmp_path, "")
    (root / "out").symlink_to(target)
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-qm", "link"], cwd=root, check=True)
    with pytest.raises(ChimeraError, match="outside"):
        export_tree(root, "HEAD", tmp_path / "tree")
