"""Cron expressions evaluated in a stated timezone, with "now" always passed in.

The library is `cronsim` (the evaluator behind Healthchecks.io): it takes the start instant
as an argument (no hidden clock), has no dependencies, ships type hints, and follows Debian
cron on daylight-saving changes — a time skipped by a spring-forward change runs once at the
first valid instant after it, a time repeated by a fall-back change runs once. `croniter`
(now maintained under pallets-eco) was the alternative; it also takes a start time, but pulls
in python-dateutil, and its DST handling has changed between releases, which is exactly what
a scheduler must pin down. The expression grammar Chimera accepts is the plain five-field
one that :class:`chimera.governance.validators.ScheduleValidator` checks; cronsim only
evaluates it.

Times in and out are timezone-aware; results are in UTC so they compare and serialise the
same everywhere.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from chimera.errors import CronError, MissingExtraError
from chimera.scheduler.clock import aware

if TYPE_CHECKING:
    from cronsim import CronSim

__all__ = ["CronExpr", "zone"]

MAX_FIRES = 10_000
"""The most fire times one window may list (a runaway window is an error, not a hang)."""


def zone(name: str) -> ZoneInfo:
    """The IANA timezone ``name`` (``Europe/Warsaw``, ``UTC``).

    Raises:
        CronError: no such zone.
    """
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise CronError(f"unknown timezone {name!r} (an IANA name such as Europe/Warsaw)") from exc


def _cronsim(expr: str, start: datetime) -> CronSim:
    try:
        from cronsim import CronSim, CronSimError
    except ImportError as exc:  # pragma: no cover - the dev install has it
        raise MissingExtraError("schedules", "github") from exc
    try:
        return CronSim(expr, start)
    except CronSimError as exc:
        raise CronError(f"cron {expr!r}: {exc}") from exc


class CronExpr:
    """One five-field expression in one timezone.

    Args:
        expr: ``m h dom mon dow`` or a macro (``@daily``).
        timezone: the IANA zone the fields are read in.

    Raises:
        CronError: the expression or the zone is invalid.
    """

    def __init__(self, expr: str, timezone: str) -> None:
        self.expr = expr
        self.timezone = timezone
        self.tz = zone(timezone)
        _cronsim(expr, datetime(2000, 1, 1, tzinfo=self.tz))  # validate now, not at first use

    def __repr__(self) -> str:
        return f"CronExpr({self.expr!r}, {self.timezone!r})"

    def _iter(self, after: datetime) -> Iterator[datetime]:
        start = aware(after).astimezone(self.tz)
        for local in _cronsim(self.expr, start):
            t = local.astimezone(UTC)
            # Started inside a fall-back hour's second pass (fold=1), cronsim can yield the
            # first pass's instant, which is earlier in absolute time: it already fired.
            if t > start:
                yield t

    def next_after(self, after: datetime) -> datetime:
        """The first fire time strictly after ``after`` (UTC).

        Raises:
            UsageError: ``after`` is naive.
        """
        return next(self._iter(after))

    def fires_between(self, after: datetime, until: datetime) -> list[datetime]:
        """Fire times ``t`` with ``after < t <= until`` (UTC, ascending).

        Raises:
            UsageError: a naive argument.
            CronError: more than :data:`MAX_FIRES` fire times in the window.
        """
        until = aware(until)
        found: list[datetime] = []
        for t in self._iter(after):
            if t > until:
                break
            if len(found) == MAX_FIRES:
                raise CronError(f"cron {self.expr!r} fires more than {MAX_FIRES} times in a window")
            found.append(t)
        return found
