"""The migration's report: ``report.json`` (one object per item) and ``summary.md`` (a table a
person reads), both written to the run folder; :func:`render` prints the same table for a dry
run. Texts are shown redacted (:func:`~chimera.migration.model.redact`): a credential is never
echoed."""

from __future__ import annotations

import json

from chimera.atomic import atomic_write_text
from chimera.migration.model import MigrationResult

__all__ = ["render", "write_report"]


def render(result: MigrationResult) -> str:
    """A readable summary: a header, one line per item, the counts."""
    mode = "applied" if result.applied else "dry run (nothing written; --apply writes)"
    lines = [f"chimera migrate {result.tool}: {mode}", ""]
    for o in result.outcomes:
        where = f" -> {o.target}" if o.target else ""
        why = f" ({o.reason})" if o.reason else ""
        shown = f" «{o.preview}»" if o.preview else ""
        lines.append(f"  {o.status.value:<8} {o.kind:<17} {o.source}{where}{why}{shown}")
    counts = ", ".join(f"{n} {s}" for s, n in result.counts().items() if n)
    lines += ["", f"{len(result.outcomes)} item(s): {counts or 'nothing found'}"]
    if result.run_dir is not None:
        lines.append(f"report: {result.run_dir / 'report.json'}")
    return "\n".join(lines) + "\n"


def write_report(result: MigrationResult) -> None:
    """Write ``report.json`` and ``summary.md`` into ``result.run_dir``.

    Raises:
        ValueError: the result has no run folder (a dry run).
    """
    if result.run_dir is None:
        raise ValueError("a dry run has no run folder")
    data = {
        "tool": result.tool,
        "applied": result.applied,
        "counts": result.counts(),
        "items": [o.to_json() for o in result.outcomes],
    }
    atomic_write_text(result.run_dir / "report.json", json.dumps(data, indent=2) + "\n")
    atomic_write_text(result.run_dir / "summary.md", "```\n" + render(result) + "```\n")
