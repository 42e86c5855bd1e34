"""Identity, permissions, issues, labels and comments: the issue side of
:class:`~chimera.github.client.client.GitHubClient`.
"""

from __future__ import annotations

from datetime import datetime

from chimera.errors import GitHubApiError, GitHubNotFound, GitHubPermissionDenied
from chimera.github.client.core import ClientCore
from chimera.github.client.shapes import CommentInfo, IssueInfo, comment_info, issue_info

__all__ = ["IssuesMixin"]


class IssuesMixin(ClientCore):
    """Who the token and a login are; read and write issues, their labels and comments."""

    def whoami(self) -> str | None:
        """The token's login, or ``None`` when the token cannot read ``/user`` (App tokens)."""
        try:
            return self._call("GET /user", lambda: str(self._gh.get_user().login))
        except GitHubPermissionDenied:
            return None

    def user_type(self, login: str) -> str:
        """``User``, ``Bot``, ``Organization`` (``Unknown`` for no such account); a login
        ending in ``[bot]`` is a ``Bot``."""
        if login.endswith("[bot]"):
            return "Bot"
        try:
            return self._call(
                f"GET /users/{login}",
                lambda: str(self._raw("GET", f"/users/{login}").get("type", "User")),
            )
        except GitHubNotFound:
            return "Unknown"  # no such account: its permission is "none" anyway

    def permission(self, login: str) -> str:
        """The role of ``login`` on the repository: ``admin``, ``maintain``, ``write``,
        ``triage``, ``read`` or ``none`` (``role_name`` when GitHub gives it, else the legacy
        permission)."""

        def get() -> str:
            data = self._raw("GET", f"/repos/{self.repository}/collaborators/{login}/permission")
            return str(data.get("role_name") or data.get("permission") or "none")

        try:
            return self._call(f"GET permission of {login}", get)
        except GitHubNotFound:
            return "none"

    # -- issues, labels, comments ----------------------------------------------------------

    def issue(self, number: int) -> IssueInfo:
        return self._call(f"GET issue #{number}", lambda: issue_info(self._repo.get_issue(number)))

    def issues_with_label(self, label: str) -> list[IssueInfo]:
        """Open issues (not PRs) carrying ``label``, oldest first."""

        def get() -> list[IssueInfo]:
            found = self._repo.get_issues(
                state="open", labels=[label], sort="created", direction="asc"
            )
            return [i for i in (issue_info(x) for x in found) if not i.is_pull]

        return self._call(f"GET issues labelled {label}", get)

    def labeller(self, number: int, label: str) -> str | None:
        """Who last added ``label`` to issue ``number``, from the issue's events (``None``: no
        such event). Dispatch inputs never say this: ``github-actions[bot]`` is shared by
        every workflow in the repository, so any of them could name anyone.

        Raises:
            GitHubError: the API failed after retries.
        """

        def get() -> str | None:
            who: str | None = None
            for ev in self._repo.get_issue(number).get_events():
                name = ev.label.name if ev.event == "labeled" and ev.label else None
                if name == label and ev.actor is not None:
                    who = str(ev.actor.login)
            return who

        return self._call(f"GET events of #{number}", get)

    def add_labels(self, number: int, *labels: str) -> None:
        if labels:
            self._call(
                f"POST labels on #{number}",
                lambda: self._repo.get_issue(number).add_to_labels(*labels),
            )

    def label_names(self) -> set[str]:
        """The names of the repository's labels (every page)."""
        return self._call("GET labels", lambda: {label.name for label in self._repo.get_labels()})

    def create_label(self, name: str, color: str, description: str) -> bool:
        """Create the repository label ``name`` (``color``: six hex digits); ``False`` when it
        already exists (GitHub's 422 ``already_exists``: another job made it first).

        Raises:
            GitHubPermissionDenied: the token may not write issues or pull requests.
            GitHubError: any other failure, after retries.
        """
        try:
            self._call(
                f"POST label {name}", lambda: self._repo.create_label(name, color, description)
            )
        except GitHubApiError as exc:
            if exc.status == 422 and "already_exists" in str(exc):
                return False
            raise
        return True

    def remove_label(self, number: int, label: str) -> bool:
        """Remove ``label``; ``False`` when it was not there (not an error)."""
        try:
            self._call(
                f"DELETE label {label} on #{number}",
                lambda: self._repo.get_issue(number).remove_from_labels(label),
            )
        except GitHubNotFound:
            return False
        return True

    def comments(self, number: int) -> list[tuple[int, str, str]]:
        """``(id, author login, body)`` of every comment on issue/PR ``number``, oldest first."""

        def get() -> list[tuple[int, str, str]]:
            return [
                (int(c.id), str(c.user.login) if c.user else "", str(c.body or ""))
                for c in self._repo.get_issue(number).get_comments()
            ]

        return self._call(f"GET comments of #{number}", get)

    def comment_records(self, number: int) -> list[CommentInfo]:
        """Every comment on issue/PR ``number`` with its time, oldest first."""

        def get() -> list[CommentInfo]:
            return [comment_info(c) for c in self._repo.get_issue(number).get_comments()]

        return self._call(f"GET comments of #{number}", get)

    def comments_since(self, since: datetime) -> list[CommentInfo]:
        """Every issue and PR comment of the repository updated at or after ``since`` (one
        paginated listing, by ascending id, as GitHub orders it).

        Raises:
            GitHubError: the API failed after retries.
        """

        def get() -> list[CommentInfo]:
            return [comment_info(c) for c in self._repo.get_issues_comments(since=since)]

        return self._call("GET the repository's comments", get)

    def delete_comment(self, number: int, comment_id: int) -> bool:
        """Delete comment ``comment_id`` (on issue/PR ``number``); ``False`` when it was
        already gone (a retried delete whose reply was lost)."""
        url = f"/repos/{self.repository}/issues/comments/{int(comment_id)}"
        try:
            self._call(
                f"DELETE comment {comment_id} on #{number}", lambda: self._raw("DELETE", url)
            )
        except GitHubNotFound:
            return False
        return True

    def comment(self, number: int, body: str, *, marker: str | None = None) -> int:
        """Post a comment; returns its id. With ``marker`` (a string the body contains), a
        comment already holding it is not posted twice (a retried write whose reply was lost,
        or a re-run of the same step)."""

        def find() -> int | None:
            if marker is None:
                return None
            for cid, _user, text in self.comments(number):
                if marker in text:
                    return cid
            return None

        if marker is not None:
            existing = find()
            if existing is not None:
                return existing
        return self._call(
            f"POST comment on #{number}",
            lambda: int(self._repo.get_issue(number).create_comment(body).id),
            recover=find if marker is not None else None,
        )

    def edit_comment(self, number: int, comment_id: int, body: str) -> None:
        """Replace the body of comment ``comment_id`` on issue/PR ``number`` (idempotent)."""

        def edit() -> None:
            self._repo.get_issue(number).get_comment(comment_id).edit(body)

        self._call(f"PATCH comment {comment_id} on #{number}", edit)

    def set_issue_state(self, number: int, state: str) -> None:
        self._call(f"PATCH issue #{number}", lambda: self._repo.get_issue(number).edit(state=state))
