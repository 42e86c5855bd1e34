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
from typing import Any

from chimera.cli._base import Subparsers, err, resolve_root, shown


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
    from chimera.config import load_config
    from chimera.governance.redactor import cut_redacted
    from chimera.orchestration.ask import AskRequest, ask

    root = resolve_root(args.root)
    config = load_config(root).with_overrides(
        model=args.model, budget_usd=args.budget_usd, budget_tokens=args.budget_tokens
    )

    def started(event: str, f: dict[str, Any]) -> None:
        if event == "ask_started" and not args.quiet:
            note = f" (first {f['max_files']} listed)" if f["max_files"] else ""
            err(
                f"chimera: ask run {f['run_id']}: {f['files']} files{note}, "
                f"top {f['model']}, workers {f['worker_model']}"
            )

    outcome = ask(
        AskRequest(
            root=root,
            config=config,
            question=args.question,
            worker_model=args.worker_model,
            events=started,
        )
    )
    result, document = outcome.result, outcome.document
    out = sys.stdout
    if args.json:
        out.write(json.dumps(document, indent=2) + "\n")  # redacted by ask()
        return 0 if outcome.verified else 1
    # The terminal is a CI job's log: what it shows passes the run's redactor, as summary.json.
    redactor = outcome.redactor
    lines = [result.answer.rstrip("\n") + "\n\n"]
    if outcome.verified:
        lines.append("Evidence (verified):\n")
        for c in result.evidence:
            quote = cut_redacted(" ".join(c.quote.split()), 120, redactor=redactor)
            lines.append(f"  {c.where()}: {quote}\n")
    else:
        lines.append("No verified evidence: treat the answer above as unsupported.\n")
    dropped = [f for f in result.findings if not f.verified]
    for f in dropped:
        reason = f.error or ("; ".join(f.verdict.problems[:2]) if f.verdict else "no answer")
        lines.append(f"  unverified: {f.subtask.id} ({', '.join(f.subtask.files)}): {reason}\n")
    lines.append(
        f"\ntokens: {result.usage.total_tokens}, cost: {usd(result.usage.cost_usd)}\n"
        + outcome.delegations.render()
        + f"\nrun: {shown(outcome.run_dir, root)} (audit head {outcome.audit_head})\n"
    )
    out.write(redactor.redact("".join(lines))[0])
    return 0 if outcome.verified else 1


def usd(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.6f}"
