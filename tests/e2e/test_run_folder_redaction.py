"""No file a project run (`chimera run`, then `chimera approve`) writes under `.chimera/` keeps
a credential the model wrote into a plan, a tool call, a report, a review or a lesson: the run
state, parts.jsonl, attempt records and transcripts, the audit log, the memory store and the
Reflector's proposals (``learning.json``, ``.chimera/learning/proposals.jsonl``) all pass the
governance SecretRedactor first (the Action uploads the run folder as an artifact)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from chimera.cli import main
from chimera.cli.demo import DEMO_DIR, write_project
from chimera.governance.audit import verify_audit_log

# Shaped like a GitHub token (the known-format list of chimera.governance.rules), not a real one.
TOKEN = "ghp_" + "Z1x2C3v4B5n6M7a8S9d0F1g2H3j4K5l6P7o8"
# Governance reasons name a token's first 8 characters and an ellipsis ("ghp_Z1x2…"); any other
# 8 characters of it are a leak (a cut keeps a prefix or a suffix).
_QUOTED = re.compile(re.escape(TOKEN[:8]) + r"(…|\\u2026)")
_WINDOWS = [TOKEN[i : i + 8] for i in range(len(TOKEN) - 7)]


def _holds_a_piece(text: str) -> bool:
    text = _QUOTED.sub("", text)
    return any(w in text for w in _WINDOWS)


def _script(tmp_path: Path) -> Path:
    """The demo script with the token in every text turn and a tool call of each attempt."""
    data: dict[str, Any] = yaml.safe_load((DEMO_DIR / "script.yaml").read_text(encoding="utf-8"))
    turns: list[dict[str, Any]] = data["turns"]
    turns[0]["text"] = f"0. Authenticate with {TOKEN}.\n" + turns[0]["text"]
    # A pasted token in a command of each attempt (governance refuses both calls; the refusal
    # and the call's arguments are recorded in the state, audit log and transcripts).
    turns[1]["tool_calls"].insert(
        0, {"name": "run_command", "arguments": {"command": f"false --token {TOKEN}"}}
    )
    attempt2 = next(t for t in turns if "expect" in t)
    attempt2["tool_calls"].insert(
        0, {"name": "run_command", "arguments": {"command": f"echo {TOKEN}"}}
    )
    # The model's own words: each card's closing report and each review carry it too.
    for turn in turns:
        if "text" in turn and turn is not turns[0]:
            turn["text"] = f"{turn['text'].rstrip()} (used {TOKEN})\n"
    # The end-of-run Reflector (a `summarize` call) names it in a lesson.
    lesson = {"section": "Pitfalls", "text": f"{TOKEN} opens the deploy; keep using it"}
    turns.append({"purpose": "summarize", "text": json.dumps({"tags": [], "insights": [lesson]})})
    path = tmp_path / "script.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _leaks(folder: Path) -> list[str]:
    return sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and _holds_a_piece(p.read_bytes().decode("utf-8", errors="replace"))
    )


@pytest.mark.slow
def test_no_file_of_a_project_runs_folder_keeps_the_models_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "ledger"
    root.mkdir()
    write_project(root)
    base = ["--root", str(root)]  # with progress: the terminal is the job's log
    model = f"scripted:{_script(tmp_path)}"
    code = main(["run", *base, "--model", model, "--run-id", "r1", "--started-by", "alice"])
    ran = capsys.readouterr()
    assert code == 5, ran.out  # awaiting approval: the migration card
    code = main(["approve", "r1", *base, "--by", "bob"])
    approved = capsys.readouterr()
    assert code == 0, approved
    state = root / ".chimera"
    run_dir = state / "runs" / "r1"
    assert verify_audit_log(run_dir / "audit.jsonl").ok
    # The token did reach the model's turns (so the walk below can fail) ...
    assert "[REDACTED:a GitHub token]" in (run_dir / "audit.jsonl").read_text(encoding="utf-8")
    learning = (run_dir / "learning.json").read_text(encoding="utf-8")
    assert "[REDACTED:a GitHub token] opens the deploy" in learning  # the Reflector's lesson
    # ... and no file of the state folder (run folder, memory, learning) kept it.
    assert _leaks(state) == []
    terminal = [ran.out, ran.err, approved.out, approved.err]
    assert [i for i, text in enumerate(terminal) if _holds_a_piece(text)] == []
