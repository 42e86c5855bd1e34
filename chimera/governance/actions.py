"""The Action model the TrustKernel evaluates, and the lexical shell parser behind it.

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
* :func:`parse_command` turns shell text into :class:`SimpleCommand` records — argv with
  wrappers (``sudo``, ``env``, ``timeout``, ``xargs`` ...) peeled off, redirects, pipe
  neighbours, the working directory in effect (``cd`` is tracked), plus the bodies of ``$(...)``,
  backticks, ``bash -c``/``eval`` strings and heredocs, parsed recursively.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Any


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


# -- the shell parser ------------------------------------------------------------------------

PLACEHOLDER_RE = re.compile(r"CHIMERASUBST(\d+)X")
"""Marks where a ``$(...)``, backtick or process substitution stood in an argv token."""

_SEPARATORS = frozenset({";", "&&", "||", "&", ";;", "(", ")", "\n"})
_PIPES = frozenset({"|", "|&"})
_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<", "<>", ">&", "<&", "<<", "<<<"})
_KNOWN_OPS = sorted(_SEPARATORS | _PIPES | _REDIRECTS, key=len, reverse=True)
_PUNCT = set("();<>|&")

# Wrappers: programs that run another program given in their arguments. The value is the set
# of their options that take a separate argument, so the wrapped argv can be found.
_WRAPPERS: Mapping[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "-S", "--unset", "--chdir"}),
    "nohup": frozenset(),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "time": frozenset({"-f", "-o"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "setsid": frozenset(),
    "exec": frozenset({"-a"}),
    "builtin": frozenset(),
    "xargs": frozenset(
        {"-I", "-i", "-L", "-l", "-n", "-P", "-s", "-d", "-E", "-a", "--max-args", "--delimiter"}
    ),
    "watch": frozenset({"-n", "-d", "--interval"}),
    "unbuffer": frozenset(),
    "strace": frozenset({"-o", "-e", "-p", "-s"}),
    "ltrace": frozenset({"-o", "-e", "-p"}),
    "chronic": frozenset(),
    "flock": frozenset({"-w", "-E", "-c"}),
}
# Wrappers whose first positional argument is consumed before the wrapped command.
_WRAPPERS_WITH_OPERAND = frozenset({"timeout", "flock", "chroot"})

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "busybox"})
INTERPRETERS = frozenset(
    {"python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "deno", "bun"}
    | {"perl", "ruby", "php", "lua", "Rscript", "osascript", "pwsh", "powershell"}
)
_INLINE_FLAGS = frozenset({"-c", "-e", "-E", "-r", "--eval", "--exec", "--command", "-Command"})


def program_name(arg: str) -> str:
    """The basename of an argv[0], with a ``pythonX.Y`` style version folded (``python``)."""
    base = arg.rsplit("/", 1)[-1]
    if re.fullmatch(r"python\d+(\.\d+)*", base):
        return "python"
    if re.fullmatch(r"pip\d+(\.\d+)*", base):
        return "pip"
    return base


@dataclass(frozen=True, slots=True)
class Redirect:
    """One shell redirection: ``op`` (``>``, ``>>``, ``<`` ...), its target and fd (or ``None``)."""

    op: str
    target: str
    fd: str | None = None

    @property
    def writes(self) -> bool:
        """True for redirections that create or truncate/append a file."""
        if self.op in {">&", "<&"}:
            return not re.fullmatch(r"\d+|-", self.target)
        return self.op in {">", ">>", ">|", "&>", "&>>", "<>"}

    @property
    def reads(self) -> bool:
        return self.op in {"<", "<>"}


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One simple command of a shell line, after wrappers were peeled off.

    Attributes:
        argv: the program and its arguments (``argv[0]`` may be a path; see :attr:`program`).
        cwd: the working directory in effect, as a normalised absolute POSIX path.
        redirects: the redirections attached to this command.
        assignments: leading ``NAME=value`` words.
        wrappers: the wrapper programs removed from the front (``sudo``, ``xargs`` ...).
        stdin_piped: whether stdin comes from a pipe (``a | this``).
        stdout_piped: whether stdout goes to a pipe (``this | b``).
        pipe_to: program names later in the same pipeline.
        pipe_from: program names earlier in the same pipeline.
        depth: 0 for the top level; 1+ inside ``$(...)``, ``bash -c`` and the like.
        heredoc: the body of a heredoc fed to this command, if any.
    """

    argv: tuple[str, ...]
    cwd: str
    redirects: tuple[Redirect, ...] = ()
    assignments: tuple[str, ...] = ()
    wrappers: tuple[str, ...] = ()
    stdin_piped: bool = False
    stdout_piped: bool = False
    pipe_to: tuple[str, ...] = ()
    pipe_from: tuple[str, ...] = ()
    depth: int = 0
    heredoc: str | None = None

    @property
    def program(self) -> str:
        """``program_name(argv[0])``, or ``""`` for a command that is only assignments."""
        return program_name(self.argv[0]) if self.argv else ""

    @property
    def args(self) -> tuple[str, ...]:
        return self.argv[1:]

    def subcommand(self) -> str:
        """The first non-option argument (``git -C x push`` → ``push``), or ``""``."""
        skip_next = False
        for arg in self.args:
            if skip_next:
                skip_next = False
                continue
            if self.program == "git" and arg in {"-C", "-c", "--git-dir", "--work-tree"}:
                skip_next = True
                continue
            if arg.startswith("-"):
                continue
            return arg
        return ""


