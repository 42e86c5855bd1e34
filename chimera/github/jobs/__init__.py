"""The GitHub Action's jobs: decide, agent, publish and drain.

``chimera action`` turns argv and the environment into an
:class:`~chimera.github.action.context.ActionContext` and
:class:`~chimera.github.trust.settings.ActionSettings`, calls one job here, and writes its
:class:`~chimera.github.action.context.JobResult` back to the workflow. Each job is one module:

* :mod:`~chimera.github.jobs.decide` — the gate (``issues: write``; no LLM key): decide,
  check, explain a refusal, take a ChangeQueue slot or queue the issue.
* :mod:`~chimera.github.jobs.agent` — the run (the LLM key; read-only token), in a child
  process started from a versioned request file (:mod:`chimera.github.agent.child`); writes
  the artifacts folder.
* :mod:`~chimera.github.jobs.verify` — the patch judged from the base commit in the strict
  sandbox (``contents: read``; no secret but the held-out specs); four outputs for publish.
* :mod:`~chimera.github.jobs.publish` — apply, scan, push, PR, labels, one comment (the
  workflow's ``GITHUB_TOKEN``; no LLM key), from decide's and verify's outputs only. The
  run report it shows is untrusted display data (:mod:`chimera.github.trust.report`).
* :mod:`~chimera.github.jobs.start_ci` — after an approval of the head commit, the App token
  closes and reopens the PR so CI starts on it.
* :mod:`~chimera.github.jobs.drain` — cancellations and starting the next queued issues.
* :mod:`~chimera.github.jobs.command` — ``@chimera stop``, ``status`` and unknown verbs in
  comments (``actions: write`` to cancel a run; no LLM key).
* :mod:`~chimera.github.jobs.refresh` — a push to a Chimera PR: the refresh gate, and the
  Spec check posted after verify judged the new head (``checks: write``; no secrets).

Each job is imported only when its mode runs (``chimera action``'s mode table names the
module): the LLM-free decide gate never loads the agent's engine. Job modules never import
each other; what two jobs share lives in :mod:`chimera.github` (a test forbids job → job
imports).

The walk of an event goes one way: ``chimera.cli`` → ``chimera.github.jobs`` → the
orchestration engine; nothing under :mod:`chimera.github` imports the CLI.
"""
