"""A credential the model writes into a tool call never reaches the audit log: the
``tool_call`` event's arguments (and output) pass the governance SecretRedactor first."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chimera.governance.audit import verify_audit_log
from chimera.providers import ScriptedBackend

# Shaped like a GitHub token (the known-format list of chimera.governance.rules), not a real one.
TOKEN = "ghp_" + "Z1y2X3w4V5u6T7s8R9q0P1o2N3m4L5k6J7i8"


def test_a_token_in_a_tool_call_never_reaches_the_audit_file(
    make_env: Callable[..., Any], t: Any
) -> None:
    env = make_env()
    act = {
        "purpose": "act",
        "tool_calls": [
            # The model pastes a token into a command, and echoes one back as output.
            {"name": "run_command", "arguments": {"command": f"true --token {TOKEN}"}},
            {"name": "run_command", "arguments": {"command": f"echo {TOKEN}"}},
            {"name": "write_file", "arguments": {"path": "calc.py", "content": t.CALC_WITH_TOTAL}},
        ],
    }
    backend = ScriptedBackend([t.plan(), act, t.done(), t.review()])
    result = env.agent([backend]).solve("Add total()")
    assert result.outcome == "solved"
    audit_file = env.run_dir / "audit.jsonl"
    assert TOKEN not in audit_file.read_text(encoding="utf-8")
    calls = env.audit_events("tool_call")
    assert len(calls) == 3
    pasted, echoed, written = (c["fields"] for c in calls)
    assert "[REDACTED:a GitHub token]" in pasted["arguments"]
    assert pasted["redacted"] == ["a GitHub token"]
    assert "[REDACTED:a GitHub token]" in echoed["output"]
    assert "redacted" not in written and "def total" in written["arguments"]
    assert verify_audit_log(audit_file).ok
