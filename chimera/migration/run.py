"""Carrying out a migration: each :class:`~chimera.migration.model.Found` mapped onto a Chimera
target, as a plan (dry run: nothing anywhere changes) or for real (``apply``).

Targets, under the project root:

* memory (``.chimera/memory.db``): curated memory → semantic, daily logs → episodic; every
  item ``tainted`` with taint source ``migration:<tool>:<file>``; duplicates (normalised text)
  are skipped. Persona is written only from a human-edited config file's standing
  instructions (``add_persona`` by the person running the migration), never from memory text
  or persona files another agent may have written: those are staged, disabled, under
  ``.chimera/migration/<tool>/persona-candidates/`` for a person to promote
  (``chimera memory add --tier persona``).
* skills (``.chimera/skills/<name>/SKILL.md``): provisional, untrusted, sourced from the file.
* schedules (``.chimera.d/schedules/<tool>-<id>.yaml``): ``enabled: false``,
  ``created_by: agent``, validated by the scheduler's loader (a task governance would block
  is refused).
* connectors: Chimera's connector files have no ``enabled`` field (a file there is live), so
  MCP servers are staged under ``.chimera/migration/<tool>/connectors/`` after validation by
  the integrations loader; a person moves a file into ``.chimera.d/connectors/`` to enable it.
* config: the model is a suggestion in the report (``archived``; ``skipped`` when
  ``[models] default`` already names it), never written.

Never overwrites: a different file under the same name is a ``conflict``. Before writing, the
memory store and every touched file are backed up under the run folder
(``.chimera/migration/<tool>/runs/<run_id>/``), which also holds ``report.json``,
``summary.md`` and the hash-chained ``audit.jsonl``. The source home is only read.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from chimera.atomic import atomic_write_text
from chimera.errors import ChimeraError
from chimera.localstate import make_dirs
from chimera.migration.model import (
    Found,
    MigrationResult,
    Outcome,
    Status,
    redact,
    redact_lines,
)
from chimera.migration.report import write_report
from chimera.protocols import SupportsComplete

__all__ = ["MigrationResult", "migrate"]

MIGRATION_DIR = Path(".chimera") / "migration"
_DB_FILES = ("memory.db", "memory.db-wal", "memory.db-shm")


def _copy_db(src_dir: Path, dst_dir: Path) -> None:
    make_dirs(dst_dir)
    for name in _DB_FILES:
        if (src_dir / name).is_file():
            shutil.copy2(src_dir / name, dst_dir / name)


class _Run:
    def __init__(self, tool: str, home: Path, root: Path, by: str, write: bool) -> None:
        self.tool, self.home, self.root, self.by, self.write = tool, home, root, by, write
        self.stage = root / MIGRATION_DIR / tool
        self.seen: set[tuple[str, str]] = set()
        self.backups: Path | None = None

    def tag(self, f: Found) -> str:
        return f"migration:{self.tool}:{f.source}"

    def place(self, f: Found, target: Path, text: str) -> Outcome:
        """Write ``text`` to ``target`` unless it exists: identical is skipped, different is
        a conflict (never overwritten)."""
        rel = target.relative_to(self.root).as_posix()
        if target.exists():
            same = target.read_text(encoding="utf-8", errors="replace") == text
            status = Status.SKIPPED if same else Status.CONFLICT
            why = "already there (identical)" if same else "a different file is there: kept"
            return Outcome(f.kind, f.source, status, rel, why)
        if self.write:
            atomic_write_text(target, text)
        return Outcome(f.kind, f.source, Status.MIGRATED, rel)


def _memory(run: _Run, manager: Any, f: Found) -> Outcome:
    from chimera.memory.items import TAINTED, Candidate, Tier, normalise, secret_in

    tier = Tier(f.tier)
    preview = redact(f.text)
    if secret_in(f.text):
        why = f"holds {secret_in(f.text)}; memory never stores a credential"
        return Outcome("memory", f.source, Status.REFUSED, "", why, preview)
    key = (tier.value, normalise(f.text))
    if key in run.seen or manager.store.find_duplicate(tier, f.text) is not None:
        return Outcome("memory", f.source, Status.SKIPPED, tier.value, "duplicate", preview)
    run.seen.add(key)
    candidate = Candidate(
        text=f.text, tier=tier, provenance=TAINTED, taint_sources=(run.tag(f),), kind=f.name
    )
    # Curated memory is facts: with a model (``--model``) each is decided against the nearest
    # memories (a changed fact supersedes a tainted one, and is proposed against a trusted
    # one); daily logs are events, added as they are.
    result = manager.remember(candidate, decide=tier is Tier.SEMANTIC)
    why = _why(result)
    status = {"REFUSED": Status.REFUSED, "NOOP": Status.SKIPPED}.get(result.op, Status.MIGRATED)
    return Outcome("memory", f.source, status, f"{tier.value} {result.item_id}", why, preview)


def _why(result: Any) -> str:
    """An outcome's reason for what ``remember`` did with a migrated (tainted) memory."""
    if result.proposal:
        return f"tainted; proposed to supersede {result.target_id} (chimera memory accept)"
    if result.op in ("UPDATE", "DELETE"):
        return f"tainted; superseded {result.target_id}"
    return "tainted" if result.op == "ADD" else result.overruled or result.op


