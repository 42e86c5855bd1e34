"""``chimera meta design``'s one typed call: a task family in, measured candidate profiles and
the chosen one out.

Steps, each an audit event of one run (``.chimera/runs/<id>/``):

1. ``meta.start`` — the family is read and every task's visible and held-out requirements are
   validated as a Spec; scripted model paths are relative to the family file.
2. The designer (:func:`chimera.meta.designer.run_designer`) runs on its own budget, in a
   workspace with the project and the visible Spec only, through the TrustKernel
   (:func:`~chimera.orchestration.session_factory.read_only_governance`).
3. Each valid candidate is cut to the designer's allowlist (:func:`chimera.meta.profile.isolate`;
   ``meta.tool_denied`` for what it does not get), written to ``candidates/NAME.yaml``, and run
   on every task with ``chimera solve --agent`` (``meta.trial``).
4. Only when all of a candidate's runs are over are its trees checked: visible requirements
   re-derived, then held-out ones in a disposable copy (``meta.heldout``; the sandbox's
   disposable runner: :func:`~chimera.orchestration.session_factory.disposable_checks`).
5. The report (``meta.json``) and the choice (``meta.chosen``): best held-out lower bound.
   The chosen profile is written to the output path.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chimera.config import ChimeraConfig
from chimera.meta.designer import Design, design_prompt, run_designer
from chimera.meta.family import TaskFamily
from chimera.meta.profile import READ_ONLY_TOOLS, Profile, isolate, render_profile
from chimera.meta.report import CandidateReport, choose, score
from chimera.meta.trial import TaskTrial, evaluate, prepare_workspace, run_solve
from chimera.orchestration.session_factory import (
    SessionFactory,
    disposable_checks,
    read_only_governance,
    resolve_model,
)
from chimera.protocols import EventSink, StepProgress, ToolCaller
from chimera.providers import SCRIPTED_PREFIX

__all__ = ["DesignOutcome", "DesignRequest", "design_agent"]


@dataclass(frozen=True, kw_only=True)
class DesignRequest:
    """``chimera meta design``.

    Attributes:
        root: where the run's folder goes (``.chimera/runs/<id>/``).
        config: the effective configuration (the sandbox mode applies to every check).
        tasks_path: the family file (``TASKS.yaml``).
        output: where the chosen profile is written (nothing is written without a choice).
        model: the designer's model (default: the family's ``designer.model``, then the
            configuration's).
        task_timeout: seconds per candidate task run.
        events: live progress.
        progress: told as each candidate task run starts (candidates × tasks steps; the
            held-out checks of a candidate's runs follow its last run).
    """

    root: Path
    config: ChimeraConfig
    tasks_path: Path
    output: Path
    model: str | None = None
    task_timeout: float = 600.0
    events: EventSink | None = None
    progress: StepProgress | None = None


@dataclass
class DesignOutcome:
    """The design run: the designer's proposal, each candidate's report, the choice."""

    run_id: str
    run_dir: Path
    design: Design
    reports: list[CandidateReport] = field(default_factory=list)
    chosen: CandidateReport | None = None
    document: dict[str, Any] = field(default_factory=dict)


def _scripted(model: str | None, base: Path) -> str | None:
    if model is None or not model.startswith(SCRIPTED_PREFIX):
        return model
    path = Path(model.removeprefix(SCRIPTED_PREFIX))
    return model if path.is_absolute() else f"{SCRIPTED_PREFIX}{(base / path).resolve()}"


def _designer_tools(
    family: TaskFamily, config: ChimeraConfig, ws: Path, audit: Any, task: str
) -> ToolCaller | None:
    from chimera.tools import ToolRegistry, Workspace
    from chimera.tools.native import ListDir, ReadFile, Search

    allowed = [t for t in family.designer.tools if t in READ_ONLY_TOOLS]
    if not allowed:
        return None
    workspace = Workspace(ws)
    limit = config.tools.output_limit
    registry = ToolRegistry()
    for tool in (ReadFile(workspace, limit), ListDir(workspace, limit), Search(workspace, limit)):
        if tool.name in allowed:
            registry.register(tool)
    return read_only_governance(ws, audit, untrusted=False, task=task)(registry)


def design_agent(request: DesignRequest, factory: SessionFactory | None = None) -> DesignOutcome:
    """Run the whole design (module docstring).

    Raises:
        ConfigError: the family file is invalid (``file:line:col``), or the designer's model
            cannot be priced under a USD budget.
        UsageError: no designer model.
        AuthenticationError / MissingExtraError: the designer's model cannot be reached.
        MissingExtraError: scipy (the ``eval`` extra) is missing for the intervals.
    """
    from chimera.atomic import atomic_write_text
    from chimera.governance.redactor import SecretRedactor
    from chimera.providers import TokenBudget, budgeted_backend

    family = TaskFamily.load(request.tasks_path)
    base = request.tasks_path.parent
    config = request.config
    model = _scripted(request.model, Path.cwd()) or _scripted(family.designer.model, base)
    model = model or resolve_model(None, config)
    run_id, run_dir, audit = (factory or SessionFactory()).open_record(
        request.root, config, [model]
    )
    emit = request.events or (lambda _e, _f: None)
    # The designer's words become candidate files, meta.json and the chosen profile: redacted.
    redactor = SecretRedactor.from_environment(workspace=request.root)
    audit.append(
        "meta.start",
        family=family.family,
        source=str(request.tasks_path),
        tasks=[t.id for t in family.tasks],
        designer_model=model,
        designer_tools=family.designer.tools,
        sandbox=config.sandbox.mode,
    )
    work = run_dir / "work"
    designer_ws = prepare_workspace(family, None, work / "designer")
    budget = TokenBudget(family.designer.budget.tokens, family.designer.budget.usd, name="designer")
    backend = budgeted_backend(model, config, budget, audit=audit)
    tools = _designer_tools(family, config, designer_ws, audit, design_prompt(family))
    emit("meta.designer", {"model": model})
    step = request.progress or (lambda _d, _t, _l: None)
    step(0, 1, f"designer ({model})")
    design = run_designer(family, backend, tools=tools, audit=audit)
    total = len(design.candidates) * len(family.tasks)
    done = 0
    checks = disposable_checks(config)
    reports: list[CandidateReport] = []
    for proposed in design.candidates:
        profile, denied = isolate(proposed, family.designer.tools)
        if profile.fields.model is not None:
            fields = profile.fields.model_copy(
                update={"model": _scripted(profile.fields.model, base)}
            )
            profile = Profile(fields, profile.kind, profile.source)
        if denied:
            audit.append("meta.tool_denied", profile=profile.name, denied=denied)
        path = run_dir / "candidates" / f"{profile.name}.yaml"
        atomic_write_text(path, render_profile(profile, redactor=redactor))
        trials: list[tuple[TaskTrial, Path]] = []
        for task in family.tasks:
            ws = prepare_workspace(family, task, work / profile.name / task.id)
            trial = TaskTrial(profile.name, task.id)
            emit("meta.trial", {"candidate": profile.name, "task": task.id})
            step(done, total, f"{profile.name}: {task.id}")
            done += 1
            run_solve(
                ws,
                task,
                path,
                trial,
                flags=["--sandbox", config.sandbox.mode],
                timeout=request.task_timeout,
            )
            audit.append(
                "meta.trial",
                candidate=profile.name,
                task=task.id,
                outcome=trial.outcome,
                tokens=trial.tokens,
                detail=trial.detail,
            )
            trials.append((trial, ws))
        # The candidate's runs are over: only now do held-out requirements exist anywhere.
        for (trial, ws), task in zip(trials, family.tasks, strict=True):
            evaluate(family, task, ws, trial, checks)
            audit.append(
                "meta.heldout",
                candidate=profile.name,
                task=task.id,
                visible_passed=trial.visible_passed,
                heldout_passed=trial.heldout_passed,
                heldout_failed=trial.heldout_failed,
                check_edits=trial.check_edits,
                suspected_reward_hacking=trial.suspected_hacking,
            )
        reports.append(score(profile, denied, [t for t, _ in trials]))
    step(done, max(total, done), "scored")
    chosen = choose(reports)
    outcome = DesignOutcome(run_id, run_dir, design, reports, chosen)
    outcome.document, _ = redactor.redact_json(_document(family, model, outcome, request.output))
    atomic_write_text(run_dir / "meta.json", json.dumps(outcome.document, indent=2) + "\n")
    audit.append(
        "meta.chosen",
        profile=chosen.profile.name if chosen else None,
        credited_low=chosen.credited.low if chosen else None,
    )
    if chosen is not None:
        header = (
            f"Designed by chimera meta design (run {run_id}) for the family "
            f"'{family.family}'.\nHeld-out pass rate {chosen.heldout.describe(percent=True)}; "
            f"visible {chosen.visible.describe(percent=True)}."
        )
        atomic_write_text(request.output, render_profile(chosen.profile, header, redactor=redactor))
    return outcome


def _document(
    family: TaskFamily, model: str, outcome: DesignOutcome, output: Path
) -> dict[str, Any]:
    design = outcome.design
    used = design.output
    return {
        "run_id": outcome.run_id,
        "family": family.family,
        "designer": {
            "model": model,
            "tools": family.designer.tools,
            "outcome": used.outcome if used else None,
            "error": used.error if used else "",
            "tokens": used.usage.total_tokens if used else 0,
            "answer_sha256": design.digest,
            "rejected": [{"block": b, "problems": p} for b, p in design.rejected],
        },
        "candidates": [r.to_json() for r in outcome.reports],
        "chosen": outcome.chosen.profile.name if outcome.chosen else None,
        "chosen_by": "held-out credited pass rate, Wilson lower bound",
        "output": str(output) if outcome.chosen else None,
    }
