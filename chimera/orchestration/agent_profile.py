"""An agent profile a run starts with (``chimera run --agent``, the Action's ``agent`` input),
recorded in its run state, and the same profile re-applied when the run is resumed or approved.

Shared by the CLI's ``run``/``resume``/``approve`` and the Action's agent job, so it sits in
orchestration (next to ``RunState``), below both.

A run started with a profile records ``{"path", "sha256"}`` (the file's path in the checkout
and the SHA-256 of its bytes, read before the run, so nothing the agent writes during it
counts) under ``agent_profile`` in ``RunState.extra``. An approval continues on the PR's
head, a tree the agent wrote: the profile there must hash the same, or the approval is
refused with why — an agent that widened its own tool allowlist (or a person who edited the
profile since) never resumes under the changed profile.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chimera.errors import UsageError

if TYPE_CHECKING:
    from chimera.meta.profile import Profile
    from chimera.orchestration.state import RunState, RunStore

__all__ = ["PROFILE_KEY", "ProfileRecord", "read_profile", "reapply_profile", "record_profile"]

PROFILE_KEY = "agent_profile"


class ProfileRecord(BaseModel):
    """The profile a run started with: its path in the checkout and the SHA-256 of its bytes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str = Field(min_length=1)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")

    @classmethod
    def of(cls, extra: Mapping[str, Any]) -> ProfileRecord | None:
        """The record kept in a run state's ``extra`` (``None``: the run has none).

        Raises:
            UsageError: the record is malformed (the run state was edited).
        """
        raw = extra.get(PROFILE_KEY)
        if raw is None:
            return None
        try:
            return cls.model_validate(raw)
        except ValidationError as exc:
            raise UsageError(f"the run state's agent profile record is malformed: {exc}") from exc


def _bytes(root: Path, rel: str) -> bytes:
    path = root / rel
    try:
        return path.read_bytes()
    except OSError as exc:
        raise UsageError(f"agent profile {rel}: cannot read it: {exc.strerror or exc}") from exc


def read_profile(root: Path, rel: str) -> tuple[Profile, ProfileRecord]:
    """The validated profile at ``root / rel`` and its record.

    Raises:
        UsageError: the file cannot be read.
        ProfileError: the profile is invalid (every problem at ``file:line:col``).
    """
    from chimera.meta.loader import load_profile

    data = _bytes(root, rel)
    profile = load_profile(root / rel)
    return profile, ProfileRecord(path=rel, sha256=hashlib.sha256(data).hexdigest())


def record_profile(store: RunStore, state: RunState, record: ProfileRecord) -> RunState:
    """``state`` with ``record`` kept under :data:`PROFILE_KEY` of its ``extra``, saved."""
    state.extra.update({PROFILE_KEY: record.model_dump()})
    store.save(state)
    return state


def reapply_profile(
    root: Path,
    state: RunState,
    requested: str | None,
    *,
    named_by: str = "the agent input",
    restart: str = "close the PR and start again",
) -> Profile | None:
    """The profile run ``state`` started with, read again from ``root`` (``None``: it started
    without one and none is requested).

    Raises:
        UsageError: ``requested`` names another profile than the run recorded (or the run
            recorded none); the recorded file is gone, or its bytes changed since the run
            started (both hashes in the message).
        ProfileError: the file is unchanged but no longer valid (a newer Chimera's rules).

    ``named_by`` (what names the profile: the Action's input, the CLI's ``--agent``) and
    ``restart`` (what to do instead) only word the refusals.
    """
    recorded = ProfileRecord.of(state.extra)
    run = state.run_id
    if recorded is None:
        if requested:
            raise UsageError(
                f"run {run} started without an agent profile; {named_by} now names "
                f"{requested}: a paused run resumes as it started"
            )
        return None
    path, digest = recorded.path, recorded.sha256
    if requested and requested != path:
        raise UsageError(
            f"run {run} started with the agent profile {path}; {named_by} now names "
            f"{requested}: a paused run resumes with the profile it started with"
        )
    if not (root / path).is_file():
        raise UsageError(f"run {run}'s agent profile {path} is gone from the tree it resumes on")
    now = hashlib.sha256(_bytes(root, path)).hexdigest()
    if now != digest:
        raise UsageError(
            f"run {run}'s agent profile {path} changed since the run started (sha256 "
            f"{digest[:12]} then, {now[:12]} now): it does not resume under another profile; "
            f"{restart}"
        )
    profile, _ = read_profile(root, path)
    return profile
