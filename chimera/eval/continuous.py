"""The continuous-evolution benchmark: a chain of tasks in one persistent workspace.

Isolated-task scores overstate what an agent keeps up over a long series of changes (EvoClaw,
arXiv 2603.13428: above 80% on isolated tasks, at most 38% in continuous settings). This
benchmark runs a :class:`~chimera.eval.chain.Chain` in order, in one workspace, and reports
the overall pass rate, the first half against the second half (does the agent get better or
worse as the chain goes on), the longest failing streak, cost and tokens — and memory (the
experience store) on against off as a paired comparison on the same chain.

With a scripted model every number is bookkeeping: the chain is built so that the effect is
known in advance, and every output says so.

Results are bound to a hash-chained audit log (:func:`seal_results`): one ``bench_task`` event
per task run carrying the SHA-256 of its canonical JSON, the log's head recorded in the report
and shown in the job summary; :func:`verify_results` refuses a report whose runs an edit
changed, or whose log no longer holds a head recorded elsewhere, with one line.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

from chimera.errors import UsageError
from chimera.eval.chain import Chain
from chimera.eval.harness import SCRIPTED, ArmSettings, TaskRun, run_chain
from chimera.protocols import StepProgress
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
        header = ("arm", "pass rate", "1st half", "2nd half", "streak", "tokens", "cost")
        rows = [header]
        for arm in (self.on, self.off):
            first, second = arm.halves()
            cost = "unknown" if arm.cost_usd is None else f"${arm.cost_usd:.4f}"
            rows.append(
                (
                    arm.label,
                    arm.pass_rate().describe(percent=True),
                    first.describe(percent=True),
                    second.describe(percent=True),
                    str(arm.longest_failing_streak()),
                    str(arm.tokens),
                    cost,
                )
            )
        lines.extend(_table(rows, numeric=(4, 5)))
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
        """An SVG of the cumulative pass rate along the chain, one line per arm, with both
        axes labelled and ticked: x is the task's position in the chain (1..n, every task
        ticked), y the cumulative pass rate (0-100%, ticks and grid lines every 25%)."""
        width, height = 560, 300
        left, right, top, bottom = 64, 24, 40, 52
        n = len(self.on.runs)
        plot_w, plot_h = width - left - right, height - top - bottom

        def x_at(i: int) -> float:
            return left + plot_w * (i - 1) / max(n - 1, 1)

        def y_at(rate: float) -> float:
            return top + plot_h * (1 - rate)

        def points(arm: ArmReport) -> str:
            out, passed = [], 0
            for i, ok in enumerate(arm.passes, 1):
                passed += ok
                out.append(f"{x_at(i):.1f},{y_at(passed / i):.1f}")
            return " ".join(out)

        title = f"cumulative pass rate along {self.chain}"
        if self.scripted:
            title += " (scripted: bookkeeping only)"
        axis_y, axis_x = top + plot_h, left
        parts = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
            f"<title>{escape(title)}</title>",
            f'<text x="{left}" y="20" font-size="13">{escape(title)}</text>',
        ]
        for pct in (0, 25, 50, 75, 100):
            y = y_at(pct / 100)
            parts.append(
                f'<line x1="{axis_x}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" '
                'stroke="#ddd"/>'
                f'<line x1="{axis_x - 5}" y1="{y:.1f}" x2="{axis_x}" y2="{y:.1f}" stroke="#555"/>'
                f'<text x="{axis_x - 8}" y="{y + 4:.1f}" text-anchor="end">{pct}%</text>'
            )
        for i in range(1, n + 1):
            x = x_at(i)
            parts.append(
                f'<line x1="{x:.1f}" y1="{axis_y}" x2="{x:.1f}" y2="{axis_y + 5}" stroke="#555"/>'
                f'<text x="{x:.1f}" y="{axis_y + 18}" text-anchor="middle">{i}</text>'
            )
        parts += [
            f'<line x1="{axis_x}" y1="{axis_y}" x2="{left + plot_w}" y2="{axis_y}" stroke="#555"/>',
            f'<line x1="{axis_x}" y1="{top}" x2="{axis_x}" y2="{axis_y}" stroke="#555"/>',
            f'<text x="{left + plot_w / 2:.1f}" y="{height - 12}" text-anchor="middle">'
            f"task in the chain (1 to {n}, in order)</text>",
            f'<text x="16" y="{top + plot_h / 2:.1f}" text-anchor="middle" '
            f'transform="rotate(-90 16 {top + plot_h / 2:.1f})">'
            "cumulative pass rate (tasks passed so far / tasks run)</text>",
            f'<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="{points(self.on)}"/>',
            f'<polyline fill="none" stroke="#d62728" stroke-width="2" stroke-dasharray="4 3" '
            f'points="{points(self.off)}"/>',
            f'<line x1="{left + plot_w - 130}" y1="{top + 12}" x2="{left + plot_w - 106}" '
            f'y2="{top + 12}" stroke="#1f77b4" stroke-width="2"/>'
            f'<text x="{left + plot_w - 100}" y="{top + 16}">memory on</text>',
            f'<line x1="{left + plot_w - 130}" y1="{top + 28}" x2="{left + plot_w - 106}" '
            f'y2="{top + 28}" stroke="#d62728" stroke-width="2" stroke-dasharray="4 3"/>'
            f'<text x="{left + plot_w - 100}" y="{top + 32}">memory off</text>',
            "</svg>\n",
        ]
        return "".join(parts)


def _table(rows: Sequence[Sequence[str]], *, numeric: Sequence[int] = ()) -> list[str]:
    """``rows`` (the header first) as aligned lines: each column as wide as its widest cell,
    two spaces apart; the ``numeric`` columns right-aligned, the others left-aligned."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [
            cell.rjust(width) if i in numeric else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return lines


