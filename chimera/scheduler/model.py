"""What a schedule declaration is: common fields plus exactly one trigger kind.

A file under ``.chimera.d/schedules/`` holds ``schedules:``, a list of mappings::

    schedules:
      - id: spec-green
        title: Is the Spec green on main?
        cron: {expr: "0 6 * * 1-5", timezone: Europe/Warsaw}
        check: spec-green
      - id: triage-labelled
        event: {kind: issue-labelled, label: triage}
        task: Summarise the newly labelled issue and suggest owners.
        budget: {runs_per_day: 10, usd_per_run: 0.5}

The trigger key (``cron``, ``event``, or a kind a plugin registers) selects a
:class:`Trigger` subclass, as a requirement's check key selects its kind in the Spec. The
rest are :class:`ScheduleFields`. Everything here is data; nothing reads a clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from chimera.errors import SpecProblem

__all__ = [
    "Budget",
    "CreatedBy",
    "Missed",
    "ObservedEvent",
    "Schedule",
    "ScheduleFields",
    "ScheduleLoad",
    "SchedulePlace",
    "Trigger",
]

ID_PATTERN = r"^[a-z][a-z0-9_-]{1,63}$"
"""A schedule id; the same rule ScheduleValidator applies to a schedule's name."""


class Missed(StrEnum):
    """What a tick does with fire times it finds later than the grace window.

    ``once``: run the job once for all of them. ``skip``: drop them (record why); a fire time
    within the grace window still runs.
    """

    ONCE = "once"
    SKIP = "skip"


class CreatedBy(StrEnum):
    PERSON = "person"
    AGENT = "agent"


class Budget(BaseModel):
    """How much one job may spend: runs per rolling 24 hours, and dollars per run (handed to
    the run it starts; ``None``: the run's own default)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    runs_per_day: Annotated[int, Field(ge=1, le=96)] = 4
    usd_per_run: Annotated[float, Field(gt=0)] | None = None


class ScheduleFields(BaseModel):
    """Every field of a declaration except its trigger."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="Schedule")

    id: Annotated[str, Field(pattern=ID_PATTERN)]
    title: str | None = None
    task: Annotated[str, Field(min_length=1, max_length=8000)] | None = None
    check: Literal["spec-green"] | None = None
    missed: Missed = Missed.SKIP
    grace_minutes: Annotated[int, Field(ge=1, le=1440)] = 60
    lease_minutes: Annotated[int, Field(ge=1, le=10080)] = 60
    budget: Budget = Field(default_factory=Budget)
    created_by: CreatedBy = CreatedBy.PERSON
    enabled: bool = True
    approved_by: Annotated[str, Field(min_length=1, max_length=100)] | None = None


COMMON_FIELDS: tuple[str, ...] = tuple(ScheduleFields.model_fields)
"""Keys every declaration may carry besides its one trigger; no trigger kind may take these."""


@dataclass(frozen=True, slots=True)
class ObservedEvent:
    """Something that happened on GitHub, as the tick sees it.

    Attributes:
        kind: ``spec-red-on-main``, ``pull-request-merged``, ``issue-labelled`` (or a plugin's).
        key: unique per occurrence (``pr:12``, ``spec-red:<sha>``): a job runs once per key.
        at: when it happened (aware).
        detail: small strings a trigger may match on (``label``, ``branch``).
    """

    kind: str
    key: str
    at: datetime
    detail: tuple[tuple[str, str], ...] = ()

    def get(self, name: str) -> str | None:
        return dict(self.detail).get(name)


class Trigger(BaseModel):
    """Base class of trigger kinds: typed fields, unknown fields forbidden.

    A subclass sets ``kind_name`` (its YAML key) and overrides what applies: time triggers
    :meth:`fires_between` and :meth:`next_after`; event triggers :meth:`matches`.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind_name: ClassVar[str] = ""

    def fires_between(self, after: datetime, until: datetime) -> list[datetime]:
        """Fire times in ``(after, until]``, UTC ascending (``[]`` for event triggers)."""
        return []

    def next_after(self, after: datetime) -> datetime | None:
        """The first fire time after ``after`` (``None``: not time-driven)."""
        return None

    def matches(self, event: ObservedEvent) -> bool:
        """Whether ``event`` starts this job."""
        return False

    def cron_expression(self) -> str | None:
        """The cron expression ScheduleValidator checks (``None``: not a cron trigger)."""
        return None

    def describe(self) -> str:
        """One line for listings."""
        return self.kind_name


@dataclass(frozen=True, slots=True)
class SchedulePlace:
    """Where a declaration sits: its file (as displayed), line and column (1-based), and the
    start of each of its keys."""

    file: str
    line: int
    col: int
    keys: tuple[tuple[str, int, int], ...] = ()

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True)
class Schedule:
    """One valid declaration: its fields, its trigger and where it was declared."""

    fields: ScheduleFields
    trigger: Trigger
    place: SchedulePlace

    @property
    def id(self) -> str:
        return self.fields.id

    @property
    def active(self) -> bool:
        """Enabled, and — when the agent proposed it — approved by a person."""
        if not self.fields.enabled:
            return False
        return self.fields.created_by is CreatedBy.PERSON or self.fields.approved_by is not None


@dataclass(frozen=True)
class ScheduleLoad:
    """What loading found: every file read, the valid schedules, and every problem
    (``file:line:col: message``, files in order, each file's problems in line order)."""

    files: tuple[str, ...] = ()
    schedules: tuple[Schedule, ...] = ()
    problems: tuple[SpecProblem, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not self.problems

    def get(self, schedule_id: str) -> Schedule | None:
        return next((s for s in self.schedules if s.id == schedule_id), None)
