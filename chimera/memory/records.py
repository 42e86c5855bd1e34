"""How a remembered candidate becomes a record: provenance stamping, the journal op that
writes it, and the working-tier item that is never stored.

Pure functions of the candidate and the run (no store, no audit): the
:class:`~chimera.memory.manager.MemoryManager` decides *whether* to write, these say *what*.
"""

from __future__ import annotations

from dataclasses import replace

from chimera.memory.items import (
    TAINTED,
    TRUSTED,
    Candidate,
    JournalOp,
    MemoryItem,
    OpKind,
    Tier,
    item_id,
)


def stamp(candidate: Candidate, *, tainted_read: bool, run_id: str, commit: str) -> Candidate:
    """``candidate`` with the run's provenance: tainted when the run read a tainted memory (or
    claims a provenance other than trusted/tainted), and ``run_id``/``commit`` filled in where
    it names none."""
    if tainted_read and not candidate.tainted:
        # The run read a tainted memory: what it writes next is tainted too.
        candidate = replace(candidate, provenance=TAINTED, taint_sources=("memory",))
    if candidate.provenance not in (TRUSTED, TAINTED):
        candidate = replace(candidate, provenance=TAINTED)
    return replace(
        candidate,
        source_run=candidate.source_run or run_id,
        source_commit=candidate.source_commit or commit,
    )


def journal_op(
    kind: OpKind, target: str, candidate: Candidate, *, text: str, tier: Tier, ts: str
) -> JournalOp:
    """The op ``kind`` on item ``target`` at ``ts`` (ISO-8601), carrying ``candidate``'s run,
    provenance, taint sources, kind and commit."""
    return JournalOp(
        op=kind,
        id=target,
        ts=ts,
        run=candidate.source_run,
        tier=tier,
        text=text,
        provenance=candidate.provenance,
        taint_sources=candidate.taint_sources,
        kind=candidate.kind,
        commit=candidate.source_commit,
    )


def working_item(candidate: Candidate, ts: str) -> MemoryItem:
    """A working-tier item for ``candidate`` created at ``ts`` (kept for the run only)."""
    return MemoryItem(
        id=item_id(Tier.WORKING, candidate.text, ts, candidate.source_run),
        tier=Tier.WORKING,
        text=candidate.text,
        provenance=candidate.provenance,
        taint_sources=candidate.taint_sources,
        source_run=candidate.source_run,
        created=ts,
        updated=ts,
        kind=candidate.kind,
    )


__all__ = ["journal_op", "stamp", "working_item"]
