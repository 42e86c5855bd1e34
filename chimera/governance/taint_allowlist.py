"""What a tainted run may still run: the command allowlist of :mod:`chimera.governance.taint`
(the spec's own commands, the project's test runner, installing the project itself, read-only
inspection).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from chimera.governance.actions import Action, SimpleCommand
from chimera.governance.redactor import cut_redacted as _cut

_READ_ONLY = frozenset(
    {"ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "ag", "tree", "stat"}
    | {"file", "du", "pwd", "diff", "cmp", "sort", "uniq", "cut", "nl", "tr", "column", "cd"}
    | {"realpath", "readlink", "basename", "dirname", "which", "true", "false", "test", "["}
    | {"echo", "printf", "less", "more", "sha256sum", "md5sum", "date", "whoami", "uname"}
)


_GIT_READ_ONLY = frozenset(
    {"status", "diff", "log", "show", "ls-files", "blame", "rev-parse", "grep", "shortlog"}
)


_FIND_UNSAFE = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
)


_TEST_RUNNERS: tuple[tuple[str, ...], ...] = (
    ("pytest",),
    ("py.test",),
    ("python", "-m", "pytest"),
    ("python", "-m", "unittest"),
    ("tox",),
    ("nox",),
    ("make", "test"),
    ("make", "check"),
    ("make", "tests"),
    ("npm", "test"),
    ("npm", "run", "test"),
    ("npm", "t"),
    ("yarn", "test"),
    ("pnpm", "test"),
    ("go", "test"),
    ("cargo", "test"),
    ("uv", "run", "pytest"),
    ("hatch", "test"),
    ("hatch", "run", "test"),
    ("poetry", "run", "pytest"),
    ("pdm", "run", "pytest"),
    ("coverage", "run", "-m", "pytest"),
)


_PIP_SAFE_OPTS = frozenset(
    {"-e", "--editable", "-q", "--quiet", "-v", "--verbose", "--no-deps", "-U", "--upgrade"}
    | {"--no-build-isolation", "--no-input", "--disable-pip-version-check"}
)


_PROJECT_SPEC = re.compile(r"^\.(/)?(\[[A-Za-z0-9_,.\- ]+\])?$")


_HARMLESS_REDIRECT = re.compile(r"^(/dev/null|&?[12]|-)$")


def _norm(command: str) -> str:
    try:
        return " ".join(shlex.split(command))
    except ValueError:
        return " ".join(command.split())


@dataclass(frozen=True)
class TaintAllowlist:
    """The commands a tainted run may still execute.

    Args:
        spec_commands: the spec's own ``command`` checks (matched whole, whitespace-normalised).
        extra: further whole commands a maintainer allows (configuration).
    """

    spec_commands: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()

    @property
    def _exact(self) -> frozenset[str]:
        return frozenset(_norm(c) for c in (*self.spec_commands, *self.extra))

    def violations(self, action: Action) -> list[str]:
        """Why ``action``'s command is not allowed while tainted (empty: allowed)."""
        command = action.command or ""
        if _norm(command) in self._exact:
            return []
        parsed = action.parsed
        if parsed is None:
            return ["not a command"]
        if parsed.error:
            return [f"the command could not be parsed ({parsed.error})"]
        problems: list[str] = []
        for cmd in parsed.commands:
            reason = self._segment_problem(cmd)
            if reason:
                problems.append(reason)
        for interp, _ in parsed.inline_code:
            problems.append(f"inline {interp} code is not on the tainted-run allowlist")
        if not parsed.commands and command.strip():
            problems.append("nothing recognisable to run")
        return list(dict.fromkeys(problems))

    def _segment_problem(self, cmd: SimpleCommand) -> str | None:
        if not cmd.argv:
            return None
        shown = _cut(" ".join(cmd.argv), 80)
        for redirect in cmd.redirects:
            if redirect.writes and not _HARMLESS_REDIRECT.match(redirect.target):
                return f"`{shown}` writes to {redirect.target} through a redirection"
        bad_wrappers = [w for w in cmd.wrappers if w not in {"timeout", "nice", "time", "xargs"}]
        if bad_wrappers:
            return f"`{bad_wrappers[0]}` is not allowed while the run is tainted"
        prog = cmd.program
        args = list(cmd.args)
        words = (prog, *args)
        if prog in _READ_ONLY:
            return None
        if prog == "find":
            unsafe = sorted(set(args) & _FIND_UNSAFE)
            return f"`find {unsafe[0]}` runs or deletes" if unsafe else None
        if prog == "git":
            sub = cmd.subcommand()
            if sub in _GIT_READ_ONLY and not any(a.startswith("--output") for a in args):
                return None
            return f"`git {sub}` is not read-only inspection"
        for runner in _TEST_RUNNERS:
            if tuple(words[: len(runner)]) == runner:
                return None
        if self._project_install(prog, args):
            return None
        return f"`{shown}` is not on the tainted-run allowlist"

    @staticmethod
    def _project_install(prog: str, args: list[str]) -> bool:
        if prog == "python" and args[:2] == ["-m", "pip"]:
            args = args[2:]
        elif prog == "uv" and args[:1] == ["pip"]:
            args = args[1:]
        elif prog != "pip":
            return False
        if args[:1] != ["install"]:
            return False
        specs = [a for a in args[1:] if not a.startswith("-")]
        options = [a for a in args[1:] if a.startswith("-")]
        return (
            bool(specs)
            and all(_PROJECT_SPEC.match(s) for s in specs)
            and all(o in _PIP_SAFE_OPTS for o in options)
        )
