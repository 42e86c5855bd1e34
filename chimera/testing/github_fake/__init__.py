"""A local, stateful fake of the GitHub REST API (and the GraphQL mutations Chimera sends).

It runs on ``127.0.0.1`` (an ephemeral port) in background threads and is reached through the
real PyGithub client (``base_url=fake.api_url``), so tests exercise the same HTTP requests,
pagination and error mapping as production. Payloads follow the shapes of GitHub's published
OpenAPI description (``tests/data/github/openapi-subset.json`` holds the schemas of the
endpoints served here; a test validates the fake's answers against them).

What it models:

* repositories with issues (pull requests share their number space, as on GitHub), labels
  (created on first use, like the real API), comments, collaborator permissions, users (``User``
  or ``Bot``);
* comments listed per issue or for the whole repository (``since``, ``sort``), deleted by
  their author or a writer; each label change an issue event with an id and a time;
* a clock that tests may run ahead (:meth:`~GitHubFake.advance_clock`), so hours pass for
  per-hour limits without waiting;
* token identities (:class:`Identity`): a workflow's ``GITHUB_TOKEN``
  (:meth:`~GitHubFake.add_workflow_token`, acting as ``github-actions[bot]``), a GitHub App
  installation token (:meth:`~GitHubFake.add_app_token`, ``<slug>[bot]``) and a personal token
  (:meth:`~GitHubFake.add_token`); writes need the role and, when the token declares them, the
  ``permissions`` scope; every call records its login and token kind (``fake.writes()``);
* which writes start workflows: every write's webhook event lands in ``fake.events``; those of a
  ``GITHUB_TOKEN`` start none (``fake.triggered_events`` leaves them out), as on GitHub;
* pull requests: create (422 for a second open PR from the same head; 403 for a
  ``GITHUB_TOKEN`` while the repository's "Allow GitHub Actions to create and approve pull
  requests" is off), list by ``head``/``base``/``state``, update, close and reopen, draft,
  requested reviewers, reviews (each of a ``commit_id``), a head commit read from a local bare
  git repository (the remote) when one is attached;
* git over smart HTTP at ``fake.clone_url(full_name, token)`` and at ``<origin>/<owner>/<repo>``
  (the URL ``actions/checkout`` builds): pushes are authenticated and recorded as ``push`` (and
  ``pull_request`` ``synchronize``) events;
* check runs (Apps and the ``GITHUB_TOKEN`` only: a personal token gets GitHub's 403) and
  commit statuses, with the combined status of a ref;
* a repository's set-up as ``chimera doctor`` reads it: a folder's listing
  (``GET .../contents/{dir}``), the workflow permissions ("Allow GitHub Actions to create and
  approve pull requests"), the names of its Actions secrets and of the organization's shared
  with it, branch protection (:meth:`FakeRepo.protect`), and App installations as a person's
  token sees them;
* branch rules (``merge_queue``), branch protection, workflow dispatches, run artifacts (zip;
  a name is unique within a run across its attempts: a second upload is GitHub's 409),
  workflow runs (read, cancel: 409 once completed; "Re-run jobs" starts the next attempt,
  :mod:`.runs`);
* ``GET /user`` (403 "Resource not accessible by integration" for an installation token or
  the ``GITHUB_TOKEN``);
* GitHub Apps (:meth:`~GitHubFake.add_app`, :mod:`.apps`): with the App's JWT, ``GET /app``,
  the installation of a repository or owner, and installation tokens narrowed to the
  repositories and permissions asked for (``DELETE /installation/token`` revokes one); every
  other credential gets 401 there;
* an attached runner artifact folder (``FakeRepo.artifact_store``, act's layout) whose
  artifacts the REST endpoints list and serve beside the arranged ones;
* every recorded event keeps the webhook payload GitHub would deliver (``event.payload``), so
  a test can replay it as the event of a workflow run;
* webhook payloads built from its state (:mod:`.webhooks`: ``issue_comment``,
  ``pull_request``);
* GraphQL: ``enablePullRequestAutoMerge``, ``enqueuePullRequest``,
  ``markPullRequestReadyForReview``, ``convertPullRequestToDraft``, ``createCommitOnBranch``
  (:mod:`.gitdata`: a commit GitHub signs for the token — its REST ``verification`` is
  ``valid`` — while commits pushed with git report ``unsigned``); a ``mergePullRequest``
  mutation or ``PUT .../merge`` is recorded as a merge attempt and refused (Chimera must never
  merge);
* faults, consumed in order: an HTTP status (500, secondary rate limit 403/429 with
  ``retry-after``), optionally *after* the write happened (the reply is lost, the change is
  not), delays (client timeouts), and a ``before`` hook (a test's side effect at a chosen
  request of a run it does not drive);
* a record of every request (method, path, status, acting login, token kind).

Handlers live in one module per resource (:mod:`.repos`, :mod:`.issues`, :mod:`.pulls`,
:mod:`.checks`, :mod:`.actions`, :mod:`.apps`, :mod:`.graphql`, :mod:`.git`); each takes one
:class:`FakeRequest` and returns one :class:`FakeResponse` (:mod:`.routing`).

Example::

    with GitHubFake() as fake:
        repo = fake.add_repo("octo/app", remote=bare_repo_path)
        fake.add_user("alice"); repo.collaborators["alice"] = "write"
        gh = github.Github(auth=github.Auth.Token(fake.add_token("alice")),
                           base_url=fake.api_url, retry=None,
                           seconds_between_requests=None, seconds_between_writes=None)
"""

from __future__ import annotations

from chimera.testing.github_fake.git import make_bare_remote, push_branch
from chimera.testing.github_fake.routing import FakeRequest, FakeResponse
from chimera.testing.github_fake.server import GitHubFake
from chimera.testing.github_fake.state import (
    ACTIONS_LOGIN,
    FakeFault,
    FakeRepo,
    Identity,
    RecordedCall,
    RepoEvent,
    TokenKind,
)
from chimera.testing.github_fake.webhooks import (
    add_workflow_run,
    comment_event,
    pull_request_event,
)

__all__ = [
    "ACTIONS_LOGIN",
    "FakeFault",
    "FakeRepo",
    "FakeRequest",
    "FakeResponse",
    "GitHubFake",
    "Identity",
    "RecordedCall",
    "RepoEvent",
    "TokenKind",
    "add_workflow_run",
    "comment_event",
    "make_bare_remote",
    "pull_request_event",
    "push_branch",
]
