"""``chimera ask "QUESTION"``: a read-only question about the repository, with cited evidence.

The HierarchicalOrchestrator answers it: the top model (``--model``) splits the reading into
subproblems over the repository's files (the files git sees, or a walk honouring
``.gitignore``), budgeted workers (``--worker-model``) read them and return envelopes with
quoted evidence, the EnvelopeVerifier checks each (quotes must occur verbatim at the cited
lines; a failed check earns one re-ask, re-audited), and the top model synthesizes the
verified findings. Small subproblems are answered inline by the top model. Nothing is
written to the repository; the run's audit log, receipts and summary go under
``.chimera/runs/<run-id>/``.

Output: the answer, the verified evidence (``file:line: quote``), tokens and cost, and the
delegation account (``chimera delegations`` reprints it). ``--json`` prints one JSON object.

Exit status: 0 answered with verified evidence; 1 answered without any verified evidence;
2 bad usage or configuration.
"""

from __future__ import annotations

import argparse
import json
import sys

from chimera.cli._base import Subparsers, err, write_text_atomic
from chimera.errors import UsageError


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "ask",
        help="answer a read-only question about the repository, with cited evidence",
        description=(
            "Answer QUESTION about the repository with budgeted worker models reading the "
            "files and the top model synthesizing their verified, cited findings. Read-only. "
            "Exit status: 0 answered with verified evidence, 1 without, 2 bad usage."
        ),
    )
    parser.add_argument("question", metavar="QUESTION")
    parser.add_argument("--model", help="the top model (else config models.default, CHIMERA_MODEL)")
    parser.add_argument(
        "--worker-model",
        metavar="W",
        help="the workers' model (else [tool.chimera.hierarchy] worker_model, else --model)",
    )
    parser.add_argument("--root", metavar="DIR", help="the repository (default: current dir)")
    parser.add_argument("--budget-usd", type=float, metavar="X")
    parser.add_argument("--budget-tokens", type=int, metavar="N")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from chimera.cli._economics import (
        budgeted,
        new_run_dir,
        prepare_credentials,
        resolve_root,
        shown,
        top_model,
        usd,
    )
    from chimera.config import load_config

    root = resolve_root(args.root)
    config = load_config(root).with_overrides(
        model=args.model, budget_usd=args.budget_usd, budget_tokens=args.budget_tokens
    )
    top = top_model(config)
    h = config.hierarchy
    worker = args.worker_model or h.worker_model or top
    judge = h.spot_check_judge
    prepare_credentials(root, config, [top, worker, *([judge] if judge else [])])

    from chimera.economics.hierarchy_setup import build_hierarchy
    from chimera.economics.receipts import RECEIPTS_FILE, read_receipts, summarize_delegations
    from chimera.governance.audit import AuditLog
    from chimera.governance.sanitize import sanitize
    from chimera.providers import TokenBudget
    from chimera.spec.engine.files import FileTree
    from chimera.spec.engine.options import EngineStats

    question = sanitize(args.question).strip()
    if not question:
        raise UsageError("QUESTION is empty")
    # "*" in gitignore syntax matches every file at any depth.
    candidates = FileTree(str(root), EngineStats()).select(["*"], [])
    if not candidates:
        raise UsageError(f"--root {root}: no files to read")
    truncated = len(candidates) > h.max_files
    candidates = candidates[: h.max_files]

    run_id, run_dir = new_run_dir(root)
    audit = AuditLog(run_dir / "audit.jsonl", run_id)
    audit.append(
        "ask.started", question=question, model=top, worker_model=worker, files=len(candidates)
    )
    budget = TokenBudget.from_config(config.budget)
    orchestrator = build_hierarchy(
        config,
        root=root,
        run_dir=run_dir,
        run_id=run_id,
        audit=audit,
        budget=budget,
        top=top,
        top_backend=budgeted(top, config, budget, audit, max_tokens=h.top_max_tokens),
        worker=worker,
    )
    if not args.quiet:
        note = f" (first {h.max_files} listed)" if truncated else ""
        err(
            f"chimera: ask run {run_id}: {len(candidates)} files{note}, top {top}, workers {worker}"
        )
    result = orchestrator.run(question, candidates)
    summary = summarize_delegations(read_receipts(run_dir / RECEIPTS_FILE), run_id)
    document = {
        "run_id": run_id,
        "question": question,
        "model": top,
        "worker_model": worker,
        **result.to_json(),
        "delegations": summary.to_json(),
        "audit_head": audit.head_hash,
    }
    write_text_atomic(run_dir / "summary.json", json.dumps(document, indent=2) + "\n")
    verified = bool(result.evidence)
    out = sys.stdout
    if args.json:
        out.write(json.dumps(document, indent=2) + "\n")
        return 0 if verified else 1
    out.write(result.answer.rstrip("\n") + "\n\n")
    if verified:
        out.write("Evidence (verified):\n")
        for c in result.evidence:
            quote = " ".join(c.quote.split())
            out.write(f"  {c.where()}: {quote[:120]}\n")
    else:
        out.write("No verified evidence: treat the answer above as unsupported.\n")
    dropped = [f for f in result.findings if not f.verified]
    for f in dropped:
        reason = f.error or ("; ".join(f.verdict.problems[:2]) if f.verdict else "no answer")
        out.write(f"  unverified: {f.subtask.id} ({', '.join(f.subtask.files)}): {reason}\n")
    out.write(
        f"\ntokens: {result.usage.total_tokens}, cost: {usd(result.usage.cost_usd)}\n"
        + summary.render()
        + f"\nrun: {shown(run_dir, root)} (audit head {audit.head_hash[:16]})\n"
    )
    return 0 if verified else 1
