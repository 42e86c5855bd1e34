"""``--agent PROFILE.yaml`` of ``chimera run``, ``resume`` and ``approve``: a run keeps the
profile it started with.

``chimera run --agent P`` records ``{"path", "sha256"}`` of ``P`` (read and hashed before the
run, so nothing the agent writes to it meanwhile counts) under ``agent_profile`` in the run
state's ``extra`` — as the Action's agent job does (both through
:mod:`chimera.orchestration.agent_profile`). The path is relative to the root when the file is
inside it, else absolute.

``chimera resume`` and ``chimera approve`` re-apply the recorded profile, with or without
``--agent`` (which, when given, must name the same file). They refuse, with one line saying
why, when the file is gone, its bytes changed since the run started (both hashes shown), the
flag names another file, or the run started without a profile.
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from chimera.errors import ChimeraError, UsageError

if TYPE_CHECKING:
    from chimera.meta.profile import Profile
    from chimera.orchestration.agent_profile import ProfileRecord
    from chimera.orchestration.surfaces import RunOutcome, RunRequest

__all__ = ["add_agent_flag", "as_recorded", "resume_profile", "start_profile", "start_recorded"]


def add_agent_flag(parser: argparse.ArgumentParser, *, resume: bool) -> None:
    """Add ``--agent PROFILE.yaml`` to ``parser`` (``resume``: the ``resume``/``approve`` help)."""
    helptext = (
        "the profile the run started with (default: the recorded one); refused when the "
        "file changed since"
        if resume
        else "an agent profile (chimera meta design): its model, budget, tools, instructions"
    )
    parser.add_argument("--agent", metavar="PROFILE.yaml", help=helptext)


def as_recorded(root: Path, path: str) -> str:
    """``path`` (as given on the command line, relative to the working directory) as a run
    state records it: POSIX and relative to ``root`` when inside it, else absolute."""
    full = Path(path).resolve()
    try:
        return full.relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return str(full)


def start_profile(root: Path, path: str | None) -> tuple[Profile | None, ProfileRecord | None]:
    """``--agent PATH`` of ``chimera run``: the validated profile and its record (path and
    SHA-256 of the bytes read now); ``(None, None)`` without the flag.

    Raises:
        UsageError: no such file, or it cannot be read.
        ProfileError: the profile is invalid (every problem at ``file:line:col``).
    """
    if path is None:
        return None, None
    from chimera.orchestration.agent_profile import read_profile

    if not Path(path).is_file():
        raise UsageError(f"--agent {path}: no such file")
    return read_profile(Path(root), as_recorded(root, path))


def start_recorded(run: RunRequest, record: ProfileRecord | None) -> RunOutcome:
    """:func:`~chimera.orchestration.surfaces.start_run`, then ``record`` kept in the run's
    state — also when the run ended by an exception after its first state was saved, so a
    ``chimera resume`` after a crash re-applies the profile.

    Raises:
        as ``start_run``.
    """
    from chimera.orchestration.agent_profile import record_profile
    from chimera.orchestration.state import STATE_FILE, RunStore, new_run_id
    from chimera.orchestration.surfaces import start_run

    if record is None:
        return start_run(run)
    if run.run_id is None:
        run = _with_run_id(run, new_run_id())
    assert run.run_id is not None
    store = RunStore(run.root)
    # A run id that already holds a run is refused by start_run: its record is not ours.
    fresh = not (store.run_dir(run.run_id) / STATE_FILE).is_file()
    try:
        outcome = start_run(run)
    except BaseException:
        if fresh and (store.run_dir(run.run_id) / STATE_FILE).is_file():
            # Best effort while another error propagates: that error is the one to report.
            with contextlib.suppress(ChimeraError, OSError):
                record_profile(store, store.load(run.run_id), record)
        raise
    record_profile(store, outcome.state, record)
    return outcome


def _with_run_id(run: RunRequest, run_id: str) -> RunRequest:
    import dataclasses

    return dataclasses.replace(run, run_id=run_id)


def resume_profile(root: Path, run_id: str, path: str | None) -> Profile | None:
    """The profile run ``run_id`` started with, read again (``None``: it started without one
    and ``path`` is ``None``).

    Raises:
        UsageError: no such run; ``path`` names another file than the recorded one, or the run
            recorded none; the recorded file is gone or changed since the run started.
        ProfileError: the unchanged file is no longer a valid profile.
    """
    from chimera.orchestration.agent_profile import reapply_profile
    from chimera.orchestration.state import RunStore

    state = RunStore(root).load(run_id)
    return reapply_profile(
        Path(root),
        state,
        as_recorded(root, path) if path else None,
        named_by="--agent",
        restart="restore the file, or start a new run",
    )
