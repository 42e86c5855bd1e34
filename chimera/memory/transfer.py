"""Moving memory between stores: export as replayable ops, import them back (tainted unless
a person says the file is trusted)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from chimera.memory.items import TAINTED, JournalOp, OpKind, Tier
from chimera.memory.manager import MemoryManager


def export_ops(manager: MemoryManager) -> list[dict[str, Any]]:
    """The persisted store as replayable ops (an ADD per item, a DELETE per tombstone)."""
    out: list[dict[str, Any]] = []
    for item in manager.store.items(include_deleted=True):
        add = JournalOp(
            OpKind.ADD,
            item.id,
            item.created,
            item.source_run,
            item.tier,
            item.text,
            item.provenance,
            item.taint_sources,
            item.kind,
            item.source_commit,
        )
        out.append(add.to_json())
        if item.deleted:
            out.append(
                JournalOp(
                    OpKind.DELETE, item.id, item.updated, "", item.tier, evidence=item.evidence
                ).to_json()
            )
    return out


def import_ops(
    manager: MemoryManager, ops: Iterable[Mapping[str, Any]], *, trusted: bool = False
) -> int:
    """Apply exported ops; without ``trusted`` every item arrives tainted (source
    ``import``) and persona or promotion ops are skipped. Returns how many applied.

    Raises:
        UsageError: a line is not an op.
    """
    applied = 0
    for raw in ops:
        op = JournalOp.from_json(raw)
        if not trusted:
            if op.tier is Tier.PERSONA or op.op is OpKind.PROMOTE:
                continue
            sources = tuple(dict.fromkeys((*op.taint_sources, "import")))
            op = replace(op, provenance=TAINTED, taint_sources=sources)
        applied += manager.apply(op)
    return applied


__all__ = ["export_ops", "import_ops"]
