"""The queue's follow-up events under act, each replayed from the webhook the fake recorded:
``@chimera stop`` cancels the running workflow run; a Chimera PR closed frees a slot and the
drain starts the next queued issue through a dispatch of the caller."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from chimera.testing.github_fake import TokenKind

if TYPE_CHECKING:
    from act.conftest import ActWorld


@pytest.mark.slow
@pytest.mark.bwrap
def test_chimera_stop_cancels_the_running_workflow_run(act_world: ActWorld) -> None:
    w = act_world
    issue = w.open_issue("Add total()", w.total_task)
    # The fix run as far as its decide job: it took the slot and is still running.
    (fix,) = w.deliver(w.label(issue), job="decide")
    assert w.outputs(fix, "decide")["proceed"] == "true", w.explain([fix])
    assert w.repo.workflow_runs[fix.run_id]["status"] == "in_progress"
    assert "chimera:running" in w.labels(issue)
    replies = len(w.comments(issue))

    stop = w.comment(issue, "@chimera stop", by="alice")
    (answer,) = w.deliver(stop)
    # The caller starts once; every job listening to comments runs; only the command job
    # answers `stop`, and decide (which takes the verbs that start work) declines it.
    assert answer.workflow.name == "chimera.yml"
    assert w.ran(answer) == {"app": "success", "command": "success", "decide": "success"}
    assert w.outputs(answer, "command")["cancelled"] == str(fix.run_id)
    assert w.outputs(answer, "decide")["proceed"] == "false"
    run = w.repo.workflow_runs[fix.run_id]
    assert (run["status"], run["conclusion"]) == ("completed", "cancelled")
    assert "chimera:running" not in w.labels(issue)
    new = w.comments(issue)[replies + 1 :]  # after the person's own comment
    assert len(new) == 1 and "stop" in new[0].lower(), new


@pytest.mark.slow
@pytest.mark.bwrap
def test_the_drain_starts_the_next_queued_issue_when_a_pr_closes(act_world: ActWorld) -> None:
    w = act_world
    # Three Chimera PRs are open: the reusable workflow's max-open-prs ("3") is reached.
    pulls = [w.arrange_chimera_pull(f"task {n}") for n in range(3)]
    waiting = w.open_issue("Add total()", w.total_task)
    (queued,) = w.deliver(w.label(waiting))
    assert w.outputs(queued, "decide")["proceed"] == "false", w.explain([queued])
    assert "agent" not in queued.jobs or queued.jobs["agent"] == "skipped"
    assert w.labels(waiting) == ["chimera", "chimera:queued"]

    # alice closes one of them unmerged: the drain (on pull_request closed) frees the slot
    # and dispatches the caller for the queued issue with its original labeller.
    before = len(w.fake.events)
    (drain,) = w.deliver(w.close_pull(pulls[0][1], by="alice"))
    assert w.ran(drain) == {"app": "success", "drain": "success", "tick": "success"}, w.explain(
        [drain]
    )
    assert w.outputs(drain, "drain")["started"] == str(waiting)
    (dispatch,) = w.events_since(before, "workflow_dispatch")
    assert (dispatch.actor, dispatch.kind) == ("my-chimera-app[bot]", TokenKind.APP)
    assert dispatch.payload is not None
    inputs = dict(dispatch.payload["inputs"])
    assert (inputs["issue-number"], inputs["labeller"]) == (str(waiting), "alice")
    assert inputs["claim"], "the dispatch names the slot claim its run takes over"

    # The dispatch starts the caller only; its decide admits the issue.
    (started,) = w.deliver(dispatch, job="decide")
    assert started.workflow.name == "chimera.yml"
    assert w.outputs(started, "decide")["proceed"] == "true", w.explain([started])
    assert w.labels(waiting) == ["chimera", "chimera:running"]
