"""Running benchmark tasks through Chimera itself: one ``chimera solve`` per task.

Each task runs as a separate ``python -m chimera solve`` process in a workspace the harness
prepares (a copy of the chain's project, a git repository, the Spec delta written into
``specs/chain.yaml``), so a benchmark exercises exactly what a user runs — the sandbox, the
Spec gate, the audit log — and a crash in one task is that task's failure, not the harness's.
Pass means ``solve`` exited 0: the Spec verified the change. Every arm runs with
``--no-reflection``: a measurement spends no tokens on end-of-run lessons (they would count in
both arms' costs) and proposes none from the tasks it measures, held-out ones included.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from chimera.eval.chain import Chain, ChainTask, scripted_turns
from chimera.protocols import StepProgress

SCRIPTED = "scripted"
"""The ``--model`` value that makes the harness generate each task's scripted model."""

TASK_TIMEOUT_S = 600.0


@dataclass(frozen=True, slots=True)
class ArmSettings:
    """What differs between two arms of a comparison (each maps to a ``solve`` option; every
    arm also gets ``--no-reflection``, see the module docstring).

    Attributes:
        memory: recall earlier attempts (the experience store); off → ``--no-memory``.
        diff_feedback: show failed attempts' diffs in the retry prompt (``--diff-feedback``).
        max_attempts: attempts per task (``None``: the chain's own ``max_attempts``).
    """

    memory: bool = True
    diff_feedback: bool = False
    max_attempts: int | None = None

    def flags(self) -> list[str]:
        """The ``solve`` options of this arm (``--no-reflection`` always)."""
        out = ["--no-reflection"]
        if not self.memory:
            out.append("--no-memory")
        if self.diff_feedback:
            out.append("--diff-feedback")
        return out


@dataclass(frozen=True, slots=True)
class TaskRun:
    """One task's run.

    Attributes:
        task_id, family: the task.
        passed: ``solve`` exited 0 (the Spec verified a real change).
        outcome: ``solved``, ``failed``, ``hollow``, ``budget``, ``error``, or ``crashed`` /
            ``timeout`` when no summary was written.
        attempts: attempts made; tokens and cost over every model call (cost ``None``:
            unknown).
        seconds: wall-clock seconds of the process.
        detail: one line on what went wrong (empty when it passed).
    """

    task_id: str
    family: str
    passed: bool
    outcome: str
    attempts: int
    tokens: int
    cost_usd: float | None
    seconds: float
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "family": self.family,
            "passed": self.passed,
            "outcome": self.outcome,
            "attempts": self.attempts,
            "tokens": self.tokens,
            "cost_usd": self.cost_usd,
            "seconds": round(self.seconds, 3),
            "detail": self.detail,
        }


