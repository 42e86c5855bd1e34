"""What a skill may be learned from: one attempt of a recorded run, and the diff-gate.

A skill is proposed only from an attempt that the Spec accepted (``check_drift`` passed, the
attempt's verdict is ``passed``) **and** whose diff is non-empty. A green verifier over an
empty diff is a *hollow* success: the requirement was already green or checks nothing, and
nothing was learned, so nothing is minted (Voyager keeps a skill only on verified success;
a hollow pass is not one). :func:`diff_gate` is that rule as a pure function; the evolver
writes its reason to the audit log either way.

:func:`read_run` reads a ``chimera solve`` run folder: the attempts from ``summary.json`` and
the task text from the ``run_started`` event of ``audit.jsonl``, after checking the audit
log's hash chain against the head ``summary.json`` recorded (a damaged or cut log is refused:
the run is then not evidence of anything).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chimera.errors import UsageError


@dataclass(frozen=True, slots=True)
class AttemptEvidence:
    """One attempt of one run, as the flywheel sees it.

    Attributes:
        run_id: the run folder's name.
        task: the task text the run was given.
        targets: the requirement ids the run aimed at.
        attempt: the attempt number (1-based).
        verdict: the attempt's verdict (``passed``, ``verify_failed``, ``hollow``...).
        diff: the attempt's unified diff (the full saved diff when it is on disk).
        files_changed: files the diff touches.
        tainted: the run read untrusted text (an issue, a tainted memory).
    """

    run_id: str
    task: str
    targets: tuple[str, ...]
    attempt: int
    verdict: str
    diff: str
    files_changed: int
    tainted: bool

    @property
    def accepted(self) -> bool:
        """The Spec accepted the attempt (its verdict is ``passed``)."""
        return self.verdict == "passed"


@dataclass(frozen=True, slots=True)
class GateDecision:
    """Whether an attempt may seed a skill, and why (one line, for the audit log)."""

    mint: bool
    reason: str


def diff_gate(evidence: AttemptEvidence) -> GateDecision:
    """The diff-gate: mint only from an accepted attempt with a non-empty diff."""
    if not evidence.accepted:
        return GateDecision(False, f"not accepted by the Spec (verdict {evidence.verdict})")
    if evidence.files_changed == 0 or not evidence.diff.strip():
        return GateDecision(
            False, "hollow success: verification passed with an empty diff; nothing minted"
        )
    return GateDecision(True, f"accepted with a diff of {evidence.files_changed} file(s)")


def read_run(run_dir: Path) -> list[AttemptEvidence]:
    """Every attempt of the run in ``run_dir`` (a ``.chimera/runs/<run-id>`` folder).

    Raises:
        UsageError: no readable ``summary.json``, no ``run_started`` event, or an audit log
            whose hash chain does not verify against the recorded head (one line each).
    """
    from chimera.governance.audit import verify_audit_log

    summary = _json(run_dir / "summary.json")
    head = summary.get("audit_head")
    log = run_dir / "audit.jsonl"
    check = verify_audit_log(log, head if isinstance(head, str) and head else None)
    if not check.ok:
        raise UsageError(f"{log}: audit log does not verify ({check.problems[0]})")
    task = ""
    for line in log.read_text("utf-8").splitlines():
        event = json.loads(line) if line.strip() else {}
        if event.get("event") == "run_started":
            fields = event.get("fields")
            task = str(fields.get("task", "")) if isinstance(fields, dict) else ""
            break
    if not task:
        raise UsageError(f"{log}: no run_started event with the task text")
    targets = tuple(str(t) for t in summary.get("targets") or ())
    tainted = bool(summary.get("tainted", False))
    out: list[AttemptEvidence] = []
    for raw in summary.get("attempts") or []:
        if not isinstance(raw, dict):
            continue
        diff = str(raw.get("diff", ""))
        saved = raw.get("diff_path")
        if isinstance(saved, str) and saved and (run_dir / saved).is_file():
            diff = (run_dir / saved).read_text("utf-8", errors="replace")
        out.append(
            AttemptEvidence(
                run_id=str(summary.get("run_id") or run_dir.name),
                task=task,
                targets=targets,
                attempt=int(raw.get("number", len(out) + 1)),
                verdict=str(raw.get("verdict", "")),
                diff=diff,
                files_changed=int(raw.get("files_changed", 0)),
                tainted=tainted,
            )
        )
    return out


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: not a readable run summary ({exc.__class__.__name__})") from exc
    if not isinstance(data, dict):
        raise UsageError(f"{path}: a run summary is a JSON object")
    return data