def _persona(run: _Run, manager: Any, f: Found) -> Outcome:
    from chimera.memory.items import Tier, secret_in

    preview = redact(f.text)
    if not f.human_config:  # defence in depth: only config files set human_config
        return Outcome("persona", f.source, Status.REFUSED, "", "not from a config", preview)
    if secret_in(f.text):
        return Outcome("persona", f.source, Status.REFUSED, "", "holds a credential", preview)
    if manager.store.find_duplicate(Tier.PERSONA, f.text) is not None:
        return Outcome("persona", f.source, Status.SKIPPED, "persona", "duplicate", preview)
    item = manager.add_persona(f.text, by=run.by)
    why = "standing instructions from the human-edited config"
    return Outcome("persona", f.source, Status.MIGRATED, f"persona {item}", why, preview)


def _skill(run: _Run, f: Found) -> Outcome:
    from chimera.evolution.skills import LearnedSkill, SkillState, SkillStore
    from chimera.memory.items import secret_in

    if secret_in(f.text):
        why = f"holds {secret_in(f.text)}; a skill never carries a credential"
        return Outcome("skill", f.source, Status.REFUSED, "", why)
    try:
        skill = LearnedSkill.from_markdown(f.text, source=f.source)
    except ChimeraError as exc:
        return Outcome("skill", f.source, Status.ERROR, "", str(exc).splitlines()[0])
    skill = replace(skill, state=SkillState.PROVISIONAL, trusted=False, sources=(run.tag(f),))
    store = SkillStore(run.root / ".chimera" / "skills")
    target = store.path(skill.name).relative_to(run.root).as_posix()
    try:
        existing = store.get(skill.name)
    except ChimeraError as exc:
        return Outcome("skill", f.source, Status.CONFLICT, target, str(exc).splitlines()[0])
    if existing is not None:
        same = existing.body.strip() == skill.body.strip()
        why = "already there (same body)" if same else "a different skill has this name: kept"
        return Outcome("skill", f.source, Status.SKIPPED if same else Status.CONFLICT, target, why)
    if run.write:
        store.put(skill)
    return Outcome("skill", f.source, Status.MIGRATED, target, "provisional, untrusted")


