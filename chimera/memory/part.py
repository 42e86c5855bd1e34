"""Memory as a session part: every surface's runs record and recall through one manager.

:class:`MemoryPart` follows the shape of the session factory's ``SessionPart``
(``attach(session)`` once per session, ``agent_deps(deps, session)`` per agent) without
importing orchestration (memory sits below it). It opens ``.chimera/memory.db`` under the
session's root, and gives each agent an :class:`~chimera.protocols.ExperienceStore` that
records every attempt twice: in the experience buffer (which answers ``similar``) and as an
episodic memory item (which the branch store carries across runners). Failures are recorded
as negatives with why they failed (cause and the gist of the evidence); a hollow success
(green verifier, empty diff) is recorded as ``hollow``, never as a success. At the end of a
finished run, :meth:`MemoryPart.finish` runs the memory reflection: the run's durable facts,
each remembered through the model-decided ADD / UPDATE / DELETE / NOOP.
"""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from chimera.governance.redactor import SecretRedactor, cut_redacted
from chimera.memory.budget import ContextBudget, estimate_tokens
from chimera.memory.embed import Embedder, LiteLLMEmbedder
from chimera.memory.items import TAINTED, TRUSTED, Candidate, OpKind, Tier, secret_in
from chimera.memory.manager import MemoryCaps, MemoryManager
from chimera.memory.reflect import MemoryReflection, reflect_run
from chimera.memory.render import render_persona
from chimera.memory.store import MemoryStore
from chimera.protocols import Experience, ExperienceStore, Recall

MEMORY_DB = Path(".chimera") / "memory.db"
TASK_CHARS = 300
CAUSE_CHARS = 300
EVIDENCE_CHARS = 420
"""Bounds of an attempt item's parts (characters): task, cause, evidence gist."""


def attempt_candidate(exp: Experience, redactor: SecretRedactor | None = None) -> Candidate:
    """The episodic item of one attempt: verdict, task, and for a failure why — its cause and
    the gist of its evidence (:attr:`Experience.evidence`) — then diff stats and provenance
    (secrets checked and redacted with ``redactor``, default the process environment's). Each
    part is bounded (:data:`TASK_CHARS`, :data:`CAUSE_CHARS`, :data:`EVIDENCE_CHARS`)."""
    flat = " ".join(exp.task.split())
    # A task that names a credential anywhere keeps it whole, so the manager refuses the item
    # (memory never stores one); otherwise secret values are redacted before the cut, which
    # could keep a piece of one that no later check recognises.
    task = flat if secret_in(flat, redactor) else cut_redacted(flat, TASK_CHARS, redactor=redactor)
    if exp.verdict == "passed" and exp.files_changed == 0:
        kind, head = "hollow", "hollow pass (verifier green, nothing changed)"
    elif exp.verdict == "passed":
        kind, head = "success", "passed"
    else:
        kind, head = ("hollow" if exp.verdict == "hollow" else "failure"), exp.verdict
    why = ""
    if exp.failed:
        # Why, not only that: the cause and the gist of the evidence (failing requirement,
        # first error, first failing step), each bounded, redacted before any cut.
        why = " — why: " + cut_redacted(
            exp.cause or exp.signature or exp.verdict, CAUSE_CHARS, redactor=redactor
        )
        if exp.evidence:
            why += "; " + cut_redacted(exp.evidence, EVIDENCE_CHARS, redactor=redactor)
    text = (
        f"attempt {exp.attempt} {head} on: {task}{why} "
        f"[{exp.files_changed} file(s), +{exp.added} -{exp.removed}; "
        f"targets {', '.join(exp.targets) or 'none'}]"
    )
    return Candidate(
        text=text,
        tier=Tier.EPISODIC,
        provenance=TAINTED if exp.tainted else TRUSTED,
        taint_sources=exp.taint_sources,
        source_run=exp.run_id,
        kind=kind,
    )


def open_local(root: Path, *, caps: MemoryCaps | None = None) -> MemoryManager:
    """The project's local memory (``.chimera/memory.db`` under ``root``), with no model: what
    ``chimera memory`` works on (a person's writes are trusted ADDs or NOOPs).

    Raises:
        ChimeraError: the store cannot be opened.
    """
    return MemoryManager(
        MemoryStore(Path(root) / MEMORY_DB),
        caps=caps or MemoryCaps(),
        redactor=SecretRedactor.from_environment(workspace=root),
    )


