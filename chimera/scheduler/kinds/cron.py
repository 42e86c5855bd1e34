"""``cron: {expr: "0 6 * * 1-5", timezone: Europe/Warsaw}`` — a time trigger.

The zone is required: a cron read in "whatever zone the runner has" fires an hour off for
half the year.
"""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from pydantic import PrivateAttr, field_validator, model_validator

from chimera.errors import CronError
from chimera.scheduler.cron import CronExpr, zone
from chimera.scheduler.model import Trigger

__all__ = ["CronTrigger"]


class CronTrigger(Trigger):
    """Fires at the expression's times, read in ``timezone`` (an IANA name)."""

    kind_name: ClassVar[str] = "cron"

    expr: str
    timezone: str

    _cron: CronExpr | None = PrivateAttr(default=None)

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        try:
            zone(value)
        except CronError as exc:
            raise ValueError(str(exc)) from exc
        return value

    @field_validator("expr")
    @classmethod
    def _expr(cls, value: str) -> str:
        try:
            CronExpr(value, "UTC")  # the grammar alone, so a bad zone is reported beside it
        except CronError as exc:
            raise ValueError(str(exc)) from exc
        return value

    @model_validator(mode="after")
    def _parse(self) -> CronTrigger:
        try:
            self._cron = CronExpr(self.expr, self.timezone)
        except CronError as exc:
            raise ValueError(str(exc)) from exc
        return self

    @property
    def cron(self) -> CronExpr:
        assert self._cron is not None  # set by the validator
        return self._cron

    def fires_between(self, after: datetime, until: datetime) -> list[datetime]:
        return self.cron.fires_between(after, until)

    def next_after(self, after: datetime) -> datetime | None:
        return self.cron.next_after(after)

    def cron_expression(self) -> str | None:
        return self.expr

    def describe(self) -> str:
        return f"cron {self.expr!r} ({self.timezone})"
