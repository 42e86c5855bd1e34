"""The agent job's child process: one project run, started from a typed, versioned request.

The agent job (:mod:`chimera.github.jobs.agent`) never re-encodes its settings into the user
CLI's argv. It writes an :class:`AgentRequest` (``version: 1``) atomically and starts::

    python -P -m chimera.github.agent.child REQUEST.json

without any GitHub token in the environment. The child parses the request once
(:func:`read_request`: one line on a bad or unknown-version file), starts a new run or
approves a paused one (:func:`run_request`), and leaves the result where every run leaves it:
``<root>/.chimera/runs/<run_id>/state.json``, which the parent reads back as a typed
:class:`~chimera.orchestration.state.RunState`.

Exit status: 0 the run ended (in any status: the state says which), 2 a bad request, usage or
configuration (one line on stderr), 3 an internal error (one line; ``CHIMERA_DEBUG=1`` shows
the traceback), 130 interrupted.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from chimera.errors import ChimeraError, UsageError
from chimera.github.trust.handoff import read_model, supported_version, write_model

if TYPE_CHECKING:
    from chimera.orchestration.state import RunState

__all__ = [
    "REQUEST_VERSION",
    "AgentRequest",
    "config_overrides",
    "main",
    "read_request",
    "run_request",
    "write_request",
]

REQUEST_VERSION = 1

EXIT_ENDED = 0
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130


class AgentRequest(BaseModel):
    """What the agent job asks its child to do (the request file, version 1).

    ``action`` ``start`` begins run ``run_id`` on ``task`` for ``actor`` (who started it);
    ``approve`` continues the paused run ``run_id``, approved by ``actor``. The limits are
    ``None`` where the repository's configuration decides.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = Field(description="The request format; this Chimera reads 1.")
    action: Literal["start", "approve"] = Field(description="Start a run or approve one.")
    root: Path = Field(description="The checkout the run works in (absolute).")
    run_id: str = Field(min_length=1, description="The run's id (its folder's name).")
    actor: str = Field(min_length=1, description="Who started the run, or who approves it.")
    task: str | None = Field(default=None, description="start: the task text.")
    untrusted: bool = Field(default=True, description="start: the task came from outside.")
    spec_paths: list[str] = Field(
        default_factory=lambda: ["specs"],
        min_length=1,
        description="start: spec files or folders, relative to root.",
    )
    model: str | None = Field(default=None, description="The model; None: the configured one.")
    max_iterations: int | None = Field(default=None, ge=1, description="Card iterations.")
    max_attempts: int | None = Field(default=None, ge=1, description="Attempts per card.")
    budget_usd: float | None = Field(default=None, gt=0, description="USD budget of the run.")
    budget_tokens: int | None = Field(default=None, ge=1, description="Token budget.")
    diff_feedback: bool | None = Field(
        default=None, description="Show the reverted diff in retry prompts; None: configured."
    )
    memory: bool = Field(
        default=True, description="Recall and record memories (the input memory: false)."
    )
    allow_self_approval: bool | None = Field(
        default=None, description="approve: the starter may approve; None: configured."
    )
    api_base: str | None = Field(default=None, description="The model endpoint; None: configured.")
    litellm: dict[str, str | int | float | bool] | None = Field(
        default=None, description="Further litellm.completion settings; None: configured."
    )
    deps_dir: Path | None = Field(
        default=None, description="The set-up step's dependency folder; None: configured."
    )
    basis_commit: str | None = Field(
        default=None,
        pattern=r"^[0-9a-f]{40}$",
        description=(
            "start: iterate on the change in the work tree, judging the goal against this "
            "commit (a review re-run on a PR's head); None: the tree is the base."
        ),
    )
    sandbox: Literal["bwrap", "scrubbed"] | None = Field(
        default=None,
        description=(
            "The Action's sandbox input (strict: bwrap, failing closed; scrubbed: the opt-out); "
            "None: configured."
        ),
    )
    agent_profile: str | None = Field(
        default=None,
        description=(
            "The agent input: a profile's path relative to root. start: applied and recorded "
            "(path and SHA-256) in the run state; approve: must match the recorded one."
        ),
    )

    @field_validator("version", mode="before")
    @classmethod
    def _known_version(cls, value: Any) -> int:
        return supported_version(value, REQUEST_VERSION, "agent request")

    @field_validator("root")
    @classmethod
    def _absolute_root(cls, value: Path) -> Path:
        if not value.is_absolute():
            raise ValueError(f"must be an absolute path, got {str(value)!r}")
        return value

    @field_validator("agent_profile")
    @classmethod
    def _relative_profile(cls, value: str | None) -> str | None:
        if value is not None and (
            not value or Path(value).is_absolute() or ".." in Path(value).parts
        ):
            raise ValueError(f"{value!r}: give a path inside the root")
        return value

    @field_validator("spec_paths")
    @classmethod
    def _relative_specs(cls, value: list[str]) -> list[str]:
        for path in value:
            if not path or Path(path).is_absolute() or ".." in Path(path).parts:
                raise ValueError(f"{path!r}: give a path inside the root")
        return value

    @model_validator(mode="after")
    def _task_for_start(self) -> AgentRequest:
        if self.action == "start" and not (self.task or "").strip():
            raise ValueError("a start request needs a task")
        return self


