"""Re-running tasks with a skill in context: the evidence that keeps or refines a skill.

:class:`TaskRerunner` is the seam (one task, one guidance text → passed or not). The shipped
implementation, :class:`ChainRerunner`, runs a benchmark chain's task through the eval
harness (:func:`chimera.eval.harness.run_task`): a fresh copy of the chain's project, the
task's Spec delta, one ``chimera solve`` process with memory off, and the skill rendered into
the task text. Pass means the Spec verified a real change — ``check_drift``, never a model's
opinion. With the chain's scripted model the effect of a skill is known in advance: the
model writes the right code only when the task's ``needs`` marker is in its plan prompt, so a
skill whose body carries the marker passes and one without it fails.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from chimera.errors import UsageError
from chimera.eval.chain import Chain
from chimera.eval.harness import SCRIPTED, ArmSettings, prepare_workspace, run_task
from chimera.protocols import StepProgress

GUIDANCE_HEADER = "Learned guidance (data from earlier verified work):"


@dataclass(frozen=True, slots=True)
class Rerun:
    """One re-run: ``passed`` means the Spec verified a real change.

    Attributes:
        task_id: the task.
        passed: the run's verdict.
        outcome: ``solved``, ``failed``, ``hollow``, ``crashed``...
        detail: one line on what went wrong ('' when it passed).
        tokens: tokens the run spent.
    """

    task_id: str
    passed: bool
    outcome: str
    detail: str = ""
    tokens: int = 0


class TaskRerunner(Protocol):
    """Runs one task with ``guidance`` (a rendered skill, or '' for none) in its prompt."""

    def rerun(self, task_id: str, guidance: str) -> Rerun:
        """One re-run. Raises ``KeyError`` for an unknown task id."""
        ...


def with_guidance(task: str, guidance: str) -> str:
    """The task text with ``guidance`` appended under a header ('' guidance: unchanged)."""
    if not guidance.strip():
        return task
    return f"{task}\n\n{GUIDANCE_HEADER}\n{guidance.strip()}\n"


class ChainRerunner:
    """Re-runs tasks of ``chain`` through the eval harness, each in a fresh workspace.

    Args:
        chain: the benchmark chain whose tasks are re-run.
        workdir: a scratch folder (one sub-folder per re-run).
        model: ``scripted`` (the chain's scripted model) or a model name for ``--model``.
        attempts: attempts per re-run (default: the chain's ``max_attempts``).
        progress: told as each re-run starts, out of ``most`` (the round's bound on re-runs).
        most: the most re-runs expected (``max_metric_calls``); a bar's total.
    """

    def __init__(
        self,
        chain: Chain,
        workdir: Path,
        *,
        model: str = SCRIPTED,
        attempts: int | None = None,
        progress: StepProgress | None = None,
        most: int | None = None,
    ) -> None:
        self.chain = chain
        self.workdir = workdir
        self.model = model
        self.attempts = attempts or chain.max_attempts
        self.progress = progress
        self.most = most
        self._ids = itertools.count(1)
        self.runs = 0

    def rerun(self, task_id: str, guidance: str) -> Rerun:
        base = self.chain.task(task_id)
        task = base.model_copy(update={"task": with_guidance(base.task, guidance)})
        label = f"rerun-{next(self._ids):03d}-{task_id}"
        ws = prepare_workspace(self.chain, self.workdir / label)
        if self.progress is not None:
            total = max(self.most or 0, self.runs + 1)
            self.progress(self.runs, total, f"re-run {task_id}")
        self.runs += 1
        run = run_task(
            ws,
            task,
            model=self.model,
            arm=ArmSettings(memory=False),
            attempts=self.attempts,
            scripts_dir=self.workdir / f"{label}-scripts",
        )
        return Rerun(task_id, run.passed, run.outcome, run.detail, run.tokens)

    def siblings(self, task_id: str, *, limit: int = 2) -> list[str]:
        """Up to ``limit`` other tasks of ``task_id``'s family, in chain order (trap tasks,
        which no guidance rescues by construction, left out).

        Raises:
            UsageError: ``task_id`` is not in the chain.
        """
        try:
            family = self.chain.task(task_id).family
        except KeyError as exc:
            raise UsageError(f"no task {task_id!r} in chain {self.chain.name}") from exc
        same = [
            t.id for t in self.chain.tasks if t.family == family and t.id != task_id and not t.trap
        ]
        return same[:limit]
