"""Rebuild a run's goal from the base commit and judge a patch against it (the verify job).

Nothing here comes from the agent job except the patch bytes: the Spec and ``[tool.chimera]``
are the base commit's blobs (:mod:`chimera.github.trust.basecommit`), the acceptance requirements
are decide's (matched to the hash it recorded), and both trees — the base and the base plus
the patch — are fresh extractions of that commit. Every rule of DESIGN's goal is applied
again: an acceptance requirement must be red on the base (an ``error`` only for a missing
target) and green after; nothing green on the base may turn red; the patch may add
requirements but not delete or change existing ones (nor the acceptance decide recorded).
An issue without a ``chimera`` block takes the requirements the patch adds as its acceptance.
A goal not met yet, whose only red requirements are goal requirements, may still be a
legitimate pause after a risky step: verify re-derives that itself (``paused``,
:mod:`chimera.github.verify.pause`).

``check_drift`` runs on both trees with the sandbox as its command runner, so agent-written
code (a ``command`` check runs the project's tests) executes only inside it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chimera.errors import ChimeraError, SpecError
from chimera.github.trust.basecommit import BaseFiles, export_tree
from chimera.github.trust.chain import acceptance_requirements
from chimera.github.verify.pause import find_pause
from chimera.orchestration.goal import (
    Goal,
    requirement_fingerprints,
    spec_tampering,
    vet_acceptance,
)
from chimera.runner import CommandRunner
from chimera.spec.drift import check_drift
from chimera.spec.loader import load_spec
from chimera.spec.model import Requirement, Spec, SpecFile

__all__ = ["GoalVerdict", "judge_patch", "prepare_trees"]

RunnerFor = Callable[[Path], CommandRunner]


@dataclass
class GoalVerdict:
    """What the goal check found.

    Attributes:
        verdict: ``passed``, ``paused`` (a risky step verified, the rest of the goal waiting
            for approval: :mod:`chimera.github.verify.pause`), ``failed`` or ``error`` (the goal
            could not be rebuilt).
        reasons: why not ``passed``, one line each.
        goal: the acceptance requirement ids that had to turn green.
        before / after: requirement id → status on the base and on base + patch.
        evidence: requirement id → what a red result after the patch showed (its message and
            evidence, output tails of sandboxed commands included: made inert by the sandbox).
    """

    verdict: str
    reasons: list[str] = field(default_factory=list)
    goal: list[str] = field(default_factory=list)
    before: dict[str, str] = field(default_factory=dict)
    after: dict[str, str] = field(default_factory=dict)
    evidence: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "reasons": list(self.reasons),
            "goal": list(self.goal),
            "before": dict(self.before),
            "after": dict(self.after),
            "evidence": dict(self.evidence),
        }


def _git(cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=cwd, input=stdin, capture_output=True, text=True, check=False
    )


def _as_repo(tree: Path) -> None:
    # Glob scopes read what git sees: a repository of its own keeps a parent repository (or
    # none) from deciding which files count.
    _git(tree, "init", "-q")
    _git(tree, "add", "-A", "-f")


def prepare_trees(root: Path, base_sha: str, patch: str, dest: Path) -> tuple[Path, Path]:
    """Extract commit ``base_sha`` twice under ``dest`` and apply ``patch`` to the second;
    returns ``(base tree, patched tree)``.

    Raises:
        ChimeraError: the commit cannot be extracted, or the patch does not apply.
    """
    base = export_tree(root, base_sha, dest / "base")
    patched = export_tree(root, base_sha, dest / "patched")
    for tree in (base, patched):
        _as_repo(tree)
    if patch.strip():
        applied = _git(patched, "apply", "--index", "--binary", "-", stdin=patch)
        if applied.returncode != 0:
            tail = applied.stderr.strip().splitlines()[-1:] or [str(applied.returncode)]
            raise ChimeraError(f"the patch does not apply to {base_sha[:12]}: {tail[0]}")
    return base, patched


def _added(base: Spec, patched: Spec) -> list[Requirement]:
    known = set(base.by_id())
    return [r for r in patched.requirements if r.id not in known]


def _patched_spec(tree: Path, spec_path: str) -> Spec | None:
    folder = tree / (spec_path.strip("/") or ".")
    if not folder.exists():
        return None
    return load_spec([folder])


def _denied(spec: Spec, ids: Sequence[str], root: Path) -> dict[str, str]:
    """Acceptance ``command`` checks the TrustKernel does not allow: issue text is
    untrusted, so such a command never runs, even in the sandbox."""
    from chimera.governance.kernel import TrustKernel

    kernel = TrustKernel()
    by_id = spec.by_id()
    denied: dict[str, str] = {}
    for rid in ids:
        run = getattr(by_id[rid].check, "run", None) if rid in by_id else None
        if isinstance(run, str):
            decision = kernel.evaluate_command(run, root)
            if decision.denied:
                denied[rid] = f"its command is denied by governance: {decision.message()}"
    return denied


def judge_patch(
    base_files: BaseFiles,
    acceptance: Sequence[str],
    trees: tuple[Path, Path],
    *,
    spec_path: str,
    runner_for: RunnerFor,
    options: Any = None,
    patch: str = "",
) -> GoalVerdict:
    """Judge the patched tree against the goal rebuilt from the base (module docstring).

    Args:
        base_files: the base commit's Spec folder and configuration.
        acceptance: decide's ``chimera`` block bodies (already matched to its hash).
        trees: ``(base tree, patched tree)`` from :func:`prepare_trees`.
        spec_path: the Spec's path relative to the repository root.
        runner_for: the sandbox runner of ``command`` checks over a tree.
        options: :class:`~chimera.spec.engine.EngineOptions` from the base configuration.
        patch: the patch the patched tree was built from: its deletions and paths decide
            whether a goal that is not met yet is a legitimate pause
            (:func:`chimera.github.verify.pause.find_pause`).

    Returns:
        The verdict (``passed``, ``paused``, ``failed`` or ``error``); never raises for a
        goal that cannot be rebuilt (``error``, with why).
    """
    base_tree, patched_tree = trees
    folder = base_files.folder / "_acceptance"
    try:
        reqs = acceptance_requirements(acceptance)
        paths: list[Path] = [base_files.spec_dir] if base_files.spec_dir.exists() else []
        base_spec = load_spec(paths) if paths else Spec(())
        if reqs:
            import yaml

            folder.mkdir(parents=True, exist_ok=True)
            (folder / "acceptance.yaml").write_text(
                yaml.safe_dump({"requirements": reqs}, sort_keys=False), encoding="utf-8"
            )
            goal_spec = load_spec([*paths, folder])
        else:
            goal_spec = base_spec
        patched_spec = _patched_spec(patched_tree, spec_path)
    except SpecError as exc:
        first = exc.problems[0] if exc.problems else exc
        return GoalVerdict("failed", [f"the Spec does not load: {first}"])
    except ChimeraError as exc:
        return GoalVerdict("error", [str(exc)])
    reasons: list[str] = []
    acceptance_ids = [str(r.get("id")) for r in reqs]
    if patched_spec is not None:
        reasons += spec_tampering(base_spec.requirements, patched_spec.requirements)
        wanted = requirement_fingerprints(
            r for r in goal_spec.requirements if r.id in set(acceptance_ids)
        )
        landed = requirement_fingerprints(patched_spec.requirements)
        reasons += [
            f"acceptance requirement {rid!r} lands changed from the issue's block decide read"
            for rid, fp in wanted.items()
            if rid in landed and landed[rid] != fp
        ]
        if not reqs:
            added = _added(base_spec, patched_spec)
            acceptance_ids = [r.id for r in added]
            goal_spec = Spec((*base_spec.files, SpecFile(folder / "added.yaml", tuple(added))))
    denied = _denied(goal_spec, acceptance_ids, base_tree)
    runnable = [r.id for r in goal_spec.requirements if r.id not in denied]
    before = check_drift(
        goal_spec, base_tree, runner=runner_for(base_tree), options=options, only=runnable
    )
    accepted, rejected = vet_acceptance([i for i in acceptance_ids if i not in denied], before)
    rejected.update(denied)
    reasons += [f"acceptance requirement {rid!r} {why}" for rid, why in rejected.items()]
    if not accepted:
        reasons.append("no acceptance requirement is red on the base: the goal tests nothing")
    goal = Goal.task(accepted, before)
    after = check_drift(
        goal_spec, patched_tree, runner=runner_for(patched_tree), options=options, only=runnable
    )
    unmet = goal.unmet(after)
    blocked = bool(reasons) or bool(goal.regressions(after))
    reasons += [
        f"{rid} is {after.by_id()[rid].status.value} after the patch"
        + (" (it passed on the base)" if rid in goal.protected else "")
        for rid in unmet
    ]
    statuses = {r.id: r.status.value for r in after}
    verdict = "failed" if reasons else "passed"
    if verdict == "failed" and not blocked:
        # Only goal requirements are red: a risky step verified may be a pause. Requirements
        # as the base Spec and decide's block define them; never an added file's.
        defined = {r.id: r for r in base_spec.requirements}
        block = {str(r.get("id")) for r in reqs}
        defined |= {r.id: r for r in goal_spec.requirements if r.id in block}
        pause = find_pause(
            goal=accepted,
            defined=defined,
            after=statuses,
            patch=patch,
            high_risk_paths=base_files.config.run.high_risk_paths,
        )
        if pause is not None:
            verdict, reasons = "paused", pause.reasons()
    return GoalVerdict(
        verdict,
        reasons,
        goal=accepted,
        before={r.id: r.status.value for r in before},
        after=statuses,
        evidence={r.id: r.render(max_evidence=3)[:2000] for r in after if not r.passed},
    )
