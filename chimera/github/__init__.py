"""GitHub: the Action's jobs and the rooms they are built from.

Each room is a subpackage with one idea; which room may import which is declared, with the
reason, in ``scripts/layers.py`` (and generated into ``specs/layers.yaml``); every other
sideways import is forbidden. ``jobs/`` may import every room; no room imports ``jobs/``.

* ``jobs/`` — The GitHub Action's jobs: decide, agent, publish and drain.
* ``client/`` — The PyGithub boundary: GitHubClient, its endpoint groups, and the API calls beside
  it.
* ``scan/`` — Scan a patch before it is pushed: the publish job's last look at agent-written
  changes.
* ``trust/`` — The trust chain: what crosses between jobs, parsed once, and what trusted jobs
  re-derive.
* ``gate/`` — What an event means and who may act on it: event rules, ``@chimera`` commands,
  permissions.
* ``conversation/`` — What Chimera writes on issues and PRs: documents, outcome comment, checks,
  costs, feedback.
* ``queue/`` — The ChangeQueue: slots claimed by comments, the comment that holds one, the queue
  that heals.
* ``agent/`` — The agent job's run: the child process, its profile, the progress watched while it
  runs.
* ``verify/`` — The verify job: the patch re-judged from the base commit, held-out requirements,
  pauses.
* ``publish/`` — The publish step: what it acts on re-derived, guards, push and PR, memory and
  learning.
* ``action/`` — The Action's side of every job: its context and result, and what two jobs share.
* ``doctor/`` — ``chimera doctor``: a live repository's Chimera set-up, checked through the API.

Nothing here imports PyGithub at import time; the client imports it when constructed.
"""
