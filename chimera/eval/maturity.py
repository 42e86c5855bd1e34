"""The capability scorecard: pass rates with intervals, per capability, from recorded runs.

A *capability* is one value along one dimension: a requirement **kind** (``defines``,
``command``...), a task **family** (a label a benchmark gives its tasks) or a **tool**
(``edit_file``...). Each recorded outcome is a pass or a fail of one capability; the scorecard
counts them and gives each capability its Wilson interval (:func:`chimera.stats.wilson_interval`).
:meth:`Scorecard.weakest` ranks by the interval's **lower bound**, never the point estimate, so
one lucky pass on a rarely used tool does not look better than 90 passes out of 100.

Sources:

* run audit logs (``.chimera/runs/*/audit.jsonl``): each ``attempt`` event is an outcome of the
  kinds of the requirements the run targeted (the ``targets`` event), each ``tool_call`` event an
  outcome of its tool (``ok``);
* outcome files written by the benchmarks (:func:`read_outcomes`), which also carry families.

Only logs whose hash chain verifies are read; the rest are reported as skipped (a scorecard
built from an edited log would measure the edit).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from chimera.errors import UsageError
from chimera.localstate import make_dirs
from chimera.stats import DEFAULT_CONFIDENCE, Interval, wilson_interval

Dimension = Literal["kind", "family", "tool"]
DIMENSIONS: tuple[Dimension, ...] = ("kind", "family", "tool")


@dataclass(frozen=True, slots=True)
class Outcome:
    """One pass or fail of one capability.

    Attributes:
        dimension: ``kind``, ``family`` or ``tool``.
        capability: the value along that dimension (``defines``, ``parsing``, ``edit_file``).
        passed: whether it succeeded.
        source: where it was read from (``run-id`` or ``file:line``), for tracing.
    """

    dimension: Dimension
    capability: str
    passed: bool
    source: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "dimension": self.dimension,
            "capability": self.capability,
            "passed": self.passed,
            "source": self.source,
        }


@dataclass(frozen=True, slots=True)
class CapabilityScore:
    """A capability's counts and its Wilson interval."""

    dimension: Dimension
    capability: str
    passes: int
    trials: int
    interval: Interval

    def to_json(self) -> dict[str, Any]:
        return {
            "dimension": self.dimension,
            "capability": self.capability,
            "passes": self.passes,
            "trials": self.trials,
            "interval": self.interval.to_json(),
        }


@dataclass
class Scorecard:
    """Pass rates with intervals per capability.

    Args:
        outcomes: the recorded outcomes.
        confidence: the intervals' confidence level.
        skipped: sources that were not read, with the reason (shown in the report).
    """

    outcomes: Sequence[Outcome]
    confidence: float = DEFAULT_CONFIDENCE
    skipped: list[str] = field(default_factory=list)

    def scores(self, dimension: Dimension | None = None) -> list[CapabilityScore]:
        """Every capability's score, ordered by dimension then name."""
        trials: Counter[tuple[Dimension, str]] = Counter()
        passes: Counter[tuple[Dimension, str]] = Counter()
        for o in self.outcomes:
            if dimension is None or o.dimension == dimension:
                trials[o.dimension, o.capability] += 1
                passes[o.dimension, o.capability] += int(o.passed)
        keys = sorted(trials, key=lambda k: (DIMENSIONS.index(k[0]), k[1]))
        return [
            CapabilityScore(
                d,
                c,
                passes[d, c],
                trials[d, c],
                wilson_interval(passes[d, c], trials[d, c], confidence=self.confidence),
            )
            for d, c in keys
        ]

    def weakest(self, k: int = 5, dimension: Dimension | None = None) -> list[CapabilityScore]:
        """The ``k`` capabilities with the lowest interval lower bound.

        Ties break on the point estimate, then on more trials first (more evidence of the
        weakness), then on dimension and name, so the order is deterministic.
        """
        ranked = sorted(
            self.scores(dimension),
            key=lambda s: (
                s.interval.low,
                s.interval.estimate,
                -s.trials,
                DIMENSIONS.index(s.dimension),
                s.capability,
            ),
        )
        return ranked[:k]

    def to_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "confidence": self.confidence,
            "outcomes": len(self.outcomes),
            "scores": [s.to_json() for s in self.scores()],
            "weakest": [s.to_json() for s in self.weakest()],
            "skipped": list(self.skipped),
        }

    def render(self, weakest: int = 5) -> str:
        """A plain-text table: one row per capability, then the weakest by lower bound."""
        rows = self.scores()
        if not rows:
            lines = ["no recorded outcomes"]
        else:
            width = max(len(s.capability) for s in rows)
            lines = [f"{'dimension':<9}  {'capability':<{width}}  pass/trials  rate [interval]"]
            for s in rows:
                lines.append(
                    f"{s.dimension:<9}  {s.capability:<{width}}  {s.passes:>4}/{s.trials:<6}  "
                    f"{s.interval.describe(percent=True)}"
                )
            lines.append("")
            lines.append(f"weakest (by the lower bound of the {self.confidence:.0%} interval):")
            for s in self.weakest(weakest):
                lines.append(f"  {s.dimension} {s.capability}: {s.interval.describe(percent=True)}")
        for why in self.skipped:
            lines.append(f"skipped: {why}")
        return "\n".join(lines)


def outcomes_from_audit(
    events: Iterable[Mapping[str, Any]], kinds: Mapping[str, str], source: str = ""
) -> list[Outcome]:
    """Outcomes in one run's audit events (already verified by the caller).

    Args:
        events: the log's parsed lines, in order (``{"event": ..., "fields": {...}}``).
        kinds: requirement id → kind name, from the Spec the run used; targets not in it
            count as ``unknown``.
        source: recorded on each outcome (the run id).
    """
    out: list[Outcome] = []
    targets: list[str] = []
    for entry in events:
        event = entry.get("event")
        fields = entry.get("fields") or {}
        if event == "targets":
            targets = [str(t) for t in fields.get("targets") or []]
        elif event == "attempt":
            passed = fields.get("verdict") == "passed"
            for kind in sorted({kinds.get(t, "unknown") for t in targets}):
                out.append(Outcome("kind", kind, passed, source))
        elif event == "tool_call" and fields.get("name"):
            out.append(Outcome("tool", str(fields["name"]), bool(fields.get("ok", True)), source))
    return out


def read_outcomes(path: Path) -> list[Outcome]:
    """Outcome records from a JSONL file (``{"dimension", "capability", "passed"}`` per line).

    Raises:
        UsageError: the file cannot be read, or a line is not a valid record (names the line).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{path}: cannot read outcomes: {exc.strerror or exc}") from exc
    out: list[Outcome] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            dim = data["dimension"]
            if dim not in DIMENSIONS:
                raise ValueError(f"dimension must be one of {', '.join(DIMENSIONS)}")
            if not isinstance(data["passed"], bool):
                raise ValueError("passed must be true or false")
            out.append(Outcome(dim, str(data["capability"]), data["passed"], f"{path}:{number}"))
        except (ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"{path}:{number}: not an outcome record: {exc}") from exc
    return out


def write_outcomes(path: Path, outcomes: Iterable[Outcome]) -> None:
    """Append outcome records (one JSON object per line)."""
    make_dirs(path.parent)
    with path.open("a", encoding="utf-8") as fh:
        for o in outcomes:
            fh.write(json.dumps(o.to_json(), sort_keys=True) + "\n")
