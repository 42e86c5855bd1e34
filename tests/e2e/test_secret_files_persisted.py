"""Secret files by what they are, end to end (issue 32, row 7): a gitignored ``prod.env`` and
``secrets.env``, a committed YAML file with a password and an ``oauth`` key, and a committed
private key are in the workspace of a ``chimera solve``; the agent greps for passwords and
prints the key. Neither the run folder (``audit.jsonl``, transcripts, attempt records,
``summary.json``) nor ``chimera trajectories export`` keeps any of those values: the sandbox
masks the secret files, and the redactor replaces what is left by its shape (a
credential-named key's value, a PEM private-key block)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from chimera.cli import main
from chimera.sandbox import bwrap_available, probe_bwrap

DB_PASSWORD = "Pw-prod-7c1e-DB-9a8b"
API_SECRET = "Sec-env-52f0-77aa-ee1c"
YAML_PASSWORD = "Yaml-pass-0d3c-4411"
OAUTH_REFRESH = "oauthrefresh-1f2e3d4c5b"
KEY_BODY = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw"
VALUES = (DB_PASSWORD, API_SECRET, YAML_PASSWORD, OAUTH_REFRESH, KEY_BODY)

SPEC = """\
requirements:
  - id: total-defined
    owner: ['calc.py']
    defines: {path: calc.py, symbol: total, kind: function}
"""
CALC = "def add(a, b):\n    return a + b\n"
GOOD = CALC + "\n\ndef total(xs):\n    return sum(xs)\n"
APP_YAML = f"""\
database:
  host: localhost
  password: {YAML_PASSWORD}
google:
  oauth_refresh: {OAUTH_REFRESH}
"""
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{KEY_BODY}\n-----END RSA PRIVATE KEY-----\n"


def _repo(root: Path) -> Path:
    files = {
        "specs/reqs.yaml": SPEC,
        "calc.py": CALC,
        ".gitignore": ".chimera/\n*.env\n",
        "config/app.yaml": APP_YAML,
        "deploy/server.key": PEM,
    }
    root.mkdir(parents=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "base"], cwd=root, check=True)
    # Ignored by git, present on the maintainer's disk.
    (root / "prod.env").write_text(f"DB_PASSWORD={DB_PASSWORD}\n", encoding="utf-8")
    (root / "config" / "secrets.env").write_text(f"API_SECRET={API_SECRET}\n", encoding="utf-8")
    return root


def _leaks(*folders: Path, texts: dict[str, str]) -> list[str]:
    found = []
    for folder in folders:
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
            text = path.read_bytes().decode("utf-8", errors="replace")
            found += [f"{path.name}: {v}" for v in VALUES if v in text]
    found += [f"{name}: {v}" for name, text in texts.items() for v in VALUES if v in text]
    return found


@pytest.mark.slow
@pytest.mark.bwrap
@pytest.mark.skipif(not bwrap_available(), reason=f"bubblewrap unusable: {probe_bwrap().reason}")
def test_secret_files_and_secret_shaped_values_reach_no_persisted_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _repo(tmp_path / "repo")
    look = {
        "name": "run_command",
        "arguments": {"command": "grep -rniE 'password|secret|oauth' --exclude-dir=.git ."},
    }
    show_key = {"name": "run_command", "arguments": {"command": "cat deploy/server.key"}}
    read_yaml = {"name": "read_file", "arguments": {"path": "config/app.yaml"}}
    write = {"name": "write_file", "arguments": {"path": "calc.py", "content": GOOD}}
    turns: list[dict[str, Any]] = [
        {"purpose": "plan", "text": "1. Look at the configuration.\n2. Add total()."},
        {"purpose": "act", "tool_calls": [look, show_key, read_yaml]},
        {"purpose": "act", "tool_calls": [write]},
        {"purpose": "act", "text": "Added total()."},
        {"purpose": "review", "text": "APPROVE"},
        {"purpose": "summarize", "text": json.dumps({"tags": [], "insights": []})},
        {"purpose": "summarize", "text": "No skill."},
        {"purpose": "summarize", "text": "No skill."},
    ]
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"model": "demo", "turns": turns}, sort_keys=False))
    code = main(
        ["solve", "Add total() to calc.py", "--root", str(root), "--verify",
         str(root / "specs"), "--model", f"scripted:{script}"]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err + out
    (run_dir,) = (root / ".chimera" / "runs").iterdir()
    audit = (run_dir / "audit.jsonl").read_text(encoding="utf-8")
    # The tool calls ran and their outputs were recorded (so the scan below can fail) ...
    assert "config/app.yaml" in audit and "[REDACTED:password]" in audit
    assert "[REDACTED:oauth_refresh]" in audit
    assert "BEGIN RSA PRIVATE KEY" not in audit
    exported = tmp_path / "sft.jsonl"
    code = main(["trajectories", "export", str(run_dir), "--format", "sft", "-o", str(exported)])
    export_out, export_err = capsys.readouterr()
    assert code == 0, export_err + export_out
    assert "[REDACTED:password]" in exported.read_text(encoding="utf-8")
    # ... and no file of the state folder, the export or the terminal kept a value.
    texts = {"stdout": out, "stderr": err, "export": exported.read_text(encoding="utf-8")}
    assert _leaks(root / ".chimera", texts=texts) == []
