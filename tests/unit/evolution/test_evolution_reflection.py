"""ReflectionPart's bookkeeping with a scripted Reflector (scripted models: this checks what is
recorded and skipped, not the quality of a lesson), and the learning branch adapter on real
git repositories."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chimera.errors import JournalConflict
from chimera.evolution.branchstore import (
    LEARNING_BRANCH,
    PROPOSALS_NAME,
    BranchProposals,
    Lander,
    writer_for,
)
from chimera.evolution.proposals import Proposal, ProposalLedger
from chimera.evolution.reflection import LEARNING_FILE, REFLECTED_FILE, ReflectionPart
from chimera.memory.branch import GitBranch
from chimera.providers import ScriptedBackend, TokenBudget

INSIGHT = {"section": "Pitfalls", "text": "Read the failing requirement's evidence before editing."}


@dataclass
class FakeAudit:
    path: Path


@dataclass
class FakeSession:
    """The attributes ReflectionPart reads from a session."""

    root: Path
    run_dir: Path
    ladder: tuple[Any, ...]
    budget: TokenBudget
    run_id: str = "r1"
    audit: FakeAudit = field(init=False)

    def __post_init__(self) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        log = self.run_dir / "audit.jsonl"
        event = {"event": "run_started", "fields": {"task": "Fix the parser"}}
        log.write_text(json.dumps(event) + "\n")
        self.audit = FakeAudit(log)


@dataclass
class FakeState:
    """A project run's end state (what ``run_passed`` reads)."""

    status: str
    stop_reason: str = "goal_met"
    task: str | None = None
    tainted: bool = True


def _session(tmp_path: Path, turns: list[dict[str, Any]], tokens: int | None = None) -> Any:
    backend = ScriptedBackend(turns)
    return FakeSession(tmp_path, tmp_path / "run", (backend,), TokenBudget(max_tokens=tokens))


def test_a_failed_project_run_proposes_its_insight_and_no_skill(tmp_path: Path) -> None:
    answer = {"tags": [], "insights": [INSIGHT]}
    session = _session(tmp_path, [{"purpose": "summarize", "text": json.dumps(answer)}])
    report = ReflectionPart().finish(session, FakeState("failed", "attempts_exhausted"))
    (pid,) = report["reflection"]["proposed"]
    assert report["reflection"]["tainted"] is True
    assert any("not accepted by the Spec" in d for d in report["reflection"]["dropped"])
    (p,) = ProposalLedger.at(tmp_path).pending()
    assert (p.id, p.kind, p.verdict, p.state, p.trusted) == (
        pid, "bullet", "attempts_exhausted", "provisional", False,
    )  # fmt: skip
    doc = json.loads((session.run_dir / LEARNING_FILE).read_text())
    assert doc["run_id"] == "r1" and doc["bullets"] == [INSIGHT] and doc["skills"] == []
    # A resumed, finished run reflects once: the marker is there, no second model call.
    assert ReflectionPart().finish(session, FakeState("failed", "attempts_exhausted")) == {}
    assert session.ladder[0].remaining == 0


def test_an_unfinished_or_crashed_run_is_not_reflected_on(tmp_path: Path) -> None:
    session = _session(tmp_path, [])
    assert ReflectionPart().finish(session, FakeState("awaiting_approval")) == {}
    assert ReflectionPart().finish(session, None) == {}
    assert not (session.run_dir / REFLECTED_FILE).exists()


def test_a_short_budget_skips_without_calling_the_model(tmp_path: Path) -> None:
    session = _session(tmp_path, [{"purpose": "summarize", "text": "{}"}], tokens=1000)
    report = ReflectionPart().finish(session, FakeState("done"))
    assert "token(s) of the run's budget left" in report["reflection"]["skipped"]
    assert session.ladder[0].remaining == 1
    assert not ProposalLedger.at(tmp_path).path.exists()


def test_a_spent_usd_budget_skips_too(tmp_path: Path) -> None:
    session = _session(tmp_path, [{"purpose": "summarize", "text": "{}"}])
    session.budget = TokenBudget(max_usd=0.001)
    report = ReflectionPart().finish(session, FakeState("done"))
    assert "of the run's budget left" in report["reflection"]["skipped"]
    assert session.ladder[0].remaining == 1


def _remote(tmp_path: Path) -> str:
    remote = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    return str(remote)


def _proposal(n: int) -> Proposal:
    return Proposal.make(f"gh-1-{n}", "bullet", "action", "passed", section="S", text=f"t{n}")


class RacingWriter:
    """The branch store's writer whose first land loses a race: another run lands just
    before it (both on real git)."""

    def __init__(self, inner: Lander, other: BranchProposals) -> None:
        self.inner = inner
        self.other = other
        self.lands: list[str] = []

    def land(self, parent: str | None, files: Mapping[str, str], message: str) -> str:
        if not self.lands:
            self.other.store([_proposal(2)], run_id="gh-1-2", issue=1)
        try:
            sha = self.inner.land(parent, files, message)
        except JournalConflict:
            self.lands.append("conflict")
            raise
        self.lands.append("landed")
        return sha


def _sink(tmp_path: Path, remote: str, name: str) -> BranchProposals:
    branch = GitBranch(tmp_path / f"{name}.git", remote, branch=LEARNING_BRANCH)
    return BranchProposals(branch, writer_for(branch))


def test_the_branch_adapter_appends_one_commit_per_run_and_retries_a_lost_race(
    tmp_path: Path,
) -> None:
    remote = _remote(tmp_path)
    a = _sink(tmp_path, remote, "a")
    assert a.proposals() == [] and a.store([], run_id="x", issue=None) is None
    a.store([_proposal(1)], run_id="gh-1-1", issue=1)
    b = _sink(tmp_path, remote, "b")
    racing = RacingWriter(b.writer, a)
    b.writer = racing
    b.store([_proposal(3)], run_id="gh-1-3", issue=1)  # a lands t2 first; b's land conflicts
    assert racing.lands == ["conflict", "landed"]
    texts = [p.text for p in a.proposals()]
    assert texts == ["t1", "t2", "t3"]
    count = subprocess.run(
        ["git", "--git-dir", remote, "rev-list", "--count", LEARNING_BRANCH],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert count == "3"
    raw = subprocess.run(
        ["git", "--git-dir", remote, "show", f"{LEARNING_BRANCH}:{PROPOSALS_NAME}"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert all(json.loads(x)["trusted"] is False for x in raw.splitlines())
