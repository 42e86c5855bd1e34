"""cascade-bench: the cost distribution of a cascade against its top model alone.

A task file lists tasks (a prompt, optionally gates of its own); each task runs once through
the cascade and once on the top model alone, in the same run, and the report gives the cost
tail (p50 / p95 / p99, not only the mean), which tier answered each task, how often each side
passed the task's gates, and the models it ran on. Costs come from LiteLLM's cost map (an
unknown price makes a column "unknown", never a guess).

Task file (YAML or JSON)::

    cascade:                         # optional: tiers inline (else --cascade NAME from config)
      tiers:
        - {name: weak, route: openai/gpt-4o-mini}
        - {name: top, route: openai/gpt-4o}
    top_model: openai/gpt-4o         # optional: default the last tier's route
    gates: [{kind: criteria, must_match: ["^ANSWER:"]}]   # optional: for every task
    tasks:
      - id: t1
        prompt: "Reply with ANSWER: and the capital of France."
        purpose: act                 # optional (act, plan, review, replan, summarize)
        gates: [{kind: criteria, must_match: ["Paris"]}]  # optional, added to the above
    stub: {...}                      # read only by bench/cascade.py (stub models)

The task's gates apply to every tier (a tier's own gates from the cascade config too); the
baseline's answer is judged by the same task gates, so the pass rates compare.

One module of about 420 lines on purpose: the task file's schema, the paired run and the
report are one command, and the report's columns follow the file's fields.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from chimera.config.economics import CascadeConfig, GateConfig
from chimera.economics.cascade import CascadeBackend, CascadeTier, Gate
from chimera.errors import BudgetExceeded, CascadeExhausted, ConfigError, ProviderError
from chimera.fusion.accounting import CallRecord, sum_records
from chimera.protocols import Message, Purpose, SupportsComplete, Usage

if TYPE_CHECKING:
    from chimera.config import ChimeraConfig
    from chimera.providers import TokenBudget

NOTE_REAL = "not validated against real models in Chimera's CI; the models named above ran"


class BenchTask(BaseModel):
    """One task of a cascade-bench file."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    prompt: str | None = None
    messages: list[dict[str, Any]] | None = None
    purpose: Purpose = Purpose.ACT
    gates: list[GateConfig] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_input(self) -> BenchTask:
        if (self.prompt is None) == (self.messages is None):
            raise ValueError("give exactly one of prompt or messages")
        return self

    def conversation(self) -> list[Message]:
        if self.messages is not None:
            return [dict(m) for m in self.messages]
        return [{"role": "user", "content": self.prompt or ""}]


class BenchFile(BaseModel):
    """A whole task file; ``stub`` is free-form (only the stub bench reads it)."""

    model_config = ConfigDict(extra="forbid")

    cascade: CascadeConfig | None = None
    top_model: str | None = None
    gates: list[GateConfig] = Field(default_factory=list)
    tasks: list[BenchTask] = Field(min_length=1)
    stub: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _distinct(self) -> BenchFile:
        ids = [t.id for t in self.tasks]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"task ids must be distinct: {', '.join(dupes)}")
        return self


def load_bench_file(path: Path) -> BenchFile:
    """Read and validate a task file.

    Raises:
        ConfigError: ``file:line:col: message`` for unreadable, malformed or invalid files.
    """
    from chimera.spec.yamlload import parse_yaml

    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the task file: {exc}") from exc
    doc = parse_yaml(text)
    if doc.issues:
        issue = doc.issues[0]
        raise ConfigError(f"{path}:{issue.mark.line}:{issue.mark.col}: {issue.message}")
    if doc.empty or not isinstance(doc.value, dict):
        raise ConfigError(f"{path}:1:1: expected a mapping with 'tasks:'")
    try:
        return BenchFile.model_validate(doc.value)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = tuple(error["loc"])
        # Discriminated unions add the tag to the location; keep only real path parts.
        node = tuple(p for p in loc if isinstance(p, int) or p in _path_keys(doc.value, loc))
        mark = doc.key_mark(node) if error["type"] == "extra_forbidden" else doc.mark(node)
        key = ".".join(str(p) for p in loc)
        message = str(error["msg"]).removeprefix("Value error, ")
        raise ConfigError(f"{path}:{mark.line}:{mark.col}: {key}: {message}") from exc


def _path_keys(value: Any, loc: tuple[Any, ...]) -> set[str]:
    keys: set[str] = set()
    node = value
    for part in loc:
        if isinstance(node, dict) and part in node:
            keys.add(str(part))
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
    return keys


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0–100) by linear interpolation between closest ranks."""
    if not values:
        return math.nan
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


@dataclass
class TaskOutcome:
    """One task's two runs."""

    id: str
    answered_by: str | None
    cascade_usage: Usage
    cascade_hops: int
    cascade_passed: bool
    top_usage: Usage
    top_passed: bool
    error: str = ""


