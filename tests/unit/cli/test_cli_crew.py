"""``chimera crew run`` and ``chimera crew check`` with scripted models, end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chimera.cli import main

CREW = """\
crew: review
roles:
  - name: tests
    goal: Decide whether the change is tested.
    model: scripted:tests.yaml
  - name: security
    goal: Decide whether the change is safe.
    model: scripted:security.yaml
    budget: {tokens: 5000}
  - name: lead
    goal: Give the final answer.
supervisor: {role: lead, rounds: 2}
"""


def _project(root: Path) -> Path:
    crews = root / ".chimera.d" / "crews"
    crews.mkdir(parents=True)
    (crews / "review.yaml").write_text(CREW)
    (root / "tests.yaml").write_text(
        "- text: '- parse() is tested by test_parse.'\n"
        "  usage: {prompt_tokens: 100, completion_tokens: 20, cost_usd: 0.002}\n"
    )
    (root / "security.yaml").write_text(
        '- text: "- parse() is not tested by test_parse.\\n- No shell calls."\n'
        "  usage: {prompt_tokens: 100, completion_tokens: 30, cost_usd: 0.003}\n"
    )
    (root / "lead.yaml").write_text(
        "- expect: ['vs security: parse() is not tested']\n"
        "  text: 'Tested per tests, disputed by security; no shell calls.'\n"
        "- text: 'solo answer'\n"
        "  usage: {prompt_tokens: 60, completion_tokens: 10, cost_usd: 0.001}\n"
    )
    return crews / "review.yaml"


def test_crew_run_prints_status_answer_and_receipt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    crew = _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    code = main(
        [
            "crew",
            "run",
            str(crew),
            "Is parse() good?",
            "--model",
            "scripted:lead.yaml",
            "--baseline",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.startswith("crew review: completed — the supervisor gave the final answer\n")
    assert "Tested per tests, disputed by security; no shell calls." in out
    assert "  tests: 120 tokens, $0.002000\n" in out
    assert "  security: 130 tokens, $0.003000 (ceiling 5000 tokens)\n" in out
    assert "  crew: 250 tokens, $0.005000\n" in out
    assert "one agent alone: 70 tokens, $0.001000 (finished); crew/alone tokens: 3.571" in out
    assert "chimera: crew review (supervisor): tests, security, lead" in err
    assert "1 disagreement(s)" in err
    (run,) = (tmp_path / ".chimera" / "runs").iterdir()
    document = json.loads((run / "crew.json").read_text())
    assert document["status"] == "completed"
    assert document["receipt"]["baseline_tokens"] == 70
    events = [json.loads(line)["event"] for line in (run / "audit.jsonl").read_text().splitlines()]
    assert events[0] == "crew.run" and "crew.receipt" in events and "crew.call" in events


def test_crew_run_exits_1_with_a_partial_answer_when_a_role_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    crew = _project(tmp_path)
    (tmp_path / "lead.yaml").write_text("[]\n")
    monkeypatch.chdir(tmp_path)
    code = main(["crew", "run", str(crew), "task", "--model", "scripted:lead.yaml", "--json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 1
    assert document["status"] == "partial"
    assert "lead stopped (error" in document["reason"]
    assert "[security] No shell calls." in document["answer"]


def test_crew_check_lists_every_problem_and_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    crews = tmp_path / ".chimera.d" / "crews"
    crews.mkdir(parents=True)
    (crews / "ok.yaml").write_text(CREW)
    (crews / "bad.yaml").write_text(
        "roles:\n  - {name: a, goal: g, tools: [edit_file]}\nparalel: {}\n"
    )
    monkeypatch.chdir(tmp_path)
    code = main(["crew", "check"])
    out, err = capsys.readouterr()
    assert code == 2
    lines = out.splitlines()
    assert lines[0].startswith(
        ".chimera.d/crews/bad.yaml:2:32: tool 'edit_file' changes the workspace"
    )
    assert lines[1] == (
        ".chimera.d/crews/bad.yaml:3:1: unknown field 'paralel' at the top level; "
        "did you mean 'parallel'?"
    )
    assert lines[2].startswith(".chimera.d/crews/ok.yaml: ok: crew 'review' (supervisor lead")
    assert "1 of 2 crew file(s) invalid" in err
    (crews / "bad.yaml").unlink()
    assert main(["crew", "check"]) == 0


def test_crew_usage_errors_are_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CHIMERA_MODEL", raising=False)
    assert main(["crew", "check"]) == 2
    assert "no crew files" in capsys.readouterr().err
    crew = _project(tmp_path)
    assert main(["crew", "run", str(crew), "task"]) == 2
    assert capsys.readouterr().err.strip().startswith("chimera: error: no model: pass --model")
    assert main(["crew"]) == 2
    assert "a subcommand is required" in capsys.readouterr().err
