"""A crew's shared memory: every role recalls from it and writes to it through the same gate
as a single agent.

The gate is :meth:`chimera.memory.manager.MemoryManager.remember`: a text holding a secret is
refused; provenance is stamped (a crew on an untrusted task, or one whose role recalled a
tainted item, writes tainted items); with a model, ADD / UPDATE / DELETE / NOOP is decided
against the nearest memories and overruled by the rules (a tainted fact never changes a
trusted item: it becomes a proposal). Nothing here writes the store any other way.

A role writes by putting ``REMEMBER: <fact>`` lines in its answer (as a supervisor delegates
with ``DELEGATE`` lines); they are taken out of the answer the crew passes on, capped
(:attr:`CrewMemory.max_per_role` lines of :attr:`CrewMemory.max_chars` characters each) and
remembered as semantic facts before the next role starts, so in a sequential crew a later
role's recall already holds what an earlier role remembered.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from chimera.crews.agent import RoleAgent, RoleOutput
from chimera.memory.items import TAINTED, TRUSTED, Candidate, Tier
from chimera.memory.manager import MemoryManager, RememberResult

_REMEMBER = re.compile(r"^\s*[*_`>-]*\s*REMEMBER\s*:[*_`]*\s*(.+?)\s*[*_`]*\s*$", re.IGNORECASE)

INSTRUCTION = (
    "The crew shares a memory of this repository. To keep a durable fact for the other roles "
    "and later runs (how tests run, a version, a path, a convention), write it on its own line "
    "as `REMEMBER: <the fact>`; keep it to facts, never instructions."
)


def split_remember(text: str) -> tuple[list[str], str]:
    """``([facts], the text without those lines)`` of a role's answer."""
    facts: list[str] = []
    kept: list[str] = []
    for line in text.splitlines():
        match = _REMEMBER.match(line)
        if match:
            facts.append(match.group(1))
        else:
            kept.append(line)
    return facts, "\n".join(kept).strip()


@dataclass
class CrewMemory:
    """The shared memory of one crew run.

    Args:
        manager: the project's memory (its ``audit``, ``run_id``, ``redactor`` and, when
            decisions are wanted, ``backend`` already set).
        tainted: the crew's task came from outside: everything it writes is tainted.
        taint_sources: why (``untrusted_task``).
        budget_tokens: the recalled block's size in each role's prompt.
        max_per_role, max_chars: caps on what one role writes.
    """

    manager: MemoryManager
    tainted: bool = False
    taint_sources: tuple[str, ...] = ("untrusted_task",)
    budget_tokens: int = 800
    max_per_role: int = 3
    max_chars: int = 300
    recalled: list[str] = field(default_factory=list)
    written: list[tuple[str, RememberResult]] = field(default_factory=list)

    def recall(self, task: str) -> str:
        """The memories nearest ``task``, rendered (tainted ones fenced as data); '' when
        none. A tainted one taints what the crew writes from now on (the manager's rule)."""
        found = self.manager.recall_block(task, budget_tokens=self.budget_tokens)
        self.recalled.extend(i for i in found.ids if i not in self.recalled)
        return found.text

    def write(self, role: str, text: str) -> tuple[str, list[RememberResult]]:
        """Remember the ``REMEMBER:`` lines of ``role``'s answer ``text``; returns the answer
        without them and what the gate did with each."""
        facts, kept = split_remember(text)
        results: list[RememberResult] = []
        for fact in facts[: self.max_per_role]:
            clean = " ".join(fact.split())[: self.max_chars]
            if not clean:
                continue
            candidate = Candidate(
                clean,
                Tier.SEMANTIC,
                provenance=TAINTED if self.tainted else TRUSTED,
                taint_sources=self.taint_sources if self.tainted else (),
                kind=f"crew:{role}"[:60],
            )
            result = self.manager.remember(candidate)
            results.append(result)
            self.written.append((role, result))
        return kept, results

    def run_role(
        self, agent: RoleAgent, task: str, *, context: str, round: int, system_extra: str
    ) -> tuple[RoleOutput, list[dict[str, Any]]]:
        """Run ``agent`` with the memories nearest ``task`` in its prompt and the instruction
        to write ``REMEMBER:`` lines; then remember them (before the next role starts). Returns
        its output without those lines, and what each write became (for the audit event)."""
        extra = "\n".join(t for t in (system_extra, INSTRUCTION) if t)
        out = agent.run(
            task, context=context, round=round, system_extra=extra, memory=self.recall(task)
        )
        text, results = self.write(agent.role.name, out.text)
        ops = [
            {"op": r.op, "id": r.item_id or r.target_id, "proposal": r.proposal} for r in results
        ]
        return dataclasses.replace(out, text=text), ops

    def to_json(self) -> dict[str, Any]:
        """What the crew recalled and what each role's writes became (ids only)."""
        return {
            "recalled": list(self.recalled),
            "written": [
                {"role": role, "op": r.op, "id": r.item_id or r.target_id, "proposal": r.proposal}
                for role, r in self.written
            ],
            "tainted": self.tainted or self.manager.tainted_read,
        }


__all__ = ["INSTRUCTION", "CrewMemory", "split_remember"]
