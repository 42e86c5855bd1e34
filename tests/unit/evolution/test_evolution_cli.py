"""`chimera skills` and `chimera playbook show` on real folders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chimera.cli import main
from chimera.governance.audit import verify_audit_log


def _foreign(tmp_path: Path) -> Path:
    src = tmp_path / "incoming" / "use-x"
    src.mkdir(parents=True)
    (src / "SKILL.md").write_text("---\nname: use-x\ndescription: Use x for y.\n---\n# X\nDo x.\n")
    return src.parent


def test_import_promote_and_audit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dataclasses import replace

    from chimera.evolution.lifecycle import retrievable
    from chimera.evolution.skills import SkillStore

    root = ["--root", str(tmp_path)]
    assert main(["skills", *root, "import", str(_foreign(tmp_path))]) == 0
    assert main(["skills", *root, "list"]) == 0
    assert "use-x  v1  provisional  tainted  untested  -" in capsys.readouterr().out
    store = SkillStore(tmp_path / ".chimera" / "skills")
    imported = store.get("use-x")
    assert imported is not None and not retrievable(imported)  # a person brought it: untested
    # An untested skill is never promoted, not even by a person.
    assert main(["skills", *root, "promote", "use-x", "--by", "ana"]) == 2
    assert "untested" in capsys.readouterr().err
    store.put(replace(imported, tested="re-run gate: 5 gained, 0 lost of 5"))
    assert main(["skills", *root, "promote", "use-x", "--by", "ana"]) == 0
    assert main(["skills", *root, "list"]) == 0
    assert "use-x  v1  promoted  trusted  usable" in capsys.readouterr().out
    log = tmp_path / ".chimera" / "skills" / "audit.jsonl"
    assert verify_audit_log(log).ok
    events = [json.loads(line)["event"] for line in log.read_text().splitlines()]
    assert events == ["skill_imported", "skill_promoted"]
    assert main(["skills", *root, "rollback", "use-x", "--by", "ana"]) == 0
    assert "no earlier version; v1 demoted" in capsys.readouterr().out
    rolled = store.get("use-x")
    assert rolled is not None and not retrievable(rolled)
    out = tmp_path / "out"
    assert main(["skills", *root, "export", str(out)]) == 0
    assert (out / "use-x" / "SKILL.md").read_text().startswith("---\nname: use-x\n")


def test_unknown_skill_and_mismatched_folder_are_usage_errors(tmp_path: Path) -> None:
    assert main(["skills", "--root", str(tmp_path), "show", "nope"]) == 2
    bad = tmp_path / "incoming" / "other-name"
    bad.mkdir(parents=True)
    (bad / "SKILL.md").write_text("---\nname: use-y\ndescription: d\n---\nbody\n")
    assert main(["skills", "--root", str(tmp_path), "import", str(bad.parent)]) == 2


def test_playbook_show(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["playbook", "show", "--root", str(tmp_path)]) == 0
    assert "no playbook yet" in capsys.readouterr().out
    (tmp_path / ".chimera").mkdir()
    (tmp_path / ".chimera" / "playbook.md").write_text(
        "## S\n[str-00001] helpful=2 harmful=0 :: Keep diffs small.\n"
        "[str-00002] helpful=0 harmful=3 :: Rewrite everything.\n"
    )
    assert main(["playbook", "show", "--root", str(tmp_path), "--budget", "200"]) == 0
    shown = capsys.readouterr().out
    assert "Keep diffs small." in shown and "Rewrite everything." not in shown


def test_skills_test_refuses_too_few_tasks_before_running_any(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chain = Path(__file__).resolve().parents[3] / "chimera/eval/chains/inflection/chain.yaml"
    root = ["--root", str(tmp_path)]
    assert main(["skills", *root, "import", str(_foreign(tmp_path))]) == 0
    capsys.readouterr()
    code = main(["skills", *root, "test", "use-x", "--chain", str(chain),
                 "--task", "t04-inventory", "--task", "t09-stock"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 1
    assert "re-run gate failed: refused: needs at least 5 tasks it was not proposed from" in out
    log = tmp_path / ".chimera" / "skills" / "audit.jsonl"
    events = [json.loads(line)["event"] for line in log.read_text().splitlines()]
    assert events[-1] == "skill_test_failed"
    assert not (tmp_path / ".chimera" / "skills" / "evals.jsonl").exists()  # nothing ran
