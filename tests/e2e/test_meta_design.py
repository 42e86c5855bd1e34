"""``chimera meta design`` end to end on the shipped example (docs/how-to/agent-profiles.md,
whose report it matches line for line): a scripted designer proposes three candidates; one
overfits the visible checks and is caught, one asks for a tool outside the designer's allowlist
and does not get it, the general one is chosen."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from chimera.governance.audit import verify_audit_log
from chimera.meta.loader import load_profile

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "meta" / "TASKS.yaml"
PAGE = ROOT / "docs" / "how-to" / "agent-profiles.md"
HELDOUT_WORDS = ("heldout_checks", "slug-heldout", "title-heldout", "Many   Spaces")


@pytest.mark.slow
def test_meta_design_catches_the_overfit_and_isolates_the_tools(tmp_path: Path) -> None:
    out = tmp_path / "PROFILE.yaml"
    proc = subprocess.run(
        [sys.executable, "-m", "chimera", "meta", "design", str(EXAMPLE), "-o", str(out),
         "--root", str(tmp_path)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "suspected reward hacking on slug" in proc.stdout
    # Progress on stderr (not a terminal: plain lines): the designer, each candidate's task
    # runs out of candidates × tasks, then the scoring.
    steps = [line for line in proc.stderr.splitlines() if line.startswith("chimera: meta design [")]
    assert steps[0].startswith("chimera: meta design [0/1] designer (")
    assert steps[-1].endswith("] scored")
    assert any("general: " in line for line in steps)
    assert "title: edited what the visible checks run: tests/check_title.py" in proc.stdout
    assert "tool isolation: not granted run_command" in proc.stdout
    assert "* general:" in proc.stdout
    shown = PAGE.read_text(encoding="utf-8").split("$ chimera meta design ", 1)[1]
    shown_lines = shown.split("```", 1)[0].splitlines()[1:]
    assert len(shown_lines) == 8
    assert shown_lines == [line for line in proc.stdout.splitlines() if line in shown_lines]
    for line in shown_lines:
        assert line in proc.stdout.splitlines(), line

    run_dir = next((tmp_path / ".chimera" / "runs").iterdir())
    doc = json.loads((run_dir / "meta.json").read_text(encoding="utf-8"))
    by_name = {c["profile"]: c for c in doc["candidates"]}
    overfit, greedy, general = by_name["overfit"], by_name["greedy"], by_name["general"]
    assert overfit["visible"]["estimate"] == 1.0 and overfit["heldout"]["estimate"] == 0.0
    assert overfit["gap"] == 1.0
    assert overfit["suspected_reward_hacking"] == ["slug", "title"]
    assert overfit["check_edits"] == ["title"]
    assert overfit["credited"]["estimate"] == 0.0
    assert greedy["denied_tools"] == ["run_command"]
    assert "run_command" not in greedy["tools"]
    assert general["credited"]["estimate"] == 1.0
    assert doc["chosen"] == "general"  # overfit comes first and is cheapest: visible would pick it

    chosen = load_profile(out)
    assert chosen.name == "general" and chosen.tools == ("read_file", "list_dir", "write_file")

    # The forbidden tool was asked for at run time and refused: not in the candidate's tools.
    for task in ("slug", "title"):
        runs = run_dir / "work" / "greedy" / task / ".chimera" / "runs"
        transcript = next(runs.glob("*/transcript.jsonl")).read_text(encoding="utf-8")
        assert "error: unknown tool 'run_command'; available: read_file, write_file" in transcript

    # Held-out requirements reached no workspace, candidate file or prompt of any run.
    for path in (run_dir / "work").rglob("*"):
        if path.is_file() and ".git" not in path.parts:
            text = path.read_text(encoding="utf-8", errors="replace")
            assert not any(w in text for w in HELDOUT_WORDS), path
    for path in (run_dir / "candidates").iterdir():
        assert not any(w in path.read_text(encoding="utf-8") for w in HELDOUT_WORDS)

    events = [
        json.loads(line)
        for line in (run_dir / "audit.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    names = [e["event"] for e in events]
    assert names.index("meta.design") < names.index("meta.trial")
    last_trial = max(i for i, n in enumerate(names) if n == "meta.trial")
    first_heldout = names.index("meta.heldout")
    # Each candidate's held-out checks come after all of its own runs.
    per_candidate: dict[str, list[str]] = {}
    for e in events:
        if e["event"] in ("meta.trial", "meta.heldout"):
            per_candidate.setdefault(e["fields"]["candidate"], []).append(e["event"])
    for seq in per_candidate.values():
        assert seq == ["meta.trial", "meta.trial", "meta.heldout", "meta.heldout"]
    assert first_heldout < last_trial  # candidates are judged one after another
    denied = [e["fields"] for e in events if e["event"] == "meta.tool_denied"]
    assert denied == [{"profile": "greedy", "denied": ["run_command"]}]
    assert verify_audit_log(run_dir / "audit.jsonl").ok
