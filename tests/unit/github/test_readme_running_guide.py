"""The Action's docs against what ships: "Your first Chimera PR" (docs/tutorials/first-pr.md,
once the README's "Running the Action, from zero"), its set-up step's page (the sandbox) and the
how-to page (docs/how-to/action.md): every workflow, secret, input, label and artifact they name
exists under that name, and every shipped workflow is in their tables (a guide followed
literally must not meet a name that is not there)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from chimera.cli import main

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"
GUIDE = (DOCS / "tutorials" / "first-pr.md").read_text(encoding="utf-8")
HOWTO = (DOCS / "how-to" / "action.md").read_text(encoding="utf-8")
SANDBOX = (DOCS / "how-to" / "sandbox.md").read_text(encoding="utf-8")
DOCS_TEXT = "\n".join(p.read_text(encoding="utf-8") for p in sorted(DOCS.rglob("*.md")))
REPO_URL = "https://github.com/chimera-dev/chimera/blob/main/"
EXAMPLES = ROOT / "examples"
REUSABLE = ROOT / ".github" / "workflows" / "chimera.yml"
WORKFLOW_ROW = r"^\| `(chimera(?:-[a-z-]+)?\.yml)` \|"


def load(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_every_shipped_workflow_is_in_the_guide_and_counted() -> None:
    shipped = sorted(p.name for p in (EXAMPLES / "workflows").glob("*.yml"))
    rows = re.findall(WORKFLOW_ROW, GUIDE, re.M)
    assert sorted(rows) == shipped
    words = {2: "Two", 3: "Three", 4: "Four", 5: "Five", 6: "Six", 7: "Seven", 8: "Eight"}
    assert f"{words[len(shipped)]} ship in `examples/workflows/`" in GUIDE


def test_every_secret_the_guide_names_is_used_and_every_used_one_named() -> None:
    section = GUIDE.split("**2. Secrets")[1].split("**3.")[0]
    first_cells = re.findall(r"^\| ([^|]+) \|", section, re.M)
    named = {n for cell in first_cells for n in re.findall(r"`([A-Z][A-Z0-9_]+)`", cell)}
    texts = [p.read_text("utf-8") for p in EXAMPLES.glob("*/*.yml")]
    used = {s for t in texts for s in re.findall(r"secrets\.([A-Z0-9_]+)", t)}
    assert named == used


def test_every_input_the_guide_names_is_an_action_input() -> None:
    inputs = set(load(ROOT / "action.yml")["inputs"])
    # ...or an input of the reusable workflow, which hands each to the action.
    inputs |= set(load(REUSABLE)[True]["workflow_call"]["inputs"])
    mentioned = set(re.findall(r"`([a-z]+(?:-[a-z]+)+)`", GUIDE + SANDBOX + HOWTO))
    known_other = {
        "tests-pass",
        "spec-change",
        "risk:high",
        "merge-group",
        "create-github-app-token",
        "app-slug",  # create-github-app-token's output: Chimera's login, never typed
        "issue-number",  # the caller's workflow_dispatch input, checked below
    }
    candidates = {m for m in mentioned if m not in known_other and not m.startswith("chimera")}
    assert {"deps-dir", "api-base", "litellm-settings", "allow-self-approval"} <= candidates
    assert candidates <= inputs, f"not inputs of action.yml: {candidates - inputs}"
    caller = load(EXAMPLES / "workflows" / "chimera.yml")
    assert "issue-number" in caller[True]["workflow_dispatch"]["inputs"]  # yaml: `on` is True


def test_artifacts_and_retention_match_the_action() -> None:
    action = load(ROOT / "action.yml")
    uploads = [s for s in action["runs"]["steps"] if "upload-artifact" in str(s.get("uses"))]
    names = {s["with"]["name"] for s in uploads}
    assert names == {
        "${{ steps.artifact.outputs.name }}",
        "${{ steps.publish-artifact.outputs.name }}",
        "${{ steps.heldout-artifact.outputs.name }}",
    }
    naming = {s.get("id"): s["run"] for s in action["runs"]["steps"] if s.get("id")}
    assert "${CHIMERA_ARTIFACT_NAME}-attempt-${CHIMERA_RUN_ATTEMPT}-${nonce}" in naming["artifact"]
    assert "-publish-attempt-${CHIMERA_RUN_ATTEMPT}-${nonce}" in naming["publish-artifact"]
    assert "-heldout-attempt-${CHIMERA_RUN_ATTEMPT}-${nonce}" in naming["heldout-artifact"]
    assert action["inputs"]["artifact-name"]["default"] == "chimera-run"
    artifacts = HOWTO.split("## Artifacts and retention")[1].split("\n## ")[0]
    assert "`chimera-run-attempt-<n>-<nonce>`" in artifacts
    assert "`chimera-run-publish-attempt-<n>-<nonce>`" in artifacts
    assert "`chimera-run-heldout-attempt-<n>-<nonce>`" in artifacts
    assert "`chimera-run-attempt-1-<nonce>`" in GUIDE  # what the first run uploads
    (days,) = {s["with"]["retention-days"] for s in uploads}
    assert f"**{days} days**" in artifacts


def test_the_set_up_scripts_and_providers_the_guide_links_exist() -> None:
    links = re.findall(rf"\]\({re.escape(REPO_URL)}(examples/[^)]+)\)", GUIDE + SANDBOX)
    assert {"examples/setup/pip.sh", "examples/providers/bedrock.yml"} <= set(links)
    for link in links:
        assert (ROOT / link).is_file(), link
    for name in ("uv.sh", "npm.sh"):
        assert (EXAMPLES / "setup" / name).is_file()


def test_the_short_set_up_table_lists_every_shipped_workflow() -> None:
    # The walk-through's first stumble: "copy the five" under a table of four.
    short = HOWTO[: HOWTO.index("## What happens")]
    shipped = sorted(p.name for p in (EXAMPLES / "workflows").glob("*.yml"))
    assert sorted(re.findall(WORKFLOW_ROW, short, re.M)) == shipped


def _app_token_permissions() -> set[tuple[str, str]]:
    wanted: set[tuple[str, str]] = set()
    for path in [*(EXAMPLES / "workflows").glob("*.yml"), REUSABLE]:
        for job in load(path)["jobs"].values():
            for step in job.get("steps", []):
                if "create-github-app-token" in str(step.get("uses", "")):
                    for key, level in step.get("with", {}).items():
                        if key.startswith("permission-"):
                            wanted.add((key.removeprefix("permission-"), str(level)))
    return wanted


def test_the_app_permissions_in_the_guide_cover_every_token_the_workflows_mint() -> None:
    # create-github-app-token fails when it asks for more than the App was granted: the tick's
    # contents: write and checks: read were missing from step 1.
    step1 = GUIDE.split("**1. The GitHub App**")[1].split("*Without an App*")[0]
    wanted = _app_token_permissions()
    assert {"contents", "issues", "pull-requests", "actions", "checks"} <= {p for p, _ in wanted}
    for perm, level in wanted:
        name = perm.replace("-", " ").capitalize()
        assert f"*{name}*" in step1, name
        if level == "write":
            assert re.search(rf"\*{name}\* read\s+(?:\(read\s+)?and\s+write", step1), name


def test_the_check_to_require_in_branch_protection_is_one_every_pr_gets() -> None:
    # `Chimera Spec` is written by publish with GITHUB_TOKEN (source: GitHub Actions, forgeable
    # by any job with checks: write) and only on Chimera's PRs; the guide says to require
    # chimera-check.yml's `spec` job, which runs on every pull request.
    publish = load(REUSABLE)["jobs"]["publish"]["steps"][-1]["with"]
    assert publish["mode"] == "publish" and "github-token" not in publish
    check = load(EXAMPLES / "workflows" / "chimera-check.yml")
    assert "spec" in check["jobs"] and "pull_request" in check[True]  # yaml reads `on` as True
    step9 = HOWTO.split("## Auto-merge or the merge queue")[1].split("\n## ")[0]
    assert "the `spec` job of `chimera-check.yml`" in step9
    assert "`Chimera Spec` from the App" not in DOCS_TEXT


def test_renaming_the_label_names_the_one_place_that_holds_it() -> None:
    reusable = REUSABLE.read_text("utf-8")
    # Every reader takes the `label` input: the group, decide's filter, the Chimera steps.
    assert "== 'chimera'" not in reusable and "CHIMERA_LABEL" not in reusable
    top = load(REUSABLE)["concurrency"]["group"]
    assert "github.event.label.name == inputs.label" in top
    step3 = GUIDE.split("**3. Labels.**")[1].split("**4.")[0]
    assert "`label: <name>`" in step3


def test_the_uv_set_up_script_says_it_needs_uv_and_so_does_the_guide() -> None:
    script = (EXAMPLES / "setup" / "uv.sh").read_text("utf-8")
    assert re.search(r"^\S*\s*uv sync ", script, re.M) or " uv sync " in script
    assert "astral-sh/setup-uv" in script and "astral-sh/setup-uv" in SANDBOX


def test_the_dry_run_example_event_is_decided_as_a_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Followed literally, the guide's dry run needs an event.json it did not show.
    tail = HOWTO[HOWTO.index("<!-- docs-test: file event.json -->") :]
    example = tail.split("```json\n", 1)[1].split("```", 1)[0]
    event = tmp_path / "event.json"
    event.write_text(example, encoding="utf-8")
    for key in [k for k in os.environ if k.startswith(("GITHUB_", "CHIMERA_"))]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("GITHUB_EVENT_NAME", "issues")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    assert main(["action", "--dry-run"]) == 0
    decision = json.loads(capsys.readouterr().out)
    assert decision["action"] == "run" and decision["issue"] == 7
