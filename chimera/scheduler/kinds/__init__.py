"""The two built-in trigger kinds: ``cron`` (time) and ``event`` (a standard operating
procedure started by something that happened on GitHub). They register through the same
``chimera_schedule_triggers`` hook a plugin uses."""

from __future__ import annotations

from chimera.scheduler.kinds.cron import CronTrigger
from chimera.scheduler.kinds.event import EVENT_KINDS, EventTrigger

__all__ = ["EVENT_KINDS", "CronTrigger", "EventTrigger"]
