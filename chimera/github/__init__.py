"""GitHub: event decisions, permission checks, the PyGithub boundary, publishing and rendering.

* :mod:`chimera.github.events` — :func:`~chimera.github.events.decide`: an event payload →
  run / resume / rerun / cancel / drain / ignore, with a reason and the API checks to make.
* :mod:`chimera.github.permissions` — :func:`~chimera.github.permissions.resolve`: those checks.
* :mod:`chimera.github.client` — :class:`~chimera.github.client.GitHubClient` (errors mapped,
  retries, no duplicate PRs): :mod:`~chimera.github.client_core` (the one error mapping and
  retry loop) under one mixin per endpoint group (``client_issues``, ``client_pulls``,
  ``client_merge``, ``client_actions``, ``client_commits``); shapes in ``client_shapes``.
* :mod:`chimera.github.publish` — apply, scan, push, open or update the PR, label, comment.
* :mod:`chimera.github.scan` — the publish scan of a patch (paths as git reads them, the
  block/review table, secrets in any spelling, governance rules over added code, limits).
* :mod:`chimera.github.render` — the one renderer of the PR body and the outcome comment
  (typed sections, trusted or fenced); :mod:`chimera.github.documents` builds both;
  :mod:`chimera.github.summary` — the state markers and inert code spans.
* :mod:`chimera.github.identity` — Chimera's own identities, read from its tokens;
  :mod:`chimera.github.starter` — who started a queued run, which labels hold slots.
* :mod:`chimera.github.artifacts` — the folder carried from the agent job to publish/resume.
* :mod:`chimera.github.report` — the run report (``report.json``): untrusted display data.
* :mod:`chimera.github.jobs` — the Action's jobs (decide, agent, publish, drain); the agent
  job's run happens in :mod:`chimera.github.agent_child`, started from a versioned request
  file (:mod:`chimera.github.handoff` writes and parses both hand-offs). Job modules never
  import each other; what two jobs share lives here: :mod:`~chimera.github.cancellation`,
  :mod:`~chimera.github.command_refusal`, :mod:`~chimera.github.schedule_journal`,
  :mod:`~chimera.github.gitops`.
* :mod:`chimera.github.commands` — the ``@chimera`` verb table and the comment decision.

Nothing here imports PyGithub at import time; the client imports it when constructed.
"""
