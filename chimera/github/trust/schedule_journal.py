"""The schedules' journal as Chimera's GitHub jobs write and trust it, and the tick's mark on a
scheduled run's issue: shared by the tick job (which claims and files) and the publish job
(which records a scheduled run's finish).

A tick comments :func:`tick_marker` on the issue of each run it starts; publish reads it back
with :func:`scheduled_run` (only from Chimera's own comments) and appends the ``finish`` with
:func:`record_finish`. The journal's commits are SSH-signed with a key, or GitHub-signed
through the API (:func:`signed_journal`); which replay is :func:`journal_trust`'s call.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from chimera.errors import JournalConflict
from chimera.github.trust.branchcommit import ApiWriter, chimera_trust
from chimera.scheduler.journal import AnyOf, GitJournal, SignedBy, TrustPolicy
from chimera.scheduler.state import FinishOp

if TYPE_CHECKING:
    from chimera.github.client.client import GitHubClient
    from chimera.github.trust.settings import ActionSettings

__all__ = [
    "SIGNERS_FILE",
    "journal_for",
    "journal_trust",
    "record_finish",
    "scheduled_run",
    "signed_journal",
    "tick_marker",
]

SIGNERS_FILE = Path(".chimera.d") / "journal-signers"
"""git's allowed-signers file on the default branch: the keys whose journal commits count."""


def journal_for(
    root: Path,
    settings: ActionSettings,
    signing_key: Path | None,
    *,
    client: GitHubClient | None = None,
) -> GitJournal:
    """The journal branch through the checkout ``root``'s ``origin`` (the token
    ``actions/checkout`` persisted), verified against ``.chimera.d/journal-signers`` when the
    checkout has it. With ``signing_key`` git pushes the commits as Chimera's login, SSH-signed
    (the key is configured for a job whose token's commits replay would not trust, such as
    publish on ``GITHUB_TOKEN``); else, with ``client``, they land through
    ``createCommitOnBranch`` — GitHub signs them as the token's account (the App's for its
    installation token), and nothing asks whose token it is."""
    login = settings.identities[0]
    signers = root / SIGNERS_FILE
    journal = GitJournal(
        root,
        identity=(login, f"{login}@users.noreply.github.com"),
        signing_key=signing_key,
        allowed_signers=signers if signers.is_file() else None,
    )
    if client is not None and signing_key is None:
        journal.writer = ApiWriter(client, journal.store)
    return journal


def signed_journal(
    root: Path, settings: ActionSettings, client: GitHubClient | None, signing_key: Path | None
) -> GitJournal | None:
    """:func:`journal_for` when its commits will be signed — SSH-signed with ``signing_key``,
    or GitHub-signed through the API with ``client``'s token — else ``None`` (neither): an
    unsigned commit would count for nothing on replay."""
    if client is None and signing_key is None:
        return None
    return journal_for(root, settings, signing_key, client=client)


def journal_trust(
    client: GitHubClient, settings: ActionSettings, journal: GitJournal
) -> TrustPolicy:
    """Which journal commits replay: GitHub verified them for Chimera's App or a write-access
    person (:func:`~chimera.github.trust.branchcommit.chimera_trust`, memory's lookup), or — when
    the checkout has ``.chimera.d/journal-signers``, reviewed like code — git verifies a good
    signature by one of its keys."""
    github: TrustPolicy = chimera_trust(client, settings, journal.branch)
    return AnyOf([SignedBy(), github] if journal.allowed_signers is not None else [github])


_TICK_MARK = re.compile(
    r"<!-- chimera:tick (?P<run>[A-Za-z0-9._-]{1,128}) (?P<job>[^\s>]{1,200}) -->"
)


def tick_marker(run_id: str, job: str) -> str:
    """The HTML comment a tick leaves on the issue of job ``job`` it fired in tick
    ``run_id``: it makes the comment idempotent, and :func:`scheduled_run` reads it back."""
    return f"<!-- chimera:tick {run_id} {job} -->"


def scheduled_run(
    comments: Sequence[tuple[int, str, str]], settings: ActionSettings
) -> tuple[str, str] | None:
    """``(tick run id, job id)`` of the last tick comment Chimera's identity left on an issue
    (``comments`` as :meth:`~chimera.github.client.client.GitHubClient.comments` lists them), or
    ``None``. Comments by anyone else are never read: a person could write the marker."""
    found: tuple[str, str] | None = None
    for _cid, author, body in comments:
        match = _TICK_MARK.search(body) if settings.is_self(author) else None
        if match is not None:
            found = (match.group("run"), match.group("job"))
    return found


def record_finish(
    journal: GitJournal, started: tuple[str, str], at: datetime, run_id: str, *, attempts: int = 3
) -> str:
    """Append ``finish`` for the job ``started[1]`` that tick ``started[0]`` fired, as the
    journal file of ``run_id`` (the publish job's run); returns the commit. A lost race
    re-reads the tip and tries again (a finish depends on nothing else in the journal).

    Raises:
        JournalConflict: other writers kept winning ``attempts`` times.
        JournalError: git failed, or this run already recorded its finish.
    """
    op = FinishOp(run=started[0], at=at, job=started[1])
    for attempt in range(1, attempts + 1):
        try:
            return journal.append(run_id, [op], parent=journal.fetch())
        except JournalConflict:
            if attempt == attempts:
                raise
    raise AssertionError("unreachable")  # pragma: no cover
