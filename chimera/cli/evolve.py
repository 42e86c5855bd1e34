"""``chimera evolve``: one bounded refinement round of a skill on its recorded failures.

The recorded failures are the evaluation ledger's (``.chimera/skills/evals.jsonl``): re-runs
of a benchmark chain's tasks with the skill's current version in context. The round runs GEPA
on a third of them and replaces the skill only through the transfer gate on the rest, with no
regression on its passing tasks (:mod:`chimera.evolution.refine`). It is budgeted —
``--max-metric-calls`` re-runs, ``--budget-tokens`` for the reflection model — and audited
like any run: ``.chimera/runs/<run-id>/audit.jsonl`` and ``summary.json``.

Undo: the previous version stays as ``.chimera/skills/<name>/v<N>.md``; ``chimera skills
demote`` or ``retire`` stops a version being retrieved.

Exit status: 0 the round ran (replaced, kept the parent, or nothing to refine); 2 bad usage
(no chain, unknown skill, too few failures, a budget below what the gate needs).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from chimera.cli._base import Subparsers, write_text_atomic
from chimera.errors import UsageError


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "evolve",
        help="one bounded refinement round of a skill on its recorded failures (GEPA, gated)",
        description=(
            "Refine one skill with GEPA on its recorded failures (.chimera/skills/evals.jsonl) "
            "and replace it only through the transfer gate. Exit status: 0 the round ran, "
            "2 bad usage."
        ),
    )
    parser.add_argument("--chain", required=True, metavar="FILE", help="the benchmark chain")
    parser.add_argument("--skill", metavar="NAME", help="default: most recorded failures")
    parser.add_argument("--model", required=True, help="the reflection model (or scripted:PATH)")
    parser.add_argument(
        "--task-model",
        default="scripted",
        help="the model of the re-runs (default: the chain's scripted model)",
    )
    parser.add_argument("--max-metric-calls", type=int, default=30, metavar="N")
    parser.add_argument("--budget-tokens", type=int, default=50_000, metavar="N")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--root", metavar="DIR", help="the repository (default: current dir)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from chimera.cli._economics import budgeted, new_run_dir, prepare_credentials, resolve_root
    from chimera.config import load_config
    from chimera.eval.chain import Chain
    from chimera.evolution.ledger import EVALS_FILE, SkillEvalLog
    from chimera.evolution.refine import refine_skill
    from chimera.evolution.rerun import ChainRerunner
    from chimera.evolution.skills import SkillStore
    from chimera.governance.audit import AuditLog
    from chimera.providers import TokenBudget

    root = resolve_root(args.root)
    if args.max_metric_calls < 1 or args.budget_tokens < 1:
        raise UsageError("--max-metric-calls and --budget-tokens must be positive")
    chain = Chain.load(Path(args.chain))
    store = SkillStore(root / ".chimera" / "skills")
    ledger = SkillEvalLog(store.root / EVALS_FILE)
    chain_ids = {t.id for t in chain.tasks}
    splits = {}
    for skill in store.all():
        failing, passing = ledger.split(skill.name, skill.version)
        failing = [t for t in failing if t in chain_ids]
        splits[skill.name] = (skill, failing, [t for t in passing if t in chain_ids])
    if args.skill:
        if args.skill not in splits:
            raise UsageError(f"--skill: no skill named {args.skill!r} in {store.root}")
        name = args.skill
    else:
        name = max(splits, key=lambda n: (len(splits[n][1]), n), default="")
        if not name or not splits[name][1]:
            sys.stdout.write("nothing to refine: no skill has recorded failures on this chain\n")
            return 0
    parent, failing, passing = splits[name]
    config = load_config(root)
    prepare_credentials(root, config, [args.model])
    run_id, run_dir = new_run_dir(root)
    audit = AuditLog(run_dir / "audit.jsonl", run_id)
    audit.append(
        "evolve_started", skill=name, version=parent.version, chain=chain.name,
        failing=failing, passing=passing, max_metric_calls=args.max_metric_calls,
        budget_tokens=args.budget_tokens, model=args.model, task_model=args.task_model,
    )  # fmt: skip
    budget = TokenBudget(max_tokens=args.budget_tokens, name="evolve")
    reflection = budgeted(args.model, config, budget, audit)
    with tempfile.TemporaryDirectory(prefix="chimera-evolve-") as scratch:
        rerunner = ChainRerunner(chain, Path(scratch), model=args.task_model)
        outcome = refine_skill(
            parent, failing=failing, passing=passing, rerunner=rerunner, reflection=reflection,
            max_metric_calls=args.max_metric_calls, audit=audit, store=store, ledger=ledger,
            describe=lambda t: chain.task(t).task, seed=args.seed,
        )  # fmt: skip
    summary = {
        "run_id": run_id,
        "command": "evolve",
        "skill": name,
        "decision": outcome.decision,
        "reason": outcome.reason,
        "version": outcome.skill.version,
        "metric_calls": outcome.metric_calls,
        "max_metric_calls": args.max_metric_calls,
        "gate": dict(outcome.gate),
        "audit_head": audit.head_hash,
    }
    write_text_atomic(run_dir / "summary.json", json.dumps(summary, indent=2) + "\n")
    sys.stdout.write(
        f"{name}: {outcome.decision}: {outcome.reason}\n"
        f"re-runs: {outcome.metric_calls} of {args.max_metric_calls}; "
        f"run: {run_dir.relative_to(root).as_posix()}\n"
    )
    return 0
