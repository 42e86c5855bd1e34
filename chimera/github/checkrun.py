"""The Spec check run with one line per requirement and annotations at each requirement's
YAML line, sent within GitHub's limit of 50 annotations per request: the first batch with
the create call, the rest by updates of the same check run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chimera.github.summary import code

if TYPE_CHECKING:
    from chimera.github.client import GitHubClient

__all__ = ["ANNOTATIONS_PER_REQUEST", "RequirementLine", "post_spec_check"]

ANNOTATIONS_PER_REQUEST = 50
_LEVEL = {"failed": "failure", "error": "failure", "skipped": "notice", "passed": "notice"}


@dataclass(frozen=True)
class RequirementLine:
    """One requirement's result: ``id``, ``status`` (``passed``, ``failed``, ``error``,
    ``skipped``), where it is declared (``path`` relative to the repository, 1-based
    ``line``) and a one-line ``message``."""

    id: str
    status: str
    path: str
    line: int
    message: str = ""

    def annotation(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "start_line": max(1, self.line),
            "end_line": max(1, self.line),
            "annotation_level": _LEVEL.get(self.status, "warning"),
            "title": f"{self.id}: {self.status}"[:255],
            "message": (self.message or self.status)[:64_000],
        }


def post_spec_check(
    client: GitHubClient,
    sha: str,
    rows: Sequence[RequirementLine],
    *,
    title: str,
    name: str = "Chimera Spec",
) -> int:
    """Create the completed check run ``name`` on commit ``sha`` from ``rows`` (one summary
    line each; annotations for all but passed rows), in requests of at most
    :data:`ANNOTATIONS_PER_REQUEST` annotations. Returns the check run's id.

    Raises:
        GitHubError: a request failed after retries.
    """
    passed = all(r.status in ("passed", "skipped") for r in rows)
    summary = "\n".join(f"- {code(r.id, 80)} {r.status}" for r in rows) or "No requirements."
    notes = [r.annotation() for r in rows if r.status != "passed"]
    batches = [
        notes[i : i + ANNOTATIONS_PER_REQUEST]
        for i in range(0, len(notes), ANNOTATIONS_PER_REQUEST)
    ] or [[]]
    output = {"title": title[:250], "summary": summary[:60_000]}
    first = {
        "name": name,
        "head_sha": sha,
        "status": "completed",
        "conclusion": "success" if passed else "failure",
        "output": output | {"annotations": batches[0]},
    }

    def create() -> Any:
        return client._raw("POST", f"/repos/{client.repository}/check-runs", first)

    run = client._call(f"POST check run on {sha[:12]}", create)
    run_id = int(run["id"])
    url = f"/repos/{client.repository}/check-runs/{run_id}"
    for batch in batches[1:]:

        def update(batch: list[dict[str, Any]] = batch) -> Any:
            return client._raw("PATCH", url, {"output": output | {"annotations": batch}})

        client._call(f"PATCH check run {run_id}", update)
    return run_id
