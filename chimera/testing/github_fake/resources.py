"""Every group of REST and GraphQL handlers the fake serves, in routing order."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chimera.testing.github_fake.actions import Actions
from chimera.testing.github_fake.apps import Apps
from chimera.testing.github_fake.checks import Checks
from chimera.testing.github_fake.commits import Commits
from chimera.testing.github_fake.graphql import GraphQL
from chimera.testing.github_fake.issues import Issues
from chimera.testing.github_fake.pulls import Pulls
from chimera.testing.github_fake.repos import Repos
from chimera.testing.github_fake.routing import Resource

if TYPE_CHECKING:
    from chimera.testing.github_fake.server import GitHubFake

# Checks before Commits: ``commits/{ref}`` would otherwise swallow ``commits/{ref}/status``;
# Apps before Repos: its ``GET /app`` answers the App's JWT.
_ORDER: tuple[type[Resource], ...] = (Apps, Repos, Issues, Pulls, Checks, Commits, Actions, GraphQL)


def all_resources(fake: GitHubFake) -> list[Resource]:
    """One instance of each resource, in the order their routes are tried."""
    return [cls(fake) for cls in _ORDER]
