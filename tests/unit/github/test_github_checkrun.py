"""The Spec check run's annotations go out in requests of at most 50 (GitHub's limit)."""

from __future__ import annotations

import pytest

from chimera.errors import GitHubApiError
from chimera.github.checkrun import ANNOTATIONS_PER_REQUEST, RequirementLine, post_spec_check
from chimera.github.client import GitHubClient, RetryPolicy
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
