"""A change that holds a secret value is never accepted, and the secret never reaches the
records, the retry prompt or the run folder (found by tests/e2e/test_hostile_runs.py: under
the scrubbed sandbox a test the agent wrote copied ``.env`` into a file of the change)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from chimera.core.attempts import Verdict
from chimera.governance.audit import verify_audit_log
from chimera.providers import ScriptedBackend

SECRET = "planted-dotenv-value-51c0ffee"
DOTENV_VALUE = f"postgres://u:{SECRET}@db/app"


def test_a_secret_copied_into_the_change_fails_the_attempt(
    make_env: Callable[..., Any], t: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = make_env(files={".gitignore": ".chimera/\n.env\n"})
    (env.root / ".env").write_text(f"DATABASE_URL={DOTENV_VALUE}\n")
    monkeypatch.setenv("SERVICE_TOKEN", "env-token-value-8d2a71")
    # A command copies the secrets into files of the change (the model never sees them).
    leak = {
        "purpose": "act",
        "tool_calls": [
            {"name": "write_file", "arguments": {"path": "calc.py", "content": t.CALC_WITH_TOTAL}},
            {"name": "run_command", "arguments": {"command": "cp .env leak.cfg"}},
            {"name": "run_command", "arguments": {"command": "printenv SERVICE_TOKEN > tok.txt"}},
        ],
    }
    backend = ScriptedBackend(
        [
            t.plan(),
            leak,
            t.done(),
            t.review(),
            # attempt 2: the retry prompt carries the record, redacted
            {**t.write("calc.py", t.CALC_WITH_TOTAL), "expect": ["secret_in_change"]},
            t.done(),
            t.review(),
        ]
    )
    result = env.agent([backend], max_attempts=2).solve("Add total()")
    assert [a.verdict for a in result.attempts] == [Verdict.SECRET_IN_CHANGE, Verdict.PASSED]
    first = result.attempts[0]
    assert ".env:DATABASE_URL" in first.cause and "SERVICE_TOKEN" in first.cause
    assert "[REDACTED:.env:DATABASE_URL]" in first.diff
    assert result.outcome == "solved"
    assert not (env.root / "leak.cfg").exists() and not (env.root / "tok.txt").exists()
    # Nowhere in what the run wrote, nor in any prompt the model received.
    for path in env.run_dir.rglob("*"):
        if path.is_file() and "snapshots" not in path.parts:
            text = path.read_text(encoding="utf-8", errors="replace")
            assert SECRET not in text and "env-token-value-8d2a71" not in text, path
    prompts = json.dumps([c.messages for c in backend.calls])
    assert SECRET not in prompts
    [event] = env.audit_events("secret_in_change")
    assert set(event["fields"]["names"]) == {".env:DATABASE_URL", "SERVICE_TOKEN"}
    assert verify_audit_log(env.run_dir / "audit.jsonl").ok


def test_a_change_without_secrets_is_judged_as_before(make_env: Callable[..., Any], t: Any) -> None:
    env = make_env()
    (env.root / ".env").write_text(f"DATABASE_URL={SECRET}\n")
    backend = ScriptedBackend(
        [t.plan(), t.write("calc.py", t.CALC_WITH_TOTAL), t.done(), t.review()]
    )
    result = env.agent([backend]).solve("Add total()")
    assert result.outcome == "solved"
    assert env.audit_events("secret_in_change") == []
