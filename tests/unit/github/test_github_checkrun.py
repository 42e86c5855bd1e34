"""The Spec check run's annotations go out in requests of at most 50 (GitHub's limit)."""

from __future__ import annotations

import json

import pytest

from chimera.errors import GitHubApiError
from chimera.github.client.client import GitHubClient, RetryPolicy
from chimera.github.conversation.checkrun import (
    ANNOTATIONS_PER_REQUEST,
    RequirementLine,
    claimed_lines,
    post_spec_check,
)
from chimera.testing.github_fake import FakeRepo, GitHubFake


def client(fake: GitHubFake) -> GitHubClient:
    token = fake.add_workflow_token("octo/app", permissions={"checks": "write"})
    return GitHubClient(
        "octo/app",
        token,
        api_url=fake.api_url,
        retry=RetryPolicy(backoff_s=0.01, timeout_s=2),
        throttle=False,
        sleep=lambda s: None,
    )


def test_120_red_requirements_are_three_requests_and_every_annotation_arrives(
    fake: GitHubFake, repo: FakeRepo
) -> None:
    sha = repo.head_sha("main")
    assert sha is not None
    rows = [
        RequirementLine(f"r-{i}", "failed", "specs/app.yaml", 3 + 4 * i, "no") for i in range(120)
    ]
    rows.append(RequirementLine("ok", "passed", "specs/app.yaml", 1))
    run_id = post_spec_check(client(fake), sha, rows, title="Spec not met")
    run = repo.check_runs[run_id]
    assert run["conclusion"] == "failure"
    assert [a["start_line"] for a in run["annotations"]] == [3 + 4 * i for i in range(120)]
    assert run["output"]["summary"].count("\n") == 120  # one line per requirement
    posts = fake.calls_to("POST", r"/check-runs$")
    patches = fake.calls_to("PATCH", rf"/check-runs/{run_id}$")
    assert len(posts) == 1 and len(patches) == 2
    assert ANNOTATIONS_PER_REQUEST == 50


def test_the_fake_refuses_51_annotations_in_one_request_as_github_does(
    fake: GitHubFake, repo: FakeRepo
) -> None:
    sha = repo.head_sha("main")
    gh = client(fake)
    note = RequirementLine("r", "failed", "specs/app.yaml", 2).annotation()
    data = {
        "name": "x",
        "head_sha": sha,
        "status": "completed",
        "conclusion": "failure",
        "output": {"title": "t", "summary": "s", "annotations": [note] * 51},
    }
    with pytest.raises(GitHubApiError) as err:
        gh._call("POST", lambda: gh._raw("POST", "/repos/octo/app/check-runs", data))
    assert err.value.status == 422


def test_all_green_is_a_success_with_no_annotations(fake: GitHubFake, repo: FakeRepo) -> None:
    sha = repo.head_sha("main")
    assert sha is not None
    rows = [RequirementLine("a", "passed", "specs/app.yaml", 2)]
    run = repo.check_runs[post_spec_check(client(fake), sha, rows, title="Spec met")]
    assert run["conclusion"] == "success" and run.get("annotations", []) == []


ROWS = {"a": ("specs/app.yaml", 2), "b": ("specs/app.yaml", 5)}


def test_claims_naming_exactly_the_derived_ids_are_shown_at_their_yaml_lines() -> None:
    lines, reasons = claimed_lines(ROWS, ["a", "b"], json.dumps({"a": "passed", "b": "failed"}))
    assert reasons == []
    assert [(r.id, r.status, r.line) for r in lines] == [("a", "passed", 2), ("b", "failed", 5)]
    assert lines[1].summary_line() == "- `b` failed at `specs/app.yaml:5`"


def test_an_unknown_id_or_a_missing_one_or_no_object_is_a_reason_and_an_error_line() -> None:
    forged = json.dumps({"a": "passed", "b": "passed", "zz-made-up": "passed"})
    lines, reasons = claimed_lines(ROWS, ["a", "b"], forged)
    assert reasons == ["verify reported requirements the Spec does not declare: zz-made-up"]
    assert [r.id for r in lines] == ["a", "b", "chimera-verify"]  # the forged id is not shown
    assert lines[-1].status == "error" and "zz-made-up" in lines[-1].message

    lines, reasons = claimed_lines(ROWS, ["a", "b"], json.dumps({"a": "passed", "b": "nope"}))
    assert reasons == ["verify reported no status for: b"]
    assert [(r.id, r.status) for r in lines][:2] == [("a", "passed"), ("b", "error")]

    for said in ("", "[1]", "{oops"):
        lines, reasons = claimed_lines(ROWS, ["a", "b"], said)
        assert len(reasons) == 1 and "not a JSON object" in reasons[0]
        assert [r.status for r in lines] == ["error", "error", "error"]


def test_a_required_id_without_a_row_sits_at_the_fallback_and_extra_rows_are_optional() -> None:
    said = json.dumps({"a": "passed", "b": "passed", "goal": "passed"})
    lines, reasons = claimed_lines(ROWS, ["a", "goal"], said, fallback=("specs/x.yaml", 1))
    assert reasons == []
    assert [(r.id, r.path, r.line) for r in lines] == [
        ("a", "specs/app.yaml", 2),
        ("goal", "specs/x.yaml", 1),
        ("b", "specs/app.yaml", 5),
    ]


def test_a_given_verdict_decides_the_conclusion_not_the_rows(
    fake: GitHubFake, repo: FakeRepo
) -> None:
    sha = repo.head_sha("main")
    assert sha is not None
    green = [RequirementLine("a", "passed", "specs/app.yaml", 2)]
    run = repo.check_runs[
        post_spec_check(client(fake), sha, green, title="t", passed=False, preamble="Why.")
    ]
    assert run["conclusion"] == "failure"
    assert run["output"]["summary"] == "Why.\n\n- `a` passed at `specs/app.yaml:2`"