def write_request(path: Path, request: AgentRequest) -> Path:
    """Write ``request`` to ``path`` atomically; returns ``path``.

    Raises:
        OSError: the directory is not writable.
    """
    return write_model(path, request)


def read_request(path: Path) -> AgentRequest:
    """Parse the request file once.

    Raises:
        HandoffError: one line naming the file and the first problem (missing, invalid JSON,
            an unknown version, a missing field, a wrong type, an unknown field).
    """
    return read_model(path, AgentRequest, "agent request")


def config_overrides(request: AgentRequest) -> dict[str, Any]:
    """The configuration keys ``request`` fixes for both actions (endpoint, LiteLLM settings,
    dependency folder, sandbox mode) as :meth:`~chimera.config.ChimeraConfig.with_overrides`
    arguments; ``None`` leaves the repository's value.

    The sandbox mode is the Action's, never the checkout's: a repository configured
    ``mode = "auto"`` (or ``"scrubbed"``) must not run the agent unisolated when the workflow
    said ``sandbox: strict``."""
    return {
        "api_base": request.api_base,
        "litellm": request.litellm,
        "deps_dir": None if request.deps_dir is None else str(request.deps_dir),
        "sandbox": request.sandbox,
    }


def run_request(request: AgentRequest) -> RunState:
    """Do what ``request`` asks, in this process; returns the run's final state.

    The run goes through the same typed surface as ``chimera run`` / ``approve``
    (:func:`~chimera.orchestration.surfaces.start_run`,
    :func:`~chimera.orchestration.surfaces.approve_run`); only the refusals a CI checkout
    words differently (no ``--force`` to suggest) are checked here first.

    Raises:
        UsageError / ConfigError / MissingExtraError / AuthenticationError: no model, a bad
            configuration, a missing extra or key, an interrupted run in the way, no spec files.
        ChimeraError: the run could not be set up or its state could not be read.
    """
    from chimera.config import load_config
    from chimera.orchestration.agent_profile import read_profile, reapply_profile, record_profile
    from chimera.orchestration.session_factory import resolve_model
    from chimera.orchestration.state import RunStore
    from chimera.orchestration.surfaces import (
        ResumeRequest,
        RunRequest,
        approve_run,
        start_run,
    )
    from chimera.spec.loader import discover_spec_files

    root = request.root
    store = RunStore(root)
    overrides = config_overrides(request)
    if request.action == "approve":
        paused = store.load(request.run_id)
        if not (request.model or paused.model):
            raise UsageError(f"run {request.run_id} recorded no model; the request names none")
        profile = reapply_profile(root, paused, request.agent_profile)
        # Through with_overrides, not assignment: a profile's overrides rebuild the
        # configuration from the values set, and an assigned field of an unset section is lost.
        config = load_config(root).with_overrides(
            model=request.model, run__allow_self_approval=request.allow_self_approval, **overrides
        )
        again = ResumeRequest(
            root=root,
            config=config,
            run_id=request.run_id,
            model=request.model,
            memory=request.memory,
            agent=profile,
        )
        return approve_run(again, by=request.actor).state
    config = load_config(root).with_overrides(
        model=request.model,
        max_attempts=request.max_attempts,
        diff_feedback=request.diff_feedback,
        budget_usd=request.budget_usd,
        budget_tokens=request.budget_tokens,
        run__max_iterations=request.max_iterations,
        **overrides,
    )
    # Read (and hashed) before the run: what the agent writes to it meanwhile never counts.
    profile, record = (
        read_profile(root, request.agent_profile) if request.agent_profile else (None, None)
    )
    model = resolve_model(request.model or (profile.fields.model if profile else None), config)
    if not discover_spec_files([root / p for p in request.spec_paths]):
        raise UsageError(f"no spec files (*.yaml, *.yml) in {', '.join(request.spec_paths)}")
    stale = [r for r in store.interrupted() if r != request.run_id]
    if stale:
        raise UsageError(
            f"run {stale[-1]} was interrupted and its tree may hold a half-made change; "
            "this checkout cannot start another run"
        )
    from chimera.orchestration.basis import Basis

    run = RunRequest(
        basis=Basis(request.basis_commit) if request.basis_commit else None,
        root=root,
        config=config,
        model=model,
        started_by=request.actor,
        spec_paths=tuple(request.spec_paths),
        task=request.task,
        untrusted=request.untrusted,
        run_id=request.run_id,
        memory=request.memory,
        agent=profile,
    )
    state = start_run(run).state
    return record_profile(store, state, record) if record is not None else state


def _err(line: str) -> None:
    sys.stderr.write(line.rstrip("\n") + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    """The child's entry point: ``REQUEST.json`` → one run → the exit status above."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        _err("usage: python -m chimera.github.agent.child REQUEST.json")
        return EXIT_USAGE
    try:
        run_request(read_request(Path(args[0])))
    except ChimeraError as exc:
        _err(f"chimera agent: {exc}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        _err("chimera agent: interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:
        if os.environ.get("CHIMERA_DEBUG"):
            raise
        _err(f"chimera agent: internal error: {type(exc).__name__}: {exc}")
        return EXIT_INTERNAL
    return EXIT_ENDED


if __name__ == "__main__":  # pragma: no cover - exercised as a child process
    sys.exit(main())
