"""Every group of REST and GraphQL handlers the fake serves, in routing order."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chimera.testing.github_fake.actions import Actions
from chimera.testing.github_fake.checks import Checks
from chimera.testing.github_fake.graphql import GraphQL
from chimera.testing.github_fake.issues import Issues
from chimera.testing.github_fake.pulls import Pulls
from chimera.testing.github_fake.repos import Repos
from chimera.testing.github_fake.routing import Resource

if TYPE_CHECKING:
    from chimera.testing.github_fake.server import GitHubFake


def all_resources(fake: GitHubFake) -> list[Resource]:
    return [cls(fake) for cls in (Repos, Issues, Pulls, Checks, Actions, GraphQL)]
