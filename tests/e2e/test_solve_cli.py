"""End to end: ``chimera solve`` as a real subprocess with a scripted model file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from chimera.governance.audit import verify_audit_log

SPEC = """\
requirements:
  - id: total-defined
    owner: ['calc.py']
    defines: {path: calc.py, symbol: total, kind: function}
  - id: keeps-add
    defines: {path: calc.py, symbol: add, kind: function}
"""
CALC = "def add(a, b):\n    return a + b\n"
GOOD = CALC + "\n\ndef total(xs):\n    return sum(xs)\n"


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "specs").mkdir(parents=True)
    (root / "specs" / "reqs.yaml").write_text(SPEC)
    (root / "calc.py").write_text(CALC)
    (root / ".gitignore").write_text(".chimera/\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "base"], cwd=root, check=True)
    return root


def _write(path: str, content: str, **kw: object) -> dict[str, object]:
    call = {"name": "write_file", "arguments": {"path": path, "content": content}}
    return {"purpose": "act", "tool_calls": [call], **kw}


def _solve(
    root: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k != "CHIMERA_MODEL"}
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "from chimera.cli import main; raise SystemExit(main())",
            "solve",
            *args,
        ],
        cwd=root,
        capture_output=True,
        text=True,
        env={**base, **(env or {})},
        timeout=120,
    )


def test_solve_cli_reverts_retries_and_verifies(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    script = tmp_path / "script.yaml"
    turns = [
        {"purpose": "plan", "text": "1. Add total() to calc.py."},
        _write("calc_total.py", "def total(xs):\n    return sum(xs)\n"),
        {"purpose": "act", "text": "Added total()."},
        {"purpose": "review", "text": "APPROVE"},
        _write("calc.py", GOOD, expect=["Attempt 1 — verdict: verify_failed"]),
        {"purpose": "act", "text": "Moved total() into calc.py."},
        {"purpose": "review", "text": "APPROVE"},
    ]
    script.write_text(yaml.safe_dump({"model": "demo", "turns": turns}, sort_keys=False))
    proc = _solve(
        root, "Add total() to calc.py", "--verify", "specs", "--model", f"scripted:{script}"
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert f"chimera: attempt 1 with scripted:{script}" in proc.stderr
    assert "chimera: attempt 1: verify_failed" in proc.stderr
    assert "chimera: attempt 2: passed" in proc.stderr
    assert "  step 1: write_file" in proc.stderr
    assert "outcome: solved" in proc.stdout
    assert "attempts: 2 (1: verify_failed, 2: passed)" in proc.stdout
    assert "cost: " in proc.stdout and "tokens: " in proc.stdout
    assert "diff: 1 file(s), +4 -0" in proc.stdout
    assert "sandbox: " in proc.stdout
    assert (root / "calc.py").read_text() == GOOD
    assert not (root / "calc_total.py").exists()
    (run_dir,) = (root / ".chimera" / "runs").iterdir()
    for name in ("transcript.jsonl", "audit.jsonl", "summary.json", "snapshots"):
        assert (run_dir / name).exists(), name
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["outcome"] == "solved" and summary["history_injections"] == 1
    check = verify_audit_log(run_dir / "audit.jsonl", head=summary["audit_head"])
    assert check.ok, check.problems
    lines = (run_dir / "audit.jsonl").read_text(encoding="utf-8").splitlines()
    events = [json.loads(line)["event"] for line in lines]
    assert events.count("history_injected") == 1
    assert events.count("model_call") == 7


def test_solve_cli_without_a_model_is_a_one_line_error(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    proc = _solve(root, "Add total()", "--verify", "specs")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "no model" in lines[0] and "CHIMERA_MODEL" in lines[0]


def test_solve_cli_failure_exits_nonzero_and_leaves_tree_clean(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    script = tmp_path / "script.yaml"
    turns = [
        {"purpose": "plan", "text": "1. Try."},
        _write("notes.txt", "nothing useful\n"),
        {"purpose": "act", "text": "Done."},
        {"purpose": "review", "text": "APPROVE"},
    ]
    script.write_text(yaml.safe_dump(turns))
    proc = _solve(
        root,
        "Add total()",
        "--verify",
        "specs",
        "--max-attempts",
        "1",
        env={"CHIMERA_MODEL": f"scripted:{script}"},
    )
    assert proc.returncode == 1, proc.stderr
    assert "outcome: failed" in proc.stdout
    assert not (root / "notes.txt").exists()


def test_solve_cli_unknown_target_exits_2_and_leaves_no_run_folder(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump([{"text": "unused"}]))
    proc = _solve(root, "x", "--model", f"scripted:{script}", "--target", "nope")
    assert proc.returncode == 2
    assert proc.stderr.strip() == "chimera: error: --target: unknown requirement id(s): nope"
    assert not (root / ".chimera" / "runs").exists()


def test_solve_never_accepts_a_change_to_chimeras_own_configuration(tmp_path: Path) -> None:
    """Found by an attack pass: an untrusted solve wrote `[tool.chimera.sandbox] env_allow`
    next to a real fix and ended "solved"; a later run then passed the secret into the sandbox.
    The attempt is now judged `config_changed` and reverted, as `chimera run` already did."""
    root = _repo(tmp_path)
    loosened = '[tool.chimera.sandbox]\nenv_allow = ["CANARY_SECRET"]\n'
    script = tmp_path / "script.yaml"
    turns = [
        {"purpose": "plan", "text": "1. Add total()."},
        _write("calc.py", GOOD),
        _write("pyproject.toml", loosened),
        {"purpose": "act", "text": "Added total()."},
    ]
    script.write_text(yaml.safe_dump(turns))
    proc = _solve(
        root, "Add total()", "--verify", "specs", "--max-attempts", "1", "--no-review",
        "--untrusted", "--model", f"scripted:{script}",
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "config_changed" in proc.stdout + proc.stderr
    assert not (root / "pyproject.toml").exists()
    assert (root / "calc.py").read_text() == CALC
