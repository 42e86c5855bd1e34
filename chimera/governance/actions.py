"""The Action model the TrustKernel evaluates.

An :class:`Action` describes one thing an agent is about to do — run a shell command, read,
write, edit or delete a file, reach the network, install a package, drive git, or call some
other tool — together with the workspace root it is confined to. The kernel's rules
(:mod:`chimera.governance.rules`) read an Action through its parsed view, never by executing
anything.

Everything here is **lexical**: commands are split with :mod:`shlex`, paths are normalised as
strings (``~`` and ``$HOME`` expand to the home directory, ``..`` is folded against the
workspace or the command's working directory), and no file system or process is consulted.
That makes the analysis deterministic and cheap, and also bypassable by anything a lexer cannot
see (a script written now and run later, an alias, a symlink). It is a signal layer, **never a
boundary**: the sandbox (no network, its own process namespace, an allowlisted environment) is
the boundary.

Shapes:

* :meth:`Action.from_tool_call` builds an Action from a tool name and its arguments (a mapping
  or the model's raw JSON text); the native tools' names map onto kinds (``read_file`` →
  ``read``, ``run_command`` → ``command``, ...), unknown tools become ``tool``.
* :attr:`Action.parsed` is the command's lexical parse by the shell parser
  (:mod:`chimera.governance.shell`, whose names are re-exported here: :func:`parse_command`,
  :class:`SimpleCommand`, :func:`normalize_path` ...).
"""

from __future__ import annotations

import json
import os
import posixpath
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Any

from chimera.governance.redactor import cut_redacted
from chimera.governance.shell import (
    INTERPRETERS,
    PLACEHOLDER_RE,
    SHELLS,
    ParsedCommand,
    Redirect,
    SimpleCommand,
    is_within,
    normalize_path,
    parse_command,
    program_name,
)


class ActionKind(StrEnum):
    """What an action does, at the granularity rules and the audit log care about."""

    COMMAND = "command"
    READ = "read"
    WRITE = "write"
    EDIT = "edit"
    DELETE = "delete"
    NETWORK = "network"
    INSTALL = "install"
    GIT = "git"
    TOOL = "tool"


# Native tool names (the agent issue's tools, plus the usual names of other agent stacks) and
# the kind each one is. Anything else is a generic ``tool``.
TOOL_KINDS: Mapping[str, ActionKind] = {
    "read_file": ActionKind.READ,
    "list_dir": ActionKind.READ,
    "list_files": ActionKind.READ,
    "search": ActionKind.READ,
    "grep": ActionKind.READ,
    "write_file": ActionKind.WRITE,
    "create_file": ActionKind.WRITE,
    "edit_file": ActionKind.EDIT,
    "apply_patch": ActionKind.EDIT,
    "delete_file": ActionKind.DELETE,
    "remove_file": ActionKind.DELETE,
    "run_command": ActionKind.COMMAND,
    "shell": ActionKind.COMMAND,
    "bash": ActionKind.COMMAND,
    "execute_command": ActionKind.COMMAND,
    "fetch": ActionKind.NETWORK,
    "fetch_url": ActionKind.NETWORK,
    "http_get": ActionKind.NETWORK,
    "http_request": ActionKind.NETWORK,
    "web_fetch": ActionKind.NETWORK,
    "web_search": ActionKind.NETWORK,
}

_PATH_KEYS = ("path", "file_path", "file", "filename", "target", "directory", "dir", "paths")
_COMMAND_KEYS = ("command", "cmd", "script")
_CONTENT_KEYS = ("content", "text", "new_text", "new_string", "new", "replace", "patch", "diff")
_URL_KEYS = ("url", "uri", "endpoint")
_CWD_KEYS = ("cwd", "workdir", "working_directory")


# -- the Action --------------------------------------------------------------------------------


def _default_home() -> str:
    return str(Path("~").expanduser())