def _schedule(run: _Run, f: Found) -> Outcome:
    import re

    from chimera.scheduler.loader import SCHEDULES_DIR, load_schedules

    job = f.data
    sched = job.get("schedule")
    expr = sched.get("expr") or sched.get("cron") if isinstance(sched, dict) else sched
    tz = sched.get("tz") if isinstance(sched, dict) else None
    ident = re.sub(r"[^a-z0-9_-]+", "-", f"{run.tool}-{f.name}".lower()).strip("-")[:64]
    if not isinstance(expr, str) or len(expr.split()) != 5:
        return Outcome("schedule", f.source, Status.ARCHIVED, "", f"not a cron: {sched!r}")
    if not f.text.strip():
        return Outcome("schedule", f.source, Status.ARCHIVED, "", "no prompt to run")
    decl = {
        "id": ident,
        "title": f"migrated from {run.tool} ({f.source})",
        "cron": {"expr": expr, "timezone": str(job.get("timezone") or tz or "UTC")},
        "task": f.text,
        "created_by": "agent",
        "enabled": False,
    }
    text = yaml.safe_dump({"schedules": [decl]}, sort_keys=False, allow_unicode=True)
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / "probe.yaml"
        probe.write_text(text, encoding="utf-8")
        load = load_schedules(Path(tmp), files=[probe])
    if load.problems:
        why = "; ".join(p.message for p in load.problems)
        return Outcome("schedule", f.source, Status.REFUSED, "", why, redact(f.text))
    out = run.place(f, run.root / SCHEDULES_DIR / f"{ident}.yaml", text)
    return replace(out, reason=out.reason or "disabled proposal (created_by: agent)")


def _connector(run: _Run, f: Found) -> Outcome:
    from chimera.integrations.loader import CONNECTORS_DIR, load_connectors
    from chimera.migration.model import secret_key

    spec = f.data
    mcp: dict[str, Any] = {}
    for key in ("command", "url"):
        if isinstance(spec.get(key), str):
            mcp[key] = spec[key]
    if isinstance(spec.get("args"), list):
        mcp["args"] = [str(a) for a in spec["args"]]
    env = spec.get("env")
    if isinstance(env, dict) and env:  # names only: values are read from the environment
        mcp["env"] = sorted(str(k) for k in env)
    name = "".join(c if c.isalnum() else "_" for c in f.name.lower()).strip("_")[:32] or "mcp"
    decl = [{"name": name, "description": f"migrated from {run.tool} ({f.source})", "mcp": mcp}]
    text = yaml.safe_dump({"connectors": decl}, sort_keys=False, allow_unicode=True)
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / CONNECTORS_DIR / "probe.yaml"
        probe.parent.mkdir(parents=True)
        probe.write_text(text, encoding="utf-8")
        load = load_connectors(Path(tmp))
    if load.problems:
        why = "; ".join(p.message for p in load.problems)
        return Outcome("connector", f.source, Status.ERROR, "", f"{f.name}: {why}")
    dropped = [k for k in spec if k not in ("command", "url", "args", "env")]
    out = run.place(f, run.stage / "connectors" / f"{name}.yaml", text)
    note = "staged disabled: move into .chimera.d/connectors/ to enable"
    if any(secret_key(k) for k in dropped) or dropped:
        note += f"; not carried: {', '.join(sorted(dropped))}"
    return replace(out, reason=out.reason or note)