def _git(ws: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(
        ["git", "-c", "user.name=chimera-bench", "-c", "user.email=bench@chimera.invalid",
         "-c", "commit.gpgsign=false", *args],
        cwd=ws, check=True, capture_output=True, env=env,
    )  # fmt: skip


def prepare_workspace(chain: Chain, dest: Path) -> Path:
    """Copy the chain's project to ``dest`` (created), with an empty Spec delta, as a git repo."""
    shutil.copytree(chain.project_dir, dest, ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "specs").mkdir(exist_ok=True)
    (dest / "specs" / "chain.yaml").write_text("requirements: []\n", encoding="utf-8")
    _git(dest, "init", "-q", "-b", "main")
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", f"{chain.name}: base")
    return dest


def add_requirements(ws: Path, task: ChainTask) -> None:
    """Append the task's requirements to ``specs/chain.yaml`` (the Spec grows task by task)."""
    path = ws / "specs" / "chain.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    data["requirements"] = [*(data.get("requirements") or []), *task.requirements]
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")


def run_task(
    ws: Path,
    task: ChainTask,
    *,
    model: str,
    arm: ArmSettings,
    attempts: int,
    scripts_dir: Path,
    timeout: float = TASK_TIMEOUT_S,
) -> TaskRun:
    """Add the task's Spec delta, run ``chimera solve`` on it, and commit what it left.

    With ``model == "scripted"`` the task's scripted model (:func:`scripted_turns`) is written
    to ``scripts_dir`` and used; otherwise ``model`` is passed to ``--model`` as is.
    """
    add_requirements(ws, task)
    _git(ws, "add", "-A")
    _git(ws, "commit", "-q", "-m", f"spec delta of {task.id}")
    if model == SCRIPTED:
        scripts_dir.mkdir(parents=True, exist_ok=True)
        script = scripts_dir / f"{task.id}.yaml"
        turns = scripted_turns(task, attempts=attempts)
        script.write_text(yaml.safe_dump({"model": f"chain-{task.id}", "turns": turns}), "utf-8")
        model_arg = f"scripted:{script}"
    else:
        model_arg = model
    cmd = [sys.executable, "-m", "chimera", "solve", task.task, "--root", str(ws)]
    for rid in task.requirement_ids:
        cmd += ["--target", rid]
    cmd += ["--model", model_arg, "--max-attempts", str(attempts), "--no-review", "--quiet"]
    cmd += arm.flags()
    runs = ws / ".chimera" / "runs"
    before = set(runs.iterdir()) if runs.is_dir() else set()
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=ws, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return TaskRun(task.id, task.family, False, "timeout", 0, 0, None, timeout, "timed out")
    seconds = time.monotonic() - start
    new = sorted(set(runs.iterdir()) - before) if runs.is_dir() else []
    summary_path = new[-1] / "summary.json" if new else None
    if summary_path is None or not summary_path.is_file():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return TaskRun(task.id, task.family, False, "crashed", 0, 0, None, seconds, tail[0])
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    usage = summary.get("usage") or {}
    passed = proc.returncode == 0 and summary.get("outcome") == "solved"
    _git(ws, "add", "-A")
    _git(ws, "commit", "-q", "--allow-empty", "-m", f"{task.id}: {summary.get('outcome')}")
    attempts_made = summary.get("attempts") or []
    detail = "" if passed else str(attempts_made[-1].get("cause", "")) if attempts_made else ""
    return TaskRun(
        task.id,
        task.family,
        passed,
        str(summary.get("outcome", "error")),
        len(attempts_made),
        int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0)),
        usage.get("cost_usd"),
        seconds,
        detail.splitlines()[0] if detail else "",
    )


def run_chain(
    chain: Chain,
    workdir: Path,
    *,
    model: str,
    arm: ArmSettings,
    label: str,
    progress: StepProgress | None = None,
    steps: tuple[int, int] | None = None,
) -> list[TaskRun]:
    """Every task of the chain, in order, in ONE persistent workspace (``workdir/label``).

    ``progress`` is told as each task starts; ``steps`` is ``(done before this chain, total)``
    when the chain is part of longer work (default: this chain alone).
    """
    ws = prepare_workspace(chain, workdir / label)
    attempts = arm.max_attempts or chain.max_attempts
    before, total = steps or (0, len(chain.tasks))
    runs: list[TaskRun] = []
    for i, t in enumerate(chain.tasks):
        if progress is not None:
            progress(before + i, total, f"{label}: {t.id}")
        runs.append(
            run_task(
                ws,
                t,
                model=model,
                arm=arm,
                attempts=attempts,
                scripts_dir=workdir / f"{label}-scripts",
            )
        )
    if progress is not None:
        progress(before + len(runs), total, f"{label}: done")
    return runs


def run_isolated(
    chain: Chain, task_ids: list[str], workdir: Path, *, model: str, arm: ArmSettings, label: str
) -> list[TaskRun]:
    """The named tasks, each in a FRESH copy of the project (no memory carried between them)."""
    attempts = arm.max_attempts or chain.max_attempts
    out: list[TaskRun] = []
    for task_id in task_ids:
        ws = prepare_workspace(chain, workdir / label / task_id)
        out.append(
            run_task(
                ws,
                chain.task(task_id),
                model=model,
                arm=arm,
                attempts=attempts,
                scripts_dir=workdir / f"{label}-scripts",
            )
        )
    return out
