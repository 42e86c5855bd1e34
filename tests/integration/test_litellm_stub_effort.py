"""``[tool.chimera.effort]`` reaches the provider: the run's ladder applies the configured
levels (completion cap, reasoning effort, rung) on every call, through LiteLLM over HTTP."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from chimera.call_context import call_context
from chimera.cli import main
from chimera.config import load_config
from chimera.economics.effort import EffortBackend
from chimera.orchestration.session_factory import SessionFactory
from chimera.protocols import Purpose
from chimera.spec.model import Risk
from chimera.testing import OpenAIStubServer, StubReply

REASONER = "o3-mini"  # LiteLLM's model map says it takes a reasoning effort
PLAIN = "gpt-4o-mini"  # ...and that this one does not

EFFORT = """\
[effort]
attempts_per_rung = 1
[effort.levels]
low = {max_tokens = 111, reasoning_effort = "low"}
standard = {max_tokens = 222, reasoning_effort = "medium"}
high = {max_tokens = 333, reasoning_effort = "high"}
"""


@pytest.fixture
def stub() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer() as server:
        yield server


def _root(tmp_path: Path, stub: OpenAIStubServer, effort: str = EFFORT) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "chimera.toml").write_text(
        f'[models]\napi_base = "{stub.api_base}"\nnum_retries = 0\n'
        f'ladder = ["openai/{REASONER}"]\n' + effort
    )
    return root


def test_configured_levels_reach_the_provider_call(
    stub: OpenAIStubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "stub")
    stub.add_reply(REASONER, StubReply(text="a plan"))
    stub.add_reply(PLAIN, StubReply(text="a summary"))
    root = _root(tmp_path, stub)
    config = load_config(root)
    factory = SessionFactory()
    session = factory.open(factory.prepare(root, config, f"openai/{PLAIN}"), run_id="r")
    (rung,) = session.ladder  # the effort policy owns the ladder: it picks the rung
    messages = [{"role": "user", "content": "x"}]
    rung.complete(messages, purpose=Purpose.SUMMARIZE)  # low, on the first rung
    with call_context(risk=Risk.HIGH, attempt=2):  # high, on the second rung
        rung.complete(messages, purpose=Purpose.PLAN)

    (cheap,) = stub.completion_requests(PLAIN)
    assert cheap.body["max_tokens"] == 111
    assert "reasoning_effort" not in cheap.body  # the plain model has no such knob
    (deep,) = stub.completion_requests(REASONER)
    assert deep.body["reasoning_effort"] == "high"
    assert 333 in (deep.body.get("max_completion_tokens"), deep.body.get("max_tokens"))
    choices = [json.loads(x)["fields"] for x in session.audit.path.read_text().split("\n") if x]
    effort = [c for c in choices if "level" in c]
    assert [(c["level"], c["rung"]) for c in effort] == [("low", 0), ("high", 1)]


def test_without_the_section_the_ladder_is_the_models(
    stub: OpenAIStubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "stub")
    stub.add_reply(PLAIN, StubReply(text="ok"))
    root = _root(tmp_path, stub, effort="")
    factory = SessionFactory()
    session = factory.open(factory.prepare(root, load_config(root), f"openai/{PLAIN}"), run_id="r")
    assert len(session.ladder) == 2
    session.ladder[0].complete([{"role": "user", "content": "x"}], purpose=Purpose.SUMMARIZE)
    (request,) = stub.completion_requests(PLAIN)
    assert request.body["max_tokens"] == 4096  # models.max_tokens, no effort level


def test_chimera_solve_applies_the_configured_effort(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "calc"
    (root / "specs").mkdir(parents=True)
    (root / "specs" / "r.yaml").write_text(
        "requirements:\n  - id: t\n    defines: {path: calc.py, symbol: total}\n"
    )
    (root / "calc.py").write_text("x = 1\n")
    (root / "chimera.toml").write_text("[effort.levels]\nstandard = {max_tokens = 777}\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@e.invalid"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run([*git, *cmd], cwd=root, check=True, capture_output=True)
    write = {"name": "write_file", "arguments": {"path": "calc.py", "content": "def total(): 0\n"}}
    turns = [
        {"purpose": "plan", "text": "1. Add total()."},
        {"purpose": "act", "tool_calls": [write]},
        {"purpose": "act", "text": "Done."},
        {"purpose": "review", "text": "APPROVE"},
    ]
    script = tmp_path / "s.yaml"
    script.write_text(yaml.safe_dump({"model": "s", "turns": turns}))
    # --no-learning: the after-run reflection's own call would be a fifth, off-script turn.
    argv = ["solve", "Add total()", "--root", str(root), "--model", f"scripted:{script}"]
    code = main([*argv, "--no-learning"])
    assert code == 0, capsys.readouterr()
    (run_dir,) = (root / ".chimera" / "runs").iterdir()
    events = [json.loads(x) for x in (run_dir / "audit.jsonl").read_text().splitlines()]
    levels = [
        (e["fields"]["purpose"], e["fields"]["max_tokens"])
        for e in events
        if e["event"] == "effort.choice"
    ]
    # Every call went through the policy; the act turns got the configured standard level.
    assert ("act", 777) in levels and len(levels) == 4


def test_plans_get_the_level_not_a_fixed_cap(tmp_path: Path) -> None:
    from chimera.core.autonomous import AutonomousAgent
    from chimera.core.deps import AgentDeps
    from chimera.runner import LocalRunner
    from chimera.spec.loader import load_spec

    root = tmp_path / "calc"
    (root / "specs").mkdir(parents=True)
    (root / "specs" / "r.yaml").write_text(
        "requirements:\n  - id: t\n    defines: {path: calc.py, symbol: total}\n"
    )
    (root / "calc.py").write_text("x = 1\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@e.invalid"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run([*git, *cmd], cwd=root, check=True, capture_output=True)
    (root / "chimera.toml").write_text("[effort.levels]\nstandard = {max_tokens = 3000}\n")
    write = {"name": "write_file", "arguments": {"path": "calc.py", "content": "def total(): 0\n"}}
    turns = [
        {"purpose": "plan", "text": "1. Add total()."},
        {"purpose": "act", "tool_calls": [write]},
        {"purpose": "act", "text": "Done."},
        {"purpose": "review", "text": "APPROVE"},
    ]
    script = tmp_path / "s.yaml"
    script.write_text(yaml.safe_dump({"model": "s", "turns": turns}))
    config = load_config(root)
    factory = SessionFactory()
    session = factory.open(factory.prepare(root, config, f"scripted:{script}"), run_id="r")
    agent = AutonomousAgent(
        AgentDeps(ladder=session.ladder, runner=LocalRunner(), audit=session.audit),
        workspace=root,
        spec=load_spec([root / "specs"]),
        run_dir=session.run_dir,
        config=config.agent,
    )
    assert agent.solve("Add total()").outcome == "solved"
    (rung,) = session.ladder
    assert isinstance(rung, EffortBackend)
    scripted = rung.rungs[0].backend.inner  # type: ignore[attr-defined]  # → budgeted → scripted
    caps = {c.purpose.value: c.max_tokens for c in scripted.calls}
    # The plan's cap is the configured level (above the 2,048 it was once fixed at); the
    # review keeps its own small cap (a one-line verdict).
    assert caps["plan"] == 3000 and caps["act"] == 3000