def configured_embedder(config: Any) -> Embedder | None:
    """The embedder ``[memory] embedding_model`` names (through LiteLLM's ``embedding()``;
    ``api_base`` from ``[memory] embedding_api_base``, else ``[models] api_base``), or ``None``
    when it is not set: vectors are off by default and BM25 ranks alone."""
    memory = getattr(config, "memory", None)
    model = getattr(memory, "embedding_model", None)
    if not model:
        return None
    base = getattr(memory, "embedding_api_base", None) or getattr(
        getattr(config, "models", None), "api_base", None
    )
    return LiteLLMEmbedder(str(model), **({"api_base": base} if base else {}))


class MemoryExperience:
    """An :class:`~chimera.protocols.ExperienceStore` over the memory manager (and, when
    given, the JSONL experience buffer that answers :meth:`similar`)."""

    def __init__(self, manager: MemoryManager, buffer: ExperienceStore | None = None) -> None:
        self.manager = manager
        self.buffer = buffer

    def append(self, experience: Experience) -> None:
        if self.buffer is not None:
            self.buffer.append(experience)
        self.manager.remember(attempt_candidate(experience, self.manager.redactor), decide=False)

    def similar(
        self, task: str, k: int = 5, *, failures_only: bool = False, min_score: float = 0.1
    ) -> list[tuple[float, Experience]]:
        if self.buffer is None:
            return []
        return self.buffer.similar(task, k, failures_only=failures_only, min_score=min_score)


class PlanMemory:
    """A :class:`~chimera.protocols.MemoryReader` for the plan step: the maintainers' persona
    first (at most its capped share), then the memories nearest the query in what is left,
    both cut to their shares of one :class:`ContextBudget`; the split is a ``context_budget``
    audit event whenever something is shown. Keeps every recalled id (for the run summary).
    """

    def __init__(self, manager: MemoryManager, budget: ContextBudget | None = None) -> None:
        self.manager = manager
        self.budget = budget
        self.recalled: list[str] = []
        self.tainted = False

    def recall_block(self, query: str, *, budget_tokens: int) -> Recall:
        """Persona plus recalled memories within ``budget_tokens`` (the configured budget's
        total when one was given). A tainted item sets :attr:`tainted` (and the manager's
        ledger, when attached)."""
        total = self.budget.total_tokens if self.budget is not None else budget_tokens
        budget = ContextBudget(total, self.budget.weights) if self.budget else ContextBudget(total)
        persona = render_persona(self.manager.persona())
        first = budget.split({"persona": estimate_tokens(persona), "memory": total})
        found = self.manager.recall_block(query, budget_tokens=first.shares["memory"])
        plan = budget.split({"persona": estimate_tokens(persona), "memory": found.tokens})
        text = "\n\n".join(t for t in (plan.fit("persona", persona), found.text) if t)
        self.recalled.extend(i for i in found.ids if i not in self.recalled)
        self.tainted = self.tainted or found.tainted
        if text and self.manager.audit is not None:
            self.manager.audit.append(
                "context_budget", **plan.audit_fields(), recalled=list(found.ids)
            )
        return Recall(text, found.ids, found.tainted, estimate_tokens(text))


