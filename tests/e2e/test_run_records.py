"""What a run records stays true: a finished run is never overwritten, printed audit heads
verify, and ``chimera status`` sees every kind of run (scripted models, in process)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from chimera.cli import main
from chimera.cli.demo import DEMO_DIR, write_project
from chimera.governance.audit import verify_audit_log

SCRIPT = f"scripted:{DEMO_DIR / 'script.yaml'}"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "ledger"
    root.mkdir()
    write_project(root)
    return root


def test_reusing_a_finished_runs_id_is_refused_and_loses_nothing(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["--root", str(project), "--quiet", "--model", SCRIPT]
    assert main(["run", *base, "--run-id", "r1", "--max-iterations", "1"]) == 4
    run_dir = project / ".chimera" / "runs" / "r1"
    state_before = (run_dir / "state.json").read_bytes()
    audit_before = (run_dir / "audit.jsonl").read_bytes()
    capsys.readouterr()

    assert main(["run", *base, "--run-id", "r1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "run r1 already exists (stopped)" in err and "chimera resume r1" in err
    assert (run_dir / "state.json").read_bytes() == state_before
    assert (run_dir / "audit.jsonl").read_bytes() == audit_before
    head = yaml.safe_load(state_before)["audit_head"]
    assert verify_audit_log(run_dir / "audit.jsonl", head=head).ok


SPEC = """\
requirements:
  - id: total-defined
    defines: {path: calc.py, symbol: total, kind: function}
"""


def _calc_repo(tmp_path: Path) -> Path:
    root = tmp_path / "calc"
    (root / "specs").mkdir(parents=True)
    (root / "specs" / "reqs.yaml").write_text(SPEC)
    (root / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@e.invalid"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run([*git, *cmd], cwd=root, check=True, capture_output=True)
    return root


def _solve_script(tmp_path: Path) -> str:
    write = {"name": "write_file", "arguments": {"path": "calc.py", "content": "def total(x): 0\n"}}
    turns = [
        {"purpose": "plan", "text": "1. Add total()."},
        {"purpose": "act", "tool_calls": [write]},
        {"purpose": "act", "text": "Done."},
        {"purpose": "review", "text": "APPROVE"},
    ]
    path = tmp_path / "solve.yaml"
    path.write_text(yaml.safe_dump({"model": "s", "turns": turns}))
    return f"scripted:{path}"


def test_solve_prints_a_head_that_audit_verify_accepts_and_status_sees_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _calc_repo(tmp_path)
    model = _solve_script(tmp_path)
    assert main(["solve", "Add total()", "--root", str(root), "--model", model, "--quiet"]) == 0
    out = capsys.readouterr().out
    found = re.search(r"run: (\S+) \(audit head ([0-9a-f]+)\)", out)
    assert found, out
    run_dir, head = root / found.group(1), found.group(2)
    assert len(head) == 64
    assert main(["audit", "verify", str(run_dir / "audit.jsonl"), "--head", head]) == 0
    capsys.readouterr()

    run_id = run_dir.name
    assert main(["status", "--root", str(root)]) == 0
    shown = capsys.readouterr().out
    assert f"solve {run_id}: solved" in shown and head in shown
    assert main(["status", "--root", str(root), run_id]) == 0
    assert f"solve {run_id}: solved" in capsys.readouterr().out
    assert main(["status", "--root", str(root), "--all"]) == 0
    assert f"{run_id}  solved  solve" in capsys.readouterr().out


def test_status_all_without_runs_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["status", "--root", str(tmp_path), "--all"]) == 2
    err = capsys.readouterr().err
    assert "no runs under" in err and err.count("\n") == 1