def run_continuous(
    chain: Chain,
    workdir: Path,
    *,
    model: str,
    seed: int = 0,
    family: str | None = None,
    progress: StepProgress | None = None,
) -> ContinuousReport:
    """Run the chain with memory on, then off, each in its own persistent workspace
    (``family``: only that family's tasks, in chain order — the weakest one, when the bench
    is told to focus).

    ``progress`` is told as each task run starts (``2 × tasks`` steps in all).

    Raises:
        UsageError: the chain has fewer than 2 tasks (no paired interval).
    """
    if family is not None:
        chosen = [t for t in chain.tasks if t.family == family]
        if not chosen:
            raise UsageError(f"chain {chain.name} has no task of family {family!r}")
        chain = chain.model_copy(update={"tasks": chosen})
    n = len(chain.tasks)
    on = ArmReport(
        "memory on",
        run_chain(
            chain,
            workdir,
            model=model,
            arm=ArmSettings(),
            label="on",
            progress=progress,
            steps=(0, 2 * n),
        ),
    )
    off = ArmReport(
        "memory off",
        run_chain(
            chain,
            workdir,
            model=model,
            arm=ArmSettings(memory=False),
            label="off",
            progress=progress,
            steps=(n, 2 * n),
        ),
    )
    a = [float(p) for p in off.passes]
    b = [float(p) for p in on.passes]
    diff = paired_bootstrap(a, b, seed=seed)
    return ContinuousReport(chain.name, model, on, off, diff, mcnemar_exact(off.passes, on.passes))


def _run_hash(arm: str, run: dict[str, Any]) -> str:
    line = json.dumps({"arm": arm, **run}, sort_keys=True)
    return hashlib.sha256(line.encode()).hexdigest()


def seal_results(data: dict[str, Any], log: Path) -> str:
    """Bind a report's runs (``data``, :meth:`ContinuousReport.to_json`) to the audit log at
    ``log``: one ``bench_task`` event per run; returns the head, also stored in ``data``
    under ``audit`` (the caller shows it outside the output folder: a job summary)."""
    from chimera.governance.audit import AuditLog

    audit = AuditLog(log, "bench-continuous")
    for arm in ("memory_on", "memory_off"):
        for run in data[arm]["runs"]:
            audit.append(
                "bench_task", arm=arm, task=run["task_id"], passed=run["passed"],
                sha256=_run_hash(arm, run),
            )  # fmt: skip
    head = audit.head_hash
    data["audit"] = {"log": log.name, "head": head}
    return head


def verify_results(data: dict[str, Any], log: Path, head: str | None = None) -> None:
    """Check a written report against its audit log (and ``head``, recorded elsewhere).

    Raises:
        UsageError: one line: the log does not verify, does not hold the head, or a run's
            hash is not the one the log recorded (edited, deleted or added).
    """
    from chimera.governance.audit import verify_audit_log

    check = verify_audit_log(log)
    if not check.ok:
        raise UsageError(f"{log}: does not verify: {check.problems[0]}")
    entries = [json.loads(x) for x in log.read_text("utf-8").splitlines()]
    hashes = [e["hash"] for e in entries]
    for anchor in (head, (data.get("audit") or {}).get("head")):
        if anchor and anchor not in hashes:
            raise UsageError(
                f"{log}: the recorded head {anchor[:12]} is not in the log (rewritten)"
            )
    recorded = [e["fields"]["sha256"] for e in entries if e["event"] == "bench_task"]
    found = [
        _run_hash(arm, run) for arm in ("memory_on", "memory_off") for run in data[arm]["runs"]
    ]
    for number, (want, got) in enumerate(zip(recorded, found, strict=False), 1):
        if want != got:
            raise UsageError(f"{log}: task run {number} does not match the report (edited)")
    if len(recorded) != len(found):
        raise UsageError(
            f"{log}: {len(recorded)} task runs recorded, {len(found)} in the report "
            "(deleted or added)"
        )