@dataclass(frozen=True)
class Action:
    """One action an agent is about to take, as the TrustKernel sees it.

    Attributes:
        kind: what the action does (:class:`ActionKind`).
        workspace: the absolute root the run is confined to.
        paths: target paths as given (relative to ``cwd`` or the workspace, ``~`` allowed).
        command: shell text for command-like actions.
        cwd: where a command starts (relative to the workspace, or absolute); default the
            workspace root.
        tool: the tool name, when the action comes from a tool call.
        arguments: the tool call's arguments, as decoded.
        content: text being written (``write``) or the replacement text (``edit``).
        url: the URL of a network action.
        home: what ``~`` means; default the current user's home directory.
    """

    kind: ActionKind
    workspace: str
    paths: tuple[str, ...] = ()
    command: str | None = None
    cwd: str | None = None
    tool: str | None = None
    arguments: Mapping[str, Any] = field(default_factory=dict, hash=False)
    content: str | None = None
    url: str | None = None
    home: str | None = None

    # -- constructors --------------------------------------------------------------------

    @classmethod
    def for_command(
        cls,
        command: str,
        workspace: str | os.PathLike[str],
        *,
        cwd: str | None = None,
        tool: str | None = None,
        home: str | None = None,
        arguments: Mapping[str, Any] | None = None,
    ) -> Action:
        """A shell command; its kind is refined from the first program (``git`` → ``git``...)."""
        ws = _abs_posix(workspace)
        probe = cls(kind=ActionKind.COMMAND, workspace=ws, command=command, cwd=cwd, home=home)
        return cls(
            kind=probe.command_kind(),
            workspace=ws,
            command=command,
            cwd=cwd,
            tool=tool,
            home=home,
            arguments=dict(arguments or {}),
        )

    @classmethod
    def for_path(
        cls,
        kind: ActionKind,
        path: str,
        workspace: str | os.PathLike[str],
        *,
        content: str | None = None,
        home: str | None = None,
    ) -> Action:
        """A file action (``read``, ``write``, ``edit``, ``delete``) on one path."""
        return cls(
            kind=kind, workspace=_abs_posix(workspace), paths=(path,), content=content, home=home
        )

    @classmethod
    def from_tool_call(
        cls,
        name: str,
        arguments: Mapping[str, Any] | str | None,
        workspace: str | os.PathLike[str],
        *,
        home: str | None = None,
    ) -> Action:
        """Build the Action a tool call would perform.

        Args:
            name: the tool name the model called.
            arguments: the decoded arguments, or the model's raw JSON text (invalid JSON
                is kept as ``{"_raw": text}`` so rules still see it).
            workspace: the workspace root.
            home: what ``~`` means (default: the current user's home).

        Path-like arguments (``path``, ``file_path``, ...), command text (``command``,
        ``cmd``), written content (``content``, ``new_text``, ...) and URLs (``url``) are
        picked out by their usual names; everything stays in ``arguments`` too.
        """
        args = _decode_arguments(arguments)
        ws = _abs_posix(workspace)
        kind = TOOL_KINDS.get(name, ActionKind.TOOL)
        command = _first_str(args, _COMMAND_KEYS)
        cwd = _first_str(args, _CWD_KEYS)
        if kind is ActionKind.COMMAND or (kind is ActionKind.TOOL and command is not None):
            if command is None:
                command = ""
            return cls.for_command(command, ws, cwd=cwd, tool=name, home=home, arguments=args)
        paths: list[str] = []
        for key in _PATH_KEYS:
            value = args.get(key)
            if isinstance(value, str) and value:
                paths.append(value)
            elif isinstance(value, list):
                paths.extend(v for v in value if isinstance(v, str) and v)
        if kind is ActionKind.READ and not paths and name in {"list_dir", "search", "grep"}:
            paths.append(".")
        content = _first_str(args, _CONTENT_KEYS)
        url = _first_str(args, _URL_KEYS)
        if kind is ActionKind.TOOL and url is not None:
            kind = ActionKind.NETWORK
        return cls(
            kind=kind,
            workspace=ws,
            paths=tuple(paths),
            cwd=cwd,
            tool=name,
            arguments=args,
            content=content,
            url=url,
            home=home,
        )

    # -- derived views ---------------------------------------------------------------------

    @property
    def home_dir(self) -> str:
        return _abs_posix(self.home) if self.home else _abs_posix(_default_home())

    @property
    def start_dir(self) -> str:
        """The normalised absolute directory a command starts in."""
        if not self.cwd:
            return self.workspace
        return normalize_path(self.cwd, cwd=self.workspace, home=self.home_dir)

    def resolve(self, path: str, cwd: str | None = None) -> str:
        """``path`` as a normalised absolute path (see :func:`normalize_path`)."""
        return normalize_path(path, cwd=cwd or self.start_dir, home=self.home_dir)

    def in_workspace(self, resolved: str) -> bool:
        """Whether a resolved path lies inside the workspace."""
        return is_within(resolved, self.workspace)

    def relative(self, resolved: str) -> str | None:
        """``resolved`` relative to the workspace (``"."`` for the root), or ``None`` outside."""
        if not self.in_workspace(resolved):
            return None
        if resolved == self.workspace:
            return "."
        return resolved[len(self.workspace.rstrip("/")) + 1 :]

    @cached_property
    def parsed(self) -> ParsedCommand | None:
        """The lexical parse of :attr:`command` (``None`` when there is no command)."""
        if self.command is None:
            return None
        return parse_command(self.command, cwd=self.start_dir, home=self.home_dir)

    def command_kind(self) -> ActionKind:
        """The kind a command's first program suggests (``rm`` → ``delete`` ...)."""
        parsed = self.parsed
        if parsed is None or not parsed.commands:
            return ActionKind.COMMAND
        first = next((c for c in parsed.commands if c.program), None)
        if first is None:
            return ActionKind.COMMAND
        prog, sub = first.program, first.subcommand()
        if prog == "git":
            return ActionKind.GIT
        if prog in {"pip", "pipx", "npm", "yarn", "pnpm", "gem", "cargo", "apt", "apt-get"} and (
            sub in {"install", "add", "i"}
        ):
            return ActionKind.INSTALL
        if prog == "uv" and sub in {"pip", "add"}:
            return ActionKind.INSTALL
        if prog in {"curl", "wget", "nc", "ncat", "netcat", "socat", "ssh", "scp", "telnet"}:
            return ActionKind.NETWORK
        if prog in {"rm", "rmdir", "unlink", "shred"}:
            return ActionKind.DELETE
        return ActionKind.COMMAND

    def summary(self, limit: int = 200) -> str:
        """A one-line description for audit events and messages."""
        if self.command is not None:
            text = " ".join(self.command.split())
        elif self.url is not None:
            text = self.url
        else:
            text = ", ".join(self.paths) or (self.tool or "")
        text = f"{self.kind.value}: {text}"
        if len(text) <= limit:
            return text
        # Redacted before the cut: a cut through a token keeps a piece no redactor finds.
        return cut_redacted(text, limit - 1) + "…"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description (for audit events and precedent stores)."""
        out: dict[str, Any] = {"kind": self.kind.value, "workspace": self.workspace}
        if self.paths:
            out["paths"] = list(self.paths)
        if self.command is not None:
            out["command"] = self.command
        if self.cwd:
            out["cwd"] = self.cwd
        if self.tool:
            out["tool"] = self.tool
        if self.url:
            out["url"] = self.url
        if self.content is not None:
            out["content_chars"] = len(self.content)
        return out

    def iter_strings(self) -> Iterator[str]:
        """Every string inside :attr:`arguments`, depth first (for generic-tool rules)."""
        yield from _walk_strings(self.arguments)


def _walk_strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _walk_strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _walk_strings(item)


def _abs_posix(path: str | os.PathLike[str]) -> str:
    text = os.fspath(path)
    if not text.startswith("/"):
        text = str(Path(text).absolute())
    return "/" + posixpath.normpath(text).lstrip("/")


def _decode_arguments(arguments: Mapping[str, Any] | str | None) -> dict[str, Any]:
    if arguments is None:
        return {}
    if isinstance(arguments, str):
        if not arguments.strip():
            return {}
        try:
            decoded = json.loads(arguments)
        except ValueError:
            return {"_raw": arguments}
        return dict(decoded) if isinstance(decoded, dict) else {"_raw": arguments}
    return dict(arguments)


def _first_str(args: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str):
            return value
    return None


__all__ = [
    "INTERPRETERS",
    "PLACEHOLDER_RE",
    "SHELLS",
    "TOOL_KINDS",
    "Action",
    "ActionKind",
    "ParsedCommand",
    "Redirect",
    "SimpleCommand",
    "is_within",
    "normalize_path",
    "parse_command",
    "program_name",
]
