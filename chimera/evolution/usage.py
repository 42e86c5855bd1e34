"""The lifecycle on real counts: what each run's prompts held, its verified outcome, and what
follows for every skill and playbook bullet it showed.

After every finished run (:func:`chimera.evolution.learned_context.finish_learning`) one
:class:`UseRecord` — run id, the skills (name and version) and playbook bullet ids its prompts
held, the Spec's verdict, the requirement ids it targeted — is appended to
``.chimera/learning/uses.jsonl`` (append-only, crash-safe: :mod:`chimera.evolution.jsonl`), and
:func:`apply_use` applies it at once:

* each skill's counters move (``uses``/``successes`` when Chimera's own process saw the prompt;
  ``claimed_uses``/``claimed_successes`` when an agent job only *said* so — the Action: those
  may demote or retire, never promote);
* each use is a line of the skill's evaluation ledger (``.chimera/skills/evals.jsonl``, the
  task key being the run's targets): so ``chimera evolve`` refines from real runs' failures;
* :func:`chimera.evolution.lifecycle.decide_all` decides every skill the run touched (Holm
  over their promotions); a rollback puts the previous version back; each change is an event
  in the skill store's audit log.

Bullets have no file of their own to count in, so their counts are folded from the records
(:func:`bullet_counts`): a bullet whose Wilson upper bound falls below the policy's
``retire_below`` is left out of prompts (:func:`retired_bullets`). Records are deduplicated by
``(run_id, source)``: the same run counted twice (a resumed run, a fetch repeated) counts once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from chimera.errors import UsageError
from chimera.evolution.jsonl import append_record, read_records
from chimera.evolution.ledger import EVALS_FILE, SkillEval, SkillEvalLog
from chimera.evolution.lifecycle import SkillLifecyclePolicy, decide_all, moved
from chimera.evolution.skills import NAME, SkillStore
from chimera.stats import wilson_interval

USES_FILE = Path(".chimera") / "learning" / "uses.jsonl"
Source = Literal["local", "action"]


@dataclass(frozen=True, slots=True)
class UseRecord:
    """One run's use of learned context.

    Attributes:
        run_id: the run.
        skills: ``(name, version)`` of every skill its prompts held.
        bullets: playbook bullet ids its prompts held.
        passed: the verified outcome (the Spec's verdict; in the Action, verify's).
        task: the task key: the run's target requirement ids, sorted, comma-joined.
        source: ``local`` (Chimera's process saw the prompts) or ``action`` (an agent job's
            word: demote or retire only).
        ts: ISO-8601 UTC time.
    """

    run_id: str
    skills: tuple[tuple[str, int], ...]
    bullets: tuple[str, ...]
    passed: bool
    task: str = ""
    source: Source = "local"
    ts: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "skills": [{"name": n, "version": v} for n, v in self.skills],
            "bullets": list(self.bullets),
            "passed": self.passed,
            "task": self.task,
            "source": self.source,
            "ts": self.ts,
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> UseRecord:
        """Parse one record.

        Raises:
            ValueError: not a use record.
        """
        if not isinstance(raw.get("passed"), bool) or not raw.get("run_id"):
            raise ValueError("a use record needs run_id and a true/false 'passed'")
        source = str(raw.get("source", "local"))
        if source not in ("local", "action"):
            raise ValueError(f"unknown source {source!r}")
        skills = tuple(
            (str(s["name"]), int(s["version"]))
            for s in raw.get("skills") or ()
            if isinstance(s, dict)
        )
        return cls(
            str(raw["run_id"]),
            skills,
            tuple(str(b) for b in raw.get("bullets") or ()),
            raw["passed"],
            str(raw.get("task", "")),
            source,  # type: ignore[arg-type]  # checked above
            str(raw.get("ts", "")),
        )


_BULLET_ID = re.compile(r"^[a-z]{2,8}-\d{5}$")


def claim_from_json(raw: object, *, run_id: str, passed: bool) -> UseRecord | None:
    """An agent job's ``uses.json`` (untrusted) as a use record of source ``action``, with the
    run id and outcome the caller re-derived (never the file's). Only skill names (the
    AgentSkills grammar) with positive versions, and bullet ids, are kept, capped at 20 and 50;
    everything else is ignored. ``None`` when nothing usable is in it."""
    if not isinstance(raw, dict):
        return None
    skills: list[tuple[str, int]] = []
    for item in list(raw.get("skills") or [])[:20]:
        if not isinstance(item, dict):
            continue
        name, version = item.get("name"), item.get("version")
        if isinstance(name, str) and NAME.match(name) and isinstance(version, int) and version > 0:
            skills.append((name, version))
    bullets = [
        b for b in list(raw.get("bullets") or [])[:50]
        if isinstance(b, str) and _BULLET_ID.match(b)
    ]  # fmt: skip
    if not skills and not bullets:
        return None
    return UseRecord(run_id, tuple(skills), tuple(bullets), passed, source="action")


def task_key(targets: Iterable[str]) -> str:
    """The ledger's task key of a run: its target requirement ids, sorted, comma-joined."""
    return ",".join(sorted(dict.fromkeys(str(t) for t in targets)))


