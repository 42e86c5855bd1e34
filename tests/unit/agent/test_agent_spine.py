"""The Spine: ownership-scoped context (evidence, checked file, owner globs) within a budget."""

from __future__ import annotations

import subprocess
from pathlib import Path

from chimera.core.spine import Spine, list_files
from chimera.spec.drift import check_drift
from chimera.spec.loader import load_spec

SPEC = """\
requirements:
  - id: total-defined
    title: billing has total()
    owner: ['src/billing/**']
    defines: {path: src/billing/core.py, symbol: total, kind: function}
  - id: readme-usage
    contains: {path: README.md, pattern: 'Usage', regex: false}
"""


def _repo(tmp_path: Path) -> Path:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "reqs.yaml").write_text(SPEC)
    billing = tmp_path / "src" / "billing"
    billing.mkdir(parents=True)
    (billing / "core.py").write_text("def subtotal(xs):\n    return sum(xs)\n")
    (billing / "tax.py").write_text("\n".join(f"RATE_{i} = {i}" for i in range(400)) + "\n")
    (billing / "huge.py").write_text("x = 1\n" * 50)
    (tmp_path / "src" / "other.py").write_text("UNRELATED = True\n")
    (tmp_path / "README.md").write_text("# Project\n")
    (tmp_path / ".gitignore").write_text("ignored/\n")
    (tmp_path / "ignored").mkdir()
    (tmp_path / "ignored" / "junk.py").write_text("junk\n")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    return tmp_path


def test_agent_spine_scope_orders_evidence_check_path_then_owner(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    spec = load_spec([root / "specs"])
    report = check_drift(spec, root)
    scope = Spine(root).scope(spec, report, ["total-defined"])
    paths = [p for p, _ in scope]
    assert paths[0] == "src/billing/core.py"
    assert set(paths) == {"src/billing/core.py", "src/billing/tax.py", "src/billing/huge.py"}
    assert "src/other.py" not in paths and "ignored/junk.py" not in paths
    assert "ignored/junk.py" not in list_files(root)


def test_agent_spine_renders_targets_and_files_within_budget(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    spec = load_spec([root / "specs"])
    report = check_drift(spec, root)
    big = Spine(root, token_budget=100_000).build(spec, report, ["total-defined"])
    assert "`total-defined` — billing has total()" in big.text
    assert "now failed" in big.text
    assert "def subtotal" in big.text and "RATE_399" in big.text
    assert not big.omitted
    small = Spine(root, token_budget=900).build(spec, report, ["total-defined"])
    assert small.tokens <= 900 + 40  # the not-shown list is names only
    assert "def subtotal" in small.text
    assert "[... truncated:" in small.text or small.omitted
    assert "RATE_399" not in small.text
    shown_or_listed = {f.path for f in small.files} | set(small.omitted)
    assert shown_or_listed == {"src/billing/core.py", "src/billing/tax.py", "src/billing/huge.py"}


def test_agent_spine_owner_globs_follow_the_engines_spelling(tmp_path: Path) -> None:
    """``./x`` is the root's ``x`` only, as the check engine reads it (not every ``x``)."""
    root = _repo(tmp_path)
    (root / "x.py").write_text("ROOT = 1\n")
    (root / "src" / "x.py").write_text("NESTED = 1\n")
    (root / "specs" / "reqs.yaml").write_text(
        SPEC.replace("owner: ['src/billing/**']", "owner: ['./x.py']")
    )
    spec = load_spec([root / "specs"])
    paths = [p for p, _ in Spine(root).scope(spec, None, ["total-defined"])]
    assert "x.py" in paths
    assert "src/x.py" not in paths
