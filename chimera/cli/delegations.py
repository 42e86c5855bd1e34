"""``chimera delegations [RUN_ID]``: the audited net saving of a run's delegations.

Reads the run's receipts (``.chimera/runs/<run-id>/delegations.jsonl``; the latest run that
has receipts when RUN_ID is omitted) and reports delegated cost, the inline counterfactual at
the top model's rate, the orchestrator's overhead and the net saving — or says it cannot be
computed because a price is unknown. When the run's audit log is there, it is verified first
(hash chain) and every receipt must match its ``delegation.receipt`` audit event, so the
figure is the audited one.

Exit status: 0 reported (a saving, a loss, or "cannot be computed" with the reason); 1 the
receipts do not match the audit log or the log does not verify; 2 bad usage (no such run).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from chimera.cli._base import Subparsers
from chimera.errors import UsageError


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "delegations",
        help="report the audited net saving of a run's delegations",
        description=(
            "Sum the delegation receipts of RUN_ID (default: the latest run with receipts): "
            "delegated cost, inline counterfactual, overhead, net saving. Exit status: 0 "
            "reported, 1 receipts and audit log disagree, 2 bad usage."
        ),
    )
    parser.add_argument("run_id", metavar="RUN_ID", nargs="?", help="a run id under .chimera/runs")
    parser.add_argument("--root", metavar="DIR", help="the repository (default: current dir)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=run)


def find_run(root: Path, run_id: str | None) -> Path:
    """The run folder holding receipts (``run_id``'s, or the latest one).

    Raises:
        UsageError: no such run, or no run has receipts.
    """
    from chimera.economics.receipts import RECEIPTS_FILE
    from chimera.orchestration.session_factory import RUNS

    base = root / RUNS
    if run_id is not None:
        if not run_id or "/" in run_id or run_id.startswith("."):
            raise UsageError(f"invalid run id {run_id!r}")
        path = base / run_id
        if not (path / RECEIPTS_FILE).is_file():
            what = "has no delegation receipts" if path.is_dir() else "does not exist"
            raise UsageError(f"run {run_id!r} {what} (under {base})")
        return path
    runs = sorted(p for p in base.glob(f"*/{RECEIPTS_FILE}")) if base.is_dir() else []
    if not runs:
        raise UsageError(f"no run with delegation receipts under {base}")
    return runs[-1].parent


def audit_problems(run_dir: Path, receipts: list[dict[str, Any]]) -> list[str]:
    """Why the receipts cannot be trusted against the run's audit log ([] when they can)."""
    from chimera.governance.audit import verify_audit_log

    log = run_dir / "audit.jsonl"
    if not log.is_file():
        return []
    verification = verify_audit_log(log)
    if not verification.ok:
        return [f"{log.name} does not verify: {verification}"]
    events = [
        json.loads(line)["fields"]
        for line in log.read_text(encoding="utf-8").splitlines()
        if line.strip() and json.loads(line).get("event") == "delegation.receipt"
    ]
    stripped = [{k: v for k, v in r.items() if k != "ts"} for r in receipts]
    if stripped != events:
        return [
            f"{len(receipts)} receipt(s) but {len(events)} delegation.receipt audit event(s), "
            "or their contents differ"
        ]
    return []


def run(args: argparse.Namespace) -> int:
    from chimera.cli._base import resolve_root, shown
    from chimera.economics.receipts import (
        RECEIPTS_FILE,
        read_receipts,
        summarize_delegations,
    )

    root = resolve_root(args.root)
    run_dir = find_run(root, args.run_id)
    receipts = read_receipts(run_dir / RECEIPTS_FILE)
    summary = summarize_delegations(receipts, run_dir.name)
    problems = audit_problems(run_dir, receipts)
    out = sys.stdout
    if args.json:
        out.write(json.dumps({**summary.to_json(), "audit_problems": problems}, indent=2) + "\n")
    else:
        out.write(summary.render() + "\n")
        if problems:
            out.write("  NOT AUDITED: " + "; ".join(problems) + "\n")
        elif (run_dir / "audit.jsonl").is_file():
            out.write("  receipts match the run's verified audit log\n")
        out.write(f"  receipts: {shown(run_dir / RECEIPTS_FILE, root)}\n")
    return 1 if problems else 0
