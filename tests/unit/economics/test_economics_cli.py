"""``chimera ask``, ``chimera delegations`` and ``chimera cascade-bench`` end to end, with
scripted models (no key, no network)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from chimera.cli import main

SOURCE = "\n".join(f"# line {i}" for i in range(1, 60)) + "\nDEFAULT_TIMEOUT = 30\n"


def script(path: Path, turns: list[dict[str, object]]) -> str:
    path.write_text(yaml.safe_dump({"turns": turns}))
    return f"scripted:{path}"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "http.py").write_text(SOURCE)
    (root / "README.md").write_text("HTTP client.\n")
    # Small enough a file would be answered inline by the top model; force delegation.
    (root / "chimera.toml").write_text("[hierarchy]\ninline_max_tokens = 50\n")
    return root


def envelope(line: int, quote: str) -> str:
    return json.dumps(
        {
            "answer": "The default timeout is 30 s.",
            "evidence": [{"file": "src/http.py", "line": line, "quote": quote}],
        }
    )


def ask_scripts(tmp_path: Path, worker_text: str, reask_text: str | None = None) -> list[str]:
    plan = {
        "subtasks": [
            {"id": "timeout", "question": "What is the default timeout?", "files": ["src/http.py"]}
        ]
    }
    top = script(
        tmp_path / "top.yaml",
        [
            {"purpose": "plan", "text": json.dumps(plan), "expect": ["src/http.py", "README.md"]},
            {"purpose": "summarize", "text": "The default timeout is 30 seconds (src/http.py:60)."},
        ],
    )
    turns: list[dict[str, object]] = [
        {"text": worker_text, "usage": {"prompt_tokens": 700, "completion_tokens": 40}}
    ]
    if reask_text is not None:
        turns.append({"text": reask_text, "expect": ["failed verification"]})
    worker = script(tmp_path / "worker.yaml", turns)
    return ["--model", top, "--worker-model", worker]


def test_ask_answers_with_verified_evidence_and_writes_receipts(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    models = ask_scripts(tmp_path, envelope(60, "DEFAULT_TIMEOUT = 30"))
    code = main(
        ["ask", "What is the default HTTP timeout?", "--root", str(repo), *models, "--quiet"]
    )
    captured = capsys.readouterr()
    out = captured.out
    assert code == 0, captured.err
    assert out.startswith("The default timeout is 30 seconds")
    assert "src/http.py:60: DEFAULT_TIMEOUT = 30" in out
    assert "1 delegation(s), 0 inline, 0 unverified" in out
    # Scripted models are replayed locally and cost nothing, so the account is exactly zero.
    assert "net saving: $0.000000" in out
    (run_dir,) = (repo / ".chimera" / "runs").iterdir()
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["findings"][0]["verified"] is True
    assert [p.name for p in sorted(repo.rglob("*")) if ".chimera" not in p.parts] == [
        "README.md",
        "chimera.toml",
        "src",
        "http.py",
    ]  # read-only: nothing else written

    code = main(["delegations", "--root", str(repo)])
    report = capsys.readouterr().out
    assert code == 0
    assert f"run {run_dir.name}: 1 delegation(s)" in report
    assert "receipts match the run's verified audit log" in report


def test_ask_reasks_once_and_reports_unverified_evidence(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wrong = envelope(60, "DEFAULT_TIMEOUT = 10")
    models = ask_scripts(tmp_path, wrong, reask_text=wrong)
    code = main(["ask", "Timeout?", "--root", str(repo), *models, "--quiet", "--json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 1
    finding = document["findings"][0]
    assert finding["verified"] is False and finding["verdict"]["reask"] is True
    assert "quote not found verbatim" in finding["verdict"]["problems"][0]
    assert document["evidence"] == []


def test_delegations_detects_receipts_that_disagree_with_the_audit_log(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(
        [
            "ask",
            "Timeout?",
            "--root",
            str(repo),
            "--quiet",
            *ask_scripts(tmp_path, envelope(60, "DEFAULT_TIMEOUT = 30")),
        ]
    )
    capsys.readouterr()
    (run_dir,) = (repo / ".chimera" / "runs").iterdir()
    receipts = run_dir / "delegations.jsonl"
    lines = receipts.read_text().splitlines()
    forged = [json.loads(x) for x in lines]
    for line in forged:
        if line["kind"] == "delegation":
            line["prompt_tokens"] -= 100  # a cheaper-looking delegation than was audited
    receipts.write_text("".join(json.dumps(x) + "\n" for x in forged))
    code = main(["delegations", run_dir.name, "--root", str(repo)])
    assert code == 1
    assert "NOT AUDITED" in capsys.readouterr().out


def test_delegations_usage_errors(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["delegations", "--root", str(repo)]) == 2
    assert "no run with delegation receipts" in capsys.readouterr().err
    assert main(["delegations", "nope", "--root", str(repo)]) == 2
    assert "run 'nope' does not exist" in capsys.readouterr().err


def test_cascade_bench_reports_the_tail_tiers_and_models(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    weak = script(
        tmp_path / "weak.yaml",
        [
            {
                "text": "no",
                "usage": {"prompt_tokens": 10, "completion_tokens": 1, "cost_usd": 0.001},
            },
            {
                "text": "ANSWER-OK",
                "usage": {"prompt_tokens": 10, "completion_tokens": 1, "cost_usd": 0.001},
            },
        ],
    )
    top = script(
        tmp_path / "top.yaml",
        [
            {
                "text": "ANSWER-OK",
                "usage": {"prompt_tokens": 10, "completion_tokens": 1, "cost_usd": 0.1},
            }
        ]
        * 3,
    )
    tasks = tmp_path / "tasks.yaml"
    tasks.write_text(
        yaml.safe_dump(
            {
                "cascade": {
                    "tiers": [{"name": "weak", "route": weak}, {"name": "top", "route": top}]
                },
                "gates": [{"kind": "criteria", "must_match": ["^ANSWER-OK"]}],
                "tasks": [{"id": "a", "prompt": "q1"}, {"id": "b", "prompt": "q2"}],
            }
        )
    )
    code = main(
        ["cascade-bench", "--tasks", str(tasks), "--root", str(tmp_path), "--json", "--quiet"]
    )
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    assert report["answered_by"] == {"weak": 1, "top": 1, "none": 0}
    assert [o["cascade_cost_usd"] for o in report["outcomes"]] == pytest.approx([0.101, 0.001])
    assert report["cascade"]["total"] == pytest.approx(0.102)
    assert report["top_alone"]["total"] == pytest.approx(0.2)
    assert [t["model"] for t in report["tiers"]] == [weak, top]
    assert report["top_model"] == top
    assert "not validated against real models" in report["note"]


def test_cascade_bench_rejects_a_bad_task_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = tmp_path / "tasks.yaml"
    tasks.write_text("tasks:\n  - id: a\n    promt: typo\n")
    assert main(["cascade-bench", "--tasks", str(tasks), "--root", str(tmp_path)]) == 2
    assert f"{tasks}:3:5: tasks.0.promt: Extra inputs are not permitted" in capsys.readouterr().err
