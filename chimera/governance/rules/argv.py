"""Reading a :class:`~chimera.governance.shell.SimpleCommand`'s argv: options, positionals,
the paths it reads and writes, the hosts it names.

Per-program knowledge (which options take a value, which programs only read, which write
every operand) lives here so every rule family reads an argv the same way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from chimera.governance.shell import INTERPRETERS, PLACEHOLDER_RE, SHELLS, SimpleCommand

DATA_PROGRAMS = frozenset(
    {"echo", "printf", "true", "false", "test", "[", "[[", ":", "export", "alias", "unset"}
    | {"read", "sleep", "exit", "return", "set", "shift", "type", "which", "command", "hash"}
    | {"whoami", "id", "date", "uname", "hostname", "nproc", "seq", "yes", "basename", "dirname"}
)
PATTERN_FIRST = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "sed", "awk", "gawk"})
PATTERN_FIRST |= frozenset({"jq", "yq", "perl"})
READ_ONLY_PROGRAMS = frozenset(
    {"ls", "cat", "head", "tail", "less", "more", "wc", "grep", "egrep", "fgrep", "rg", "ag"}
    | {"ack", "tree", "stat", "file", "du", "df", "pwd", "diff", "cmp", "sort", "uniq", "cut"}
    | {"nl", "tr", "column", "realpath", "readlink", "sha256sum", "md5sum", "jq", "cd"}
)
"""Programs that only read (used to decide whether mentioning a CI path is an edit)."""

_WRITE_ALL = frozenset(
    {"rm", "rmdir", "unlink", "shred", "touch", "mkdir", "truncate", "tee", "mkfifo", "mknod"}
)
_WRITE_AFTER_FIRST = frozenset({"chmod", "chown", "chgrp", "chattr", "setfacl"})
_COPY_LIKE = frozenset({"cp", "mv", "install", "ln", "rsync", "scp"})
_URL_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
_OPT_TAKES_ARG: dict[str, frozenset[str]] = {
    "grep": frozenset({"-e", "-f", "-m", "-A", "-B", "-C", "-d", "-D", "--include", "--exclude"}),
    "rg": frozenset(
        {"-e", "-f", "-g", "-t", "-T", "-m", "-A", "-B", "-C", "-j", "-M", "--type", "--glob"}
    ),
    "sed": frozenset({"-e", "-f", "-l"}),
    "awk": frozenset({"-f", "-v", "-F"}),
    "head": frozenset({"-n", "-c"}),
    "tail": frozenset({"-n", "-c"}),
    "cut": frozenset({"-d", "-f", "-c", "-b"}),
    "sort": frozenset({"-k", "-t", "-o"}),
    "find": frozenset(),
    "git": frozenset({"-C", "-c", "-m", "--message", "-F", "--author", "--format", "-n"}),
    "curl": frozenset(
        {"-H", "--header", "-A", "--user-agent", "-X", "--request", "-u", "--user", "-e"}
        | {"-m", "--max-time", "--retry", "-w", "--write-out", "-x", "--proxy", "-b", "-c"}
        | {"-d", "--data", "--data-binary", "--data-raw", "--data-urlencode", "--json", "-F"}
        | {"--form", "-T", "--upload-file", "-o", "--output", "-O", "--output-document"}
    ),
    "wget": frozenset({"-O", "--output-document", "-o", "--output-file", "-P", "-U"}),
    "pytest": frozenset({"-k", "-m", "-p", "--maxfail", "-n", "--tb", "-W", "-o"}),
    "tar": frozenset({"-f", "-C", "--exclude"}),
    "gh": frozenset(
        {"-X", "--method", "-f", "-F", "--field", "--raw-field", "-R", "--repo", "-H", "-q"}
        | {"--jq", "-t", "--template", "-b", "--body", "--title", "-B", "--base", "-L"}
    ),
    "timeout": frozenset(),
    "docker": frozenset({"-t", "--tag", "-e", "--env", "--name", "-w", "--workdir", "-p"}),
}


_INLINE_CODE_FLAGS = ("-c", "-e", "-lc", "-ic", "-ec", "-r", "--eval", "--command")


def is_url(token: str) -> bool:
    """Whether ``token`` starts with a URL scheme (``https://``, ``file://`` ...)."""
    return bool(_URL_RE.match(token))


def positional(cmd: SimpleCommand, start: int = 0) -> list[str]:
    """Positional args (options and their known arguments skipped)."""
    takes = _OPT_TAKES_ARG.get(cmd.program, frozenset())
    out: list[str] = []
    skip = False
    after_dashdash = False
    for arg in cmd.args[start:]:
        if skip:
            skip = False
            continue
        if after_dashdash:
            out.append(arg)
            continue
        if arg == "--":
            after_dashdash = True
            continue
        if arg.startswith("-") and len(arg) > 1:
            if arg in takes:
                skip = True
            continue
        out.append(arg)
    return out


def option_values(cmd: SimpleCommand, names: Sequence[str]) -> list[str]:
    """Values of options ``names`` in ``-o v``, ``--opt v``, ``--opt=v`` or ``-ov`` form."""
    values: list[str] = []
    args = cmd.args
    for i, arg in enumerate(args):
        for name in names:
            if arg == name and i + 1 < len(args):
                values.append(args[i + 1])
            elif name.startswith("--") and arg.startswith(name + "="):
                values.append(arg[len(name) + 1 :])
            elif (
                len(name) == 2
                and not name.startswith("--")
                and arg.startswith(name)
                and len(arg) > 2
                and not arg.startswith("--")
            ):
                values.append(arg[2:])
    return values


def has_flag(cmd: SimpleCommand, *flags: str) -> bool:
    """Whether a flag appears, including inside combined short flags (``-rf`` has ``-f``)."""
    for arg in cmd.args:
        if arg in flags:
            return True
        if arg.startswith("-") and not arg.startswith("--") and len(arg) > 2:
            letters = set(arg[1:])
            if any(len(f) == 2 and f[0] == "-" and f[1] in letters for f in flags):
                return True
        for f in flags:
            if f.startswith("--") and arg.startswith(f + "="):
                return True
    return False


def operands(cmd: SimpleCommand) -> tuple[list[str], list[str]]:
    """The (read, write) path operands of one simple command, as written."""
    prog = cmd.program
    reads: list[str] = []
    writes: list[str] = []
    for redirect in cmd.redirects:
        if redirect.writes:
            writes.append(redirect.target)
        elif redirect.reads:
            reads.append(redirect.target)
    if not prog or prog in DATA_PROGRAMS or prog in {"cd", "pushd"}:
        return reads, writes
    pos = positional(cmd)
    if prog in SHELLS | INTERPRETERS:
        for flag in _INLINE_CODE_FLAGS:
            if flag in cmd.args:
                code = cmd.args[cmd.args.index(flag) + 1 :][:1]
                pos = [p for p in pos if p not in code]
    if prog in PATTERN_FIRST:
        explicit = option_values(cmd, ["-e", "-f", "--regexp", "--file", "--expression"])
        if prog == "perl" and not has_flag(cmd, "-i", "-p", "-n"):
            pass
        elif not explicit and pos:
            pos = pos[1:]
        if prog in {"sed", "perl"} and has_flag(cmd, "-i", "--in-place"):
            writes.extend(pos)
        reads.extend(pos)
    elif prog in _WRITE_ALL:
        if prog == "truncate":
            pos = [p for p in pos if not re.fullmatch(r"[+-]?\d+[KMGk]?", p)]
        writes.extend(pos)
    elif prog in _WRITE_AFTER_FIRST:
        writes.extend(pos[1:] if not option_values(cmd, ["--reference"]) else pos)
    elif prog in _COPY_LIKE:
        target = option_values(cmd, ["-t", "--target-directory"])
        if target:
            writes.extend(target)
            reads.extend(pos)
        elif pos:
            writes.append(pos[-1])
            reads.extend(pos[:-1])
            if prog == "mv":
                writes.extend(pos[:-1])
    elif prog == "dd":
        for arg in cmd.args:
            if arg.startswith("of="):
                writes.append(arg[3:])
            elif arg.startswith("if="):
                reads.append(arg[3:])
    elif prog == "find":
        starts = []
        for arg in cmd.args:
            if arg.startswith("-") or arg in {"(", "!"}:
                break
            starts.append(arg)
        starts = starts or ["."]
        reads.extend(starts)
        if "-delete" in cmd.args or any(
            a in {"-exec", "-execdir", "-ok", "-okdir"} for a in cmd.args
        ):
            exec_prog = ""
            for i, a in enumerate(cmd.args):
                if a in {"-exec", "-execdir", "-ok", "-okdir"} and i + 1 < len(cmd.args):
                    exec_prog = cmd.args[i + 1].rsplit("/", 1)[-1]
            if "-delete" in cmd.args or exec_prog in _WRITE_ALL | _WRITE_AFTER_FIRST | {"mv"}:
                writes.extend(starts)
    elif prog == "git":
        sub = cmd.subcommand()
        rest = positional(cmd)
        rest = rest[rest.index(sub) + 1 :] if sub in rest else []
        if sub == "clone" and len(rest) >= 2:
            writes.append(rest[-1])
        elif sub == "worktree" and rest[:1] == ["add"] and len(rest) >= 2:
            writes.append(rest[1])
        elif sub in {"rm", "mv", "checkout", "restore", "clean", "apply"}:
            writes.extend(r for r in rest if r not in {"HEAD", "."} or sub != "checkout")
        elif sub in {"diff", "show", "log", "blame", "add", "ls-files", "grep", "status"}:
            reads.extend(r for r in rest if not r.startswith(("HEAD", "origin/")))
        for value in option_values(cmd, ["-C"]):
            reads.append(value)
    elif prog in {"curl", "wget"}:
        writes.extend(option_values(cmd, ["-o", "--output", "-O", "--output-document"]))
        for value in option_values(
            cmd,
            [
                *("-d", "--data", "--data-binary", "--data-raw", "--data-urlencode", "--json"),
                *("-T", "--upload-file", "--post-file", "--body-file"),
            ],
        ):
            if value.startswith("@"):
                reads.append(value[1:])
            elif cmd.program == "wget" or value.startswith(("/", "~", ".")):
                reads.append(value)
        for value in option_values(cmd, ["-F", "--form"]):
            if "=@" in value or "=<" in value:
                reads.append(re.split(r"=[@<]", value, maxsplit=1)[1].split(";")[0])
    elif prog == "tar":
        writes.extend(option_values(cmd, ["-C", "--directory"]))
        reads.extend(pos)
    elif prog == "unzip":
        writes.extend(option_values(cmd, ["-d"]))
        reads.extend(pos)
    else:
        reads.extend(pos)
        for arg in cmd.args:
            if arg.startswith("--") and "=" in arg:
                value = arg.split("=", 1)[1]
                if value.startswith(("/", "~", "./", "../", "$HOME")):
                    reads.append(value)
    keep = [
        p for p in reads if p and p != "-" and not is_url(p) and not PLACEHOLDER_RE.fullmatch(p)
    ]
    keep_w = [p for p in writes if p and p != "-" and not is_url(p)]
    return keep, keep_w


def is_loopback(text: str) -> bool:
    """Whether a host or URL names this machine (``localhost``, ``127.x``, ``[::1]``)."""
    return bool(
        re.search(
            r"^(https?://)?(localhost|127\.\d+\.\d+\.\d+|\[::1\]|0\.0\.0\.0)([:/]|$)",
            text,
        )
    )


def hosts(cmd: SimpleCommand) -> list[str]:
    """The positional arguments that look like URLs or host names."""
    return [a for a in positional(cmd) if is_url(a) or re.match(r"^[\w.-]+\.\w+(:\d+)?(/|$)", a)]


__all__ = [
    "DATA_PROGRAMS",
    "PATTERN_FIRST",
    "READ_ONLY_PROGRAMS",
    "has_flag",
    "hosts",
    "is_loopback",
    "is_url",
    "operands",
    "option_values",
    "positional",
]
