"""Trajectories for fine-tuning: confirmed attempts exported as SFT and preference data.

Chimera collects; it never trains. :class:`TrajectoryCollector` reads run folders, keeps only
the attempts the hash-chained audit log confirms (:mod:`.collect`, :mod:`.transcript`), pairs
accepted and failed attempts of the same card (:mod:`.pairs`) and writes TRL's SFT / DPO rows
or OpenAI's DPO JSONL (:mod:`.formats`), each row checked against its schema (:mod:`.schema`)
and redacted.
"""

from chimera.memory.trajectories.collect import Skipped, Trajectory, find_runs, read_run
from chimera.memory.trajectories.export import (
    FORMATS,
    ExportReport,
    Format,
    TrajectoryCollector,
    metadata_path,
)
from chimera.memory.trajectories.pairs import MODES, Mode, Pair
from chimera.memory.trajectories.schema import validate_row

__all__ = [
    "FORMATS",
    "MODES",
    "ExportReport",
    "Format",
    "Mode",
    "Pair",
    "Skipped",
    "Trajectory",
    "TrajectoryCollector",
    "find_runs",
    "metadata_path",
    "read_run",
    "validate_row",
]
