"""Loading schedule declarations: ``.chimera.d/schedules/*.yaml`` in, a
:class:`~chimera.scheduler.model.ScheduleLoad` out, in one validation pass.

Every problem is collected (not just the first), each at ``file:line:col`` of the YAML node
it concerns, read with :func:`chimera.spec.yamlload.parse_yaml`: malformed YAML, duplicate
keys, unknown fields (with a suggestion), zero or two triggers, zero or two actions (``task``
/ ``check``), a pydantic error inside a field or a trigger kind, duplicate ids across files,
and every reason :class:`~chimera.governance.validators.ScheduleValidator` gives (an
invalid or too-frequent cron, an agent-made schedule enabled without a person's approval, a
task that embeds commands governance would block). A broken file fails before anything runs:
callers that act (the tick) refuse to act on a load with problems.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from chimera.errors import MissingExtraError, SpecProblem
from chimera.governance.validators import ScheduleValidator
from chimera.scheduler.model import (
    COMMON_FIELDS,
    Schedule,
    ScheduleFields,
    ScheduleLoad,
    SchedulePlace,
    Trigger,
)
from chimera.scheduler.registry import TriggerRegistry, get_registry
from chimera.spec.loader import display_path
from chimera.spec.yamlload import Mark, NodePath, YamlDocument, parse_yaml, type_name

__all__ = ["SCHEDULES_DIR", "discover", "load_schedules"]

SCHEDULES_DIR = Path(".chimera.d") / "schedules"
"""Where declarations live, relative to the repository root (reviewed like code)."""

_ACTIONS = ("task", "check")


def discover(root: Path) -> list[Path]:
    """The declaration files under ``root``: ``*.yaml`` / ``*.yml`` of
    ``.chimera.d/schedules/`` (not recursive, hidden files skipped), sorted by name."""
    folder = root / SCHEDULES_DIR
    if not folder.is_dir():
        return []
    return sorted(
        p
        for p in folder.iterdir()
        if p.suffix in (".yaml", ".yml") and not p.name.startswith(".") and not p.is_dir()
    )


def load_schedules(
    root: Path,
    *,
    files: Sequence[Path] | None = None,
    registry: TriggerRegistry | None = None,
    validator: ScheduleValidator | None = None,
) -> ScheduleLoad:
    """Read and validate every declaration under ``root`` (or ``files``).

    Args:
        root: the repository root; paths in problems are shown relative to it.
        files: read these instead of discovering them.
        registry: trigger kinds (default: built-ins plus installed plugins).
        validator: the static checks every declaration passes (default rules).

    Returns:
        The load; ``schedules`` holds the declarations of files without problems only.

    Raises:
        PluginError: the default registry could not be built.
        MissingExtraError: a cron trigger needs cronsim (the ``github`` extra).
    """
    kinds = registry if registry is not None else get_registry()
    checks = validator if validator is not None else ScheduleValidator()
    paths = list(files) if files is not None else discover(root)
    results = [_File(path, display_path(path, root), kinds, checks).run() for path in paths]
    seen: dict[str, str] = {}
    for result in results:
        for schedule, mark in result.ids:
            if schedule in seen:
                result.add(mark, f"duplicate id '{schedule}': already declared at {seen[schedule]}")
            else:
                seen[schedule] = f"{result.display}:{mark.line}:{mark.col}"
    schedules = tuple(s for r in results if not r.problems for s in r.schedules)
    problems = tuple(p for r in results for p in sorted(r.problems, key=lambda p: (p.line, p.col)))
    return ScheduleLoad(
        files=tuple(r.display for r in results), schedules=schedules, problems=problems
    )


@dataclass
class _File:
    path: Path
    display: str
    registry: TriggerRegistry
    validator: ScheduleValidator
    problems: list[SpecProblem] = field(default_factory=list)
    schedules: list[Schedule] = field(default_factory=list)
    ids: list[tuple[str, Mark]] = field(default_factory=list)
    doc: YamlDocument = field(default_factory=YamlDocument)

    def add(self, mark: Mark | None, message: str) -> None:
        message = " ".join(message.split("\n"))
        line, col = (mark.line, mark.col) if mark is not None else (0, 0)
        self.problems.append(SpecProblem(self.display, line, col, message))

    def run(self) -> _File:
        try:
            text = self.path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            self.add(None, f"cannot read the schedules file: {exc}")
            return self
        self.doc = parse_yaml(text)
        for issue in self.doc.issues:
            self.add(issue.mark, issue.message)
        if self.doc.syntax_error or (self.doc.value is None and self.doc.issues):
            return self
        value = self.doc.value
        if self.doc.empty or not isinstance(value, dict) or "schedules" not in value:
            got = "nothing" if self.doc.empty else type_name(value)
            self.add(Mark(1, 1), f"expected a mapping with 'schedules:' (a list), got {got}")
            return self
        for key in value:
            if key != "schedules":
                self.add(self.doc.key_mark((key,)), f"unknown field {key!r} at the top level")
        items = value["schedules"]
        if not isinstance(items, list):
            self.add(self.doc.mark(("schedules",)), "'schedules' must be a list")
            return self
        for index, item in enumerate(items):
            self._one(("schedules", index), item)
        return self

    def _one(self, path: NodePath, item: object) -> None:
        doc = self.doc
        mark = doc.mark(path)
        if not isinstance(item, dict):
            self.add(mark, f"each schedule must be a mapping, got {type_name(item)}")
            return
        before = len(self.problems)
        if isinstance(item.get("id"), str):
            self.ids.append((item["id"], doc.mark((*path, "id"))))
        common = {k: v for k, v in item.items() if k in COMMON_FIELDS}
        triggers = [k for k in item if k in self.registry]
        allowed = (*COMMON_FIELDS, *self.registry.names)
        for key in item:
            if key not in COMMON_FIELDS and key not in self.registry:
                hint = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
                tail = f"; did you mean '{hint[0]}'?" if hint else f" ({', '.join(allowed)})"
                self.add(doc.key_mark((*path, key)), f"unknown field {key!r} in schedule{tail}")
        if len(triggers) != 1:
            where = doc.key_mark((*path, triggers[1])) if triggers else mark
            self.add(
                where,
                f"a schedule has exactly one trigger ({', '.join(self.registry.names)}); "
                f"found {len(triggers)}",
            )
        actions = [k for k in _ACTIONS if item.get(k) is not None]
        if len(actions) != 1:
            where = doc.key_mark((*path, actions[1])) if actions else mark
            self.add(where, f"a schedule has one of 'task' or 'check'; found {len(actions)}")
        fields = self._validate(ScheduleFields, common, path)
        trigger: Trigger | None = None
        for name in triggers:
            kind = self.registry.get(name)
            assert kind is not None
            built = self._validate(kind, item[name], (*path, name))
            trigger = built if isinstance(built, Trigger) else trigger
        if fields is None or trigger is None or len(self.problems) != before:
            return
        assert isinstance(fields, ScheduleFields)
        verdict = self.validator.validate(
            fields.id,
            trigger.cron_expression(),
            # A built-in check has no task text; name it, so the validator judges a task.
            task=fields.task if fields.task is not None else f"built-in check {fields.check}",
            created_by=fields.created_by.value,
            enabled=fields.enabled and fields.approved_by is None,
        )
        for problem in verdict.problems:
            self.add(mark, f"schedule '{fields.id}': {problem}")
        if len(self.problems) == before:
            keys = tuple(
                (k, doc.key_mark((*path, k)).line, doc.key_mark((*path, k)).col) for k in item
            )
            place = SchedulePlace(self.display, mark.line, mark.col, keys)
            self.schedules.append(Schedule(fields, trigger, place))

    def _validate(self, model: type[BaseModel], value: Any, path: NodePath) -> BaseModel | None:
        try:
            return model.model_validate(value)
        except ValidationError as exc:
            for error in exc.errors(include_url=False):
                loc = tuple(p for p in error["loc"] if isinstance(p, str | int))
                node = (*path, *loc)
                extra = error["type"] == "extra_forbidden"
                where = self.doc.key_mark(node) if extra else self.doc.mark(node)
                label = ".".join(str(p) for p in (*path[2:], *loc)) or str(path[-1])
                message = str(error["msg"]).removeprefix("Value error, ")
                if extra:
                    message = f"unknown field {loc[-1]!r}"
                elif error["type"] == "missing":
                    message = "missing required field"
                self.add(where, f"{label}: {message}")
        except MissingExtraError:
            raise  # the install lacks an extra: not a problem of the user's file
        except Exception as exc:  # a plugin's validator raised something pydantic does not wrap
            self.add(self.doc.mark(path), f"{path[-1]}: {type(exc).__name__}: {exc}")
        return None