class MemoryPart:
    """Plugs memory into every session (``--no-memory`` / input ``memory: false``: leave it
    out, or pass ``enabled=False``).

    Args:
        enabled: False makes both hooks do nothing.
        caps: bounds of the store.
        decide_with_model: let the session's first rung decide ADD/UPDATE/DELETE/NOOP for
            the facts the end-of-run reflection extracts (attempt records are events: they
            never ask the model).
        budget: the plan prompt's context budget for persona and memory (default: the
            caller's ``budget_tokens``).
        reflect: at the end of a finished run, extract its durable facts and remember them
            through the model's decision (needs ``decide_with_model`` and a ladder).
        min_tokens, min_usd: skip the reflection when less of the run's budget is left.
        embedder: optional vectors for hybrid recall (``None``: BM25 alone).
    """

    def __init__(
        self,
        *,
        enabled: bool = True,
        caps: MemoryCaps | None = None,
        decide_with_model: bool = True,
        budget: ContextBudget | None = None,
        reflect: bool = True,
        min_tokens: int = 2000,
        min_usd: float = 0.005,
        embedder: Embedder | None = None,
    ) -> None:
        self.enabled = enabled
        self.caps = caps or MemoryCaps()
        self.decide_with_model = decide_with_model
        self.budget = budget
        self.reflect = reflect
        self.min_tokens = min_tokens
        self.min_usd = min_usd
        self.embedder = embedder
        self.manager: MemoryManager | None = None
        self.reader: PlanMemory | None = None

    def attach(self, session: Any) -> None:
        """Open the store under ``session.root`` for run ``session.run_id`` (audited to
        ``session.audit``)."""
        if not self.enabled:
            return
        ladder = tuple(getattr(session, "ladder", ()) or ())
        if self.embedder is None:
            self.embedder = configured_embedder(getattr(session, "config", None))
        self.manager = MemoryManager(
            MemoryStore(Path(session.root) / MEMORY_DB),
            backend=ladder[0] if ladder and self.decide_with_model else None,
            embedder=self.embedder,
            audit=getattr(session, "audit", None),
            caps=self.caps,
            run_id=str(getattr(session, "run_id", "")),
            # The run's taint ledger (an untrusted run's): a recalled tainted item lands there.
            ledger=getattr(session, "ledger", None),
            # The workspace's dotenv values too: the same secrets the run folder is redacted of.
            redactor=SecretRedactor.from_environment(workspace=session.root),
        )
        self.reader = PlanMemory(self.manager, self.budget)

    def agent_deps(self, deps: Any, session: Any) -> Any:
        """``deps`` with its experience store wrapped so attempts are also memory items, and
        (when ``deps`` has a ``memory`` field) the plan step's :class:`PlanMemory`."""
        if self.manager is None:
            return deps
        # This agent's taint ledger (an untrusted one's) also records tainted recalls.
        self.manager.ledger = getattr(session, "ledger", None) or self.manager.ledger
        changes: dict[str, Any] = {"experience": MemoryExperience(self.manager, deps.experience)}
        if "memory" in {f.name for f in fields(deps)}:
            changes["memory"] = self.reader
        return replace(deps, **changes)

    def finish(self, session: Any, result: Any) -> dict[str, Any]:
        """At the end of a finished run, the memory reflection (:mod:`chimera.memory.reflect`:
        the run's durable facts remembered through the model-decided ADD / UPDATE / DELETE /
        NOOP); then what this session recalled and remembered, for the run summary:
        ``{"memory": {"recalled": [ids], "remembered": [ids], "tainted": bool,
        "reflection": {...}}}`` (``{}`` when memory is off). Closes the store: the session is
        over."""
        if self.manager is None:
            return {}
        reflection = self._reflect(session, result)
        added = (OpKind.ADD, OpKind.UPDATE)
        remembered = list(dict.fromkeys(op.id for op in self.manager.journal if op.op in added))
        reader = self.reader
        self.manager.store.close()
        report: dict[str, Any] = {
            "recalled": list(reader.recalled) if reader else [],
            "remembered": remembered,
            "tainted": bool(self.manager.tainted_read),
        }
        if reflection is not None:
            report["reflection"] = reflection.to_json()
        return {"memory": report}

    def _reflect(self, session: Any, result: Any) -> MemoryReflection | None:
        """The reflection of a finished run (``None``: off, no model, or not finished)."""
        manager = self.manager
        if not self.reflect or manager is None or manager.backend is None:
            return None
        if result is None or not _finished(result):
            return None
        budget = getattr(session, "budget", None)
        left = budget.remaining() if budget is not None else None
        if left is not None and left.tokens is not None and left.tokens < self.min_tokens:
            return MemoryReflection(
                skipped=f"{left.tokens} token(s) of the run's budget left (< {self.min_tokens})"
            )
        if left is not None and left.usd is not None and left.usd < self.min_usd:
            return MemoryReflection(
                skipped=f"${left.usd:.4f} of the run's budget left (< ${self.min_usd})"
            )
        # The run's audit log has recorded its head by now (a project run's state holds it):
        # what the reflection does is reported in the run summary instead.
        audit, manager.audit = manager.audit, None
        try:
            return reflect_run(manager, manager.backend, run_id=manager.run_id)
        finally:
            manager.audit = audit


def _finished(result: Any) -> bool:
    """Whether a session's result is a finished run: a solve's ``ok``, or a project run that
    is done, failed or stopped (one awaiting approval is not)."""
    if isinstance(getattr(result, "ok", None), bool):
        return True
    return str(getattr(result, "status", "")) in ("done", "failed", "stopped")


__all__ = [
    "MEMORY_DB",
    "MemoryExperience",
    "MemoryPart",
    "PlanMemory",
    "attempt_candidate",
    "configured_embedder",
    "open_local",
]