@dataclass(frozen=True, slots=True)
class ParsedCommand:
    """The lexical parse of one shell text.

    Attributes:
        commands: every simple command found, top level first, nested ones after.
        substitutions: the raw bodies of ``$(...)``, backticks and ``<(...)``.
        inline_code: ``(interpreter, code)`` for ``python -c``, ``node -e``, heredocs fed to
            an interpreter and the like.
        error: why the text could not be parsed (unbalanced quote ...), else ``None``.
    """

    text: str
    commands: tuple[SimpleCommand, ...] = ()
    substitutions: tuple[str, ...] = ()
    inline_code: tuple[tuple[str, str], ...] = ()
    error: str | None = None

    def programs(self) -> set[str]:
        return {c.program for c in self.commands if c.program}


class _ScanError(ValueError):
    pass


def _find_closing_paren(text: str, start: int) -> int:
    """Index of the ``)`` closing the ``(`` just before ``start``, honouring quotes."""
    depth = 1
    i = start
    quote: str | None = None
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch == "\\":
            i += 2
            continue
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise _ScanError("unbalanced parenthesis in command substitution")


_HEREDOC_RE = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")


def _prescan(text: str) -> tuple[str, list[str], dict[int, str]]:
    """Replace substitutions with placeholders, newlines with ``;``, drop comments.

    Returns the flattened text, the substitution bodies (by placeholder number) and the heredoc
    bodies keyed by the index of the ``<<`` operator's occurrence order.
    """
    out: list[str] = []
    subs: list[str] = []
    heredocs: dict[int, str] = {}
    pending: list[tuple[str, bool]] = []  # (delimiter, strip_tabs) awaiting a body
    heredoc_count = 0
    i = 0
    quote: str | None = None
    n = len(text)

    def placeholder(body: str) -> str:
        subs.append(body)
        return f"CHIMERASUBST{len(subs) - 1}X"

    while i < n:
        ch = text[i]
        if quote == "'":
            out.append(ch)
            if ch == "'":
                quote = None
            i += 1
            continue
        if ch == "\\" and i + 1 < n:
            if text[i + 1] == "\n":
                i += 2
                continue
            out.append(text[i : i + 2])
            i += 2
            continue
        if quote == '"' and ch == '"':
            quote = None
            out.append(ch)
            i += 1
            continue
        if quote is None and ch in "'\"":
            quote = ch
            out.append(ch)
            i += 1
            continue
        if ch == "$" and text.startswith("$(", i):
            end = _find_closing_paren(text, i + 2)
            out.append(placeholder(text[i + 2 : end]))
            i = end + 1
            continue
        if ch == "`":
            end = text.find("`", i + 1)
            while end != -1 and text[end - 1] == "\\":
                end = text.find("`", end + 1)
            if end == -1:
                raise _ScanError("unbalanced backtick")
            out.append(placeholder(text[i + 1 : end]))
            i = end + 1
            continue
        if quote is None and ch in "<>" and text.startswith("(", i + 1):
            end = _find_closing_paren(text, i + 2)
            out.append(placeholder(text[i + 2 : end]))
            i = end + 1
            continue
        if (
            quote is None
            and ch == "<"
            and text.startswith("<<", i)
            and not text.startswith("<<<", i)
        ):
            m = _HEREDOC_RE.match(text, i)
            if m:
                pending.append((m.group(3), m.group(1) == "-"))
                out.append(f" << {m.group(3)} ")
                i = m.end()
                continue
        if quote is None and ch == "#" and (not out or out[-1][-1:] in {" ", "\t", ";", "\n"}):
            end = text.find("\n", i)
            i = n if end == -1 else end
            continue
        if quote is None and ch == "\n":
            out.append(" ; ")
            i += 1
            while pending:
                delimiter, strip_tabs = pending.pop(0)
                body: list[str] = []
                while i < n:
                    end = text.find("\n", i)
                    line = text[i:] if end == -1 else text[i:end]
                    i = n if end == -1 else end + 1
                    check = line.lstrip("\t") if strip_tabs else line
                    if check == delimiter:
                        break
                    body.append(line)
                heredocs[heredoc_count] = "\n".join(body)
                heredoc_count += 1
            continue
        out.append(ch)
        i += 1
    if quote is not None:
        raise _ScanError(f"unbalanced {quote} quote")
    return "".join(out), subs, heredocs


