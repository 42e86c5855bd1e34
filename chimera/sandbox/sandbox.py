"""The Sandbox: the one runner of every command in an autonomous run.

Tools (``run_command``), verifiers and the Spec's ``command`` checks all run through a
:class:`Sandbox` during an autonomous run, so the rules the agent is told are not the
boundary: the kernel is. See :mod:`chimera.sandbox.bwrap` for the bubblewrap layout.

Modes:

* ``bwrap``: no network, own pid namespace with a fresh ``/proc``, the workspace writable at
  its own path, everything else read-only, a private ``/tmp``, the environment cleared and set
  from the allowlist. The workspace's ``.git`` and ``.chimera`` folders are re-bound read-only
  (git hooks and config, run state and the audit log are not the agent's to edit), and the
  home folder's credential stores (``~/.ssh``, ``~/.aws``, ``~/.git-credentials``, ...; see
  :data:`CREDENTIAL_PATHS`) and the workspace's dotenv files
  (:func:`workspace_secret_files`) are masked.
* ``scrubbed``: the same allowlisted environment, nothing else. This is weaker: a child can
  still read its parent's ``/proc/PID/environ``, reach the network and write anywhere the user
  can. It is reported as weaker wherever the mode is shown.

``mode="auto"`` picks ``bwrap`` when :func:`~chimera.sandbox.bwrap.bwrap_available`, else
``scrubbed``; ``mode="bwrap"`` refuses to fall back.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from chimera.errors import SandboxError
from chimera.runner import DEFAULT_OUTPUT_LIMIT, CommandResult, run_process, to_argv
from chimera.sandbox.bwrap import BwrapProbe, bwrap_argv, probe_bwrap
from chimera.sandbox.env import allowed_names, build_env

SandboxMode = Literal["auto", "bwrap", "scrubbed"]

PROTECTED_DIRS: tuple[str, ...] = (".git", ".chimera")
"""Workspace folders mounted read-only inside bubblewrap."""

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
    ".git-credentials",
    ".netrc",
    ".pypirc",
    ".npmrc",
    ".cargo/credentials.toml",
)
"""Paths under the home folder that bubblewrap masks (empty folders, empty files)."""


def tool_paths_in_tmp(
    path_env: str | None = None, prefixes: Sequence[str] | None = None
) -> tuple[Path, ...]:
    """Interpreter prefixes, import paths and ``PATH`` folders that live under ``/tmp``.

    bubblewrap gives every command a private, empty ``/tmp``; these must stay visible (read
    only) or a Python or tool installed there (a CI checkout's virtualenv) cannot start.
    """
    tmp = Path("/tmp").resolve()
    if prefixes is None:
        # The interpreter, its import path, and where Chimera itself is imported from (an
        # editable install's source folder: pytest inside the sandbox loads its plugin).
        import chimera

        prefixes = [
            sys.prefix,
            sys.base_prefix,
            sys.exec_prefix,
            *sys.path,
            str(Path(chimera.__file__).resolve().parent.parent),
        ]
    if path_env is None:
        path_env = os.environ.get("PATH", "")
    found: list[Path] = []
    for raw in [*prefixes, *path_env.split(os.pathsep)]:
        if not raw:
            continue
        path = Path(raw).resolve()
        if path.is_relative_to(tmp) and path != tmp and path.is_dir():
            found.append(path)
    # Keep only the outermost folders: binding a parent already shows its children.
    outer = [p for p in found if not any(p != q and p.is_relative_to(q) for q in found)]
    return tuple(dict.fromkeys(outer))


def credential_paths(workspace: Path, homes: Sequence[Path] | None = None) -> tuple[Path, ...]:
    """The existing credential stores to mask, skipping any that hold or sit in the workspace."""
    if homes is None:
        homes = [Path.home()]
    found: list[Path] = []
    for home in homes:
        for rel in CREDENTIAL_PATHS:
            path = home / rel
            if path.is_symlink() or not path.exists():
                continue
            if workspace.is_relative_to(path) or path.is_relative_to(workspace):
                continue
            found.append(path)
    return tuple(dict.fromkeys(found))


_EXAMPLE_DOTENV = re.compile(r"\.env\.(example|sample|template|dist|defaults|tmpl|schema|test)$")


def workspace_secret_files(workspace: Path) -> tuple[Path, ...]:
    """The workspace's dotenv files (``.env``, ``.env.local`` ... at its root; examples and
    templates excepted), which bubblewrap masks: a command of the run (a test the agent wrote,
    a spec check) could otherwise copy a key from ``.env`` into a file of the change. The same
    files whose values :class:`chimera.governance.guard.SecretRedactor` redacts."""
    found: list[Path] = []
    for path in sorted(workspace.glob(".env*")):
        if path.is_file() and not _EXAMPLE_DOTENV.search(path.name):
            found.append(path)
    return tuple(found)


class Sandbox:
    """Runs commands confined to ``workspace``; implements :class:`chimera.runner.CommandRunner`.

    Args:
        workspace: the writable root (resolved; must be an existing directory other than /).
        mode: ``auto``, ``bwrap`` or ``scrubbed`` (see the module docstring).
        env_allow: environment variable names added to the default allowlist.
        network: allow network access (bubblewrap only; default off).
        read_only_paths: more paths inside the workspace to mount read-only.
        extra_writable: paths outside the workspace to mount writable (caches).

    Attributes:
        mode: the mode in effect, ``"bwrap"`` or ``"scrubbed"``.
        weaker: ``True`` in scrubbed mode.
        fallback_reason: why ``auto`` fell back to scrubbed (``""`` otherwise).

    Raises:
        SandboxError: ``mode="bwrap"`` without usable bubblewrap; a bad workspace or path; an
            ``env_allow`` entry that is not a variable name.
    """

    def __init__(
        self,
        workspace: Path,
        *,
        mode: SandboxMode = "auto",
        env_allow: Sequence[str] = (),
        network: bool = False,
        read_only_paths: Sequence[Path] = (),
        extra_writable: Sequence[Path] = (),
    ) -> None:
        root = Path(workspace).resolve()
        if not root.is_dir():
            raise SandboxError(f"sandbox workspace {root} is not a directory")
        if root == Path(root.anchor):
            raise SandboxError("sandbox workspace cannot be the filesystem root")
        self.workspace = root
        self.env_allow = tuple(sorted(allowed_names(env_allow)))
        self.network = network
        if mode not in ("auto", "bwrap", "scrubbed"):
            raise SandboxError(f"unknown sandbox mode {mode!r} (auto, bwrap or scrubbed)")
        probe: BwrapProbe | None = None
        self.fallback_reason = ""
        if mode in ("auto", "bwrap"):
            probe = probe_bwrap()
            if not probe.usable:
                if mode == "bwrap":
                    raise SandboxError(f"sandbox mode 'bwrap' requested but {probe.reason}")
                self.fallback_reason = probe.reason
                probe = None
        self._probe = probe
        self._mode: Literal["bwrap", "scrubbed"] = "bwrap" if probe is not None else "scrubbed"
        ro: list[Path] = []
        for path in read_only_paths:
            resolved = (root / path).resolve()
            if not resolved.is_relative_to(root):
                raise SandboxError(f"sandbox read-only path {path} is outside the workspace")
            if not resolved.exists():
                raise SandboxError(f"sandbox read-only path {path} does not exist")
            ro.append(resolved)
        self.read_only_paths = tuple(dict.fromkeys(ro))
        writable: list[Path] = []
        for path in extra_writable:
            resolved = Path(path).resolve()
            if not resolved.is_dir():
                raise SandboxError(f"sandbox writable path {path} is not a directory")
            writable.append(resolved)
        self.extra_writable = tuple(writable)

    @property
    def mode(self) -> str:
        """``"bwrap"`` or ``"scrubbed"``."""
        return self._mode

    @property
    def weaker(self) -> bool:
        """True when only the environment is scrubbed (no kernel isolation)."""
        return self._mode == "scrubbed"

    def describe(self) -> str:
        """One line for the run summary, e.g. ``bwrap: no network, own pid namespace, ...``."""
        if self._probe is not None:
            net = "network allowed" if self.network else "no network"
            proc = "" if self._probe.proc else " (no /proc)"
            return f"bwrap: {net}, own pid namespace{proc}, workspace writable"
        why = self.fallback_reason or "requested"
        return f"scrubbed environment only ({why}): weaker"

    def environment(self, env: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment a command gets: allowlisted names only.

        Values come from ``os.environ``; ``env`` (if given) overrides them, but only for
        allowlisted names — a caller cannot widen the allowlist per command. In bubblewrap
        mode ``TMPDIR`` points at the private ``/tmp``.
        """
        result = build_env(self.env_allow)
        if env is not None:
            result.update(build_env(self.env_allow, source=env))
        if self._probe is not None:
            result["TMPDIR"] = "/tmp"
        return result

    def _read_only_now(self) -> tuple[Path, ...]:
        # Checked per command: .chimera/ may be created after the sandbox.
        protected = [self.workspace / name for name in PROTECTED_DIRS]
        present = [path for path in protected if os.path.lexists(path)]
        return tuple(dict.fromkeys([*present, *self.read_only_paths]))

    def _check_cwd(self, cwd: Path) -> Path:
        resolved = (self.workspace / cwd).resolve()
        if not resolved.is_relative_to(self.workspace):
            raise SandboxError(f"sandbox cwd {cwd} is outside the workspace {self.workspace}")
        if not resolved.is_dir():
            raise SandboxError(f"sandbox cwd {cwd} is not a directory")
        return resolved

    def run(
        self,
        command: str | Sequence[str],
        *,
        cwd: Path,
        timeout: float,
        env: Mapping[str, str] | None = None,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
    ) -> CommandResult:
        """Run ``command`` confined to the workspace (see the class docstring).

        Raises:
            SandboxError: ``cwd`` is outside the workspace or not a directory.
            RunnerError: the command (or bwrap) could not be started.
        """
        where = self._check_cwd(cwd)
        argv, display = to_argv(command)
        environment = self.environment(env)
        if self._probe is not None:
            argv = [
                *bwrap_argv(
                    self._probe,
                    workspace=self.workspace,
                    cwd=where,
                    env=environment,
                    network=self.network,
                    read_only_paths=self._read_only_now(),
                    extra_writable=self.extra_writable,
                    hidden=credential_paths(self.workspace),
                    visible_in_tmp=tool_paths_in_tmp(),
                    masked_in_workspace=workspace_secret_files(self.workspace),
                ),
                *argv,
            ]
        # bwrap itself also starts from the allowlisted environment: its own /proc entry is
        # pid 1's in the sandbox, and it must not carry the parent's secrets either.
        return run_process(
            argv,
            cwd=where,
            timeout=timeout,
            env=environment,
            output_limit=output_limit,
            display=display,
            mode=self._mode,
        )
