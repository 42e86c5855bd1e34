"""The path and mode table: what a change to a file means before anyone reads its content.

Paths are matched case-insensitively after NFC normalisation (``.GitHub/`` is ``.github/`` on
a case-insensitive checkout). The table, by verdict:

**block** — never pushed:

==================  ==========================================================================
``internal-path``   anything under ``.chimera/`` (run state, caches) or a ``.git`` part
``github-dir``      ``.github`` itself and anything under it (workflows, composite actions,
                    dependabot, CODEOWNERS, settings)
``action-manifest`` a root ``action.yml`` / ``action.yaml``
``ci-config``       other CI systems' configuration (:func:`chimera.governance.rules.is_ci_path`)
``codeowners``      ``CODEOWNERS`` at the root or in ``docs/`` (GitHub reads all three places)
``symlink-escape``  a symlink whose target is absolute, starts with ``~`` or leaves the repo
``symlink-github``  a symlink whose target lies in ``.github/`` or ``.chimera/``
==================  ==========================================================================

**review** — published as a draft with the reason, never auto-merged:

=======================  =====================================================================
``symlink-new``          a new symlink (inside the repository)
``exec-mode``            a file made executable (a new ``100755`` file or ``100644 → 100755``)
``gitattributes``        ``.gitattributes`` / ``.lfsconfig`` (filters and diff drivers run code)
``submodule``            ``.gitmodules`` or a nested repository (gitlink, mode ``160000``)
``build-hook``           ``conftest.py``, ``Makefile``/``*.mk``, ``setup.py``, ``noxfile.py``,
                         ``tox.ini``, ``pytest.ini``, ``sitecustomize.py``, ``*.pth``,
                         ``.pre-commit-config.yaml``, ``package.json`` lifecycle scripts
``dependency-manifest``  requirements/constraints files, lock files, ``package.json``,
                         ``Pipfile``, ``setup.cfg``, ``Cargo.toml``, ``go.mod``, ``Gemfile``...
``chimera-config``       ``chimera.toml``, ``[tool.chimera]`` in ``pyproject.toml`` and
                         ``.chimera.d/`` (connectors, schedules, crews, agent profiles, the
                         held-out requirements: ``.chimera.d/<kind>/*.yaml``)
=======================  =====================================================================

``pyproject.toml`` is compared table by table when both sides are readable (``[tool.chimera]``
→ ``chimera-config``; ``[project]`` dependencies, ``[build-system]``, Poetry/PDM/uv dependency
tables → ``dependency-manifest``); when they are not, any change to it is ``dependency-manifest``.
"""

from __future__ import annotations

import posixpath
import re
import tomllib
from collections.abc import Iterator
from typing import Any

from chimera.github.scan.model import Finding, finding
from chimera.governance.rules import Verdict, is_ci_path

__all__ = [
    "lifecycle_findings",
    "mode_findings",
    "path_findings",
    "pyproject_findings",
    "symlink_findings",
]

B, R = Verdict.BLOCK, Verdict.REVIEW

SYMLINK, GITLINK, EXECUTABLE = "120000", "160000", "100755"
CHIMERA_D = ".chimera.d"
_HOOK_NAMES = frozenset(
    {
        "conftest.py",
        "makefile",
        "gnumakefile",
        "setup.py",
        "noxfile.py",
        "tox.ini",
        "pytest.ini",
        "sitecustomize.py",
        "usercustomize.py",
        ".pre-commit-config.yaml",
        "justfile",
    }
)
_MANIFESTS = frozenset(
    {
        "package.json",
        "pipfile",
        "setup.cfg",
        "environment.yml",
        "environment.yaml",
        "cargo.toml",
        "go.mod",
        "gemfile",
        "composer.json",
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lockb",
        "poetry.lock",
        "pipfile.lock",
        "uv.lock",
        "pdm.lock",
        "cargo.lock",
        "go.sum",
        "composer.lock",
        "gemfile.lock",
        "packages.lock.json",
        "flake.lock",
    }
)
_REQUIREMENTS = re.compile(r"^(requirements|constraints)[\w.-]*\.(txt|in)$|\.gemspec$")
# npm runs these on install/publish; a change to one runs code on a person's machine later.
_LIFECYCLE = re.compile(
    r'"(pre|post)?(install|prepare|publish|prepublishOnly|pack|uninstall|test)"\s*:'
    r'|"scripts"\s*:'
)
_PYPROJECT_DEPS = (
    ("project", "dependencies"),
    ("project", "optional-dependencies"),
    ("build-system",),
    ("dependency-groups",),
    ("tool", "poetry", "dependencies"),
    ("tool", "poetry", "group"),
    ("tool", "pdm", "dev-dependencies"),
    ("tool", "uv"),
    ("tool", "hatch", "build", "hooks"),
    ("tool", "setuptools", "cmdclass"),
)


def _key(path: str) -> str:
    return path.casefold()


