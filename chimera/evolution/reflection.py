"""ReflectionPart: after every finished run, the Reflector and the Curator propose — nothing more.

A session part (the shape of the session factory's ``SessionPart`` plus ``finish``) that every
surface gets from ``default_parts`` unless ``--no-learning``. When the surface finishes a run
with a verdict (a ``chimera solve`` result, or a ``chimera run`` that is done, failed or
stopped; a run awaiting approval is not finished), it:

1. builds the run's :class:`~chimera.evolution.evidence.AttemptEvidence` — the accepted attempt
   (else the last) of a solve with its diff; a project run's verdict with no diff — and the
   task from the run's ``run_started`` audit event;
2. asks the Reflector (:func:`~chimera.evolution.ace.reflect`: one ``summarize`` call, tags
   bound to the Spec's verdict, insights through ``SkillValidator``) about the playbook bullets
   the run was shown, and the Curator (:func:`~chimera.evolution.ace.curate`, no model) for
   deltas;
3. when the diff-gate passes (accepted, non-empty diff), asks the proposer for one skill;
4. records every delta and skill as a provisional, tainted
   :class:`~chimera.evolution.proposals.Proposal` in ``.chimera/learning/proposals.jsonl``, and
   writes the run's ``learning.json`` (a :class:`~chimera.evolution.action.LearningProposal`)
   into its run folder, which the Action's agent job uploads as data for publish.

Nothing is applied: a person accepts a proposal (``chimera playbook accept``). Learning never
fails a run: a model error, an exhausted budget or a write error is reported in the summary's
``reflection`` entry as ``skipped``. The calls go through the run's own top rung, so they spend
the run's budget; reflection is skipped when less than ``min_tokens`` of a token budget are
left (or less than ``min_usd`` of a USD budget), so it does not trip a budget refusal into the
run's closed audit log.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from chimera.atomic import atomic_write_text
from chimera.errors import ChimeraError
from chimera.evolution.ace import curate, reflect
from chimera.evolution.evidence import AttemptEvidence, diff_gate
from chimera.evolution.learned_context import EvolutionPart, run_passed
from chimera.evolution.playbook import Bullet
from chimera.evolution.proposals import Proposal, ProposalLedger
from chimera.evolution.propose import propose_skill
from chimera.evolution.skills import SkillState
from chimera.governance.redactor import SecretRedactor, cut_redacted

LEARNING_FILE = "learning.json"
"""In a run folder: the run's proposals as the Action's publish side reads them."""
REFLECTED_FILE = "reflection.json"
"""In a run folder: what the reflection did (a resumed, finished run reflects only once)."""


class ReflectionPart:
    """Reflect and propose at the end of every finished run (module docstring).

    Args:
        evolution: the session's :class:`EvolutionPart` (what bullets the run was shown).
        skills: also propose a skill from an accepted attempt with a diff.
        max_tokens: the cap on each reflection or proposal answer.
        min_tokens: skip when a token budget has less than this left.
        min_usd: skip when a USD budget has less than this left (US dollars).
    """

    def __init__(
        self,
        evolution: EvolutionPart | None = None,
        *,
        skills: bool = True,
        max_tokens: int = 800,
        min_tokens: int = 4000,
        min_usd: float = 0.01,
    ) -> None:
        self.evolution = evolution
        self.skills = skills
        self.max_tokens = max_tokens
        self.min_tokens = min_tokens
        self.min_usd = min_usd

    def attach(self, session: Any) -> None:
        """Nothing to open: everything is read from the session at the end."""

    def agent_deps(self, deps: Any, session: Any) -> Any:
        return deps

    def finish(self, session: Any, result: Any) -> dict[str, Any]:
        """Reflect on ``result`` and record proposals; ``{"reflection": {...}}`` with the ids
        proposed, what was dropped and why, or ``skipped`` with the reason (``{}`` for a run
        that has not finished)."""
        if result is None or run_passed(result) is None:
            return {}
        marker = Path(session.run_dir) / REFLECTED_FILE
        if marker.is_file():
            return {}
        try:
            report = self._reflect(session, result)
        except (ChimeraError, OSError) as exc:
            # An error may quote the model's words: redacted before the cut.
            report = {"skipped": cut_redacted(f"{type(exc).__name__}: {exc}", 300)}
        try:
            atomic_write_text(marker, json.dumps(report, indent=1) + "\n")
        except OSError as exc:  # a later resume may reflect again; the ledger dedups by id
            report["marker"] = cut_redacted(f"not written: {exc}", 200)
        return {"reflection": report}

    def _reflect(self, session: Any, result: Any) -> dict[str, Any]:
        remaining = session.budget.remaining()
        left = remaining.tokens
        if left is not None and left < self.min_tokens:
            return {"skipped": f"{left} token(s) of the run's budget left (< {self.min_tokens})"}
        if remaining.usd is not None and remaining.usd < self.min_usd:
            return {"skipped": f"${remaining.usd:.4f} of the run's budget left (< ${self.min_usd})"}
        evidence = run_evidence(session, result)
        # learning.json sits in the uploaded run folder and proposals.jsonl outlives the run: a
        # token the model wrote into a lesson is replaced as in the transcript and audit log.
        redactor = SecretRedactor.from_environment(workspace=session.root)
        backend = session.ladder[0]
        shown: list[Bullet] = []
        context = self.evolution.context if self.evolution is not None else None
        if context is not None and self.evolution is not None:
            seen = set(self.evolution.shown_bullet_ids())
            shown = [b for _, b in context.playbook().bullets() if b.id in seen]
        reflected = reflect(backend, evidence, shown, max_tokens=self.max_tokens, redactor=redactor)
        verdict = evidence.verdict
        proposals: list[Proposal] = []
        for delta in curate(reflected):
            if delta.op == "add":
                proposals.append(
                    Proposal.make(evidence.run_id, "bullet", "reflection", verdict,
                                  section=delta.section, text=redactor.redact(delta.text)[0])
                )  # fmt: skip
            else:
                proposals.append(
                    Proposal.make(evidence.run_id, "counter", "reflection", verdict,
                                  bullet_id=delta.bullet_id, op=delta.op)
                )  # fmt: skip
        dropped = list(reflected.dropped)
        gate = diff_gate(evidence)
        if self.skills and gate.mint:
            proposed = propose_skill(backend, evidence, max_tokens=self.max_tokens)
            if proposed.skill is not None:
                skill = replace(proposed.skill, state=SkillState.PROVISIONAL, trusted=False)
                proposals.append(
                    Proposal.make(evidence.run_id, "skill", "reflection", verdict,
                                  skill=redactor.redact(skill.to_markdown())[0])
                )  # fmt: skip
            else:
                dropped += [f"skill: {p}" for p in proposed.problems]
        elif self.skills:
            dropped.append(f"skill: {gate.reason}")
        ids = ProposalLedger.at(Path(session.root)).record(proposals)
        _write_learning(Path(session.run_dir), evidence.run_id, proposals)
        report = {"proposed": ids, "dropped": dropped[:10], "tainted": evidence.tainted}
        redacted, _ = redactor.redact_json(report)  # a dropped lesson quotes the model's words
        return dict(redacted)


def run_evidence(session: Any, result: Any) -> AttemptEvidence:
    """The evidence of a finished run: a solve's accepted attempt (else its last) with its
    diff, or a project run's verdict with no diff (its per-card diffs are not kept apart)."""
    run_id = str(session.run_id)
    attempts = list(getattr(result, "attempts", None) or [])
    if attempts:
        chosen = next((a for a in attempts if str(a.verdict) == "passed"), attempts[-1])
        diff = str(chosen.diff or "")
        if chosen.diff_path and (Path(session.run_dir) / chosen.diff_path).is_file():
            diff = (Path(session.run_dir) / chosen.diff_path).read_text("utf-8", errors="replace")
        return AttemptEvidence(
            run_id=run_id,
            task=_task(Path(session.audit.path)),
            targets=tuple(getattr(result, "targets", ()) or ()),
            attempt=int(chosen.number),
            verdict=str(chosen.verdict),
            diff=diff,
            files_changed=int(chosen.files_changed),
            tainted=bool(getattr(result, "tainted", False)),
        )
    passed = run_passed(result)
    task = getattr(result, "task", None) or "Make the Spec's red requirements pass."
    return AttemptEvidence(
        run_id=run_id,
        task=str(task),
        targets=tuple(getattr(result, "goal_ids", ()) or ()),
        attempt=int(getattr(result, "iterations", 0) or 0),
        verdict="passed" if passed else str(getattr(result, "stop_reason", "") or "failed"),
        diff="",
        files_changed=0,
        tainted=bool(getattr(result, "tainted", False)),
    )


def _task(log: Path) -> str:
    """The task text of the run's ``run_started`` audit event ('' when there is none)."""
    try:
        lines = log.read_text("utf-8").splitlines()
    except OSError:
        return ""
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("event") == "run_started":
            fields = event.get("fields")
            return str(fields.get("task", "")) if isinstance(fields, dict) else ""
    return ""


def _write_learning(run_dir: Path, run_id: str, proposals: list[Proposal]) -> None:
    """The run's ``learning.json`` (skills and new bullets; counters never leave the run)."""
    from chimera.evolution.action import LearningProposal, ProposedBullet

    skills = [p.skill for p in proposals if p.kind == "skill"][:5]
    bullets = [
        ProposedBullet(section=p.section, text=p.text) for p in proposals if p.kind == "bullet"
    ][:10]
    if not skills and not bullets:
        return
    doc = LearningProposal(run_id=run_id, skills=skills, bullets=bullets)
    atomic_write_text(run_dir / LEARNING_FILE, doc.model_dump_json(indent=1) + "\n")


__all__ = ["LEARNING_FILE", "REFLECTED_FILE", "ReflectionPart", "run_evidence"]
