"""Memory as a session part: every surface's runs record and recall through one manager.

:class:`MemoryPart` follows the shape of the session factory's ``SessionPart``
(``attach(session)`` once per session, ``agent_deps(deps, session)`` per agent) without
importing orchestration (memory sits below it). It opens ``.chimera/memory.db`` under the
session's root, and gives each agent an :class:`~chimera.protocols.ExperienceStore` that
records every attempt twice: in the experience buffer (which answers ``similar``) and as an
episodic memory item (which the branch store carries across runners). Failures are recorded
as negatives with their evidence; a hollow success (green verifier, empty diff) is recorded as
``hollow``, never as a success.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from chimera.memory.items import TAINTED, TRUSTED, Candidate, Tier
from chimera.memory.manager import MemoryCaps, MemoryManager
from chimera.memory.store import MemoryStore
from chimera.protocols import Experience, ExperienceStore

MEMORY_DB = Path(".chimera") / "memory.db"


def attempt_candidate(exp: Experience) -> Candidate:
    """The episodic item of one attempt: verdict, task, evidence, diff stats, provenance."""
    task = " ".join(exp.task.split())[:300]
    if exp.verdict == "passed" and exp.files_changed == 0:
        kind, head = "hollow", "hollow pass (verifier green, nothing changed)"
    elif exp.verdict == "passed":
        kind, head = "success", "passed"
    else:
        kind, head = ("hollow" if exp.verdict == "hollow" else "failure"), exp.verdict
    evidence = f" — {exp.cause or exp.signature}" if exp.failed else ""
    text = (
        f"attempt {exp.attempt} {head} on: {task}{evidence} "
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
    return MemoryManager(MemoryStore(Path(root) / MEMORY_DB), caps=caps or MemoryCaps())


class MemoryExperience:
    """An :class:`~chimera.protocols.ExperienceStore` over the memory manager (and, when
    given, the JSONL experience buffer that answers :meth:`similar`)."""

    def __init__(self, manager: MemoryManager, buffer: ExperienceStore | None = None) -> None:
        self.manager = manager
        self.buffer = buffer

    def append(self, experience: Experience) -> None:
        if self.buffer is not None:
            self.buffer.append(experience)
        self.manager.remember(attempt_candidate(experience), decide=False)

    def similar(
        self, task: str, k: int = 5, *, failures_only: bool = False, min_score: float = 0.1
    ) -> list[tuple[float, Experience]]:
        if self.buffer is None:
            return []
        return self.buffer.similar(task, k, failures_only=failures_only, min_score=min_score)


class MemoryPart:
    """Plugs memory into every session (``--no-memory`` / input ``memory: false``: leave it
    out, or pass ``enabled=False``).

    Args:
        enabled: False makes both hooks do nothing.
        caps: bounds of the store.
        decide_with_model: let the session's first rung decide ADD/UPDATE/DELETE/NOOP for
            semantic candidates (attempt records never ask the model).
    """

    def __init__(
        self,
        *,
        enabled: bool = True,
        caps: MemoryCaps | None = None,
        decide_with_model: bool = True,
    ) -> None:
        self.enabled = enabled
        self.caps = caps or MemoryCaps()
        self.decide_with_model = decide_with_model
        self.manager: MemoryManager | None = None

    def attach(self, session: Any) -> None:
        """Open the store under ``session.root`` for run ``session.run_id`` (audited to
        ``session.audit``)."""
        if not self.enabled:
            return
        ladder = tuple(getattr(session, "ladder", ()) or ())
        self.manager = MemoryManager(
            MemoryStore(Path(session.root) / MEMORY_DB),
            backend=ladder[0] if ladder and self.decide_with_model else None,
            audit=getattr(session, "audit", None),
            caps=self.caps,
            run_id=str(getattr(session, "run_id", "")),
        )

    def agent_deps(self, deps: Any, session: Any) -> Any:
        """``deps`` with its experience store wrapped so attempts are also memory items."""
        if self.manager is None:
            return deps
        return replace(deps, experience=MemoryExperience(self.manager, deps.experience))


__all__ = ["MEMORY_DB", "MemoryExperience", "MemoryPart", "attempt_candidate", "open_local"]
