"""What a bubblewrap sandbox can see: a list, never the host's ``/`` minus exceptions.

``--ro-bind / /`` shows every unix socket file of the host, and ``connect()`` works on a
read-only mount (on a hosted runner ``/var/run/docker.sock`` is such a socket: a full escape).
So the sandbox's root is bubblewrap's own empty tmpfs, and only these are mounted into it:

* the system directories (:data:`SYSTEM_DIRS`) read-only — merged-``/usr`` symlinks such as
  ``/bin -> usr/bin`` are recreated as symlinks; in ``/etc`` what other users could not read
  on the host (``shadow``, ssh host keys, ``ssl/private``) is masked, so running as root
  shows no more than running as anyone else;
* the interpreter and toolchain prefixes read-only (:func:`toolchain_paths`): the running
  Python's prefixes and site-packages, Chimera's own package folders, and each ``PATH``
  folder — a ``bin`` folder brings its prefix (``lib``, ``share``) when that lies outside
  the home folder; inside it only the ``bin`` folder itself, and a version manager's root
  for its ``shims`` folder (:mod:`chimera.sandbox.shims`);
* fresh, empty, size-capped tmpfs mounts on :data:`FRESH_DIRS` and on the home folder;
* then (in :mod:`chimera.sandbox.bwrap`) the workspace writable, its ``.git`` and
  ``.chimera`` read-only, and its dotenv files masked.

Nothing else: not ``/var``, ``/opt``, ``/srv``, ``/mnt``, ``/home``, ``/sys``, nor the folder
beside the script that launched Chimera.
"""

# os.walk/os.lstat: /etc and workspaces are walked per command; plain strings keep it cheap.
# ruff: noqa: PTH117, PTH118

from __future__ import annotations

import functools
import os
import re
import site
import stat
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from chimera.sandbox.shims import manager_paths

SYSTEM_DIRS: tuple[str, ...] = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
)
"""Read-only system directories (those that exist; symlinks are recreated as symlinks)."""

FRESH_DIRS: tuple[str, ...] = ("/tmp", "/run", "/var/run", "/var/tmp", "/dev/shm")
"""Mounted as fresh, empty tmpfs: the host's sockets and scratch files live here."""

RUNNER_FILE_VARS: tuple[str, ...] = (
    "GITHUB_OUTPUT",
    "GITHUB_ENV",
    "GITHUB_PATH",
    "GITHUB_STATE",
    "GITHUB_STEP_SUMMARY",
    "RUNNER_TEMP",
)
"""Variables naming the GitHub runner's command files: never openable inside the sandbox."""

CREDENTIAL_PATHS: tuple[str, ...] = (
    ".ssh",
    ".aws",
    ".azure",
    ".gnupg",
    ".docker",
    ".kube",
    ".config/gh",
    ".config/gcloud",
    ".config/hub",
    ".config/git/credentials",
    ".git-credentials",
    ".netrc",
    ".pypirc",
    ".npmrc",
    ".vault-token",
    ".huggingface/token",
    ".cache/huggingface/token",
    ".cargo/credentials",
    ".cargo/credentials.toml",
)
"""Credential stores under a home folder. The home folder is an empty tmpfs in the sandbox, so
these matter only where a toolchain folder of the home is bound, and in the scrubbed mode's
description of what stays readable."""

EXAMPLE_DOTENV_SUFFIXES = (
    "example",
    "sample",
    "template",
    "dist",
    "defaults",
    "tmpl",
    "schema",
    "test",
)
"""``.env.<suffix>`` names committed as templates without values: the one list the sandbox
masks by, the tool rules block reads by, the redactor reads and the PR scan blocks by."""
_EXAMPLE_DOTENV = re.compile(r"\.env\.(" + "|".join(EXAMPLE_DOTENV_SUFFIXES) + ")")
_PRUNE = frozenset({".git", ".chimera"})


@dataclass(frozen=True, slots=True)
class Layout:
    """The host paths a sandbox mounts besides the workspace (all absolute, resolved).

    Attributes:
        symlinks: ``(target, path)`` pairs recreated as symlinks (``("usr/bin", "/bin")``).
        read_only: folders bound read-only at their own path, outermost first.
        masked_files: files bound to an unopenable node (a device on a ``nodev`` mount).
        masked_dirs: folders replaced by an empty, mode-000 tmpfs.
        fresh: folders that get a fresh, empty tmpfs (the home folder included).
    """

    symlinks: tuple[tuple[str, str], ...]
    read_only: tuple[Path, ...]
    masked_files: tuple[Path, ...]
    masked_dirs: tuple[Path, ...]
    fresh: tuple[Path, ...]


