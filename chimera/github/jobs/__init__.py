"""The GitHub Action's jobs: decide, agent, publish and drain.

``chimera action`` turns argv and the environment into an
:class:`~chimera.github.jobs.context.ActionContext` and
:class:`~chimera.github.settings.ActionSettings`, calls one job here, and writes its
:class:`~chimera.github.jobs.context.JobResult` back to the workflow. Each job is one module:

* :mod:`~chimera.github.jobs.decide` — the gate (``issues: write``; no LLM key): decide,
  check, explain a refusal, take a ChangeQueue slot or queue the issue.
* :mod:`~chimera.github.jobs.agent` — the run (the LLM key; read-only token), in a child
  process started from a versioned request file (:mod:`chimera.github.agent_child`); writes
  the artifacts folder.
* :mod:`~chimera.github.jobs.verify` — the patch judged from the base commit in the strict
  sandbox (``contents: read``; no secret but the held-out specs); four outputs for publish.
* :mod:`~chimera.github.jobs.publish` — apply, scan, push, PR, labels, one comment (the
  workflow's ``GITHUB_TOKEN``; no LLM key), from decide's and verify's outputs only. The
  run report it shows is untrusted display data (:mod:`chimera.github.report`).
* :mod:`~chimera.github.jobs.start_ci` — after an approval of the head commit, the App token
  closes and reopens the PR so CI starts on it.
* :mod:`~chimera.github.jobs.drain` — cancellations and starting the next queued issues.
* :mod:`~chimera.github.jobs.command` — ``@chimera stop``, ``status`` and unknown verbs in
  comments (``actions: write`` to cancel a run; no LLM key).
* :mod:`~chimera.github.jobs.refresh` — a push to a Chimera PR: the refresh gate, and the
  Spec check posted after verify judged the new head (``checks: write``; no secrets).

The walk of an event goes one way: ``chimera.cli`` → ``chimera.github.jobs`` → the
orchestration engine; nothing under :mod:`chimera.github` imports the CLI.
"""

from __future__ import annotations

from chimera.github.jobs.agent import AgentResult, agent_job
from chimera.github.jobs.command import CommandResult, command_job
from chimera.github.jobs.context import ActionContext, GitHubAccess, JobResult
from chimera.github.jobs.decide import DecideResult, decide_job, dry_run
from chimera.github.jobs.drain import DrainResult, drain_job
from chimera.github.jobs.publish import PublishJobResult, publish_job
from chimera.github.jobs.refresh import (
    RefreshResult,
    SpecCheckResult,
    refresh_job,
    spec_check_job,
)
from chimera.github.jobs.start_ci import StartCiResult, start_ci_job
from chimera.github.jobs.verify import VerifyResult, verify_job

__all__ = [
    "ActionContext",
    "AgentResult",
    "CommandResult",
    "DecideResult",
    "DrainResult",
    "GitHubAccess",
    "JobResult",
    "PublishJobResult",
    "RefreshResult",
    "SpecCheckResult",
    "StartCiResult",
    "VerifyResult",
    "agent_job",
    "command_job",
    "decide_job",
    "drain_job",
    "dry_run",
    "publish_job",
    "refresh_job",
    "spec_check_job",
    "start_ci_job",
    "verify_job",
]
