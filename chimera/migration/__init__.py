"""Importing config, skills and long-term memory from Hermes Agent and OpenClaw.

:func:`~chimera.migration.sources.read_hermes` / :func:`~chimera.migration.sources.read_openclaw`
read a source home (never writing to it); :func:`~chimera.migration.run.migrate` maps what they
found onto Chimera's memory, skills, schedules and staged connectors, as a plan or for real.
Nothing another agent wrote becomes a standing instruction: memory is tainted, skills are
provisional, schedules and connectors are disabled, persona files are staged for a person.
"""

from __future__ import annotations

from chimera.migration.model import Found, MigrationResult, Outcome, Status
from chimera.migration.run import migrate
from chimera.migration.sources import hermes_home, openclaw_home, read_hermes, read_openclaw

__all__ = [
    "Found",
    "MigrationResult",
    "Outcome",
    "Status",
    "hermes_home",
    "migrate",
    "openclaw_home",
    "read_hermes",
    "read_openclaw",
]
