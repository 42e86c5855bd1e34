"""The Spec check run with one line per requirement and annotations at each requirement's
YAML line, sent within GitHub's limit of 50 annotations per request: the first batch with
the create call, the rest by updates of the same check run. The requirement ids and lines come
from the spec files (:func:`spec_rows`, parsed, never run); verify's per-requirement results
are claims checked against them (:func:`claimed_lines`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chimera.errors import SpecError
from chimera.github.trust.basecommit import export_tree
from chimera.github.trust.summary import code

if TYPE_CHECKING:
    from chimera.github.client.client import GitHubClient

__all__ = [
    "ANNOTATIONS_PER_REQUEST",
    "STATUSES",
    "RequirementLine",
    "claimed_lines",
    "post_spec_check",
    "spec_rows",
]

ANNOTATIONS_PER_REQUEST = 50
STATUSES = frozenset({"passed", "failed", "error", "skipped"})
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

    def summary_line(self) -> str:
        """``- `id` status at `path:line` `` (Markdown)."""
        return f"- {code(self.id, 80)} {self.status} at {code(f'{self.path}:{self.line}', 200)}"

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
    passed: bool | None = None,
    preamble: str = "",
) -> int:
    """Create the completed check run ``name`` on commit ``sha`` from ``rows`` (one summary
    line each, :meth:`RequirementLine.summary_line`, after ``preamble``; annotations for all
    but passed rows), in requests of at most :data:`ANNOTATIONS_PER_REQUEST` annotations. The
    conclusion is ``passed`` when given (a verdict reached elsewhere), else whether every row
    passed or was skipped. Returns the check run's id.

    Raises:
        GitHubError: a request failed after retries (``GitHubPermissionDenied``: the token
            may not write check runs, e.g. a personal token).
    """
    if passed is None:
        passed = all(r.status in ("passed", "skipped") for r in rows)
    summary = "\n".join(r.summary_line() for r in rows) or "No requirements."
    if preamble:
        summary = f"{preamble}\n\n{summary}"
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


def spec_rows(root: Path, sha: str, spec_path: str, tmp: Path) -> dict[str, tuple[str, int]]:
    """Requirement id → (repository path of its spec file, 1-based line) at commit ``sha`` of
    the repository at ``root``: its spec files under ``spec_path`` extracted into ``tmp`` and
    parsed (nothing is run). ``{}`` when there is no Spec there or it does not load.

    Raises:
        ChimeraError: ``sha`` is not a commit there.
    """
    from chimera.spec.loader import load_spec

    spec = spec_path.strip("/") or "."
    dest = export_tree(root, sha, tmp / sha[:12], (spec,))
    if not (dest / spec).exists():
        return {}
    try:
        loaded = load_spec([dest / spec])
    except SpecError:
        return {}
    rows: dict[str, tuple[str, int]] = {}
    for req in loaded.requirements:
        path = Path(req.location.file)
        try:
            rel = path.resolve().relative_to(dest.resolve()).as_posix()
        except ValueError:
            rel = f"{spec}/{path.name}"
        rows[req.id] = (rel, req.location.line)
    return rows


def claimed_lines(
    rows: dict[str, tuple[str, int]],
    required: Iterable[str],
    results: str,
    *,
    fallback: tuple[str, int] = ("specs", 1),
) -> tuple[list[RequirementLine], list[str]]:
    """One line per requirement from ``results`` — verify's claims, JSON: requirement id →
    status — checked against what was derived: ``rows`` (id → (path, line), from
    :func:`spec_rows`) and ``required`` (the ids verify must report: a required id without a
    row is shown at ``fallback``). A claimed id in neither is unknown.

    Returns:
        ``(lines, reasons)``: ``reasons`` is empty when the claims name exactly the required
        ids (plus, optionally, others with rows), each with a known status; otherwise each
        reason is one line, and a ``chimera-verify`` error line saying them ends ``lines``.
        Claimed statuses are shown only for ids derived here.
    """
    need = list(dict.fromkeys(required))
    try:
        data: Any = json.loads(results) if results.strip() else None
    except ValueError:
        data = None
    reasons: list[str] = []
    malformed = not isinstance(data, dict)
    if not isinstance(data, dict):
        reasons.append("verify's results are missing or not a JSON object (id → status)")
        data = {}
    claims = {str(k): v for k, v in data.items()}
    unknown = [rid for rid in claims if rid not in rows and rid not in need]
    if unknown:
        shown = ", ".join(rid[:80] for rid in unknown[:10])
        reasons.append(f"verify reported requirements the Spec does not declare: {shown}")
    lines: list[RequirementLine] = []
    missing: list[str] = []
    for rid in dict.fromkeys([*need, *(r for r in rows if r in claims)]):
        path, line = rows.get(rid, fallback)
        status = claims.get(rid)
        if status not in STATUSES:
            missing.append(rid)
            lines.append(RequirementLine(rid, "error", path, line, "verify reported no status"))
            continue
        lines.append(RequirementLine(rid, str(status), path, line, f"{status} after the change"))
    if missing and not malformed:
        reasons.append(f"verify reported no status for: {', '.join(r[:80] for r in missing[:10])}")
    if reasons:
        path, _ = next(iter(rows.values()), fallback)
        lines.append(RequirementLine("chimera-verify", "error", path, 1, "; ".join(reasons)))
    return lines, reasons
