"""The injected clock: every scheduler function takes "now" from a :class:`Clock` or as an
argument, so tests never sleep or patch time.

Every datetime the scheduler handles is timezone-aware; naive datetimes are refused with
:class:`~chimera.errors.UsageError` (:func:`aware`), because a naive "now" silently means the
machine's zone and a cron evaluated in the wrong zone fires an hour off twice a year.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol

from chimera.errors import UsageError

__all__ = ["Clock", "FixedClock", "SystemClock", "aware", "parse_instant"]


class Clock(Protocol):
    """Something that says what time it is (timezone-aware)."""

    def now(self) -> datetime: ...


class SystemClock:
    """The real clock, in UTC: the one place the scheduler reads the system time."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class FixedClock:
    """A clock that stands still until :meth:`advance` or :meth:`set` moves it (tests, dry runs).

    Raises:
        UsageError: ``at`` is naive.
    """

    def __init__(self, at: datetime) -> None:
        self._at = aware(at)

    def now(self) -> datetime:
        return self._at

    def advance(self, delta: timedelta) -> datetime:
        """Move forward by ``delta``; returns the new time."""
        self._at = self._at + delta
        return self._at

    def set(self, at: datetime) -> None:
        self._at = aware(at)


def aware(at: datetime) -> datetime:
    """``at`` unchanged when it carries a timezone.

    Raises:
        UsageError: ``at`` is naive.
    """
    if at.tzinfo is None or at.utcoffset() is None:
        raise UsageError(f"{at.isoformat()} has no timezone; the scheduler needs aware times")
    return at


def parse_instant(text: str) -> datetime:
    """An ISO 8601 instant with an offset (``2025-03-30T01:30:00+01:00``, ``...Z``).

    Raises:
        UsageError: not ISO 8601, or no offset.
    """
    try:
        at = datetime.fromisoformat(text.strip())
    except ValueError as exc:
        raise UsageError(f"{text!r} is not an ISO 8601 time: {exc}") from exc
    return aware(at)