def _split_ops(token: str) -> list[str]:
    parts: list[str] = []
    i = 0
    while i < len(token):
        for op in _KNOWN_OPS:
            if token.startswith(op, i):
                parts.append(op)
                i += len(op)
                break
        else:
            parts.append(token[i])
            i += 1
    return parts


def _tokenize(flat: str) -> list[tuple[str, bool]]:
    """shlex tokens as ``(text, is_operator)``."""
    tokens: list[tuple[str, bool]] = []
    lexer = shlex.shlex(flat, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        raw = list(lexer)
    except ValueError as exc:
        raise _ScanError(str(exc)) from exc
    for tok in raw:
        if tok and set(tok) <= _PUNCT:
            tokens.extend((op, True) for op in _split_ops(tok))
        else:
            tokens.append((tok, False))
    return tokens


def normalize_path(path: str, *, cwd: str, home: str) -> str:
    """Lexically resolve ``path`` to an absolute, normalised POSIX path.

    ``~``, ``~/x``, ``$HOME`` and ``${HOME}`` expand to ``home``; ``~user`` to ``/home/user``
    (``/root`` for root); ``$PWD`` to ``cwd``; a relative path joins ``cwd``; ``..`` and ``.``
    fold lexically (no symlinks are followed — this is analysis, not access).
    """
    p = path.strip()
    for var in ("${HOME}", "$HOME"):
        if p == var or p.startswith(var + "/"):
            p = home + p[len(var) :]
    for var in ("${PWD}", "$PWD"):
        if p == var or p.startswith(var + "/"):
            p = cwd + p[len(var) :]
    if p == "~" or p.startswith("~/"):
        p = home + p[1:]
    elif p.startswith("~"):
        user, _, rest = p[1:].partition("/")
        base = "/root" if user == "root" else f"/home/{user}"
        p = base + ("/" + rest if rest else "")
    if not p.startswith("/"):
        p = posixpath.join(cwd, p)
    norm = posixpath.normpath(p)
    # POSIX keeps a leading "//"; fold it, it names the same root here.
    return "/" + norm.lstrip("/")


def is_within(path: str, root: str) -> bool:
    """Whether normalised ``path`` equals ``root`` or lies below it."""
    root = root.rstrip("/") or "/"
    return path == root or path.startswith(root + "/") or root == "/"


class _Parser:
    def __init__(self, *, cwd: str, home: str) -> None:
        self.home = home
        self.commands: list[SimpleCommand] = []
        self.substitutions: list[str] = []
        self.inline: list[tuple[str, str]] = []
        self.start_cwd = cwd

    def parse(self, text: str, depth: int, cwd: str) -> None:
        if depth > 8:
            raise _ScanError("command nesting too deep")
        flat, subs, heredocs = _prescan(text)
        self.substitutions.extend(subs)
        tokens = _tokenize(flat)
        pipeline: list[dict[str, Any]] = []
        current: dict[str, Any] = self._fresh()
        heredoc_index = 0
        i = 0
        while i < len(tokens):
            tok, is_op = tokens[i]
            if is_op and tok in _REDIRECTS:
                target = tokens[i + 1][0] if i + 1 < len(tokens) else ""
                fd = None
                if current["words"] and re.fullmatch(r"\d", current["words"][-1]):
                    fd = current["words"].pop()
                if tok == "<<":
                    current["heredoc"] = heredocs.get(heredoc_index, "")
                    heredoc_index += 1
                current["redirects"].append(Redirect(tok, target, fd))
                i += 2
                continue
            if is_op and tok in _PIPES:
                pipeline.append(current)
                current = self._fresh()
                i += 1
                continue
            if is_op:  # a separator ends the pipeline
                pipeline.append(current)
                cwd = self._emit(pipeline, depth, cwd, subs)
                pipeline = []
                current = self._fresh()
                i += 1
                continue
            current["words"].append(tok)
            i += 1
        pipeline.append(current)
        self._emit(pipeline, depth, cwd, subs)
        for body in subs:
            self.parse(body, depth + 1, cwd)

    @staticmethod
    def _fresh() -> dict[str, Any]:
        return {"words": [], "redirects": [], "heredoc": None}

    def _emit(self, pipeline: list[dict[str, Any]], depth: int, cwd: str, subs: list[str]) -> str:
        stages = [p for p in pipeline if p["words"] or p["redirects"]]
        peeled = [self._peel(p["words"]) for p in stages]
        programs = [program_name(argv[0]) if argv else "" for argv, _, _ in peeled]
        for index, (stage, (argv, assignments, wrappers)) in enumerate(
            zip(stages, peeled, strict=True)
        ):
            cmd = SimpleCommand(
                argv=tuple(argv),
                cwd=cwd,
                redirects=tuple(stage["redirects"]),
                assignments=tuple(assignments),
                wrappers=tuple(wrappers),
                stdin_piped=index > 0 or "xargs" in wrappers,
                stdout_piped=index < len(stages) - 1,
                pipe_to=tuple(programs[index + 1 :]),
                pipe_from=tuple(programs[:index]),
                depth=depth,
                heredoc=stage["heredoc"],
            )
            self.commands.append(cmd)
            self._nested(cmd, depth)
            if cmd.program in {"cd", "pushd"}:
                target = next((a for a in cmd.args if not a.startswith("-")), "~")
                if not PLACEHOLDER_RE.search(target):
                    cwd = normalize_path(target, cwd=cwd, home=self.home)
        return cwd

    def _peel(self, words: list[str]) -> tuple[list[str], list[str], list[str]]:
        argv = [w for w in words if w not in {"{", "}", "!"}] if words[:1] else []
        assignments: list[str] = []
        wrappers: list[str] = []
        changed = True
        while changed and argv:
            changed = False
            while argv and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", argv[0], re.DOTALL):
                assignments.append(argv.pop(0))
                changed = True
            if not argv:
                break
            name = program_name(argv[0])
            if name in _WRAPPERS:
                takes_arg = _WRAPPERS[name]
                j = 1
                while j < len(argv):
                    arg = argv[j]
                    if arg == "--":
                        j += 1
                        break
                    if name == "env" and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", arg):
                        assignments.append(arg)
                        j += 1
                        continue
                    if arg.startswith("-") and len(arg) > 1:
                        j += 2 if arg in takes_arg else 1
                        continue
                    break
                if name in _WRAPPERS_WITH_OPERAND and j < len(argv):
                    j += 1
                if name == "env" and j >= len(argv):
                    break  # bare `env` is the environment dump itself, not a wrapper
                if name in {"watch", "time"} and j >= len(argv):
                    break
                wrappers.append(name)
                argv = argv[j:]
                changed = True
        return argv, assignments, wrappers

    def _nested(self, cmd: SimpleCommand, depth: int) -> None:
        prog = cmd.program
        args = cmd.args
        if prog in SHELLS or prog in {"eval", "su", "runuser"}:
            if prog == "eval":
                self.parse(" ".join(args), depth + 1, cmd.cwd)
                return
            for j, arg in enumerate(args):
                if arg in {"-c", "-lc", "-ic", "-ec", "-xc", "-cx", "-ce"} and j + 1 < len(args):
                    self.parse(args[j + 1], depth + 1, cmd.cwd)
                    return
            if cmd.heredoc is not None:
                self.parse(cmd.heredoc, depth + 1, cmd.cwd)
            return
        if prog in INTERPRETERS:
            for j, arg in enumerate(args):
                if arg in _INLINE_FLAGS and j + 1 < len(args):
                    self.inline.append((prog, args[j + 1]))
                    return
                if arg.startswith("-c") and len(arg) > 2 and prog == "python":
                    self.inline.append((prog, arg[2:]))
                    return
            if cmd.heredoc is not None:
                self.inline.append((prog, cmd.heredoc))


def parse_command(text: str, *, cwd: str, home: str) -> ParsedCommand:
    """Parse shell ``text`` lexically (see the module docstring); never raises.

    Args:
        text: the shell command line(s).
        cwd: the normalised absolute directory the command starts in.
        home: the home directory ``~`` stands for.

    Returns:
        A :class:`ParsedCommand`; on a lexical error (unbalanced quote or parenthesis) its
        ``error`` says why and ``commands`` holds nothing.
    """
    parser = _Parser(cwd=cwd, home=home)
    try:
        parser.parse(text, 0, cwd)
    except _ScanError as exc:
        return ParsedCommand(text=text, error=str(exc))
    return ParsedCommand(
        text=text,
        commands=tuple(parser.commands),
        substitutions=tuple(parser.substitutions),
        inline_code=tuple(parser.inline),
    )


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
        return text if len(text) <= limit else text[: limit - 1] + "…"

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
