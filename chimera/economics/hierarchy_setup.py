"""Build a :class:`HierarchicalOrchestrator` from ``[tool.chimera.hierarchy]``.

One builder serves ``chimera ask`` and the AutonomousAgent's plan step (used when the Spine
does not fit its context budget), so both delegate with the same budgets, verification and
receipts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from chimera.config import ChimeraConfig
from chimera.economics.envelope import (
    AcceptanceCriteria,
    EnvelopeVerifier,
    RepoReader,
    SpotCheck,
)
from chimera.economics.hierarchy import HierarchicalOrchestrator
from chimera.economics.receipts import RECEIPTS_FILE, ReceiptLog
from chimera.economics.workers import WorkerBudgets
from chimera.governance.audit import AuditLog
from chimera.governance.redactor import SecretRedactor
from chimera.protocols import SupportsComplete
from chimera.providers import SCRIPTED_PREFIX, TokenBudget, budgeted_backend, make_backend


def build_hierarchy(
    config: ChimeraConfig,
    *,
    root: Path,
    run_dir: Path,
    run_id: str,
    audit: AuditLog,
    budget: TokenBudget,
    top: str,
    top_backend: SupportsComplete | None = None,
    worker: str | None = None,
) -> HierarchicalOrchestrator:
    """The delegation hierarchy over the files under ``root``.

    Args:
        config: ``hierarchy`` (workers, ceilings, spot checks) and ``models``.
        root: the repository the workers read (confined; never ``.git/`` or ``.chimera/``).
        run_dir: receipts go to ``run_dir / receipts.jsonl``.
        run_id: the run the receipts and audit events belong to.
        audit: the run's audit log.
        budget: the run budget; per-worker ceilings sit under it.
        top: the trusted top model's name (decomposes, answers small parts inline,
            synthesizes).
        top_backend: its backend (default: a budgeted backend for ``top``).
        worker: the workers' model (default: ``hierarchy.worker_model``, else ``top``).
    """
    h = config.hierarchy
    worker_model = worker or h.worker_model or top
    judge = h.spot_check_judge

    def budgeted(model: str, max_tokens: int) -> SupportsComplete:
        return budgeted_backend(model, config, budget, audit=audit, max_tokens=max_tokens)

    budgets = WorkerBudgets(
        budget,
        per_worker_tokens=h.per_worker_tokens,
        per_worker_usd=h.per_worker_usd,
        default_max_tokens=h.worker_max_tokens,
        audit=audit,
    )

    def worker_backend(name: str) -> SupportsComplete:
        return budgets.backend(name, make_backend(worker_model, config), model=worker_model)

    reader = RepoReader(root)
    spot = SpotCheck(
        rate=h.spot_check_rate,
        seed=h.spot_check_seed,
        judge=budgeted(judge, config.models.max_tokens) if judge else None,
        judge_model=judge or "",
    )
    verifier = EnvelopeVerifier(
        reader.read,
        criteria=AcceptanceCriteria(min_citations=h.min_citations),
        spot_check=spot,
        audit=audit,
    )
    scripted = worker_model.startswith(SCRIPTED_PREFIX) or top.startswith(SCRIPTED_PREFIX)
    return HierarchicalOrchestrator(
        top=top_backend or budgeted(top, h.top_max_tokens),
        top_model=top,
        worker=worker_backend,
        worker_model=worker_model,
        read=reader.read,
        verifier=verifier,
        receipts=ReceiptLog(
            run_dir / RECEIPTS_FILE,
            run_id,
            top,
            audit=audit,
            redactor=SecretRedactor.from_environment(workspace=root),
        ),
        inline_max_tokens=h.inline_max_tokens,
        max_subtasks=h.max_subtasks,
        # A script replays turns in order: one worker at a time keeps the replay deterministic.
        max_workers=1 if scripted else h.max_workers,
        worker_max_tokens=h.worker_max_tokens,
        top_max_tokens=h.top_max_tokens,
        audit=audit,
    )


BigPlanner = Callable[[str, Sequence[str], str], str]
"""``(task, files, failure_context) -> plan``: the AutonomousAgent's plan step for a Spine
larger than its context budget."""


def hierarchy_planner(make: Callable[[], HierarchicalOrchestrator]) -> BigPlanner:
    """A :data:`BigPlanner` that builds the hierarchy on first use (most plans never need it)."""
    built: list[HierarchicalOrchestrator] = []

    def plan(task: str, files: Sequence[str], failure_context: str) -> str:
        if not built:
            built.append(make())
        return plan_with_hierarchy(built[0], task, files, failure_context=failure_context)

    return plan


class _SpineFile(Protocol):
    @property
    def path(self) -> str: ...
    @property
    def truncated(self) -> bool: ...


class SpineLike(Protocol):
    """The parts of :class:`chimera.core.spine.SpineContext` the plan hook reads."""

    @property
    def files(self) -> Sequence[_SpineFile]: ...
    @property
    def omitted(self) -> Sequence[str]: ...


def spine_overflows(spine: SpineLike) -> bool:
    """True when the Spine did not fit its context budget (a file was cut or left out)."""
    return bool(spine.omitted) or any(f.truncated for f in spine.files)


def spine_scope(spine: SpineLike) -> list[str]:
    """Every file the Spine had in scope, shown or not (the hierarchy reads them all)."""
    return list(dict.fromkeys([*(f.path for f in spine.files), *spine.omitted]))


def plan_with_hierarchy(
    orchestrator: HierarchicalOrchestrator,
    task: str,
    files: Sequence[str],
    *,
    failure_context: str = "",
) -> str:
    """The AutonomousAgent's plan step when the Spine exceeds its context budget.

    The Spine's files are read by budgeted workers for what bears on ``task``; the top model
    synthesizes their verified findings into a plan (numbered steps citing file:line).
    ``failure_context`` (the carried-forward attempt history) is passed to the top model.

    Returns:
        The plan text (the same role as the direct plan call's completion text).

    Raises:
        StructuredOutputError, ProviderError, BudgetExceeded: as
            :meth:`HierarchicalOrchestrator.run`.
    """
    question = (
        "Plan the change this task needs: which files and definitions to change and how, as "
        f"numbered steps citing file:line.\n\nTask:\n{task}"
    )
    return orchestrator.run(question, files, context=failure_context).answer
