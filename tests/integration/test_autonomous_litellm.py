"""The AutonomousAgent over the real LiteLLM gateway, against a local OpenAI-compatible stub.

Proves the loop works through real HTTP tool calls, that a rate-limited call retried by the
gateway is not an attempt (nothing is carried forward), and that cost comes from a price
registered with LiteLLM (known, so not ``None``).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from chimera.config import AgentConfig, ModelPrice
from chimera.core.autonomous import AutonomousAgent
from chimera.core.deps import AgentDeps
from chimera.governance.audit import AuditLog
from chimera.providers import BudgetedBackend, LiteLLMBackend, TokenBudget, register_prices
from chimera.runner import LocalRunner
from chimera.spec.loader import load_spec
from chimera.testing.openai_stub import OpenAIStubServer, StubFault, StubReply, StubToolCall

MODEL = "chimera-autonomous-stub"
SPEC = """\
requirements:
  - id: total-defined
    defines: {path: calc.py, symbol: total, kind: function}
"""
GOOD = "def add(a, b):\n    return a + b\n\n\ndef total(xs):\n    return sum(xs)\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "specs").mkdir(parents=True)
    (root / "specs" / "reqs.yaml").write_text(SPEC)
    (root / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "base"], cwd=root, check=True)
    return root


@pytest.mark.slow
def test_autonomous_litellm_solves_over_http_with_known_cost(repo: Path) -> None:
    register_prices({f"openai/{MODEL}": ModelPrice(input_per_mtok=1.0, output_per_mtok=4.0)})
    with OpenAIStubServer() as server:
        server.add_fault(StubFault(status=429, retry_after=0, message="slow down"))
        server.add_reply(
            MODEL,
            StubReply(text="1. Add total() to calc.py.", prompt_tokens=500, completion_tokens=20),
            StubReply(
                tool_calls=(StubToolCall("write_file", {"path": "calc.py", "content": GOOD}),),
                prompt_tokens=900,
                completion_tokens=60,
            ),
            StubReply(text="Added total().", prompt_tokens=1000, completion_tokens=5),
            StubReply(text="APPROVE", prompt_tokens=700, completion_tokens=2),
        )
        inner = LiteLLMBackend(
            f"openai/{MODEL}", api_base=server.api_base, api_key="stub", num_retries=2
        )
        backend = BudgetedBackend(inner, TokenBudget(max_tokens=200_000), model=f"openai/{MODEL}")
        run_dir = repo / ".chimera" / "runs" / "r1"
        audit = AuditLog(run_dir / "audit.jsonl", "r1")
        agent = AutonomousAgent(
            AgentDeps(ladder=(backend,), runner=LocalRunner(), audit=audit),
            workspace=repo,
            spec=load_spec([repo / "specs"]),
            run_dir=run_dir,
            config=AgentConfig(),
        )
        result = agent.solve("Add total() to calc.py")
        requests = server.completion_requests(MODEL)
    assert result.outcome == "solved", result.final_report
    assert len(result.attempts) == 1  # the 429 was a transport retry, not an attempt
    assert inner.transport_retries >= 1
    assert (repo / "calc.py").read_text() == GOOD
    assert result.tokens == 500 + 20 + 900 + 60 + 1000 + 5 + 700 + 2
    expected = ((500 + 900 + 1000 + 700) * 1.0 + (20 + 60 + 5 + 2) * 4.0) / 1_000_000
    assert result.cost_usd == pytest.approx(expected)
    assert "cost: $" in result.final_report
    acts = [r.body for r in requests if r.body.get("tools")]
    assert len(acts) == 2  # two tool-calling turns; plan and review carry no tools
    assert {t["function"]["name"] for t in acts[0]["tools"]} >= {"write_file", "run_command"}
