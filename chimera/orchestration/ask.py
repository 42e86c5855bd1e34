"""``chimera ask``'s one typed call: a read-only question answered by the delegation hierarchy.

The CLI builds an :class:`AskRequest` and renders the :class:`AskOutcome`; the run's parts
(credentials, audit log, budget, hierarchy) come from the session factory's builders, so
``ask`` spends and audits like every other surface.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chimera.config import ChimeraConfig
from chimera.errors import UsageError
from chimera.orchestration.session_factory import SessionFactory, resolve_model
from chimera.protocols import EventSink

if TYPE_CHECKING:
    from chimera.economics.hierarchy import HierarchyResult
    from chimera.economics.receipts import DelegationSummary
    from chimera.governance.redactor import SecretRedactor


@dataclass(frozen=True, kw_only=True)
class AskRequest:
    """``chimera ask "QUESTION"``.

    Attributes:
        root: the repository (an existing directory, resolved).
        config: the effective configuration (``--model`` applied as ``models.default``).
        question: the question, as typed (sanitized here).
        worker_model: the workers' model (default ``hierarchy.worker_model``, else the top).
        events: receives ``ask_started`` (run id, files, models) before the reading starts.
    """

    root: Path
    config: ChimeraConfig
    question: str
    worker_model: str | None = None
    events: EventSink | None = None


@dataclass(frozen=True)
class AskOutcome:
    """The answer, its evidence and the run's record (``document`` is ``summary.json``, its
    strings redacted; ``redactor`` is what redacted it, for the terminal's copy)."""

    run_id: str
    run_dir: Path
    result: HierarchyResult
    delegations: DelegationSummary
    document: dict[str, Any]
    audit_head: str
    redactor: SecretRedactor

    @property
    def verified(self) -> bool:
        return bool(self.result.evidence)


def ask(request: AskRequest, factory: SessionFactory | None = None) -> AskOutcome:
    """Answer ``request.question`` read-only (see :mod:`chimera.cli.ask`).

    Raises:
        UsageError: no model, an empty question, or no files to read.
        AuthenticationError / ConfigError / MissingExtraError: a missing key, an unpriced
            model under a USD budget, LiteLLM not installed.
    """
    from chimera.atomic import atomic_write_text
    from chimera.economics.hierarchy_setup import build_hierarchy
    from chimera.economics.receipts import RECEIPTS_FILE, read_receipts, summarize_delegations
    from chimera.governance.redactor import SecretRedactor
    from chimera.governance.sanitize import sanitize
    from chimera.providers import TokenBudget
    from chimera.spec.engine.files import FileTree
    from chimera.spec.engine.options import EngineStats

    root, config = request.root, request.config
    top = resolve_model(None, config)
    h = config.hierarchy
    worker = request.worker_model or h.worker_model or top
    judge = h.spot_check_judge
    factory = factory or SessionFactory()
    question = sanitize(request.question).strip()
    if not question:
        raise UsageError("QUESTION is empty")
    # "*" in gitignore syntax matches every file at any depth.
    candidates = FileTree(str(root), EngineStats()).select(["*"], [])
    if not candidates:
        raise UsageError(f"--root {root}: no files to read")
    truncated = len(candidates) > h.max_files
    candidates = candidates[: h.max_files]

    run_id, run_dir, audit = factory.open_record(
        root, config, [top, worker, *([judge] if judge else [])]
    )
    audit.append(
        "ask.started", question=question, model=top, worker_model=worker, files=len(candidates)
    )
    orchestrator = build_hierarchy(
        config,
        root=root,
        run_dir=run_dir,
        run_id=run_id,
        audit=audit,
        budget=TokenBudget.from_config(config.budget),
        top=top,
        worker=worker,
    )
    if request.events is not None:
        request.events(
            "ask_started",
            {
                "run_id": run_id,
                "files": len(candidates),
                "max_files": h.max_files if truncated else None,
                "model": top,
                "worker_model": worker,
            },
        )
    result = orchestrator.run(question, candidates)
    delegations = summarize_delegations(read_receipts(run_dir / RECEIPTS_FILE), run_id)
    document = {
        "run_id": run_id,
        "question": question,
        "model": top,
        "worker_model": worker,
        **result.to_json(),
        "delegations": delegations.to_json(),
        "audit_head": audit.head_hash,
    }
    # The question, the plan and the answer may quote a credential; the folder is uploaded.
    redactor = SecretRedactor.from_environment(workspace=root)
    document, _ = redactor.redact_json(document)
    atomic_write_text(run_dir / "summary.json", json.dumps(document, indent=2) + "\n")
    return AskOutcome(
        run_id=run_id,
        run_dir=run_dir,
        result=result,
        delegations=delegations,
        document=document,
        audit_head=audit.head_hash or "",
        redactor=redactor,
    )
