"""The continuous-evolution benchmark: a chain of tasks in one persistent workspace.

Isolated-task scores overstate what an agent keeps up over a long series of changes (EvoClaw,
arXiv 2603.13428: above 80% on isolated tasks, at most 38% in continuous settings). This
benchmark runs a :class:`~chimera.eval.chain.Chain` in order, in one workspace, and reports
the overall pass rate, the first half against the second half (does the agent get better or
worse as the chain goes on), the longest failing streak, cost and tokens — and memory (the
experience store) on against off as a paired comparison on the same chain.

With a scripted model every number is bookkeeping: the chain is built so that the effect is
known in advance, and every output says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chimera.eval.chain import Chain
from chimera.eval.harness import SCRIPTED, ArmSettings, TaskRun, run_chain
from chimera.stats import Interval, McNemar, mcnemar_exact, paired_bootstrap, wilson_interval

BOOKKEEPING_NOTE = (
    "scripted model: these numbers measure Chimera's bookkeeping (the harness, the Spec gate, "
    "memory recall), never a model"
)


@dataclass(frozen=True)
class ArmReport:
    """One arm's run of a chain."""

    label: str
    runs: Sequence[TaskRun]

    @property
    def passes(self) -> list[bool]:
        return [r.passed for r in self.runs]

    def pass_rate(self) -> Interval:
        return wilson_interval(sum(self.passes), len(self.runs))

    def halves(self) -> tuple[Interval, Interval]:
        """Pass rates of the first and second half of the chain (the middle task, if the
        count is odd, goes to the second half)."""
        half = len(self.runs) // 2
        first, second = self.passes[:half], self.passes[half:]
        return wilson_interval(sum(first), len(first)), wilson_interval(sum(second), len(second))

    def longest_failing_streak(self) -> int:
        best = run = 0
        for passed in self.passes:
            run = 0 if passed else run + 1
            best = max(best, run)
        return best

    @property
    def tokens(self) -> int:
        return sum(r.tokens for r in self.runs)

    @property
    def cost_usd(self) -> float | None:
        costs = [r.cost_usd for r in self.runs]
        return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)

    def to_json(self) -> dict[str, Any]:
        first, second = self.halves()
        return {
            "label": self.label,
            "pass_rate": self.pass_rate().to_json(),
            "first_half": first.to_json(),
            "second_half": second.to_json(),
            "longest_failing_streak": self.longest_failing_streak(),
            "tokens": self.tokens,
            "cost_usd": self.cost_usd,
            "runs": [r.to_json() for r in self.runs],
        }


@dataclass(frozen=True)
class ContinuousReport:
    """Memory on against off on one chain, paired by task.

    Attributes:
        difference: the paired bootstrap interval of pass(on) − pass(off).
        mcnemar: the exact McNemar test on the same pairs.
    """

    chain: str
    model: str
    on: ArmReport
    off: ArmReport
    difference: Interval
    mcnemar: McNemar

    @property
    def scripted(self) -> bool:
        return self.model == SCRIPTED

    def to_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "benchmark": "continuous",
            "chain": self.chain,
            "model": self.model,
            "note": BOOKKEEPING_NOTE if self.scripted else "real model: a measurement",
            "memory_on": self.on.to_json(),
            "memory_off": self.off.to_json(),
            "difference_on_minus_off": self.difference.to_json(),
            "mcnemar": {
                "only_on": self.mcnemar.only_b,
                "only_off": self.mcnemar.only_a,
                "p_value": self.mcnemar.p_value,
            },
        }

    def render(self) -> str:
        """A readable table, one row per arm, then the paired comparison."""
        lines = [f"continuous benchmark: chain {self.chain}, model {self.model}"]
        if self.scripted:
            lines.append(f"NOTE: {BOOKKEEPING_NOTE}")
        lines.append(
            f"{'arm':<11} {'pass rate':<28} {'1st half':<22} {'2nd half':<22} streak  tokens  cost"
        )
        for arm in (self.on, self.off):
            first, second = arm.halves()
            cost = "unknown" if arm.cost_usd is None else f"${arm.cost_usd:.4f}"
            lines.append(
                f"{arm.label:<11} {arm.pass_rate().describe(percent=True):<28} "
                f"{first.describe(percent=True):<22} {second.describe(percent=True):<22} "
                f"{arm.longest_failing_streak():>6}  {arm.tokens:>6}  {cost}"
            )
        lines.append(
            f"memory on − off (paired, per task): {self.difference.describe()}; "
            f"McNemar exact p = {self.mcnemar.p_value:.4g}"
        )
        lines.append("per task (on/off): " + " ".join(
            f"{r.task_id.split('-')[0]}:{'P' if r.passed else 'F'}{'P' if o.passed else 'F'}"
            for r, o in zip(self.on.runs, self.off.runs, strict=True)
        ))  # fmt: skip
        return "\n".join(lines)

    def svg(self) -> str:
        """A small SVG of the cumulative pass rate along the chain, one line per arm."""
        width, height, pad = 480, 200, 30
        n = len(self.on.runs)

        def points(arm: ArmReport) -> str:
            out, passed = [], 0
            for i, ok in enumerate(arm.passes, 1):
                passed += ok
                x = pad + (width - 2 * pad) * (i - 1) / max(n - 1, 1)
                y = height - pad - (height - 2 * pad) * passed / i
                out.append(f"{x:.1f},{y:.1f}")
            return " ".join(out)

        title = f"cumulative pass rate along {self.chain}"
        if self.scripted:
            title += " (scripted: bookkeeping only)"
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'font-family="sans-serif" font-size="11">'
            f'<text x="{pad}" y="16">{title}</text>'
            f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" '
            'stroke="#888"/>'
            f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="#888"/>'
            f'<polyline fill="none" stroke="#1f77b4" stroke-width="2" '
            f'points="{points(self.on)}"/>'
            f'<polyline fill="none" stroke="#d62728" stroke-width="2" stroke-dasharray="4 3" '
            f'points="{points(self.off)}"/>'
            f'<text x="{width - 150}" y="{pad}" fill="#1f77b4">memory on</text>'
            f'<text x="{width - 150}" y="{pad + 14}" fill="#d62728">memory off</text>'
            "</svg>\n"
        )


def run_continuous(chain: Chain, workdir: Path, *, model: str, seed: int = 0) -> ContinuousReport:
    """Run the chain with memory on, then off, each in its own persistent workspace.

    Raises:
        UsageError: the chain has fewer than 2 tasks (no paired interval).
    """
    on = ArmReport(
        "memory on", run_chain(chain, workdir, model=model, arm=ArmSettings(), label="on")
    )
    off = ArmReport(
        "memory off",
        run_chain(chain, workdir, model=model, arm=ArmSettings(memory=False), label="off"),
    )
    a = [float(p) for p in off.passes]
    b = [float(p) for p in on.passes]
    diff = paired_bootstrap(a, b, seed=seed)
    return ContinuousReport(chain.name, model, on, off, diff, mcnemar_exact(off.passes, on.passes))
