"""The lexical shell parser behind :class:`~chimera.governance.actions.Action`.

:func:`parse_command` turns shell text into :class:`SimpleCommand` records — argv with wrappers
(``sudo``, ``env``, ``timeout``, ``xargs`` ...) peeled off, redirects, pipe neighbours, the
working directory in effect (``cd`` is tracked), plus the bodies of ``$(...)``, backticks,
``bash -c``/``eval`` strings and heredocs, parsed recursively. :func:`normalize_path` folds a
path against a working directory and home folder, as strings.

Everything here is **lexical**: no file system or process is consulted, so the analysis is
deterministic and cheap, and also bypassable by anything a lexer cannot see (a script written
now and run later, an alias, a symlink). It is a signal layer, never a boundary.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chimera.governance.shell_lex import (
    PIPES,
    PLACEHOLDER_RE,
    REDIRECTS,
    ScanError,
    prescan,
    tokenize,
)

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
            raise ScanError("command nesting too deep")
        flat, subs, heredocs = prescan(text)
        self.substitutions.extend(subs)
        tokens = tokenize(flat)
        pipeline: list[dict[str, Any]] = []
        current: dict[str, Any] = self._fresh()
        heredoc_index = 0
        i = 0
        while i < len(tokens):
            tok, is_op = tokens[i]
            if is_op and tok in REDIRECTS:
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
            if is_op and tok in PIPES:
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
    except ScanError as exc:
        return ParsedCommand(text=text, error=str(exc))
    return ParsedCommand(
        text=text,
        commands=tuple(parser.commands),
        substitutions=tuple(parser.substitutions),
        inline_code=tuple(parser.inline),
    )


__all__ = [
    "INTERPRETERS",
    "PLACEHOLDER_RE",
    "SHELLS",
    "ParsedCommand",
    "Redirect",
    "SimpleCommand",
    "is_within",
    "normalize_path",
    "parse_command",
    "program_name",
]