def path_findings(path: str, status: str) -> Iterator[Finding]:
    """Table findings for ``path`` (normalised, repository-relative) changed with ``status``."""
    key = _key(path)
    parts = key.split("/")
    name = parts[-1]
    if parts[0] == ".chimera" or ".git" in parts:
        yield finding(B, "internal-path", path, f"{parts[0]}/ is never part of a change")
    if parts[0] == ".github":
        yield finding(
            B,
            "github-dir",
            path,
            ".github/ (workflows, actions, CODEOWNERS) is never changed by Chimera",
        )
    elif key in ("action.yml", "action.yaml"):
        yield finding(
            B, "action-manifest", path, "the root action manifest is never changed by Chimera"
        )
    elif is_ci_path(path):
        yield finding(B, "ci-config", path, "CI configuration is never changed by Chimera")
    if key in ("codeowners", "docs/codeowners"):
        yield finding(B, "codeowners", path, "CODEOWNERS decides who must review")
    if name in (".gitattributes", ".lfsconfig"):
        yield finding(R, "gitattributes", path, "git filters and diff drivers can run programs")
    if name == ".gitmodules":
        yield finding(R, "submodule", path, "submodules pull in another repository")
    if status == "D":
        return  # what follows is about code or settings that would run or apply later
    if name in _HOOK_NAMES or name.endswith((".mk", ".pth")):
        yield finding(R, "build-hook", path, f"{parts[-1]} runs code during builds or tests")
    if name in _MANIFESTS or _REQUIREMENTS.search(name):
        yield finding(R, "dependency-manifest", path, "a dependency manifest changed")
    if key == "chimera.toml" or parts[0] == CHIMERA_D:
        yield finding(R, "chimera-config", path, "Chimera's own settings, connectors or crews")


def mode_findings(path: str, status: str, old_mode: str, new_mode: str) -> Iterator[Finding]:
    """Findings for a gitlink or a file made executable (symlinks: :func:`symlink_findings`)."""
    if new_mode == GITLINK:
        yield finding(R, "submodule", path, "a nested repository (gitlink)")
    if new_mode == EXECUTABLE and (status == "A" or old_mode not in ("", EXECUTABLE)):
        yield finding(R, "exec-mode", path, "the file becomes executable")


def symlink_findings(path: str, target: str, *, new: bool) -> Iterator[Finding]:
    """Findings for the symlink ``path`` pointing at ``target`` (the blob's text)."""
    if not target or target.startswith(("/", "~")) or "\0" in target:
        yield finding(B, "symlink-escape", path, "a symlink to an absolute or home path")
        return
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    head = _key(resolved).split("/")[0]
    if resolved == ".." or resolved.startswith("../"):
        yield finding(B, "symlink-escape", path, "a symlink that leaves the repository")
    elif head in (".github", ".chimera", ".git"):
        yield finding(B, "symlink-github", path, f"a symlink into {head}/")
    elif new:
        yield finding(R, "symlink-new", path, "a new symlink")


def lifecycle_findings(path: str, added: list[tuple[int, str]]) -> Iterator[Finding]:
    """``package.json`` lines that add npm scripts (lifecycle scripts run on install)."""
    if _key(path).rsplit("/", 1)[-1] != "package.json":
        return
    for lineno, text in added:
        if _LIFECYCLE.search(text):
            yield finding(R, "build-hook", path, "npm scripts (install hooks) changed", lineno)
            return


def _table(doc: dict[str, Any], keys: tuple[str, ...]) -> Any:
    node: Any = doc
    for k in keys:
        if not isinstance(node, dict) or k not in node:
            return None
        node = node[k]
    return node


def pyproject_findings(path: str, old: bytes | None, new: bytes | None) -> Iterator[Finding]:
    """Compare the two sides of a ``pyproject.toml`` table by table (see the module doc).

    ``old``/``new`` are the blobs (``None`` for a side that does not exist or is unknown).
    """
    if _key(path).rsplit("/", 1)[-1] != "pyproject.toml":
        return
    try:
        before = tomllib.loads(old.decode("utf-8")) if old is not None else {}
        after = tomllib.loads(new.decode("utf-8")) if new is not None else {}
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        yield finding(R, "dependency-manifest", path, "pyproject.toml does not parse")
        return
    if _table(before, ("tool", "chimera")) != _table(after, ("tool", "chimera")):
        yield finding(R, "chimera-config", path, "[tool.chimera] changed")
    changed = [k for k in _PYPROJECT_DEPS if _table(before, k) != _table(after, k)]
    if changed:
        tables = ", ".join(".".join(k) for k in changed[:3])
        yield finding(R, "dependency-manifest", path, f"pyproject.toml: {tables} changed")


def pyproject_unknown(path: str) -> Iterator[Finding]:
    """A ``pyproject.toml`` change whose sides could not be read (no rescan)."""
    if _key(path).rsplit("/", 1)[-1] == "pyproject.toml":
        yield finding(
            R, "dependency-manifest", path, "pyproject.toml changed (tables not compared)"
        )
