"""The GITHUB_TOKEN-only tier: a repository that cannot install a GitHub App.

The tier is declared, never guessed: ``bot-login: github-actions[bot]`` says Chimera's only
identity is the workflow's own ``GITHUB_TOKEN`` (an empty ``bot-login`` stays an error: a
forgotten App slug must not silently lower the guarantees). Everything that works from one
job's ``GITHUB_TOKEN`` still works; three capabilities need an identity whose events start
workflows, or that no other workflow shares, and each is refused with one of the lines below
— in the job summary, and on the issue or pull request a person watches — never silently:

* **CI on Chimera's pull requests** (:data:`NO_APP_CI`): a ``GITHUB_TOKEN``'s close and reopen
  start no workflow, so start-ci does not pretend to start CI;
* **signed memory commits** (:data:`NO_APP_MEMORY`): GitHub signs ``GITHUB_TOKEN`` commits as
  ``github-actions[bot]``, which every workflow of the repository is, so replay trusts none of
  them: remembered items stay tainted until a person promotes them;
* **queue slots across jobs** (:data:`NO_APP_QUEUE`): a slot claim by ``github-actions[bot]``
  could come from any workflow, so nothing waits in the queue for a later job (the drain) to
  start it: an issue that finds no free slot is refused, and its label added again later.
"""

from __future__ import annotations

__all__ = ["NO_APP_CI", "NO_APP_MEMORY", "NO_APP_QUEUE"]

NO_APP_CI = (
    "CI was not started: without a GitHub App (bot-login is github-actions[bot]) a "
    "GITHUB_TOKEN's close and reopen start no workflow; close and reopen the pull request "
    "yourself to run CI on the approved commit"
)
NO_APP_MEMORY = (
    "memory and learning commits are not signed for an App (bot-login is github-actions[bot]): "
    "replay treats what this run remembered as tainted until a person promotes it"
)
NO_APP_QUEUE = (
    "without a GitHub App (bot-login is github-actions[bot]) nothing waits in the ChangeQueue "
    "for a later job to start it; add the label again once a slot is free"
)
