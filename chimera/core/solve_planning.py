"""The AutonomousAgent's plan step: plan and replan (delegated for an overflowing Spine),
lessons and memories recalled for the planner, and experience written after each attempt.
"""

from __future__ import annotations

from chimera.core.attempts import AttemptRecord, Verdict, cap_text
from chimera.core.solve_base import SolveBase
from chimera.core.solve_prompts import MEMORY_TOKENS, PLAN_SYSTEM, REPLAN_SYSTEM
from chimera.core.solve_state import SolveRun as _Run
from chimera.core.solve_state import StopSolve as _Stop
from chimera.core.solve_state import model_name
from chimera.errors import BudgetExceeded, ChimeraError
from chimera.governance.sanitize import fence_untrusted
from chimera.protocols import Experience, Message, Purpose

MEMORY_AUDIT_CHARS = MEMORY_TOKENS * 4
"""Cap on the memory block a ``plan`` / ``replan`` audit event records (characters)."""


class Planning(SolveBase):
    """The plan step and the memory around it (a layer of AutonomousAgent)."""

    def _plan(self, rung: int, run: _Run, *, replan: bool) -> str:
        purpose = Purpose.REPLAN if replan else Purpose.PLAN
        if self.big_planner is not None and run.spine_overflow:
            return self._plan_delegated(rung, run, replan=replan)
        parts = [f"# Task\n{run.task_block}", run.spine]
        lessons = self._lessons(run.ledger.task)
        if lessons:
            parts.append(lessons)
        recalled = self._recall(run.ledger.task)
        if recalled:
            parts.append(recalled)
        if replan:
            parts.append(run.ledger.context())
        messages: list[Message] = [
            {"role": "system", "content": REPLAN_SYSTEM if replan else PLAN_SYSTEM},
            {"role": "user", "content": "\n\n".join(parts)},
        ]
        completion = self._call(self.ladder[rung], messages, purpose)
        plan = completion.text.strip() or "(the planner returned no plan)"
        run.ledger.note_plan(plan)
        self._event(
            purpose.value,
            attempt=self._attempt,
            rung=rung,
            model=model_name(self.ladder[rung]),
            plan=cap_text(plan, 2000),
            ledger=run.ledger.context() if replan else None,
            # What the prompt held from memory (persona and recalled items, as rendered): the
            # trajectory exporter carries it beside the attempts this plan led.
            memory=cap_text(recalled, MEMORY_AUDIT_CHARS) if recalled else None,
        )
        return plan

    def _plan_delegated(self, rung: int, run: _Run, *, replan: bool) -> str:
        """The plan step over a Spine too big for one context: delegated reading."""
        assert self.big_planner is not None
        purpose = Purpose.REPLAN if replan else Purpose.PLAN
        self._purpose = purpose
        failures = run.ledger.context() if replan else ""
        try:
            plan = self.big_planner(run.task_block, run.spine_scope, failures).strip()
        except BudgetExceeded as exc:
            self._event("budget_stop", purpose=purpose.value, reason=str(exc))
            raise _Stop("budget", f"budget refused the delegated plan: {exc}", exc.limit) from exc
        except ChimeraError as exc:
            self._event("provider_error", purpose=purpose.value, error=str(exc))
            raise _Stop("error", f"{type(exc).__name__}: {exc}") from exc
        plan = plan or "(the planner returned no plan)"
        run.ledger.note_plan(plan)
        self._event(
            purpose.value,
            attempt=self._attempt,
            rung=rung,
            model="hierarchy",
            via="hierarchy",
            files=len(run.spine_scope),
            plan=cap_text(plan, 2000),
            ledger=failures or None,
        )
        return plan

    def _recall(self, task: str) -> str:
        """Persona and memories for the plan (the memory part's reader, within its budget)."""
        if self.deps.memory is None:
            return ""
        found = self.deps.memory.recall_block(task, budget_tokens=MEMORY_TOKENS)
        if found.tainted and not self._tainted:
            # A tainted memory was read: what this run writes next is tainted too.
            self._tainted = True
            self._event("memory_tainted", ids=list(found.ids))
        return found.text

    def _lessons(self, task: str) -> str:
        if self.experience is None:
            return ""
        found = [exp for _, exp in self.experience.similar(task, 3, failures_only=True)]
        if not found:
            return ""
        trusted = [e for e in found if not e.tainted]
        tainted = [e for e in found if e.tainted]
        blocks = ["## Lessons from earlier, similar tasks (approaches that failed)"]
        if trusted:
            text = "\n".join(e.lesson() for e in trusted)
            blocks.append(fence_untrusted(text, "experience from trusted runs"))
        if tainted:
            # An untrusted run's task text must not reach this prompt as advice: it stays
            # data with its provenance, and reading it taints this run (what it writes next
            # is tainted too).
            self._tainted = True
            self._event(
                "memory_read",
                source="experience",
                provenance="tainted",
                runs=sorted({e.run_id for e in tainted}),
            )
            text = "\n".join(
                f"{e.lesson()} [provenance: tainted; run {e.run_id or '?'}; sources "
                f"{', '.join(e.taint_sources) or 'unknown'}]"
                for e in tainted
            )
            blocks.append(fence_untrusted(text, "experience from untrusted runs - tainted"))
        return "\n".join(blocks)

    def _remember(self, run: _Run, record: AttemptRecord) -> None:
        if self.experience is None:
            return
        failed = record.verdict is not Verdict.PASSED
        self.experience.append(
            Experience(
                task=run.ledger.task,
                verdict=record.verdict.value,
                signature=record.signature.digest if failed else "",
                cause=record.cause if failed else "",
                evidence=record.gist() if failed else "",
                files_changed=record.files_changed,
                added=record.added,
                removed=record.removed,
                tokens=record.tokens,
                cost_usd=record.cost_usd,
                model=record.model,
                run_id=self.audit.run_id,
                attempt=record.number,
                targets=tuple(run.goal),
                provenance="tainted" if self._tainted else "trusted",
                taint_sources=tuple(self._taint_sources()),
            )
        )

    def _taint_sources(self) -> list[str]:
        if not self._tainted:
            return []
        return ["untrusted_task"] if self._untrusted else ["memory"]