def _under(path: Path, roots: Iterable[Path]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def system_dirs() -> tuple[tuple[tuple[str, str], ...], tuple[Path, ...]]:
    """``(symlinks, folders)`` of :data:`SYSTEM_DIRS` as they exist on this machine."""
    links: list[tuple[str, str]] = []
    dirs: list[Path] = []
    for name in SYSTEM_DIRS:
        path = Path(name)
        if path.is_symlink():
            links.append((str(path.readlink()), name))
        elif path.is_dir():
            dirs.append(path)
    return tuple(links), tuple(dirs)


@functools.cache
def unreadable_in_etc(etc: str = "/etc") -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """``(files, folders)`` under ``etc`` that other users cannot read (cached per process).

    A folder without the other-read bit is masked whole and not descended into.
    """
    files: list[Path] = []
    dirs: list[Path] = []
    for top, subdirs, names in os.walk(etc):
        keep = []
        for name in subdirs:
            path = os.path.join(top, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode) and not info.st_mode & stat.S_IROTH:
                dirs.append(Path(path))
            else:
                keep.append(name)
        subdirs[:] = keep
        for name in names:
            path = os.path.join(top, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and not info.st_mode & stat.S_IROTH:
                files.append(Path(path))
    return tuple(files), tuple(dirs)


def toolchain_paths(
    *,
    workspace: Path,
    home: Path | None,
    path_env: str | None = None,
    prefixes: Sequence[str] | None = None,
) -> tuple[Path, ...]:
    """Folders of the interpreter and tools a command needs, bound read-only.

    ``prefixes`` defaults to the running Python's prefixes and site-packages plus the folders
    of the ``chimera`` and ``pytest_chimera`` packages (an editable install points into a
    checkout: only the package folders are shown, not the checkout's other files).
    ``sys.path`` as such is not used: its first entry is the folder of whatever script
    launched Chimera. Folders under the system directories, the filesystem root, the home
    folder itself and the workspace's ancestors are never bound.
    """
    if prefixes is None:
        import chimera
        import pytest_chimera

        prefixes = [
            sys.prefix,
            sys.base_prefix,
            sys.exec_prefix,
            sys.base_exec_prefix,
            *site.getsitepackages(),
            site.getusersitepackages(),
            str(Path(chimera.__file__).parent),
            str(Path(pytest_chimera.__file__).parent),
        ]
    if path_env is None:
        path_env = os.environ.get("PATH", "")
    _links, system = system_dirs()
    system_all = [Path(p) for p in SYSTEM_DIRS]
    forbidden = {Path("/"), *workspace.parents}
    if home is not None:
        forbidden |= {home, *home.parents}
    candidates: list[Path] = []
    for raw in prefixes:
        candidates.append(Path(raw))
    for raw in path_env.split(os.pathsep):
        if not raw or not os.path.isabs(raw):
            continue
        folder = Path(raw)
        candidates.append(folder)
        parent = folder.resolve().parent
        in_home = home is not None and _under(parent, [home])
        if folder.name == "bin" and not in_home:
            candidates.append(parent)
    found: list[Path] = []
    for path in candidates:
        try:
            resolved = path.resolve()
        except (OSError, RuntimeError):
            continue
        if not resolved.is_dir() or resolved in forbidden:
            continue
        if _under(resolved, system_all) or _under(resolved, system):
            continue
        found.append(resolved)
    # A version manager's shims need the manager and its versions (chimera.sandbox.shims).
    found.extend(manager_paths(home=home, workspace=workspace, path_env=path_env))
    outer = [p for p in found if not any(p != q and p.is_relative_to(q) for q in found)]
    return tuple(sorted(dict.fromkeys(outer)))


def credential_paths(visible: Sequence[Path], homes: Sequence[Path]) -> tuple[Path, ...]:
    """The existing credential stores of ``homes`` that lie under a ``visible`` folder."""
    found: list[Path] = []
    for home in homes:
        for rel in CREDENTIAL_PATHS:
            path = home / rel
            if os.path.lexists(path) and _under(path, visible):
                found.append(path)
    return tuple(dict.fromkeys(found))


def runner_files(environ: Mapping[str, str]) -> tuple[Path, ...]:
    """The existing paths named by :data:`RUNNER_FILE_VARS` in ``environ`` (resolved)."""
    found: list[Path] = []
    for name in RUNNER_FILE_VARS:
        raw = environ.get(name)
        if raw and os.path.isabs(raw) and os.path.lexists(raw):
            found.append(Path(raw).resolve())
    return tuple(dict.fromkeys(found))


def is_example_dotenv(name: str) -> bool:
    """True when the basename ``name`` is a dotenv template (``.env.example``, ``.env.sample``,
    one of :data:`EXAMPLE_DOTENV_SUFFIXES`; exact and case-sensitive)."""
    return _EXAMPLE_DOTENV.fullmatch(name) is not None


def is_dotenv_name(name: str) -> bool:
    """True when the basename ``name`` is dotenv-named (``.env``, ``.env.local``, ``.envrc``,
    templates included): the one definition the sandbox, the tool rules, the redactor and the
    PR scan share."""
    return name.startswith(".env")


def is_secret_dotenv(name: str) -> bool:
    """True for ``.env``, ``.env.local``, ``.envrc``...; examples and templates excepted."""
    return is_dotenv_name(name) and not is_example_dotenv(name)