@dataclass
class Distribution:
    """Cost statistics in USD (``None`` when any task's cost is unknown)."""

    p50: float | None
    p95: float | None
    p99: float | None
    mean: float | None
    total: float | None

    @classmethod
    def of(cls, costs: Sequence[float | None]) -> Distribution:
        if not costs or any(c is None for c in costs):
            return cls(None, None, None, None, None)
        known = [float(c) for c in costs if c is not None]
        return cls(
            percentile(known, 50),
            percentile(known, 95),
            percentile(known, 99),
            statistics.fmean(known),
            sum(known),
        )


@dataclass
class BenchReport:
    """What cascade-bench measured (see :meth:`render`)."""

    tiers: list[tuple[str, str]]
    top_model: str
    outcomes: list[TaskOutcome] = field(default_factory=list)
    note: str = ""

    @property
    def cascade(self) -> Distribution:
        return Distribution.of([o.cascade_usage.cost_usd for o in self.outcomes])

    @property
    def top(self) -> Distribution:
        return Distribution.of([o.top_usage.cost_usd for o in self.outcomes])

    def answered(self) -> dict[str, int]:
        counts = Counter(o.answered_by or "none" for o in self.outcomes)
        return {name: counts.get(name, 0) for name, _ in self.tiers} | {
            "none": counts.get("none", 0)
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "tiers": [{"name": n, "model": m} for n, m in self.tiers],
            "top_model": self.top_model,
            "tasks": len(self.outcomes),
            "answered_by": self.answered(),
            "cascade": vars(self.cascade),
            "top_alone": vars(self.top),
            "cascade_pass_rate": self._rate(lambda o: o.cascade_passed),
            "top_pass_rate": self._rate(lambda o: o.top_passed),
            "note": self.note,
            "outcomes": [
                {
                    "id": o.id,
                    "answered_by": o.answered_by,
                    "hops": o.cascade_hops,
                    "cascade_cost_usd": o.cascade_usage.cost_usd,
                    "cascade_tokens": o.cascade_usage.total_tokens,
                    "cascade_passed": o.cascade_passed,
                    "top_cost_usd": o.top_usage.cost_usd,
                    "top_tokens": o.top_usage.total_tokens,
                    "top_passed": o.top_passed,
                    "error": o.error,
                }
                for o in self.outcomes
            ],
        }

    def _rate(self, ok: Callable[[TaskOutcome], bool]) -> float:
        return sum(1 for o in self.outcomes if ok(o)) / len(self.outcomes) if self.outcomes else 0

    def render(self) -> str:
        def usd(v: float | None) -> str:
            return "unknown" if v is None else f"${v:.6f}"

        chain = " → ".join(f"{n} ({m})" for n, m in self.tiers)
        lines = [
            f"cascade-bench: {len(self.outcomes)} task(s)",
            f"  cascade: {chain}",
            f"  baseline: {self.top_model} alone, same tasks, same run",
        ]
        if self.note:
            lines.append(f"  NOTE: {self.note}")
        answered = ", ".join(f"{k} {v}" for k, v in self.answered().items())
        lines.append(f"  answered by: {answered}")
        lines.append(
            f"  {'cost per task':<14} {'p50':>12} {'p95':>12} {'p99':>12} "
            f"{'mean':>12} {'total':>12}"
        )
        for label, d in (("cascade", self.cascade), ("top alone", self.top)):
            lines.append(
                f"  {label:<14} {usd(d.p50):>12} {usd(d.p95):>12} {usd(d.p99):>12} "
                f"{usd(d.mean):>12} {usd(d.total):>12}"
            )
        c, t = self.cascade.total, self.top.total
        if c is not None and t:
            lines.append(f"  cascade / top-alone total cost: {c / t:.3f}")
        else:
            lines.append("  cascade / top-alone total cost: unknown (a price is unknown)")
        lines.append(
            f"  passed the task gates: cascade {self._rate(lambda o: o.cascade_passed):.0%}, "
            f"top alone {self._rate(lambda o: o.top_passed):.0%}"
        )
        return "\n".join(lines)


