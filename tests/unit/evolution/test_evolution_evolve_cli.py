"""``chimera evolve``: one refinement round on recorded failures, through real harness re-runs.

The chain's scripted model makes the effect known: the parent skill carries no marker, so the
plural/ordinal tasks fail with it; the scripted reflection model answers a body carrying every
marker, so the refined skill passes them — and the gates must replace the parent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from chimera.cli import main
from chimera.evolution.ledger import SkillEval, SkillEvalLog
from chimera.evolution.skills import LearnedSkill, SkillStore
from chimera.governance.audit import verify_audit_log

SHIPPED = Path(__file__).resolve().parents[3] / "chimera" / "eval" / "chains" / "inflection"
BODY = "Use inflection: [plural-rule] pluralize, [ordinal-rule] ordinalize, [slug-rule] slugs."


def _setup(tmp_path: Path) -> SkillStore:
    store = SkillStore(tmp_path / ".chimera" / "skills")
    store.mint(
        LearnedSkill(
            "inflection-conventions",
            "How this project inflects words. Use for any inflection task.",
            "Use the inflection library where it helps.\n",
            trusted=True,
            tested="re-run gate passed",
            accepted_by="alice",
        )
    )
    ledger = SkillEvalLog(store.root / "evals.jsonl")
    for task, ok in (("t04-inventory", False), ("t06-podium", False), ("t09-stock", False),
                     ("t02-shout", True), ("t07-initials", True)):  # fmt: skip
        ledger.append(SkillEval("inflection-conventions", 1, task, ok, "recorded"))
    return store


def test_nothing_recorded_is_nothing_to_refine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["evolve", "--chain", str(SHIPPED / "chain.yaml"), "--model", "scripted:none",
                 "--root", str(tmp_path)])  # fmt: skip
    assert code == 0 and "nothing to refine" in capsys.readouterr().out


def test_a_budget_below_the_gate_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _setup(tmp_path)
    script = tmp_path / "reflect.yaml"
    script.write_text(yaml.safe_dump({"turns": []}))
    code = main(["evolve", "--chain", str(SHIPPED / "chain.yaml"), "--model", f"scripted:{script}",
                 "--max-metric-calls", "5", "--root", str(tmp_path)])  # fmt: skip
    assert code == 2 and "too small: the gate needs 8" in capsys.readouterr().err


@pytest.mark.slow
def test_the_shipped_chain_is_too_small_for_the_gate_to_replace_the_skill(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three failures split 1/1/1 and the chain has one more ordinal task to hold out: two
    holdout tasks both flip, and the gate refuses (they once promoted on a zero-width
    interval). The full loop on a chain large enough is tests/e2e/test_flywheel_e2e.py."""
    store = _setup(tmp_path)
    script = tmp_path / "reflect.yaml"
    script.write_text(yaml.safe_dump({"turns": [{"purpose": "plan", "text": f"```\n{BODY}\n```"}]}))
    code = main(["evolve", "--chain", str(SHIPPED / "chain.yaml"), "--model", f"scripted:{script}",
                 "--max-metric-calls", "12", "--root", str(tmp_path)])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, out
    assert "inflection-conventions: kept_parent" in out
    assert "needs at least 5 paired tasks" in out
    # Progress, one plain line per re-run (not a terminal), out of the round's bound.
    steps = [line for line in err.splitlines() if line.startswith("chimera: evolve [")]
    assert steps and all(line.split("] ", 1)[1].startswith("re-run ") for line in steps)
    assert all(line.startswith("chimera: evolve [") and "/12] " in line for line in steps)
    skill = store.get("inflection-conventions")
    assert skill is not None and skill.version == 1
    (run_dir,) = (tmp_path / ".chimera" / "runs").iterdir()
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["decision"] == "kept_parent" and summary["metric_calls"] <= 12
    assert summary["gate"]["transfer"]["outcome"] == "insufficient evidence"
    assert verify_audit_log(run_dir / "audit.jsonl", summary["audit_head"]).ok
