"""The five-field cron grammar :class:`~chimera.governance.validators.ScheduleValidator` accepts:
fields with names, ranges, steps and macros parsed to the minutes, hours, days and months a
schedule fires (how often it fires, whether it ever does).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass

from chimera.errors import CronError

_MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}


_MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


_MONTHS = {m: i for i, m in enumerate(_MONTH_NAMES, 1)}


_DAYS = {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}


_NO_NAMES: dict[str, int] = {}


_FIELDS: tuple[tuple[str, int, int, Mapping[str, int]], ...] = (
    ("minute", 0, 59, _NO_NAMES),
    ("hour", 0, 23, _NO_NAMES),
    ("day of month", 1, 31, _NO_NAMES),
    ("month", 1, 12, _MONTHS),
    ("day of week", 0, 7, _DAYS),
)


_DAYS_IN_MONTH = {
    1: 31,
    2: 29,
    3: 31,
    4: 30,
    5: 31,
    6: 30,
    7: 31,
    8: 31,
    9: 30,
    10: 31,
    11: 30,
    12: 31,
}


def _value(token: str, lo: int, hi: int, names: Mapping[str, int], fname: str) -> int:
    key = token.lower()
    if key in names:
        return names[key]
    if not token.isdigit():
        raise CronError(f"{fname}: {token!r} is not a number")
    value = int(token)
    if not lo <= value <= hi:
        raise CronError(f"{fname}: {value} is outside {lo}-{hi}")
    return value


def parse_cron_field(text: str, index: int) -> set[int]:
    """The set of values one cron field selects (field ``index`` 0-4).

    Raises:
        CronError: the field does not parse.
    """
    fname, lo, hi, names = _FIELDS[index]
    values: set[int] = set()
    for item in text.split(","):
        if not item:
            raise CronError(f"{fname}: empty list item")
        base, _, step_text = item.partition("/")
        step = 1
        if step_text:
            if not step_text.isdigit() or int(step_text) == 0:
                raise CronError(f"{fname}: step {step_text!r} must be a positive number")
            step = int(step_text)
        if base == "*":
            start, end = lo, hi
        elif "-" in base:
            a, _, b = base.partition("-")
            start, end = _value(a, lo, hi, names, fname), _value(b, lo, hi, names, fname)
            if start > end:
                raise CronError(f"{fname}: range {base} runs backwards")
        else:
            start = _value(base, lo, hi, names, fname)
            end = hi if step_text else start
        values.update(range(start, end + 1, step))
    if index == 4 and 7 in values:
        values.discard(7)
        values.add(0)
    return values


@dataclass(frozen=True, slots=True)
class CronSchedule:
    """A parsed five-field cron expression."""

    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    dom_any: bool
    dow_any: bool

    @classmethod
    def parse(cls, expression: str) -> CronSchedule:
        """Parse ``m h dom mon dow`` or a macro (``@daily`` ...).

        Raises:
            CronError: invalid, ``@reboot``, or not five fields.
        """
        expr = expression.strip()
        if expr.lower() == "@reboot":
            raise CronError("@reboot runs at every start, not on a schedule")
        expr = _MACROS.get(expr.lower(), expr)
        parts = expr.split()
        if len(parts) != 5:
            raise CronError(
                f"expected 5 fields (minute hour day-of-month month day-of-week), got {len(parts)}"
            )
        sets = [frozenset(parse_cron_field(p, i)) for i, p in enumerate(parts)]
        return cls(
            minutes=sets[0],
            hours=sets[1],
            days=sets[2],
            months=sets[3],
            weekdays=sets[4],
            dom_any=parts[2] == "*",
            dow_any=parts[4] == "*",
        )

    def fires(self) -> bool:
        """Whether the schedule can ever fire (``0 0 31 2 *`` cannot)."""
        if not self.dow_any:
            return True
        return any(d <= _DAYS_IN_MONTH[m] for m in self.months for d in self.days)

    def min_interval_minutes(self) -> int:
        """The shortest gap between two firings within a day (wrapping to the next day when
        the schedule fires every day); 1440 when it fires once a day or less."""
        times = sorted(h * 60 + m for h in self.hours for m in self.minutes)
        gaps = [b - a for a, b in itertools.pairwise(times)]
        every_day = self.dom_any and self.dow_any
        if every_day and times:
            gaps.append(1440 - times[-1] + times[0])
        return min(gaps) if gaps else 1440
