"""The scan table: every class of file that makes CI, a bot or a person's tools run code, why,
and the verdict a change to it gets. One table, used by the scan and rendered for the docs.

A :class:`FileClass` row names a rule id, the files (Markdown), who runs what and when, and
the verdict — ``block`` (never pushed) or ``review`` (published as a draft with the reason,
never auto-merged). How a row matches:

* ``path`` only — any change to a matching path (deletions too when ``on_delete``);
* ``path`` and ``reads`` — a matching file is parsed (``fmt``, see
  :data:`chimera.github.scan.readers.LOADERS`) on both sides of the change and the row fires
  when what it makes run differs (``addopts = "-p x"`` fires, ``addopts = "-q"`` does not);
  when the sides cannot be read (no base commit), a new file is read whole and any other change
  fires when an added line matches ``hint`` (every added line when ``hint`` is ``None``);
* ``path`` and ``hint`` without ``reads`` — an added line of a matching file matches ``hint``;
* no ``path`` — the row is matched by its own code (modes, symlinks, the base commit's
  ``uses:``), which takes the verdict and the reason from here (:func:`row`).

Paths are compared case-folded after NFC normalisation (``.GitHub/`` is ``.github/`` on a
case-insensitive checkout). ``scripts/docs_reference.py`` writes :func:`render_markdown` into
``docs/reference/patch-scan.md``.

The module is over 400 lines because the table is one piece of data: each row keeps its
files, its reason, its verdict and its matcher side by side, so the docs and the scan cannot
disagree; the parsing lives in :mod:`~chimera.github.scan.readers`, the matching in
:mod:`~chimera.github.scan.rules`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chimera.github.scan import readers
from chimera.github.scan.model import Finding, finding
from chimera.governance.rules import CI_PATTERNS, Verdict, is_ci_path

__all__ = [
    "CHIMERA_D",
    "TABLE",
    "FileClass",
    "render_markdown",
    "row",
]

B, R = Verdict.BLOCK, Verdict.REVIEW
CHIMERA_D = ".chimera.d"


@dataclass(frozen=True)
class FileClass:
    """One row of the scan table (see the module docstring for how a row matches).

    Attributes:
        rule: the rule id findings carry (kebab-case; several rows may share one).
        files: which files, as Markdown.
        runs: why a change to them runs code: who runs it, when.
        verdict: ``block`` or ``review``.
        path: selects files by their case-folded path.
        fmt: the format ``reads`` parses (``toml``, ``ini``, ``json``, ``yaml``).
        reads: what the parsed file makes run, one line per thing.
        hint: added lines that may change what runs (see the module docstring).
        on_delete: a deletion fires too.
        shadowed_by: rules that, having fired on the same path, make this row redundant.
    """

    rule: str
    files: str
    runs: str
    verdict: Verdict
    path: Callable[[str], bool] | None = None
    fmt: str = ""
    reads: Callable[[Any], frozenset[str]] | None = None
    hint: re.Pattern[str] | None = None
    on_delete: bool = False
    shadowed_by: tuple[str, ...] = ()

    def hit(self, path: str, why: str = "", line: int = 0) -> Finding:
        """A finding of this row on ``path``; ``why`` (default: :attr:`runs`) is the reason."""
        return finding(self.verdict, self.rule, path, why or self.runs, line)


def _parts(key: str) -> list[str]:
    return key.split("/")


def _name(key: str) -> str:
    return key.rsplit("/", 1)[-1]


def _named(*names: str) -> Callable[[str], bool]:
    wanted = frozenset(names)
    return lambda key: _name(key) in wanted


def _under(*prefixes: str) -> Callable[[str], bool]:
    return lambda key: any(key.startswith(p.rstrip("/") + "/") for p in prefixes)


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
        ".justfile",
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
_CONTAINER = re.compile(r"^(dockerfile|containerfile)([.-][^/]*)?$|\.(dockerfile|containerfile)$")
_RENOVATE = frozenset(
    {
        "renovate.json",
        "renovate.json5",
        ".renovaterc",
        ".renovaterc.json",
        ".renovaterc.json5",
        ".github/renovate.json",
        ".github/renovate.json5",
        ".gitlab/renovate.json",
        ".gitlab/renovate.json5",
    }
)
_GIT_HOOK_MANAGERS = frozenset(
    {
        f"{dot}{name}.{ext}"
        for dot in ("", ".")
        for name in ("lefthook", "lefthook-local")
        for ext in ("yml", "yaml", "json", "toml")
    }
    | {".overcommit.yml", ".simple-git-hooks.json", ".simple-git-hooks.js", ".simple-git-hooks.cjs"}
)
_DEV_ENVIRONMENTS = frozenset({".devcontainer.json", ".gitpod.yml", ".gitpod.yaml"})
_DEPLOY_PREVIEWS = frozenset({"netlify.toml", "vercel.json", "now.json"})
_READTHEDOCS = frozenset(
    {".readthedocs.yaml", ".readthedocs.yml", "readthedocs.yaml", "readthedocs.yml"}
)
_PYTEST_INI = frozenset({"pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg"})
_PYTEST_TOML = frozenset({"pyproject.toml", "pytest.toml", ".pytest.toml"})
_PYTEST_PLUGINS_VAR = re.compile(r"pytest_plugins")
_PLUGIN_HINT = re.compile(r"addopts|(?<![\w-])-p(?=[\s\w:.'\"]|$)")
_ENTRY_POINT_HINT = re.compile(r"pytest11")
_CHIMERA_HINT = re.compile(r"tool\.chimera")


TABLE: tuple[FileClass, ...] = (
    # -- block ------------------------------------------------------------------------------
    FileClass(
        "internal-path",
        "anything under `.chimera/` (run state, caches) or with a `.git` part",
        "Chimera's own state and git's internals are never part of a change",
        B,
        path=lambda key: _parts(key)[0] == ".chimera" or ".git" in _parts(key),
        on_delete=True,
    ),
    FileClass(
        "github-dir",
        "`.github/` and anything under it",
        "workflows, composite actions, Dependabot and CODEOWNERS: GitHub runs or obeys them "
        "with the repository's token and secrets",
        B,
        path=lambda key: _parts(key)[0] == ".github",
        on_delete=True,
    ),
    FileClass(
        "action-manifest",
        "`action.yml` / `action.yaml` at any depth",
        "an action manifest: a workflow's `uses:` runs its steps, script or container with "
        "the workflow's token and secrets",
        B,
        path=_named("action.yml", "action.yaml"),
        on_delete=True,
        shadowed_by=("github-dir",),
    ),
    FileClass(
        "action-path",
        "every path a workflow or action of the **base** commit `uses:` locally "
        "(`uses: ./tools/ci` protects all of `tools/ci/`; `uses: ./` the root manifest), and "
        "every file such an action names to run, wherever it lies (`runs.main`, "
        "`$GITHUB_ACTION_PATH/x.sh`, `run: python scripts/prep.py` in a composite step)",
        "a base workflow runs this code in CI, with the workflow's token and secrets",
        B,
    ),
    FileClass(
        "ci-config",
        "other CI systems' configuration: "
        + ", ".join(f"`{p}`" for p in CI_PATTERNS if not p.startswith(".github")),
        "CI runs it with the project's secrets",
        B,
        path=is_ci_path,
        on_delete=True,
        shadowed_by=("github-dir", "action-manifest"),
    ),
    FileClass(
        "deploy-preview",
        "`netlify.toml`, `vercel.json` (`now.json`) at any depth (a monorepo's site folder)",
        "Netlify and Vercel build every pushed branch and pull request with the project's "
        "build settings and secrets as soon as it is pushed, before any person looks at it",
        B,
        path=lambda key: _name(key) in _DEPLOY_PREVIEWS,
        on_delete=True,
    ),
    FileClass(
        "codeowners",
        "`CODEOWNERS` at the root or in `docs/`",
        "decides who must review (GitHub reads all three places)",
        B,
        path=lambda key: key in ("codeowners", "docs/codeowners"),
        on_delete=True,
    ),
    FileClass(
        "symlink-escape",
        "a symlink whose target is absolute, starts with `~` or leaves the repository",
        "whatever follows it reads or writes outside the checkout",
        B,
    ),
    FileClass(
        "symlink-github",
        "a symlink whose target lies in `.github/`, `.chimera/` or `.git/`",
        "a write through it changes what the blocked folders hold",
        B,
    ),
    # -- review -----------------------------------------------------------------------------
    FileClass("symlink-new", "a new symlink inside the repository", "tools follow it", R),
    FileClass(
        "exec-mode",
        "a file made executable (a new `100755` file or `100644 → 100755`)",
        "the file becomes executable",
        R,
    ),
    FileClass(
        "gitattributes",
        "`.gitattributes`, `.lfsconfig`",
        "git filters and diff drivers can run programs",
        R,
        path=_named(".gitattributes", ".lfsconfig"),
        on_delete=True,
    ),
    FileClass(
        "submodule",
        "`.gitmodules`, a nested repository (gitlink, mode `160000`)",
        "submodules pull in another repository, fetched by CI and by `git clone --recursive`",
        R,
        path=_named(".gitmodules"),
        on_delete=True,
    ),
    FileClass(
        "build-hook",
        "`conftest.py`, `Makefile`/`*.mk`, `setup.py`, `noxfile.py`, `tox.ini`, `pytest.ini`, "
        "`justfile`/`.justfile`, `sitecustomize.py`/`usercustomize.py`, `*.pth`, "
        "`.pre-commit-config.yaml`",
        "runs code during builds or tests (pytest, make, pip, nox, tox, pre-commit, Python "
        "at start-up)",
        R,
        path=lambda key: _name(key) in _HOOK_NAMES or _name(key).endswith((".mk", ".pth")),
    ),
    FileClass(
        "build-hook",
        "`package.json` lines that add npm scripts",
        "npm runs lifecycle scripts on install and publish",
        R,
        path=_named("package.json"),
        hint=_LIFECYCLE,
    ),
    FileClass(
        "pytest-addopts",
        "pytest's `addopts` with `-p NAME` in `pytest.ini`, `tox.ini` `[pytest]`, `setup.cfg` "
        "`[tool:pytest]`",
        "pytest imports and runs the named plugin in every test run (CI's too)",
        R,
        path=lambda key: _name(key) in _PYTEST_INI,
        fmt="ini",
        reads=readers.ini_addopts_plugins,
        hint=_PLUGIN_HINT,
    ),
    FileClass(
        "pytest-addopts",
        "pytest's `addopts` with `-p NAME` in `pyproject.toml` `[tool.pytest.ini_options]` / "
        "`[tool.pytest]`, `pytest.toml`",
        "pytest imports and runs the named plugin in every test run (CI's too)",
        R,
        path=lambda key: _name(key) in _PYTEST_TOML,
        fmt="toml",
        reads=readers.toml_addopts_plugins,
        hint=_PLUGIN_HINT,
    ),
    FileClass(
        "pytest-entry-point",
        "a `pytest11` entry point in `pyproject.toml` (`[project.entry-points.pytest11]`, "
        "Poetry, Flit)",
        "pytest loads every installed package's `pytest11` entry point at start-up; CI "
        "installs the project",
        R,
        path=_named("pyproject.toml"),
        fmt="toml",
        reads=readers.toml_entry_points,
        hint=_ENTRY_POINT_HINT,
    ),
    FileClass(
        "pytest-entry-point",
        "a `pytest11` entry point in `setup.cfg` `[options.entry_points]`",
        "pytest loads every installed package's `pytest11` entry point at start-up; CI "
        "installs the project",
        R,
        path=_named("setup.cfg"),
        fmt="ini",
        reads=readers.ini_entry_points,
        hint=_ENTRY_POINT_HINT,
    ),
    FileClass(
        "pytest-plugins-var",
        "`pytest_plugins = ...` in a Python module (a test module or `conftest.py`)",
        "pytest imports the named plugins when it collects the module",
        R,
        path=lambda key: key.endswith(".py"),
        fmt="text",
        reads=readers.python_plugins,
        hint=_PYTEST_PLUGINS_VAR,
    ),
    FileClass(
        "forge-workflow",
        "`.gitea/workflows/`, `.forgejo/workflows/`",
        "Gitea and Forgejo Actions run them on a mirror or a fork of the repository",
        R,
        path=_under(".gitea/workflows", ".forgejo/workflows"),
    ),
    FileClass(
        "renovate",
        "Renovate's config (`renovate.json`, `renovate.json5`, `.renovaterc`, "
        "`.renovaterc.json(5)`, `.gitlab/renovate.json(5)`) with `postUpgradeTasks`, or "
        "`automerge` with `ignoreTests`",
        "the Renovate bot runs `postUpgradeTasks` commands; `automerge` with `ignoreTests` "
        "merges without passing tests",
        R,
        path=lambda key: key in _RENOVATE,
        fmt="json",
        reads=readers.renovate_tasks,
    ),
    FileClass(
        "pre-commit-hooks",
        "`.pre-commit-hooks.yaml`",
        "defines hooks that every repository using this one through pre-commit runs",
        R,
        path=_named(".pre-commit-hooks.yaml"),
    ),
    FileClass(
        "editor-task",
        '`.vscode/tasks.json` tasks with `runOptions.runOn: "folderOpen"`',
        "VS Code runs the task when a person opens the folder",
        R,
        path=lambda key: key.endswith(".vscode/tasks.json"),
        fmt="json",
        reads=readers.vscode_folder_open_tasks,
    ),
    FileClass(
        "git-hook",
        "anything under `.husky/`",
        "husky makes git run these hooks on a person's commits and pushes",
        R,
        path=lambda key: _parts(key)[0] == ".husky",
    ),
    FileClass(
        "git-hook",
        "Lefthook (`lefthook.yml`, `.lefthook.yml`, `lefthook-local.yml` ...), Overcommit "
        "(`.overcommit.yml`), simple-git-hooks (`.simple-git-hooks.json`)",
        "these managers install and run git hooks on a person's commits and pushes",
        R,
        path=lambda key: _name(key) in _GIT_HOOK_MANAGERS,
    ),
    FileClass(
        "dev-environment",
        "anything under `.devcontainer/`, `.devcontainer.json`, `.gitpod.yml`",
        "a dev container's `initializeCommand` runs on a person's own machine when the folder "
        "is opened, its other commands in the container; Gitpod runs its tasks on open",
        R,
        path=lambda key: _parts(key)[0] == ".devcontainer" or key in _DEV_ENVIRONMENTS,
    ),
    FileClass(
        "container-build",
        "`Dockerfile`, `Containerfile` (also `Dockerfile.*`, `*.dockerfile`)",
        "`RUN` lines run when CI or a person builds the image",
        R,
        path=lambda key: _CONTAINER.search(_name(key)) is not None,
    ),
    FileClass(
        "docs-build",
        "`.readthedocs.yaml` (`readthedocs.yml`, ...) `build.commands` or `build.jobs`",
        "Read the Docs runs these commands on every docs build",
        R,
        path=lambda key: key in _READTHEDOCS,
        fmt="yaml",
        reads=readers.readthedocs_commands,
    ),
    FileClass(
        "dependency-manifest",
        "requirements/constraints files, lock files, `package.json`, `Pipfile`, `setup.cfg`, "
        "`environment.yml`, `Cargo.toml`, `go.mod`, `Gemfile`, `composer.json`, `*.gemspec`",
        "installing the project runs the packages (and their install hooks) they name",
        R,
        path=lambda key: _name(key) in _MANIFESTS or _REQUIREMENTS.search(_name(key)) is not None,
    ),
    FileClass(
        "dependency-manifest",
        "`pyproject.toml` dependency and build tables (`[project]` dependencies, "
        "`[build-system]`, `[dependency-groups]`, Poetry/PDM/uv, Hatch build hooks, "
        "setuptools `cmdclass`)",
        "installing the project runs the packages and build code they name",
        R,
        path=_named("pyproject.toml"),
        fmt="toml",
        reads=readers.dependency_tables,
    ),
    FileClass(
        "chimera-config",
        "`chimera.toml`, `.chimera.d/` (connectors, schedules, crews, agent profiles, held-out "
        "requirements)",
        "Chimera's own settings decide what its runs may do and which servers they start",
        R,
        path=lambda key: key == "chimera.toml" or _parts(key)[0] == CHIMERA_D,
    ),
    FileClass(
        "chimera-config",
        "`[tool.chimera]` in `pyproject.toml`",
        "Chimera's own settings decide what its runs may do",
        R,
        path=_named("pyproject.toml"),
        fmt="toml",
        reads=readers.chimera_table,
        hint=_CHIMERA_HINT,
    ),
    FileClass(
        "config-unparsed",
        "a file of a row above that is read for what it runs and does not parse",
        "what it makes run cannot be told",
        R,
    ),
)
"""The rows, block first; the order is the order of the rendered table."""


def row(rule: str) -> FileClass:
    """The first row of ``rule`` (the rows matched by their own code take verdict and reason
    from it).

    Raises:
        KeyError: no such row.
    """
    for r in TABLE:
        if r.rule == rule:
            return r
    raise KeyError(rule)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown() -> str:
    """:data:`TABLE` as a Markdown table: ``| Files | Why they run code | Verdict | Rule |``,
    one line per row, ending with a newline."""
    lines = ["| Files | Why they run code | Verdict | Rule |", "|---|---|---|---|"]
    for r in TABLE:
        lines.append(
            f"| {_cell(r.files)} | {_cell(r.runs)} | {r.verdict.value} | `{_cell(r.rule)}` |"
        )
    return "\n".join(lines) + "\n"
