"""publish's own "Chimera Spec" check run, end to end on the GitHub fake: one line per
requirement at its YAML line, the ids and lines re-derived from the spec files, verify's
per-requirement ``results`` only claims checked against them — a forged result for an id the
Spec does not declare, or one that leaves a requirement out, fails the check."""

from __future__ import annotations

import json
import re
import subprocess
from typing import TYPE_CHECKING, Any

from chimera.testing.github_fake import comment_event

if TYPE_CHECKING:
    from conftest import World

LINE = re.compile(r"^- `(?P<id>[^`]+)` (?P<status>\w+) at `(?P<path>[^`:]+):(?P<line>\d+)`$")


def model(world: World) -> None:
    world.script_calc(world.total_calc)


def run(world: World, *, results: str | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """An ``@chimera run`` through decide → agent → verify → publish; ``results`` replaces
    verify's ``results`` output on its way to publish. Returns publish's outputs and the
    Chimera Spec check run on the PR's head."""
    model(world)
    issue = world.add_total_issue()
    gh = world.fake.pygithub(world.fake.add_token("alice"))
    said = gh.get_repo("octo/app").get_issue(int(issue["number"])).create_comment("@chimera run")
    forged = {} if results is None else {"CHIMERA_VERIFIED_RESULTS": results}
    jobs = world.pipeline(
        "issue_comment",
        comment_event(world.fake, "octo/app", said.id),
        run=81,
        publish_env=forged,
    )
    assert jobs["verify"]["verdict"] == "passed"
    assert jobs["publish"]["status"] == "pr_opened"
    assert len(world.repo.pulls()) == 1
    head = world.repo.head_sha("chimera/issue-1")
    assert head is not None
    (check,) = [c for c in world.repo.checks_for(head) if c["name"] == "Chimera Spec"]
    return jobs, check


def lines(check: dict[str, Any]) -> list[dict[str, str]]:
    found = (LINE.match(s) for s in check["output"]["summary"].splitlines())
    return [m.groupdict() for m in found if m]


def test_a_published_prs_check_has_one_line_per_requirement_at_its_yaml_line(
    world: World,
) -> None:
    jobs, check = run(world)
    assert check["conclusion"] == "success" and check["app"] == "github-actions"
    assert "Spec met" in check["output"]["title"]
    shown = lines(check)
    claimed = json.loads(jobs["verify"]["results"])
    assert {s["id"] for s in shown} == set(claimed) == {"keeps-add", "total-defined"}
    for row in shown:
        assert row["status"] == claimed[row["id"]] == "passed"
        text = subprocess.run(
            ["git", "--git-dir", str(world.remote), "show", f"{check['head_sha']}:{row['path']}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
        assert f"id: {row['id']}" in text[int(row["line"]) - 1]
    # The goal's requirement landed in the PR's own acceptance file; keeps-add is the base's.
    where = {s["id"]: s["path"] for s in shown}
    assert where["keeps-add"] == "specs/app.yaml"
    assert where["total-defined"].startswith("specs/task-gh-1-")


def test_a_forged_result_for_an_unknown_id_fails_the_check(world: World) -> None:
    forged = json.dumps({"keeps-add": "passed", "total-defined": "passed", "rm-rf": "passed"})
    _jobs, check = run(world, results=forged)
    # The PR is still published (verify's verdict is re-derived elsewhere), but its check
    # says the per-requirement claims were refused, and why.
    assert check["conclusion"] == "failure"
    assert "refused verify's results" in check["output"]["title"]
    assert {s["id"] for s in lines(check)} == {"keeps-add", "total-defined", "chimera-verify"}
    (note,) = [a for a in check["annotations"] if a["title"].startswith("chimera-verify")]
    assert "does not declare: rm-rf" in note["message"]
    assert note["annotation_level"] == "failure"


def test_a_result_that_leaves_a_requirement_out_fails_the_check(world: World) -> None:
    _jobs, check = run(world, results=json.dumps({"total-defined": "passed"}))
    assert check["conclusion"] == "failure"
    (note,) = [a for a in check["annotations"] if a["title"].startswith("keeps-add")]
    assert note["title"] == "keeps-add: error" and note["start_line"] >= 1
    assert any("no status for: keeps-add" in a["message"] for a in check["annotations"])
