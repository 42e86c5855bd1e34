"""The review path under act: a ``risk: high`` change opens as a draft; a person's
approval resumes the paused run (the agent job reads the earlier run's artifact through the
REST API); a later approval of the head commit starts CI (the App closes and reopens the PR,
an event that starts workflows, unlike the GITHUB_TOKEN's)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from chimera.testing.act import triggered_by
from chimera.testing.github_fake import TokenKind

if TYPE_CHECKING:
    from act.conftest import ActWorld

CHECK_WORKFLOW = Path(__file__).resolve().parents[3] / "examples/workflows/chimera-check.yml"
MIGRATION = "CREATE TABLE items (id integer);\n"


@pytest.mark.slow
@pytest.mark.bwrap
def test_a_risky_change_is_a_draft_until_approved_then_resumes_and_starts_ci(
    act_world: ActWorld,
) -> None:
    w = act_world
    w.script_writes({"migrations/001_init.sql": MIGRATION})
    issue = w.open_issue("First migration", w.risky_task)
    (fix,) = w.deliver(w.label(issue))
    assert w.ran(fix) == dict.fromkeys(
        ("app", "decide", "agent", "verify", "publish", "tick"), "success"
    ), w.explain([fix])
    assert w.outputs(fix, "publish")["status"] == "awaiting_approval", w.explain([fix])
    (pull,) = w.pulls()
    assert pull["draft"] is True and "risk:high" in pull["labels"]
    assert w.labels(issue) == ["chimera:awaiting-approval"]
    assert w.outcome_markers(issue) == [("awaiting_approval", f"{fix.run_id}:1")]
    head = w.repo.head_sha(pull["head"])

    # bob (write access, not the one who labelled) approves the head: the run resumes.
    calls = len(w.fake.calls)
    (resume,) = w.deliver(w.approve(pull["number"], by="bob"))
    assert resume.workflow.name == "chimera.yml"
    assert w.ran(resume) == dict.fromkeys(
        ("app", "decide", "agent", "verify", "publish"), "success"
    ), w.explain([resume])
    assert w.outputs(resume, "decide")["mode"] == "resume"
    # The paused run's folder came from the fix run's artifact, through the REST endpoints.
    rest = [c.path for c in w.fake.calls[calls:] if c.method == "GET" and c.status == 200]
    assert f"/repos/octo/app/actions/runs/{fix.run_id}/artifacts" in rest
    assert any(p.startswith("/repos/octo/app/actions/artifacts/") for p in rest)
    (pull,) = w.pulls()
    assert pull["draft"] is False and w.repo.head_sha(pull["head"]) == head
    assert w.labels(issue) == ["chimera:pr-open"]
    assert [k for k, _ in w.outcome_markers(issue)] == ["awaiting_approval", "resumed"]
    assert "CI starts after a person with write access approves" in w.comments(issue)[-1]

    # An approval of the (unchanged) head now starts CI: the App closes and reopens the PR.
    before = len(w.fake.events)
    (start,) = w.deliver(w.approve(pull["number"], by="bob"))
    assert start.jobs.get("start-ci") == "success", w.explain([start])
    assert "agent" not in w.ran(start)
    started = [
        (e.event, e.action, e.actor, e.kind)
        for e in w.events_since(before, "pull_request")
        if e.action in ("closed", "reopened")
    ]
    bot = "my-chimera-app[bot]"
    assert started == [
        ("pull_request", "closed", bot, TokenKind.APP),
        ("pull_request", "reopened", bot, TokenKind.APP),
    ]
    reopened = w.events_since(before, "pull_request")[-1]
    assert reopened.payload is not None
    assert triggered_by(CHECK_WORKFLOW, "pull_request", dict(reopened.payload))
    assert w.pulls()[0]["state"] == "open" and w.repo.head_sha(pull["head"]) == head