class UsageLedger:
    """``uses.jsonl`` of a repository (module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def at(cls, root: Path) -> UsageLedger:
        return cls(root / USES_FILE)

    def records(self) -> list[UseRecord]:
        """Every record, in order.

        Raises:
            UsageError: a line is not a use record (``file:line: message``).
        """
        out: list[UseRecord] = []
        for number, raw in read_records(self.path):
            try:
                out.append(UseRecord.from_json(raw))
            except (ValueError, KeyError, TypeError) as exc:
                raise UsageError(f"{self.path}:{number}: not a use record ({exc})") from exc
        return out

    def append(self, record: UseRecord) -> bool:
        """Append ``record`` unless ``(run_id, source)`` is recorded already; whether it was."""
        if any((r.run_id, r.source) == (record.run_id, record.source) for r in self.records()):
            return False
        append_record(self.path, record.to_json())
        return True


def apply_use(
    root: Path,
    record: UseRecord,
    now: datetime,
    *,
    policy: SkillLifecyclePolicy | None = None,
) -> list[str]:
    """Record ``record`` (once) and apply it to the skill store of ``root`` (module docstring).

    Returns:
        One line per lifecycle decision that changed something (``[]``: none, or the run was
        counted before).

    Raises:
        ChimeraError: a ledger or the store cannot be written.
        ConfigError: a stored skill is invalid.
    """
    policy = policy or SkillLifecyclePolicy()
    stamped = record if record.ts else replace(record, ts=now.isoformat(timespec="seconds"))
    if not UsageLedger.at(root).append(stamped):
        return []
    store = SkillStore(root / ".chimera" / "skills")
    evals = SkillEvalLog(store.root / EVALS_FILE)
    claimed = record.source == "action"
    touched = []
    for name, version in dict.fromkeys(record.skills):
        skill = store.get(name)
        if skill is None or skill.version != version:
            continue  # a version since replaced: its counts belong to that version only
        if claimed:
            skill = replace(
                skill,
                claimed_uses=skill.claimed_uses + 1,
                claimed_successes=skill.claimed_successes + int(record.passed),
                last_used=stamped.ts,
            )
        else:
            skill = skill.record_use(passed=record.passed, when=stamped.ts)
        store.put(skill)
        evals.append(
            SkillEval(name, version, record.task or record.run_id, record.passed,
                      f"{record.source}-run:{record.run_id}", stamped.ts)
        )  # fmt: skip
        touched.append(skill)
    lines: list[str] = []
    audit = store.audit() if touched else None
    for skill, decision in zip(touched, decide_all(policy, touched, now), strict=True):
        if not decision.changed(skill) or audit is None:
            continue
        if decision.rollback:
            before, after = store.rollback(skill.name)
            audit.append(
                "skill_rolled_back", name=skill.name, version=before.version,
                restored=after.version, reason=decision.reason, run=record.run_id, by="lifecycle",
            )  # fmt: skip
            lines.append(f"skill {skill.name}: {decision.reason}")
            continue
        store.put(moved(skill, decision))
        audit.append(
            f"skill_{decision.state.value}", name=skill.name, version=skill.version,
            reason=decision.reason, run=record.run_id, by="lifecycle",
        )  # fmt: skip
        lines.append(f"skill {skill.name}: {skill.state.value} -> {decision.state.value}: "
                     f"{decision.reason}")  # fmt: skip
    return lines


def bullet_counts(records: Sequence[UseRecord]) -> dict[str, tuple[int, int]]:
    """Bullet id → (uses, successes) over ``records`` (each run once)."""
    out: dict[str, tuple[int, int]] = {}
    for r in records:
        for bullet in dict.fromkeys(r.bullets):
            uses, wins = out.get(bullet, (0, 0))
            out[bullet] = (uses + 1, wins + int(r.passed))
    return out


def retired_bullets(
    records: Sequence[UseRecord], policy: SkillLifecyclePolicy | None = None
) -> set[str]:
    """Bullets whose success rate's Wilson upper bound is below ``retire_below``."""
    policy = policy or SkillLifecyclePolicy()
    return {
        bullet
        for bullet, (uses, wins) in bullet_counts(records).items()
        if wilson_interval(wins, uses, confidence=policy.confidence).high < policy.retire_below
    }


__all__ = [
    "USES_FILE",
    "UsageLedger",
    "UseRecord",
    "apply_use",
    "bullet_counts",
    "claim_from_json",
    "retired_bullets",
    "task_key",
]
