"""Chimera: spec-gated autonomous changes.

A Spec of executable requirements lives beside a project's tests; :func:`check_drift`
evaluates it, the pytest plugin and the ``chimera`` CLI report it, and the agent engine
is accepted only when it passes.

``__version__`` is the release tag's version (setuptools-scm, from git when the package is
built); ``__commit__`` the 40-hex commit it was built from, ``None`` when the tree had
uncommitted changes or no git metadata (a release is always built from its tagged commit).
"""

from __future__ import annotations

try:
    # Written by the build (setuptools-scm's version_file), never committed.
    from chimera._version import dirty as _dirty
    from chimera._version import node as _node
    from chimera._version import version as __version__
except ImportError:  # a source tree that was never built or installed
    __version__ = "0+unknown"
    _node, _dirty = None, True


def _commit(node: str | None, dirty: bool) -> str | None:
    # setuptools-scm spells a git node "g" + the full hash.
    if dirty or not node or not node.startswith("g") or len(node) != 41:
        return None
    return node[1:]


__commit__: str | None = _commit(_node, _dirty)

__all__ = ["__commit__", "__version__"]
