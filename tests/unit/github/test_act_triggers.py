"""Which example workflows an event starts (``chimera.testing.act.triggered_by``): the one
caller, or the check-only workflow; the act harness delivers each recorded webhook to exactly
those, as GitHub does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chimera.testing.act import triggered_by, workflow_files

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "workflows"


def started(event: str, payload: dict[str, Any]) -> list[str]:
    return [p.name for p in workflow_files(EXAMPLES) if triggered_by(p, event, payload)]


@pytest.mark.parametrize(
    ("event", "payload", "names"),
    [
        ("issues", {"action": "labeled"}, ["chimera.yml"]),
        ("issues", {"action": "unlabeled"}, ["chimera.yml"]),
        ("issues", {"action": "opened"}, []),
        (
            "issue_comment",
            {"action": "created"},
            ["chimera.yml"],
        ),
        ("issue_comment", {"action": "edited"}, []),  # every listener says types: [created]
        ("pull_request_review", {"action": "submitted"}, ["chimera.yml"]),
        ("pull_request_review", {"action": "dismissed"}, []),
        # pull_request without types: opened, synchronize, reopened (GitHub's default).
        (
            "pull_request",
            {"action": "reopened", "pull_request": {"base": {"ref": "main"}}},
            ["chimera-check.yml"],
        ),
        (
            "pull_request",
            {"action": "closed", "pull_request": {"base": {"ref": "main"}}},
            ["chimera.yml"],
        ),
        ("pull_request_target", {"action": "synchronize"}, ["chimera.yml"]),
        ("pull_request_target", {"action": "opened"}, []),
        ("push", {"ref": "refs/heads/main"}, ["chimera-check.yml"]),
        ("push", {"ref": "refs/heads/chimera/issue-1"}, []),
        ("schedule", {}, ["chimera.yml"]),
        # A dispatch names its workflow: only that file runs.
        (
            "workflow_dispatch",
            {"workflow": ".github/workflows/chimera.yml"},
            ["chimera.yml"],
        ),
        ("workflow_dispatch", {"workflow": "chimera-check.yml"}, []),
    ],
)
def test_an_event_starts_the_workflows_github_would(
    event: str, payload: dict[str, Any], names: list[str]
) -> None:
    assert started(event, payload) == names


def test_a_file_without_triggers_is_an_error(tmp_path: Path) -> None:
    bad = tmp_path / "x.yml"
    bad.write_text("jobs: {}\n")
    with pytest.raises(ValueError, match="no `on:` triggers"):
        triggered_by(bad, "push", {})
