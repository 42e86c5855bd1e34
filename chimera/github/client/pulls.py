"""Pull requests and their reviews: the PR side of
:class:`~chimera.github.client.client.GitHubClient`.

A PR is never opened twice for one head (:meth:`PullsMixin.create_pull`).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from chimera.errors import GitHubApiError
from chimera.github.client.core import ClientCore
from chimera.github.client.shapes import PullInfo, ReviewInfo, pull_info

__all__ = ["PullsMixin"]


class PullsMixin(ClientCore):
    """Read, open and edit pull requests; request and read reviews."""

    def pull(self, number: int) -> PullInfo:
        return self._call(f"GET PR #{number}", lambda: pull_info(self._repo.get_pull(number)))

    def pulls_from(self, branch: str, *, state: str = "open") -> list[PullInfo]:
        """PRs whose head is ``branch`` of this repository."""
        owner = self.repository.split("/")[0]

        def get() -> list[PullInfo]:
            return [
                pull_info(p) for p in self._repo.get_pulls(state=state, head=f"{owner}:{branch}")
            ]

        return self._call(f"GET PRs from {branch}", get)

    def pulls(self, *, state: str = "open") -> list[PullInfo]:
        def get() -> list[PullInfo]:
            return [
                pull_info(p)
                for p in self._repo.get_pulls(state=state, sort="created", direction="desc")
            ]

        return self._call(f"GET PRs ({state})", get)

    def create_pull(
        self, *, title: str, body: str, head: str, base: str, draft: bool
    ) -> tuple[PullInfo, bool]:
        """Open a PR from ``head`` — or return the open one that already exists.

        Returns ``(pull, created)``. Never opens a second PR for the same head: an existing
        open PR is looked up before the first try and after every failed one, and GitHub's 422
        "already exists" answer resolves to it.
        """

        def find() -> PullInfo | None:
            open_ = self.pulls_from(head)
            return open_[0] if open_ else None

        existing = find()
        if existing is not None:
            return existing, False
        try:
            pull = self._call(
                f"POST PR from {head}",
                lambda: pull_info(
                    self._repo.create_pull(
                        base=base, head=head, title=title, body=body, draft=draft
                    )
                ),
                recover=find,
            )
        except GitHubApiError as err:
            if err.status == 422 and "already exists" in str(err):
                again = find()
                if again is not None:
                    return again, False
            raise
        # A PR found by ``recover`` was created by an attempt whose reply was lost: still
        # "created" by this call.
        return pull, True

    def update_pull(
        self,
        number: int,
        *,
        title: str | None = None,
        body: str | None = None,
        state: str | None = None,
    ) -> PullInfo:
        fields: dict[str, Any] = {}
        if title is not None:
            fields["title"] = title
        if body is not None:
            fields["body"] = body
        if state is not None:
            fields["state"] = state

        def patch() -> PullInfo:
            pr = self._repo.get_pull(number)
            pr.edit(**fields)
            return pull_info(self._repo.get_pull(number))

        return self._call(f"PATCH PR #{number}", patch)

    def request_reviewers(self, number: int, logins: Iterable[str]) -> None:
        wanted = [u for u in logins if u]
        if wanted:
            self._call(
                f"POST reviewers on #{number}",
                lambda: self._repo.get_pull(number).create_review_request(reviewers=wanted),
            )

    def reviews(self, number: int) -> list[ReviewInfo]:
        def get() -> list[ReviewInfo]:
            return [
                ReviewInfo(
                    id=int(r.id),
                    user=str(r.user.login) if r.user else "",
                    user_type=str(r.user.type) if r.user else "User",
                    state=str(r.state),
                    commit_id=str(r.commit_id),
                    body=str(r.body or ""),
                )
                for r in self._repo.get_pull(number).get_reviews()
            ]

        return self._call(f"GET reviews of #{number}", get)

    def pulls_created_since(self, since: datetime, head_prefix: str) -> int:
        """How many PRs from ``head_prefix*`` branches were opened after ``since``."""

        def count() -> int:
            n = 0
            for pr in self._repo.get_pulls(state="all", sort="created", direction="desc"):
                created = pr.created_at
                if created is not None and created.tzinfo is None:
                    created = created.replace(tzinfo=UTC)
                if created is not None and created < since:
                    break
                if str(pr.head.ref).startswith(head_prefix):
                    n += 1
            return n

        return self._call("GET recent PRs", count)
