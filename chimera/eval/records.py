"""Reading recorded runs for measurement: verified audit logs and the Spec's kinds."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from chimera.eval.maturity import Outcome, Scorecard, outcomes_from_audit, read_outcomes
from chimera.governance.audit import verify_audit_log
from chimera.spec.loader import load_spec
from chimera.stats import DEFAULT_CONFIDENCE


def requirement_kinds(spec_dir: Path) -> dict[str, str]:
    """Requirement id → kind name for the Spec at ``spec_dir`` (empty when there is none).

    Raises:
        SpecError: the Spec exists but is invalid (every problem listed).
    """
    if not spec_dir.exists():
        return {}
    return {r.id: r.kind for r in load_spec(spec_dir).requirements}


def outcomes_from_runs(runs_dir: Path, kinds: dict[str, str]) -> tuple[list[Outcome], list[str]]:
    """Outcomes of every run folder under ``runs_dir`` whose audit log verifies.

    A run whose ``state.json`` records an audit head is verified against it (a truncated log
    is caught); a log that does not verify is skipped and named in the second list.
    """
    outcomes: list[Outcome] = []
    skipped: list[str] = []
    for log in sorted(runs_dir.glob("*/audit.jsonl")):
        run_dir = log.parent
        head = _recorded_head(run_dir / "state.json")
        check = verify_audit_log(log, head)
        if not check.ok:
            skipped.append(f"{log}: audit log does not verify ({check.problems[0]})")
            continue
        events = [json.loads(line) for line in log.read_text("utf-8").splitlines() if line]
        outcomes += outcomes_from_audit(events, kinds, source=run_dir.name)
    return outcomes, skipped


def _recorded_head(state: Path) -> str | None:
    try:
        data = json.loads(state.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    head = data.get("audit_head") if isinstance(data, dict) else None
    return head if isinstance(head, str) and head else None


def build_scorecard(
    root: Path,
    *,
    spec_dir: Path | None = None,
    outcome_files: Sequence[Path] = (),
    confidence: float = DEFAULT_CONFIDENCE,
) -> Scorecard:
    """The scorecard of ``root``: its runs (``.chimera/runs``) plus any outcome files.

    Raises:
        SpecError: the Spec is invalid.
        UsageError: an outcome file is unreadable or malformed.
    """
    kinds = requirement_kinds(spec_dir if spec_dir is not None else root / "specs")
    outcomes, skipped = outcomes_from_runs(root / ".chimera" / "runs", kinds)
    for path in outcome_files:
        outcomes += read_outcomes(path)
    return Scorecard(outcomes, confidence=confidence, skipped=skipped)
