"""No file of the run folder keeps a credential the model wrote into a tool call or a tool
read back: the transcript (``transcript.jsonl``), the attempt transcripts
(``attempts/<card>/<n>.transcript.json``), the attempt records and the audit log all pass
the governance SecretRedactor before the write (the Action uploads this folder as an
artifact)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from chimera.governance.audit import verify_audit_log
from chimera.memory.trajectories.transcript import confirm, read_transcript
from chimera.providers import ScriptedBackend

# Shaped like a GitHub token (the known-format list of chimera.governance.rules), not a real one.
TOKEN = "ghp_" + "Q9w8E7r6T5y4U3i2O1p0A9s8D7f6G5h4J3k2"
# A secret value of the run: a credential-named environment variable.
SECRET = "s3cr3t-" + "deploy-value-4711"


def _leaks(run_dir: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted(p for p in run_dir.rglob("*") if p.is_file()):
        data = path.read_bytes()
        hits = [
            name for name, value in (("token", TOKEN), ("secret", SECRET)) if value.encode() in data
        ]
        if hits:
            found[path.relative_to(run_dir).as_posix()] = hits
    return found


def test_no_file_of_the_run_folder_keeps_a_tool_calls_secret(
    make_env: Callable[..., Any], t: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEPLOY_API_KEY", SECRET)
    env = make_env()
    act = {
        "purpose": "act",
        "tool_calls": [
            # A pasted token in a failing command (its arguments reach the attempt record's
            # first failing step), a secret value echoed back as output, then the real change.
            {"name": "run_command", "arguments": {"command": f"false --token {TOKEN}"}},
            {"name": "run_command", "arguments": {"command": f"echo {SECRET} {TOKEN}"}},
            {"name": "write_file", "arguments": {"path": "calc.py", "content": t.CALC_WITH_TOTAL}},
        ],
    }
    backend = ScriptedBackend([t.plan(f"1. Use {TOKEN}."), act, t.done(), t.review()])
    result = env.agent([backend]).solve("Add total()")
    assert result.outcome == "solved"
    transcript = env.run_dir / "transcript.jsonl"
    assert "[REDACTED:a GitHub token]" in transcript.read_text(encoding="utf-8")
    assert "[REDACTED:DEPLOY_API_KEY]" in transcript.read_text(encoding="utf-8")
    assert list(env.run_dir.glob("attempts/*/*.transcript.json"))
    assert _leaks(env.run_dir) == {}
    assert verify_audit_log(env.run_dir / "audit.jsonl").ok
    # Both sides redacted: the transcript still agrees with the audit log.
    (seq,) = read_transcript(transcript).values()
    assert not seq.broken
    model_calls = [
        [str(n) for n in e["fields"].get("tool_calls", [])]
        for e in env.audit_events("model_call")
        if e["fields"].get("purpose") == "act"
    ]
    tool_calls = [
        (e["fields"]["name"], e["fields"]["arguments"], e["fields"]["output"])
        for e in env.audit_events("tool_call")
    ]
    assert confirm(seq.messages, model_calls, tool_calls) is None
