"""``chimera ask`` and ``chimera delegations`` through LiteLLM over HTTP (the stub server),
with priced models: the account the user reads is the exact one."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from chimera.cli import main
from chimera.providers import cost_usd
from chimera.testing import OpenAIStubServer, StubReply

TOP, WORKER = "chimera-ask-it-top", "chimera-ask-it-worker"


@pytest.fixture
def stub() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer() as server:
        yield server


def test_ask_over_http_reports_the_exact_net_saving(
    stub: OpenAIStubServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "stub")
    root = tmp_path / "repo"
    (root / "lib").mkdir(parents=True)
    (root / "lib" / "pool.py").write_text(
        "\n".join(f"# filler {i}" for i in range(120)) + "\nMAX_WORKERS = 8\n"
    )
    (root / "chimera.toml").write_text(
        f'[models]\napi_base = "{stub.api_base}"\nnum_retries = 0\n'
        f'[models.prices."openai/{TOP}"]\ninput_per_mtok = 10.0\noutput_per_mtok = 30.0\n'
        f'[models.prices."openai/{WORKER}"]\ninput_per_mtok = 0.2\noutput_per_mtok = 0.8\n'
        "[hierarchy]\ninline_max_tokens = 100\n"
    )
    plan = {"subtasks": [{"id": "pool", "question": "Pool size?", "files": ["lib/pool.py"]}]}
    stub.add_reply(
        TOP,
        StubReply(text=json.dumps(plan), prompt_tokens=150, completion_tokens=30),
        StubReply(
            text="The pool has 8 workers (lib/pool.py:121).",
            prompt_tokens=250,
            completion_tokens=15,
        ),
    )
    stub.add_reply(
        WORKER,
        StubReply(
            text=json.dumps(
                {
                    "answer": "MAX_WORKERS is 8",
                    "evidence": [{"file": "lib/pool.py", "line": 121, "quote": "MAX_WORKERS = 8"}],
                }
            ),
            prompt_tokens=1500,
            completion_tokens=40,
        ),
    )
    code = main(
        [
            "ask",
            "How many workers does the pool run?",
            "--root",
            str(root),
            "--model",
            f"openai/{TOP}",
            "--worker-model",
            f"openai/{WORKER}",
            "--quiet",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "lib/pool.py:121: MAX_WORKERS = 8" in out
    worker_cost = cost_usd(f"openai/{WORKER}", 1500, 40)
    inline = cost_usd(f"openai/{TOP}", 1500, 40)
    overhead = [cost_usd(f"openai/{TOP}", 150, 30), cost_usd(f"openai/{TOP}", 250, 15)]
    known = [c for c in overhead if c is not None]
    assert worker_cost is not None and inline is not None and len(known) == len(overhead)
    net = inline - worker_cost - sum(known)
    assert f"net saving: ${net:.6f}" in out
    # The printed head is the whole hash: `audit verify --head` accepts it as printed.
    printed = re.search(r"run: (\S+) \(audit head ([0-9a-f]+)\)", out)
    assert printed, out
    run_rel, head = printed.groups()
    assert main(["audit", "verify", str(root / run_rel / "audit.jsonl"), "--head", head]) == 0
    capsys.readouterr()

    assert main(["delegations", "--root", str(root), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["net_saving_usd"] == pytest.approx(net, rel=1e-9)
    assert report["audit_problems"] == []
    # The worker's request carried the file, numbered, and no tools.
    (request,) = stub.completion_requests(WORKER)
    assert "  121| MAX_WORKERS = 8" in request.body["messages"][-1]["content"]
    assert "tools" not in request.body