def _handlers(run: _Run, manager: Any) -> dict[str, Callable[[Found], Outcome]]:
    from chimera.memory.items import secret_in

    def candidate(f: Found) -> Outcome:
        if secret_in(f.text):
            why = f"holds {secret_in(f.text)}; not staged"
            return Outcome(f.kind, f.source, Status.REFUSED, "", why, redact(f.text))
        out = run.place(f, run.stage / "persona-candidates" / f.source, f.text)
        status = Status.ARCHIVED if out.status is Status.MIGRATED else out.status
        why = "persona candidate staged disabled: may be agent-written; a person promotes it"
        return replace(out, status=status, reason=out.reason or why, preview=redact(f.text))

    def archive(f: Found) -> Outcome:
        src = run.home / f.source
        text = redact_lines(src.read_text(encoding="utf-8", errors="replace"))
        out = run.place(f, run.stage / "archive" / f.source, text)
        status = Status.ARCHIVED if out.status is Status.MIGRATED else out.status
        return replace(out, status=status, reason=out.reason or f.reason)

    def config(f: Found) -> Outcome:
        from chimera.config import load_config

        model = str(f.data.get("model"))
        try:
            current = load_config(run.root).models.default
        except ChimeraError as exc:
            return Outcome("config", f.source, Status.ERROR, "", str(exc).splitlines()[0])
        if current == model:
            return Outcome("config", f.source, Status.SKIPPED, "models.default", "already set")
        # A suggestion, not a write: the source's provider routing (an OpenRouter or local
        # endpoint) does not carry over, and a wrong default would steer every run.
        why = (
            f"suggestion: [models] default = {model!r} in chimera.toml (or "
            f"[tool.chimera.models]); check the provider prefix; now {current or 'unset'}"
        )
        return Outcome("config", f.source, Status.ARCHIVED, "models.default", why)

    def secret(f: Found) -> Outcome:
        why = f"{f.name}: a credential; not copied (Chimera reads credentials from the environment)"
        return Outcome("secret", f.source, Status.REFUSED, "", why, "[redacted]")

    return {
        "memory": lambda f: _memory(run, manager, f),
        "persona": lambda f: _persona(run, manager, f),
        "persona-candidate": candidate,
        "skill": lambda f: _skill(run, f),
        "schedule": lambda f: _schedule(run, f),
        "connector": lambda f: _connector(run, f),
        "archive": archive,
        "config": config,
        "secret": secret,
        "refused": lambda f: Outcome(f.kind, f.source, Status.REFUSED, "", f.reason),
        "error": lambda f: Outcome(f.kind, f.source, Status.ERROR, "", f.reason),
    }


def migrate(
    tool: str,
    home: Path,
    found: list[Found],
    root: Path,
    *,
    apply: bool,
    by: str,
    backend: SupportsComplete | None = None,
) -> MigrationResult:
    """Map ``found`` (read from ``home``) onto the Chimera project at ``root``.

    Args:
        tool: ``hermes`` or ``openclaw`` (names the staging folder and taint sources).
        apply: False: a plan; nothing is written anywhere (memory is planned on a temporary
            copy of the store). True: write, after backing up the memory store.
        by: the person running it (recorded on persona items and in the audit log).
        backend: the model deciding ADD / UPDATE / DELETE / NOOP for curated memory against
            the nearest memories (``None``: every new item is an ADD).

    Raises:
        ChimeraError: the memory store cannot be opened.
    """
    from chimera.memory.part import MEMORY_DB, open_local

    result = MigrationResult(tool, apply)
    run = _Run(tool, home, root, by, apply)
    db_dir = (root / MEMORY_DB).parent
    audit = None
    with tempfile.TemporaryDirectory() as tmp:
        if apply:
            run_id = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
            result.run_dir = run.stage / "runs" / run_id
            _copy_db(db_dir, result.run_dir / "backup")
            from chimera.orchestration.session_factory import open_audit

            audit = open_audit(result.run_dir, run_id)
            audit.append("migration_start", tool=tool, source=str(home), by=by)
            manager = open_local(root)
            manager.audit = audit
        else:
            _copy_db(db_dir, Path(tmp) / ".chimera")
            manager = open_local(Path(tmp))
        manager.backend = backend
        try:
            handlers = _handlers(run, manager)
            for f in found:
                outcome = handlers[f.kind](f)
                result.outcomes.append(outcome)
                if audit is not None:
                    audit.append("migration_item", **outcome.to_json())
        finally:
            manager.store.close()
    if audit is not None and result.run_dir is not None:
        audit.append("migration_end", **result.counts())
        write_report(result)
    return result
