"""Branch rules, the merge queue, auto-merge and drafts (GitHub's GraphQL mutations)."""

from __future__ import annotations

from typing import Any

from chimera.errors import GitHubNotFound, GitHubPermissionDenied
from chimera.github.client.core import ClientCore
from chimera.github.client.shapes import PullInfo

__all__ = ["MergeMixin"]


class MergeMixin(ClientCore):
    """How a PR gets merged: rulesets, the merge queue, auto-merge, ready-for-review."""

    def branch_rules(self, branch: str) -> list[dict[str, Any]]:
        """The rules that apply to ``branch`` (rulesets), ``[]`` when none or unreadable."""
        try:
            data = self._call(
                f"GET rules of {branch}",
                lambda: self._raw("GET", f"/repos/{self.repository}/rules/branches/{branch}"),
            )
        except (GitHubNotFound, GitHubPermissionDenied):
            return []
        return [r for r in data if isinstance(r, dict)] if isinstance(data, list) else []

    def requires_merge_queue(self, branch: str) -> bool:
        return any(r.get("type") == "merge_queue" for r in self.branch_rules(branch))

    def _mutation(self, name: str, inp: dict[str, Any], output: str) -> dict[str, Any]:
        def send() -> dict[str, Any]:
            _h, data = self._gh.requester.graphql_named_mutation(name, inp, output)
            return dict(data)

        return self._graphql(name, send)

    def enable_auto_merge(self, pull: PullInfo, *, method: str = "SQUASH") -> None:
        """GitHub's auto-merge: GitHub merges once branch protection is satisfied."""
        self._mutation(
            "enablePullRequestAutoMerge",
            {
                "pullRequestId": pull.node_id,
                "mergeMethod": method,
                "expectedHeadOid": pull.head_sha,
            },
            "clientMutationId",
        )

    def enqueue(self, pull: PullInfo) -> None:
        """Add the PR to the base branch's merge queue (the queue merges, not Chimera)."""
        self._mutation(
            "enqueuePullRequest",
            {"pullRequestId": pull.node_id, "expectedHeadOid": pull.head_sha},
            "clientMutationId",
        )

    def mark_ready(self, pull: PullInfo) -> None:
        self._mutation(
            "markPullRequestReadyForReview",
            {"pullRequestId": pull.node_id},
            "clientMutationId pullRequest { isDraft }",
        )

    def in_merge_queue(self, pull: PullInfo) -> bool:
        """Whether the PR sits in a merge queue (Chimera never pushes to a queued branch)."""
        query = (
            "query($id: ID!) { node(id: $id) { ... on PullRequest { mergeQueueEntry { id } } } }"
        )

        def ask() -> bool:
            _h, data = self._gh.requester.graphql_query(query, {"id": pull.node_id})
            node = (data.get("data") or {}).get("node") or {}
            return node.get("mergeQueueEntry") is not None

        return self._graphql("mergeQueueEntry", ask)
