"""The Sandbox: the one runner of every command in an autonomous run.

Tools (``run_command``), verifiers and the Spec's ``command`` checks all run through a
:class:`Sandbox` during an autonomous run, so the rules the agent is told are not the
boundary: the kernel is. See :mod:`chimera.sandbox.layout` for what is visible and
:mod:`chimera.sandbox.bwrap` for the command line.

Modes:

* ``bwrap`` (strict): no network, own pid namespace with a fresh ``/proc``, an allowlisted
  filesystem (system and toolchain folders read-only, fresh tmpfs scratch folders and home,
  the workspace writable with its ``.git`` and ``.chimera`` read-only, its secret files
  (:mod:`chimera.sandbox.secret_files`) masked at every depth and its ``hidden`` paths —
  held-out requirements — masked whole, or with the write cap not in its tree at all), the
  environment built from an allowlist, and resource limits (:mod:`chimera.sandbox.limits`;
  the workspace's total write cap, :mod:`chimera.sandbox.capped`). Bubblewrap's options reach
  it through a file descriptor (:mod:`chimera.sandbox.launch`), never its command line.
  ``auto`` is the same mode: when bubblewrap cannot start the Sandbox **fails closed** with a
  one-line :class:`~chimera.errors.SandboxError`.
* ``scrubbed``: the same allowlisted environment and resource limits, nothing else — the loud
  opt-out. A child can still read its parent's ``/proc/PID/environ``, reach the network and
  write anywhere the user can. It is reported as weaker wherever the mode is shown.

The module is past 400 lines because the Sandbox is one class: its modes, its per-command
mounts and the result of a capped command belong together; what stands alone has its own
module (:mod:`.layout`, :mod:`.bwrap`, :mod:`.launch`, :mod:`.capped`, :mod:`.secret_files`,
:mod:`.limits`).

Every result's output has workflow commands neutralised
(:func:`chimera.sandbox.workflow_commands.neutralize`): sandboxed text never reaches a CI
step's stdout in a form the runner would obey.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from chimera.errors import RunnerError, SandboxError
from chimera.runner import (
    DEFAULT_OUTPUT_LIMIT,
    CommandResult,
    CommandRunner,
    run_process,
    to_argv,
)
from chimera.sandbox.bwrap import BwrapProbe, Mounts, bwrap_options, probe_bwrap
from chimera.sandbox.checkmemo import CheckMemo
from chimera.sandbox.deps import deps_environment
from chimera.sandbox.env import allowed_names, build_env
from chimera.sandbox.info import SandboxInfo
from chimera.sandbox.launch import Launch, WriteCap, new_launch, write_cap_support
from chimera.sandbox.layout import (
    Layout,
    credential_paths,
    runner_files,
    system_dirs,
    toolchain_paths,
    unreadable_in_etc,
)
from chimera.sandbox.limits import MIB, SandboxLimits, size_text
from chimera.sandbox.secret_files import secret_files
from chimera.sandbox.shims import missing_program_note
from chimera.sandbox.workflow_commands import neutralize

SandboxMode = Literal["auto", "bwrap", "scrubbed"]

PROTECTED_DIRS: tuple[str, ...] = (".git", ".chimera")
"""Workspace folders mounted read-only inside bubblewrap."""

OPT_OUT = 'set [tool.chimera.sandbox] mode = "scrubbed" to run without isolation (weaker)'


def workspace_secret_files(workspace: Path) -> tuple[Path, ...]:
    """The workspace's secret files at every depth (:mod:`chimera.sandbox.secret_files`:
    dotenv files, ``*.env``, keys, key stores, credential files; examples and templates
    excepted), which bubblewrap masks and :class:`chimera.governance.redactor.SecretRedactor`
    reads values from."""
    return secret_files(workspace)


def _home() -> Path | None:
    raw = os.environ.get("HOME")
    if not raw or not Path(raw).is_absolute():
        return None
    home = Path(raw).resolve()
    return None if home == Path("/") else home


class Sandbox:
    """Runs commands confined to ``workspace``; implements :class:`chimera.runner.CommandRunner`.

    Args:
        workspace: the writable root (resolved; must be an existing directory other than /).
        mode: ``auto`` or ``bwrap`` (strict; fail closed) or ``scrubbed`` (the opt-out).
        env_allow: environment variable names added to the default allowlist.
        network: allow network access (bubblewrap only; default off).
        read_only_paths: more paths inside the workspace to mount read-only.
        extra_writable: paths outside the workspace to mount writable (caches).
        visible: more folders outside the workspace shown read-only (a project's dependency
            folder or toolchain that the automatic list misses).
        toolchain: the interpreter and tool folders shown read-only; ``None`` (default) finds
            them (:func:`chimera.sandbox.layout.toolchain_paths`), ``()`` shows none.
        limits: resource limits (default :class:`SandboxLimits` ``()``).
        hidden: paths (absolute, or relative to the workspace) no command may see at all:
            masked whole where they exist when a command starts, and left out of the
            disposable copies of ``command`` checks (held-out requirements). They need the
            strict mode: a scrubbed command can read anything its user can.
        deps_dir: the project's dependency folder, filled by the maintainer's set-up step
            before any patch (:mod:`chimera.sandbox.deps`): shown read-only, its ``bin``
            folders first on ``PATH``.
        unmask: gitignore-style patterns (from the workspace) of files that match a secret
            file pattern but hold no secret (test fixtures): not masked.

    Attributes:
        mode: the mode in effect, ``"bwrap"`` or ``"scrubbed"``.
        write_cap_unavailable: why the limits' total write cap is not enforced on this
            machine (``""``: it is, or none was asked for); :meth:`describe` says so.
        weaker: ``True`` in scrubbed mode.
        fallback_reason: always ``""`` (kept for callers: the strict mode never falls back).

    Raises:
        SandboxError: strict mode without usable bubblewrap (one line, with the reason and the
            opt-out); a bad workspace or path; an ``env_allow`` entry that is not a
            variable name or is a CI runner variable; ``hidden`` paths in scrubbed mode.
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
        visible: Sequence[Path] = (),
        toolchain: Sequence[Path] | None = None,
        limits: SandboxLimits | None = None,
        hidden: Sequence[Path] = (),
        deps_dir: Path | None = None,
        unmask: Sequence[str] = (),
    ) -> None:
        root = Path(workspace).resolve()
        if not root.is_dir():
            raise SandboxError(f"sandbox workspace {root} is not a directory")
        if root == Path(root.anchor):
            raise SandboxError("sandbox workspace cannot be the filesystem root")
        self.workspace = root
        self.env_allow = tuple(sorted(allowed_names(env_allow)))
        self.network = network
        self.limits = limits or SandboxLimits()
        if mode not in ("auto", "bwrap", "scrubbed"):
            raise SandboxError(f"unknown sandbox mode {mode!r} (auto, bwrap or scrubbed)")
        self.fallback_reason = ""
        self.write_cap_unavailable = ""
        self._probe: BwrapProbe | None = None
        self._prlimit = shutil.which("prlimit")
        if mode in ("auto", "bwrap"):
            probe = probe_bwrap()
            if not probe.usable:
                raise SandboxError(f"the strict sandbox cannot start: {probe.reason}; {OPT_OUT}")
            self._probe = probe
            if self.limits.write_cap_bytes is not None:
                assert probe.path is not None
                # A kernel without overlays in user namespaces, or without user xattrs on
                # tmpfs (Linux < 6.6), cannot hold the cap: the run goes on without it and
                # says so wherever the sandbox is described (the per-file limit still holds).
                self.write_cap_unavailable = write_cap_support(probe.path, probe.proc)
        self.unmask = tuple(unmask)
        if self._probe is None:
            self.write_cap_unavailable = "the scrubbed mode has no namespaces to hold it"
        self._mode: Literal["bwrap", "scrubbed"] = "bwrap" if self._probe else "scrubbed"
        self.hidden = tuple(dict.fromkeys((root / p).resolve() for p in hidden))
        if self.hidden and self._probe is None:
            raise SandboxError(
                "held-out requirements need the strict sandbox (bubblewrap): in scrubbed mode "
                'a command can read them; remove [tool.chimera.heldout] or use mode = "auto"'
            )
        ro: list[Path] = []
        for path in read_only_paths:
            resolved = (root / path).resolve()
            if not resolved.is_relative_to(root):
                raise SandboxError(f"sandbox read-only path {path} is outside the workspace")
            if not resolved.exists():
                raise SandboxError(f"sandbox read-only path {path} does not exist")
            ro.append(resolved)
        self.read_only_paths = tuple(dict.fromkeys(ro))
        self.extra_writable = self._folders(extra_writable, "writable")
        self.deps_dir = None if deps_dir is None else Path(deps_dir).resolve()
        if self.deps_dir is not None and not self.deps_dir.is_dir():
            raise SandboxError(
                f"sandbox deps_dir {deps_dir} is not a directory (run the set-up script that "
                "fills it first, or unset deps_dir)"
            )
        if self.deps_dir is not None and self.deps_dir.is_relative_to(root):
            raise SandboxError(
                f"sandbox deps_dir {deps_dir} is inside the workspace (give a folder outside it)"
            )
        shown = [*visible, *([self.deps_dir] if self.deps_dir else [])]
        self.visible = self._folders(shown, "visible")
        self.toolchain = None if toolchain is None else self._folders(toolchain, "toolchain")
        self._carried: tuple[tuple[Path, Path], ...] = ()
        self.check_memo = CheckMemo()
        """Results of this run's ``command`` checks by what they saw (shared by clones)."""

    @staticmethod
    def _folders(paths: Sequence[Path], what: str) -> tuple[Path, ...]:
        found: list[Path] = []
        for path in paths:
            resolved = Path(path).resolve()
            if not resolved.is_dir():
                raise SandboxError(f"sandbox {what} path {path} is not a directory")
            found.append(resolved)
        return tuple(found)

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
            return (
                f"bwrap: {net}, own pid namespace{proc}, allowlisted filesystem, "
                f"workspace writable; limits: {self.limits.describe()}{self._cap_note()}"
            )
        return (
            "scrubbed environment only (requested): weaker; limits: "
            f"{self.limits.describe()}{self._cap_note()}"
        )

    def _cap_note(self) -> str:
        if self.limits.write_cap_bytes is None or not self.write_cap_unavailable:
            return ""
        return f" (the total write cap is not enforced here: {self.write_cap_unavailable})"

    def info(self) -> SandboxInfo:
        """The mode as data, for the PR body, the job summary and the outcome comment."""
        probe = self._probe
        return SandboxInfo(
            mode=self._mode,
            strict=probe is not None,
            network=self.network,
            description=self.describe(),
            bubblewrap=probe.version if probe else "",
            fresh_proc=bool(probe and probe.proc),
            process_limit_enforced=self.limits.process_limit_enforced,
            limits=dataclasses.asdict(self.limits),
        )

    def for_checks(self, root: Path) -> CommandRunner:
        """The runner of the Spec's ``command`` checks over ``root``: each command in a
        disposable copy of the tree (see :class:`chimera.sandbox.disposable.DisposableRunner`)."""
        from chimera.sandbox.disposable import DisposableRunner

        live = Path(root).resolve()
        carry = [p for p in self.read_only_paths if p.is_relative_to(live)]
        hidden = [p for p in self.hidden if p.is_relative_to(live)]
        return DisposableRunner(self, live, carry=carry, exclude=hidden, memo=self.check_memo)

    def clone(self, workspace: Path, carried: Sequence[tuple[Path, Path]] = ()) -> Sandbox:
        """This sandbox's settings over another workspace (a disposable copy); ``carried``
        are ``(live folder, folder in the copy)`` pairs shown read-only."""
        twin = Sandbox.__new__(Sandbox)
        twin.__dict__.update(self.__dict__)
        twin.workspace = Path(workspace).resolve()
        twin.read_only_paths = ()
        # Hidden paths are left out of the copy; outside it the live tree is not mounted.
        twin.hidden = ()
        twin._carried = tuple(carried)
        return twin

    def environment(self, env: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment a command gets: allowlisted names only.

        Values come from ``os.environ``; ``env`` (if given) overrides them, but only for
        allowlisted names — a caller cannot widen the allowlist per command. In bubblewrap
        mode ``TMPDIR`` points at the private ``/tmp``. ``GITHUB_*``, ``ACTIONS_*`` and
        ``RUNNER_*`` never pass.
        """
        result = build_env(self.env_allow)
        if env is not None:
            result.update(build_env(self.env_allow, source=env))
        if self.deps_dir is not None:
            result.update(deps_environment(self.deps_dir, result.get("PATH", os.defpath)))
        if self._probe is not None:
            result["TMPDIR"] = "/tmp"
        return result

    def _layout(self) -> Layout:
        home = _home()
        links, system = system_dirs()
        tools = self.toolchain
        if tools is None:
            tools = toolchain_paths(workspace=self.workspace, home=home)
        read_only = tuple(dict.fromkeys([*system, *tools, *self.visible]))
        etc_files, etc_dirs = unreadable_in_etc()
        homes = [home] if home is not None else []
        creds = credential_paths([*read_only, self.workspace], homes)
        return Layout(
            symlinks=links,
            read_only=read_only,
            masked_files=(*etc_files, *(p for p in creds if not p.is_dir())),
            masked_dirs=(*etc_dirs, *(p for p in creds if p.is_dir())),
            fresh=(home,) if home is not None and not home.is_relative_to(self.workspace) else (),
        )

    def _mounts(self, layout: Layout, erased: Sequence[Path] = ()) -> Mounts:
        """The per-command mounts; ``erased``: hidden paths the write cap's overlay removes
        from the command's tree (no mask needed, none shown)."""
        # Checked per command: .chimera/ may be created after the sandbox, .env files too.
        protected = [self.workspace / name for name in PROTECTED_DIRS]
        present = [path for path in protected if os.path.lexists(path)]
        visible = [self.workspace, *self.extra_writable, *(d for _s, d in self._carried)]
        runner = [p for p in runner_files(os.environ) if any(p.is_relative_to(v) for v in visible)]
        # A hidden path no mount shows needs no mask: masking it would make bubblewrap create
        # its folders, and so show its name, in the sandbox.
        shown = [*visible, *layout.read_only]
        hidden = [
            p
            for p in self.hidden
            if os.path.lexists(p) and p not in erased and any(p.is_relative_to(v) for v in shown)
        ]
        files = [p for p in (*runner, *hidden) if not p.is_dir()]
        return Mounts(
            workspace=self.workspace,
            read_only=tuple(dict.fromkeys([*present, *self.read_only_paths])),
            extra_writable=self.extra_writable,
            masked=(*secret_files(self.workspace, self.unmask), *files),
            masked_dirs=tuple(p for p in (*runner, *hidden) if p.is_dir()),
            carried=self._carried,
        )

    def _write_cap(self) -> WriteCap | None:
        """This command's write cap: held-out paths in the workspace that no read-only bind
        covers are erased from its tree instead of masked."""
        if self.limits.write_cap_bytes is None or self._probe is None:
            return None
        if self.write_cap_unavailable:
            return None
        covered = [self.workspace / name for name in PROTECTED_DIRS] + list(self.read_only_paths)
        erase = [
            p.relative_to(self.workspace).as_posix()
            for p in self.hidden
            if p.is_relative_to(self.workspace)
            and p != self.workspace
            and not any(p.is_relative_to(c) for c in covered)
        ]
        return WriteCap(self.limits.write_cap_bytes, hide=tuple(erase), skip=PROTECTED_DIRS)

    def _check_cwd(self, cwd: Path) -> Path:
        resolved = (self.workspace / cwd).resolve()
        if not resolved.is_relative_to(self.workspace):
            raise SandboxError(f"sandbox cwd {cwd} is outside the workspace {self.workspace}")
        if not resolved.is_dir():
            raise SandboxError(f"sandbox cwd {cwd} is not a directory")
        return resolved

    def command_line(
        self, command: str | Sequence[str], *, cwd: Path, env: Mapping[str, str] | None = None
    ) -> tuple[list[str], dict[str, str]]:
        """``(argv, environment)`` that run ``command`` in this sandbox: ``prlimit ... sh -c
        'exec bwrap --args 3 ...' -- command`` (:mod:`chimera.sandbox.launch`; with the write
        cap, through its supervisor), scrubbed: ``prlimit ... -- command``. The launch's
        private folder is left for the caller (``chimera-launch-*`` in the temporary folder);
        :meth:`run` removes it.

        Raises:
            SandboxError: ``cwd`` is outside the workspace or not a directory.
            RunnerError: ``command`` is empty; in scrubbed mode, its program does not exist.
        """
        _launch, argv, environment = self._prepare(command, cwd=cwd, env=env)
        return argv, environment

    def _prepare(
        self, command: str | Sequence[str], *, cwd: Path, env: Mapping[str, str] | None
    ) -> tuple[Launch | None, list[str], dict[str, str]]:
        where = self._check_cwd(cwd)
        argv, _display = to_argv(command)
        environment = self.environment(env)
        limits = self.limits.prlimit_args()
        if self._probe is not None:
            assert self._probe.path is not None and self._probe.prlimit is not None
            cap = self._write_cap()
            launch = new_launch(cap, outside=self.workspace)
            layout = self._layout()
            erased = [self.workspace / rel for rel in cap.hide] if cap else []
            options = bwrap_options(
                self._probe,
                layout=layout,
                mounts=self._mounts(layout, erased),
                cwd=where,
                env=environment,
                network=self.network,
                tmpfs_bytes=self.limits.tmpfs_bytes,
                workspace_source=launch.merged if cap else None,
            )
            full = launch.finish(
                self._probe.path,
                options,
                argv,
                limits=[self._probe.prlimit, *limits],
                workspace=self.workspace,
            )
            return launch, full, environment
        if self._prlimit is not None:
            # prlimit would report a missing program as an exit status; callers expect the
            # RunnerError a direct start raises.
            program = argv[0]
            if "/" in program:
                found: str | None = str(where / program)
            else:
                found = shutil.which(program, path=environment.get("PATH", os.defpath))
            if found is None or not os.access(found, os.X_OK):
                raise RunnerError(f"cannot run {argv[0]!r}: no such executable")
            return None, [self._prlimit, *limits, "--", *argv], environment
        return None, argv, environment

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

        ``timeout`` is capped to the limits' ``wall_s``; on expiry the sandbox's whole pid
        namespace is killed. The output has workflow commands neutralised.

        Raises:
            SandboxError: ``cwd`` is outside the workspace or not a directory.
            RunnerError: the command (or bwrap) could not be started.
        """
        launch, argv, environment = self._prepare(command, cwd=cwd, env=env)
        try:
            _argv, display = to_argv(command)
            where = self._check_cwd(cwd)
            # bwrap itself also starts from the allowlisted environment: its own /proc entry
            # is pid 1's in the sandbox, and it must not carry the parent's secrets either.
            result = run_process(
                argv,
                cwd=where,
                timeout=min(timeout, self.limits.wall_s),
                env=environment,
                output_limit=output_limit,
                display=display,
                mode=self._mode,
            )
            if launch is not None and launch.cap is not None:
                result = _capped(result, launch.cap.limit, launch.outcome())
        finally:
            if launch is not None:
                launch.close()
        output = result.output
        if self._probe is not None and result.exit_code == 127:
            layout = self._layout()
            note = missing_program_note(
                command,
                output,
                home=_home(),
                shown=(*layout.read_only, self.workspace, *self.extra_writable),
            )
            if note:
                output = output.rstrip("\n") + "\n" + note + "\n"
        return dataclasses.replace(result, output=neutralize(output))


def _capped(result: CommandResult, limit: int, status: dict[str, object] | None) -> CommandResult:
    """``result`` as the write cap's supervisor left it: a command past the cap, or whose
    writes could not be merged, fails with one line saying so (its writes were reverted)."""
    outcome = status.get("outcome") if status else None
    if outcome == "merged":
        return result
    if result.timed_out and status is None:
        line = "the command was stopped at its timeout: its workspace writes were reverted"
    elif outcome == "exceeded":
        used = status.get("used") if status else None
        wrote = f"{int(used) / MIB:.1f} MiB" if isinstance(used, int) else "more"
        line = (
            f"the command wrote {wrote} into the workspace, past its write cap of "
            f"{size_text(limit)} ([tool.chimera.sandbox] write_cap_mib): it failed and its "
            "writes were reverted"
        )
    elif outcome == "partial":
        reason = str(status.get("reason") or "") if status else ""
        line = (
            f"the workspace write cap's merge stopped part-way ({reason}): some of the "
            "command's writes are in the workspace, the rest were not applied"
        )
    elif status is None:
        # No status at all: the supervisor died without writing one, merging or not.
        line = "the workspace write cap left no status: the command's writes may be partial"
    else:
        reason = str(status.get("reason") or "")
        line = f"the workspace write cap failed ({reason or 'no reason'}): the writes were reverted"
    code: int | None = result.exit_code if result.exit_code not in (None, 0) else 1
    if result.timed_out:
        code = None
    output = result.output.rstrip("\n")
    return dataclasses.replace(
        result, exit_code=code, output=f"{output}\nchimera sandbox: {line}\n".lstrip("\n")
    )