def run_bench(
    bench: BenchFile,
    tiers: Sequence[CascadeTier],
    top: SupportsComplete,
    top_model: str,
    *,
    make_gate: Callable[[GateConfig], Gate],
    on_exhausted: str = "raise",
    note: str = "",
    progress: Callable[[str], None] | None = None,
) -> BenchReport:
    """Run every task through the cascade, then on ``top`` alone; tasks run sequentially.

    Raises:
        BudgetExceeded: a budget refused a call (the bench stops: its numbers would lie).
    """
    report = BenchReport([(t.name, t.model) for t in tiers], top_model, note=note)
    for task in bench.tasks:
        task_gates = [make_gate(g) for g in (*bench.gates, *task.gates)]
        cascade = CascadeBackend(
            [
                CascadeTier(t.name, t.backend, [*t.gates, *task_gates], t.model, t.max_tokens)
                for t in tiers
            ],
            on_exhausted="raise" if on_exhausted == "raise" else "last",
            name="bench",
        )
        messages = task.conversation()
        error = ""
        answered_by: str | None = None
        hops = 0
        try:
            out = cascade.complete(messages, purpose=task.purpose)
            assert out.raw is not None
            info = out.raw["cascade"]
            answered_by = info["answered_by"] if info["accepted"] else None
            hops = len(info["route"])
            cascade_usage = out.usage
        except CascadeExhausted as exc:
            spent = [c for c in exc.calls if isinstance(c, CallRecord)]
            cascade_usage = sum_records(spent)
            hops = len(spent)
            error = "no tier passed"
        try:
            alone = top.complete(messages, purpose=task.purpose)
            top_usage = alone.usage
            top_passed = all(g.check(alone, messages).ok for g in task_gates)
        except BudgetExceeded:
            raise
        except ProviderError as exc:
            top_usage, top_passed = Usage(0, 0, 0.0), False
            error = (error + "; " if error else "") + f"top alone: {exc}"
        report.outcomes.append(
            TaskOutcome(
                task.id,
                answered_by,
                cascade_usage,
                hops,
                answered_by is not None,
                top_usage,
                top_passed,
                error,
            )
        )
        if progress is not None:
            progress(f"{task.id}: answered by {answered_by or 'none'} after {hops} hop(s)")
    return report


def run_configured_bench(
    bench: BenchFile,
    config: ChimeraConfig,
    *,
    cascade_name: str | None,
    top_model: str | None,
    backend_for: Callable[[str, TokenBudget], SupportsComplete],
    prepare: Callable[[list[str]], None] | None = None,
    progress: Callable[[str], None] | None = None,
    note: str = NOTE_REAL,
) -> BenchReport:
    """Build the cascade (the task file's, or ``cascade_name`` from ``config``) and the
    baseline, then :func:`run_bench`. Shared by ``chimera cascade-bench`` and
    ``bench/cascade.py``.

    Args:
        backend_for: ``(model, run budget) -> backend`` for every leaf model.
        prepare: called with every model name first (credential checks).

    Raises:
        ConfigError: no cascade can be chosen, the baseline is not one model, or a route
            names an undefined panel.
    """
    from chimera.economics.build import EngineBuilder, gate_from_config
    from chimera.providers import TokenBudget

    if bench.cascade is not None and cascade_name:
        raise ConfigError("the task file defines a cascade; do not also pass --cascade")
    if bench.cascade is not None:
        cascade_cfg = bench.cascade
    elif cascade_name:
        found = config.cascades.get(cascade_name)
        if found is None:
            known = ", ".join(sorted(config.cascades)) or "none"
            raise ConfigError(f"--cascade {cascade_name}: no such cascade (defined: {known})")
        cascade_cfg = found
    elif len(config.cascades) == 1:
        cascade_cfg = next(iter(config.cascades.values()))
    else:
        known = ", ".join(sorted(config.cascades)) or "none"
        raise ConfigError(
            f"no cascade: define one in the task file or pass --cascade NAME (configured: {known})"
        )
    top = top_model or bench.top_model or cascade_cfg.tiers[-1].route
    if top.startswith(("panel:", "cascade:")):
        raise ConfigError(f"the baseline must be one model, not {top!r}; pass --top-model")
    models = [t.route for t in cascade_cfg.tiers if not t.route.startswith("panel:")]
    for t in cascade_cfg.tiers:
        if t.route.startswith("panel:"):
            panel = config.fusion.panels.get(t.route.removeprefix("panel:"))
            if panel is not None:
                models.extend([*panel.members, panel.judge or "", panel.synthesizer or ""])
    if prepare is not None:
        prepare([m for m in dict.fromkeys([*models, top]) if m])
    budget = TokenBudget.from_config(config.budget)
    builder = EngineBuilder(config, lambda m: backend_for(m, budget))
    tiers = [
        CascadeTier(
            t.name,
            builder.route(t.route, key=f"tiers.{i}.route"),
            [gate_from_config(g) for g in t.gates],
            model=t.route,
            max_tokens=t.max_tokens,
        )
        for i, t in enumerate(cascade_cfg.tiers)
    ]
    return run_bench(
        bench,
        tiers,
        backend_for(top, budget),
        top,
        make_gate=gate_from_config,
        on_exhausted=cascade_cfg.on_exhausted,
        note=note,
        progress=progress,
    )
