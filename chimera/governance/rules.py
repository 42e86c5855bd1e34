"""The lexical RuleSet: deterministic rules for fixed-signature threats.

Each :class:`Rule` has an ``id``, a ``description``, the ``verdict`` it gives when it matches,
and a ``test`` — a function of the action's :class:`ActionFacts` that returns the reasons it
matched (empty when it does not). :meth:`RuleSet.evaluate` runs every rule and returns the
matches; :class:`chimera.governance.kernel.TrustKernel` folds them into one decision.

Policy (the invariant the corpora in ``tests/data/governance/`` measure): **never hard-block a
benign action**. Only unambiguous signatures carry ``block`` — an environment dump, a read of a
credential file, data piped to a network tool, a write outside the workspace or into CI
configuration, ``rm -rf /``, ``curl | sh``, ``git push``. Anything merely unusual gets
``review`` (denied for now, listed for the human) or ``warn`` (allowed, noted).

The rules are lexical: commands are shlex-split, paths folded against the workspace (see
:mod:`chimera.governance.actions`). A determined adversary can write a script and run it, or
spell a path in a way no lexer sees; these rules raise the cost of the common attacks and make
them visible in the audit log. They are never the boundary — the sandbox is.

Threat taxonomy after AgentTrust (arXiv 2606.08539) and the usual agent-incident classes:
secret reads, exfiltration, out-of-workspace writes, CI tampering, destruction, remote code
installs, git remote/config/push changes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property

import pathspec

from chimera.governance.actions import (
    INTERPRETERS,
    PLACEHOLDER_RE,
    SHELLS,
    Action,
    ActionKind,
    SimpleCommand,
    is_within,
)


class Verdict(StrEnum):
    """The kernel's answer. Ordered by severity: allow < warn < review < block.

    * ``allow`` — run it.
    * ``warn`` — run it, and note why in the audit log and summary.
    * ``review`` — do not run it now; feed the reason back to the agent and list it for the
      human reviewer (ambiguous: might be fine, a person decides).
    * ``block`` — do not run it; an unambiguous hostile signature.
    """

    ALLOW = "allow"
    WARN = "warn"
    REVIEW = "review"
    BLOCK = "block"

    @property
    def severity(self) -> int:
        return _SEVERITY[self]

    @property
    def executes(self) -> bool:
        """Whether an action with this verdict may run."""
        return self in (Verdict.ALLOW, Verdict.WARN)

    @classmethod
    def worst(cls, verdicts: Iterable[Verdict]) -> Verdict:
        return max(verdicts, key=lambda v: v.severity, default=cls.ALLOW)


_SEVERITY = {Verdict.ALLOW: 0, Verdict.WARN: 1, Verdict.REVIEW: 2, Verdict.BLOCK: 3}


# -- facts about an action ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Operand:
    """A path an action touches: as written, resolved, and the command it came from."""

    raw: str
    resolved: str
    command: SimpleCommand | None = None


_NETWORK_TOOLS = frozenset(
    {"curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "ssh", "scp", "sftp", "ftp"}
    | {"rsync", "rclone", "http", "https", "xh", "httpie", "aria2c", "lftp", "tftp"}
)
_NET_SENDERS = frozenset({"nc", "ncat", "netcat", "socat", "telnet", "ssh", "ftp"})


def is_network_command(cmd: SimpleCommand) -> bool:
    """Whether a simple command talks to the network by itself (``openssl s_client`` too).

    ``rsync``/``scp`` count only with a ``host:path`` operand: a local copy is not networking.
    """
    if cmd.program in {"rsync", "scp"}:
        return any(re.match(r"^([\w.-]+@)?[\w.-]+:(?!//)", a) for a in cmd.args)
    if cmd.program == "openssl":
        return cmd.subcommand() in {"s_client", "s_server"}
    return cmd.program in _NETWORK_TOOLS


_DATA_PROGRAMS = frozenset(
    {"echo", "printf", "true", "false", "test", "[", "[[", ":", "export", "alias", "unset"}
    | {"read", "sleep", "exit", "return", "set", "shift", "type", "which", "command", "hash"}
    | {"whoami", "id", "date", "uname", "hostname", "nproc", "seq", "yes", "basename", "dirname"}
)
_PATTERN_FIRST = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "sed", "awk", "gawk"})
_PATTERN_FIRST |= frozenset({"jq", "yq", "perl"})
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
_DEVNULL = re.compile(r"^/dev/(null|stdout|stderr|tty|fd/\d+|zero|random|urandom)$")
_TEMP_ROOTS = ("/tmp", "/var/tmp", "/dev/shm")
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


def _is_url(token: str) -> bool:
    return bool(_URL_RE.match(token))


def _positional(cmd: SimpleCommand, start: int = 0) -> list[str]:
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


def _option_values(cmd: SimpleCommand, names: Sequence[str]) -> list[str]:
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


def _has_flag(cmd: SimpleCommand, *flags: str) -> bool:
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


def _operands(cmd: SimpleCommand) -> tuple[list[str], list[str]]:
    """The (read, write) path operands of one simple command, as written."""
    prog = cmd.program
    reads: list[str] = []
    writes: list[str] = []
    for redirect in cmd.redirects:
        if redirect.writes:
            writes.append(redirect.target)
        elif redirect.reads:
            reads.append(redirect.target)
    if not prog or prog in _DATA_PROGRAMS or prog in {"cd", "pushd"}:
        return reads, writes
    pos = _positional(cmd)
    if prog in SHELLS | INTERPRETERS:
        for flag in _INLINE_CODE_FLAGS:
            if flag in cmd.args:
                code = cmd.args[cmd.args.index(flag) + 1 :][:1]
                pos = [p for p in pos if p not in code]
    if prog in _PATTERN_FIRST:
        explicit = _option_values(cmd, ["-e", "-f", "--regexp", "--file", "--expression"])
        if prog == "perl" and not _has_flag(cmd, "-i", "-p", "-n"):
            pass
        elif not explicit and pos:
            pos = pos[1:]
        if prog in {"sed", "perl"} and _has_flag(cmd, "-i", "--in-place"):
            writes.extend(pos)
        reads.extend(pos)
    elif prog in _WRITE_ALL:
        if prog == "truncate":
            pos = [p for p in pos if not re.fullmatch(r"[+-]?\d+[KMGk]?", p)]
        writes.extend(pos)
    elif prog in _WRITE_AFTER_FIRST:
        writes.extend(pos[1:] if not _option_values(cmd, ["--reference"]) else pos)
    elif prog in _COPY_LIKE:
        target = _option_values(cmd, ["-t", "--target-directory"])
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
        rest = _positional(cmd)
        rest = rest[rest.index(sub) + 1 :] if sub in rest else []
        if sub == "clone" and len(rest) >= 2:
            writes.append(rest[-1])
        elif sub == "worktree" and rest[:1] == ["add"] and len(rest) >= 2:
            writes.append(rest[1])
        elif sub in {"rm", "mv", "checkout", "restore", "clean", "apply"}:
            writes.extend(r for r in rest if r not in {"HEAD", "."} or sub != "checkout")
        elif sub in {"diff", "show", "log", "blame", "add", "ls-files", "grep", "status"}:
            reads.extend(r for r in rest if not r.startswith(("HEAD", "origin/")))
        for value in _option_values(cmd, ["-C"]):
            reads.append(value)
    elif prog in {"curl", "wget"}:
        writes.extend(_option_values(cmd, ["-o", "--output", "-O", "--output-document"]))
        for value in _option_values(
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
        for value in _option_values(cmd, ["-F", "--form"]):
            if "=@" in value or "=<" in value:
                reads.append(re.split(r"=[@<]", value, maxsplit=1)[1].split(";")[0])
    elif prog == "tar":
        writes.extend(_option_values(cmd, ["-C", "--directory"]))
        reads.extend(pos)
    elif prog == "unzip":
        writes.extend(_option_values(cmd, ["-d"]))
        reads.extend(pos)
    else:
        reads.extend(pos)
        for arg in cmd.args:
            if arg.startswith("--") and "=" in arg:
                value = arg.split("=", 1)[1]
                if value.startswith(("/", "~", "./", "../", "$HOME")):
                    reads.append(value)
    keep = [
        p for p in reads if p and p != "-" and not _is_url(p) and not PLACEHOLDER_RE.fullmatch(p)
    ]
    keep_w = [p for p in writes if p and p != "-" and not _is_url(p)]
    return keep, keep_w


_SECRET_NAME = re.compile(
    r"(?i)(TOKENS?($|_)|SECRET|PASSW(OR)?D|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL"
    r"|(^|_)AUTH($|_)|(^|_)SESSION($|_)|COOKIE|(^|_)PAT($|_)|(^|_)DSN($|_)|CONN(ECTION)?_?STR"
    r"|_KEY$)"
)
_VAR_REF = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
_NON_SECRET_VARS = frozenset({"TOKENIZERS_PARALLELISM", "GITHUB_TOKEN_PERMISSIONS"})


def is_secret_name(name: str) -> bool:
    """Whether an environment variable name looks like it holds a credential."""
    return name not in _NON_SECRET_VARS and bool(_SECRET_NAME.search(name))


class ActionFacts:
    """What the rules need to know about one :class:`Action`, computed once.

    Attributes are lazily computed views: the simple commands, inline code, read and written
    operands (resolved), the strings worth scanning for signatures.
    """

    def __init__(self, action: Action) -> None:
        self.action = action

    @cached_property
    def commands(self) -> tuple[SimpleCommand, ...]:
        parsed = self.action.parsed
        return parsed.commands if parsed else ()

    @cached_property
    def parse_error(self) -> str | None:
        parsed = self.action.parsed
        return parsed.error if parsed else None

    @cached_property
    def inline_code(self) -> tuple[tuple[str, str], ...]:
        parsed = self.action.parsed
        return parsed.inline_code if parsed else ()

    @cached_property
    def substitutions(self) -> tuple[str, ...]:
        parsed = self.action.parsed
        return parsed.substitutions if parsed else ()

    def _resolve(self, raw: str, cmd: SimpleCommand | None) -> Operand:
        cwd = cmd.cwd if cmd is not None else None
        return Operand(raw, self.action.resolve(raw, cwd), cmd)

    @cached_property
    def reads(self) -> tuple[Operand, ...]:
        out: list[Operand] = []
        kind = self.action.kind
        if self.action.command is None and kind in (ActionKind.READ, ActionKind.TOOL):
            out.extend(self._resolve(p, None) for p in self.action.paths)
        for cmd in self.commands:
            reads, _ = _operands(cmd)
            out.extend(self._resolve(p, cmd) for p in reads if not PLACEHOLDER_RE.search(p))
        return tuple(out)

    @cached_property
    def writes(self) -> tuple[Operand, ...]:
        out: list[Operand] = []
        kind = self.action.kind
        if self.action.command is None and kind in (
            ActionKind.WRITE,
            ActionKind.EDIT,
            ActionKind.DELETE,
        ):
            out.extend(self._resolve(p, None) for p in self.action.paths)
        for cmd in self.commands:
            _, writes = _operands(cmd)
            out.extend(self._resolve(p, cmd) for p in writes if not PLACEHOLDER_RE.search(p))
        return tuple(out)

    @cached_property
    def scan_texts(self) -> tuple[str, ...]:
        """Strings that may carry a signature: operands, inline code, tool strings, URL."""
        texts: list[str] = []
        for cmd in self.commands:
            if cmd.program in _DATA_PROGRAMS:
                continue
            if cmd.program == "git" and cmd.subcommand() in {"commit", "tag", "notes"}:
                continue
            pos = _positional(cmd)
            if cmd.program in _PATTERN_FIRST and pos:
                pos = pos[1:]
            texts.extend(pos)
            texts.extend(a.split("=", 1)[1] for a in cmd.args if a.startswith("-") and "=" in a)
            texts.extend(r.target for r in cmd.redirects)
        texts.extend(code for _, code in self.inline_code)
        if self.action.command is None:
            texts.extend(self.action.paths)
            if self.action.kind in (ActionKind.TOOL, ActionKind.NETWORK):
                texts.extend(self.action.iter_strings())
        if self.action.url:
            texts.append(self.action.url)
        return tuple(texts)

    def relative(self, op: Operand) -> str | None:
        return self.action.relative(op.resolved)

    def action_programs(self) -> set[str]:
        return {c.program for c in self.commands}

    def network_commands(self) -> list[SimpleCommand]:
        return [c for c in self.commands if is_network_command(c)]


# -- rule machinery -----------------------------------------------------------------------------

RuleTest = Callable[[ActionFacts], Iterable[str]]


@dataclass(frozen=True, slots=True)
class Rule:
    """One lexical rule.

    Attributes:
        id: stable identifier (kebab-case), recorded in decisions and the audit log.
        description: one sentence for reports.
        verdict: what a match means.
        test: returns the reasons the action matches (empty: no match).
    """

    id: str
    description: str
    verdict: Verdict
    test: RuleTest

    def check(self, facts: ActionFacts) -> RuleMatch | None:
        reasons = tuple(dict.fromkeys(r for r in self.test(facts) if r))
        if not reasons:
            return None
        return RuleMatch(rule=self, reasons=reasons)


@dataclass(frozen=True, slots=True)
class RuleMatch:
    """A rule that matched, with the reasons it gave."""

    rule: Rule
    reasons: tuple[str, ...]

    @property
    def verdict(self) -> Verdict:
        return self.rule.verdict


@dataclass
class RuleSet:
    """An ordered collection of :class:`Rule`; :func:`default_rules` is the shipped set.

    Raises:
        ValueError: two rules share an id.
    """

    rules: list[Rule] = field(default_factory=list)

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for rule in self.rules:
            if rule.id in seen:
                raise ValueError(f"duplicate rule id: {rule.id}")
            seen.add(rule.id)

    @classmethod
    def default(cls) -> RuleSet:
        return cls(list(default_rules()))

    def ids(self) -> list[str]:
        return [r.id for r in self.rules]

    def add(self, rule: Rule) -> None:
        if rule.id in self.ids():
            raise ValueError(f"duplicate rule id: {rule.id}")
        self.rules.append(rule)

    def without(self, *ids: str) -> RuleSet:
        """A copy with the named rules removed (unknown ids raise ``KeyError``)."""
        known = set(self.ids())
        missing = [i for i in ids if i not in known]
        if missing:
            raise KeyError(f"unknown rule id(s): {', '.join(missing)}")
        return RuleSet([r for r in self.rules if r.id not in ids])

    def evaluate(self, action: Action) -> list[RuleMatch]:
        """Every match of every rule against ``action``, in rule order."""
        facts = ActionFacts(action)
        matches: list[RuleMatch] = []
        for rule in self.rules:
            match = rule.check(facts)
            if match is not None:
                matches.append(match)
        return matches


# -- path classification ------------------------------------------------------------------------

_EXAMPLE_ENV = re.compile(r"^\.env\.(example|sample|template|dist|defaults|tmpl|schema|test)$")
_KEY_BASENAMES = re.compile(r"^id_(rsa|dsa|ecdsa|ed25519|ecdsa_sk|ed25519_sk)$")
_HOME_SECRET_FILES = (
    ".aws/credentials",
    ".netrc",
    ".git-credentials",
    ".pypirc",
    ".docker/config.json",
    ".kube/config",
    ".config/gh/hosts.yml",
    ".npmrc",
    ".config/gcloud/credentials.db",
    ".config/gcloud/access_tokens.db",
    ".config/gcloud/application_default_credentials.json",
    ".azure/accessTokens.json",
    ".azure/msal_token_cache.json",
    ".config/hub",
    ".terraform.d/credentials.tfrc.json",
    ".vault-token",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".config/pip/pip.conf",
)
_HOME_SECRET_DIRS = (
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gh",
    ".kube",
    ".docker",
    ".config/gcloud",
    ".azure",
    ".password-store",
    ".local/share/keyrings",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
)
_HOME_HISTORY = (".bash_history", ".zsh_history", ".python_history", ".psql_history")
_SYSTEM_SECRETS = ("/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/ssl/private")
_SYSTEM_SECRET_DIRS = ("/run/secrets", "/var/run/secrets", "/root")
_KEY_MATERIAL = re.compile(r"\.(pem|key|p12|pfx|jks|keystore|kdbx|gpg|asc)$", re.IGNORECASE)
_TEXT_SECRETS = re.compile(
    r"\.aws/credentials|\.ssh/id_[a-z0-9_]+(?!\.pub)\b|\.git-credentials|(?<![\w.])\.netrc\b"
    r"|/etc/shadow|\.docker/config\.json|\.kube/config|gh/hosts\.yml|\.vault-token"
    r"|/var/run/secrets|/run/secrets/|\.pypirc"
)
_PROC_ENVIRON = re.compile(r"/proc/[^/\s'\"]+/(environ|mem)\b")


def secret_file_reason(action: Action, resolved: str) -> str | None:
    """Why ``resolved`` is a credential file, or ``None``."""
    home = action.home_dir
    base = resolved.rsplit("/", 1)[-1]
    if base == ".env" or (base.startswith(".env.") and not _EXAMPLE_ENV.match(base)):
        return f"{resolved} (a dotenv file: holds secrets)"
    if _KEY_BASENAMES.match(base):
        return f"{resolved} (an SSH private key)"
    for rel in _HOME_SECRET_FILES:
        if resolved == f"{home}/{rel}" or resolved.endswith("/" + rel):
            return f"{resolved} (a credential file)"
    for rel in _HOME_HISTORY:
        if resolved == f"{home}/{rel}":
            return f"{resolved} (a shell history: often holds secrets)"
    for path in _SYSTEM_SECRETS:
        if is_within(resolved, path):
            return f"{resolved} (system secrets)"
    if _PROC_ENVIRON.search(resolved + " "):
        return f"{resolved} (a process's environment or memory)"
    return None


def secret_dir_reason(action: Action, resolved: str) -> str | None:
    """Why ``resolved`` lies in a credential directory, or ``None``."""
    home = action.home_dir
    for rel in _HOME_SECRET_DIRS:
        if is_within(resolved, f"{home}/{rel}"):
            return f"{resolved} (inside ~/{rel}, credentials)"
    for path in _SYSTEM_SECRET_DIRS:
        if is_within(resolved, path) and not is_within(action.workspace, path):
            return f"{resolved} (inside {path})"
    return None


CI_PATTERNS = (
    ".github/workflows/**",
    ".github/actions/**",
    ".gitlab-ci.yml",
    ".gitlab-ci.yaml",
    ".gitlab/ci/**",
    ".circleci/**",
    ".travis.yml",
    "azure-pipelines.yml",
    "azure-pipelines.yaml",
    ".azure-pipelines/**",
    "Jenkinsfile",
    "Jenkinsfile.*",
    "bitbucket-pipelines.yml",
    ".buildkite/**",
    ".drone.yml",
    ".drone.star",
    "appveyor.yml",
    ".appveyor.yml",
    ".woodpecker.yml",
    ".woodpecker/**",
    "cloudbuild.yaml",
    "cloudbuild.yml",
    ".cirrus.yml",
    ".semaphore/**",
    "codefresh.yml",
    "bitrise.yml",
    ".github/workflows",
    ".github/actions",
    ".circleci",
    ".buildkite",
)
"""Workspace-relative gitignore-style patterns of CI/workflow configuration."""

_CI_SPEC = pathspec.GitIgnoreSpec.from_lines([p.lower() for p in CI_PATTERNS])
_GOVERNANCE_FILES = pathspec.GitIgnoreSpec.from_lines(
    [
        *("CODEOWNERS", ".github/CODEOWNERS", "docs/CODEOWNERS", ".github/settings.yml"),
        *("/action.yml", "/action.yaml", ".github/dependabot.yml", ".gitmodules"),
        # Chimera's own settings (sandbox mode, network, environment allowlist, budgets): an
        # agent must not loosen what confines it; a resumed or approved run re-reads them.
        "/chimera.toml",
    ],
)


def is_ci_path(relative: str) -> bool:
    """Whether a workspace-relative path is CI configuration (case-insensitive)."""
    rel = relative.lower()
    while rel.startswith("./"):
        rel = rel[2:]
    return bool(rel) and _CI_SPEC.match_file(rel)


def _ci_in_text(text: str) -> bool:
    lowered = text.lower()
    return bool(
        re.search(
            r"\.github/(workflows|actions)|\.gitlab-ci\.ya?ml|\.circleci/|\.travis\.yml"
            r"|azure-pipelines\.ya?ml|jenkinsfile|bitbucket-pipelines\.yml|\.buildkite/"
            r"|\.drone\.yml|\.woodpecker",
            lowered,
        )
    )


# -- the rules -----------------------------------------------------------------------------------


def _env_dump(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        prog, pos = cmd.program, _positional(cmd)
        if prog == "env" and not pos:
            yield "`env` dumps the whole environment (secrets included)"
        elif prog == "printenv" and not pos:
            yield "`printenv` dumps the whole environment"
        elif prog == "export" and (not cmd.args or cmd.args == ("-p",)):
            yield "`export -p` dumps the exported environment"
        elif prog in {"declare", "typeset"} and set(cmd.args) & {"-x", "-p", "-px", "-xp"}:
            yield f"`{prog} {' '.join(cmd.args)}` dumps variables"
        elif (prog == "set" and not cmd.args) or (prog == "compgen" and cmd.args == ("-v",)):
            yield f"`{prog}` without arguments lists every variable"
    for interp, code in f.inline_code:
        if re.search(r"os\.environ\b(?!\s*(\[|\.get\(|\.setdefault\(|\.pop\())", code):
            yield f"{interp} code reads the whole os.environ"
        if re.search(r"process\.env\b(?!\s*(\.|\[))", code):
            yield f"{interp} code reads the whole process.env"
        if re.search(r"%ENV\b|\bENV\.(to_h|each|to_a|keys|inspect)|getenv\(\s*\)", code):
            yield f"{interp} code dumps the environment"


def _env_secret_read(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if cmd.program == "printenv":
            for name in _positional(cmd):
                if is_secret_name(name):
                    yield f"`printenv {name}` reads a credential variable"
    for interp, code in f.inline_code:
        for m in re.finditer(
            r"(?:os\.environ(?:\.get)?\s*[\[(]\s*|os\.getenv\(\s*|process\.env\.|ENV\[\s*)"
            r"['\"]?([A-Za-z_][A-Za-z0-9_]*)",
            code,
        ):
            if is_secret_name(m.group(1)):
                yield f"{interp} code reads the credential variable {m.group(1)}"


def _secret_var_print(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if cmd.program not in {"echo", "printf"}:
            continue
        for word in cmd.args:
            for m in _VAR_REF.finditer(word):
                if is_secret_name(m.group(1)):
                    yield f"`{cmd.program}` prints the credential variable ${m.group(1)}"


def _secret_var_reference(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if cmd.program in {"export", "unset"}:
            continue
        words = [*cmd.args, *(r.target for r in cmd.redirects)]
        for word in words:
            for m in _VAR_REF.finditer(word):
                if is_secret_name(m.group(1)):
                    yield f"`{cmd.program}` expands the credential variable ${m.group(1)}"


def _proc_environ(f: ActionFacts) -> Iterable[str]:
    texts = list(f.scan_texts)
    if f.action.command is not None:
        texts.append(f.action.command)
    for text in texts:
        m = _PROC_ENVIRON.search(text)
        if m:
            yield f"{m.group(0)} exposes another process's environment or memory"


def _secret_file(f: ActionFacts) -> Iterable[str]:
    for op in f.reads:
        reason = secret_file_reason(f.action, op.resolved)
        if reason:
            yield f"reads {reason}"
    for op in f.writes:
        if op.command is not None and op.command.program == "mv":
            reason = secret_file_reason(f.action, op.resolved)
            if reason and op.raw in op.command.args[:-1]:
                yield f"moves {reason}"
    for text in f.scan_texts:
        m = _TEXT_SECRETS.search(text)
        if m and not text.rstrip().endswith(".pub"):
            yield f"mentions the credential path {m.group(0)}"
    for interp, code in f.inline_code:
        for literal in _code_path_literals(code):
            reason = secret_file_reason(f.action, f.action.resolve(literal))
            if reason:
                yield f"{interp} code opens {reason}"


_STRING_LITERAL = re.compile(r"""(?<![A-Za-z0-9_])(['"])([^'"\s]{1,200})\1""")


def _code_path_literals(code: str) -> list[str]:
    """String literals in inline code that look like paths (``'.env'``, ``"~/.netrc"``)."""
    return [
        m.group(2)
        for m in _STRING_LITERAL.finditer(code)
        if "/" in m.group(2) or m.group(2).startswith((".", "~"))
    ]


def _secret_dir(f: ActionFacts) -> Iterable[str]:
    for op in (*f.reads, *f.writes):
        reason = secret_dir_reason(f.action, op.resolved)
        if reason:
            yield f"touches {reason}"


def _key_material(f: ActionFacts) -> Iterable[str]:
    for op in f.reads:
        base = op.resolved.rsplit("/", 1)[-1]
        if _KEY_MATERIAL.search(base) and f.action.in_workspace(op.resolved):
            yield f"reads {op.raw}, which may be key material (fine for test fixtures)"


_KEYCHAIN = re.compile(
    r"^(security (find-(generic|internet)-password|dump-keychain|export)"
    r"|secret-tool (lookup|search)|pass show|keyring get|gpg .*--export-secret"
    r"|gh auth token|gh auth status .*(-t|--show-token)|git credential(-store|-cache)? (fill|get)"
    r"|op (read|item get)|vault (read|kv get)|aws (configure (get|export-credentials)"
    r"|sts get-session-token|secretsmanager get-secret-value)|gcloud auth print-access-token)"
)


def _keychain(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        line = " ".join(cmd.argv)
        if _KEYCHAIN.search(line):
            yield f"`{line[:60]}` reads stored credentials"


_SECRET_FORMATS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("an AWS access key id", re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("a GitHub token", re.compile(r"\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}\b")),
    ("a GitHub fine-grained token", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{60,}\b")),
    ("a Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("an Anthropic key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("an OpenAI key", re.compile(r"\bsk-(proj-)?[A-Za-z0-9_-]{40,}")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("a Stripe live key", re.compile(r"\b[sr]k_live_[0-9A-Za-z]{20,}")),
    ("a GitLab token", re.compile(r"\bglpat-[0-9A-Za-z_-]{20}\b")),
    ("an npm token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    ("a PyPI token", re.compile(r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}")),
)
_PRIVATE_KEY_BLOCK = re.compile(r"-----BEGIN ([A-Z]+ )?PRIVATE KEY-----")


def find_secret_formats(text: str) -> list[tuple[str, str]]:
    """``(label, match)`` for every known credential format in ``text`` (AWS, GitHub, Slack,
    OpenAI, Anthropic, Google, Stripe, GitLab, npm, PyPI tokens). AWS's documented
    ``...EXAMPLE`` keys are not reported."""
    found: list[tuple[str, str]] = []
    for label, pattern in _SECRET_FORMATS:
        for m in pattern.finditer(text):
            if "EXAMPLE" not in m.group(0).upper():
                found.append((label, m.group(0)))
    return found


def _secret_formats(text: str) -> Iterable[str]:
    seen: set[str] = set()
    for label, match in find_secret_formats(text):
        if label not in seen:
            seen.add(label)
            yield f"contains {label} ({match[:8]}…)"


def _secret_in_content(f: ActionFacts) -> Iterable[str]:
    texts = [f.action.content or "", f.action.command or "", f.action.url or ""]
    for text in texts:
        yield from _secret_formats(text)


def _private_key_content(f: ActionFacts) -> Iterable[str]:
    for text in (f.action.content or "", f.action.command or ""):
        if _PRIVATE_KEY_BLOCK.search(text):
            yield "writes a PEM private key block"


def _is_loopback(text: str) -> bool:
    return bool(
        re.search(
            r"^(https?://)?(localhost|127\.\d+\.\d+\.\d+|\[::1\]|0\.0\.0\.0)([:/]|$)",
            text,
        )
    )


def _hosts(cmd: SimpleCommand) -> list[str]:
    return [a for a in _positional(cmd) if _is_url(a) or re.match(r"^[\w.-]+\.\w+(:\d+)?(/|$)", a)]


def _only_loopback(cmd: SimpleCommand) -> bool:
    pos = _positional(cmd)
    hosts = [p for p in pos if not re.fullmatch(r"\d+", p)]
    return bool(hosts) and all(_is_loopback(h) for h in hosts)


_UPLOAD_FLAGS = (
    "-d",
    "--data",
    "--data-binary",
    "--data-raw",
    "--data-urlencode",
    "--data-ascii",
    "-F",
    "--form",
    "--form-string",
    "-T",
    "--upload-file",
    "--json",
    "--post-data",
    "--post-file",
    "--body-data",
    "--body-file",
)


def _net_upload(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if cmd.program not in {"curl", "wget", "http", "https", "xh", "httpie"}:
            continue
        uploads = [a for a in cmd.args if a in _UPLOAD_FLAGS or a.split("=", 1)[0] in _UPLOAD_FLAGS]
        method = _option_values(cmd, ["-X", "--request", "--method"])
        if cmd.program in {"http", "https", "xh"} and any(
            re.match(r"^[\w-]+(:=|=|@)", a) for a in _positional(cmd)[1:]
        ):
            uploads.append("key=value body")
        if any(m.upper() in {"POST", "PUT", "PATCH"} for m in method):
            uploads.append("-X " + method[0])
        if uploads and not _only_loopback(cmd):
            yield f"`{cmd.program}` sends data ({', '.join(uploads)}) to a remote host"


def _net_upload_local(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if (
            cmd.program in {"curl", "wget", "http", "xh"}
            and _only_loopback(cmd)
            and any(a in _UPLOAD_FLAGS or a.split("=", 1)[0] in _UPLOAD_FLAGS for a in cmd.args)
        ):
            yield f"`{cmd.program}` posts to a local server"


def _net_pipe_in(f: ActionFacts) -> Iterable[str]:
    for cmd in f.network_commands():
        fed = cmd.stdin_piped or any(r.op in {"<", "<<<", "<<"} for r in cmd.redirects)
        if not fed:
            continue
        if cmd.program in {"curl", "wget"} and not any(
            "@-" in a or a == "-" or "/dev/stdin" in a for a in cmd.args
        ):
            continue
        upstream = ", ".join(cmd.pipe_from) or "a file"
        yield f"data from {upstream} is fed into `{cmd.program}` (exfiltration shape)"


_DNS_TOOLS = frozenset({"dig", "nslookup", "host", "drill", "ping", "resolvectl"})


def _net_substitution(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if not is_network_command(cmd) and cmd.program not in _DNS_TOOLS:
            continue
        for arg in cmd.args:
            if PLACEHOLDER_RE.search(arg):
                yield f"`{cmd.program}` sends the output of a command substitution"
                break
            for m in _VAR_REF.finditer(arg):
                if is_secret_name(m.group(1)):
                    yield f"`{cmd.program}` sends the credential variable ${m.group(1)}"


def _dns_exfil(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if cmd.program in _DNS_TOOLS:
            for arg in cmd.args:
                if PLACEHOLDER_RE.search(arg) or "$" in arg:
                    yield f"`{cmd.program}` looks up a name built from data (DNS exfiltration)"
                    break
            if cmd.stdin_piped and "xargs" in cmd.wrappers:
                yield f"`{cmd.program}` looks up names fed from a pipe (DNS exfiltration)"


def _dev_tcp(f: ActionFacts) -> Iterable[str]:
    text = f.action.command or ""
    if re.search(r"/dev/(tcp|udp)/", text):
        yield "uses bash's /dev/tcp or /dev/udp network redirection"


def _reverse_shell(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if cmd.program in {"nc", "ncat", "netcat"} and _has_flag(
            cmd, "-e", "-c", "--exec", "--sh-exec", "--lua-exec"
        ):
            yield f"`{cmd.program} -e` attaches a shell to a socket"
        if cmd.program == "socat" and any(re.match(r"(?i)(exec|system):", a) for a in cmd.args):
            yield "`socat exec:` attaches a program to a socket"
        if (
            cmd.program in SHELLS
            and "-i" in cmd.args
            and any("/dev/tcp" in r.target for r in cmd.redirects)
        ):
            yield "interactive shell redirected to a socket"
        if cmd.program == "mkfifo" and any(p in _NET_SENDERS for p in f.action_programs()):
            yield "a fifo wired to a network tool (reverse shell shape)"
    for interp, code in f.inline_code:
        if re.search(r"\bsocket\b", code) and re.search(r"dup2|pty\.spawn|subprocess|/bin/", code):
            yield f"{interp} code connects a shell to a socket"


def _remote_copy(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if cmd.program in {"scp", "rsync", "sftp", "rclone"}:
            pos = _positional(cmd)
            if cmd.program == "rclone":
                pos = pos[1:]
            if pos and re.match(r"^([\w.-]+@)?[\w.-]+:(?!//)", pos[-1]) and len(pos) >= 2:
                yield f"`{cmd.program}` copies local files to the remote {pos[-1]}"


_NET_CODE = re.compile(
    r"requests\.(post|put|get|patch)|urllib|urlopen|http\.client|httpx\.|socket\.|\bfetch\(|axios"
    r"|https?\.request|Net::HTTP|LWP::|smtplib|ftplib|aiohttp"
)
_ENV_CODE = re.compile(r"os\.environ|os\.getenv|process\.env|\bENV\[|%ENV|getenv\(")


def _inline_net(f: ActionFacts) -> Iterable[str]:
    for interp, code in f.inline_code:
        if _NET_CODE.search(code) and (_ENV_CODE.search(code) or _TEXT_SECRETS.search(code)):
            yield f"{interp} code reads the environment or credentials and talks to the network"


def _inline_net_only(f: ActionFacts) -> Iterable[str]:
    for interp, code in f.inline_code:
        if _NET_CODE.search(code):
            yield f"{interp} code talks to the network"


_METADATA = re.compile(
    r"169\.254\.169\.254|metadata\.google\.internal|100\.100\.100\.200|fd00:ec2::254"
)


def _cloud_metadata(f: ActionFacts) -> Iterable[str]:
    for text in (*f.scan_texts, f.action.command or ""):
        if _METADATA.search(text):
            yield "reaches the cloud instance-metadata service (credentials)"
            return


def _network_fetch(f: ActionFacts) -> Iterable[str]:
    for cmd in f.network_commands():
        if _positional(cmd) and not _only_loopback(cmd):
            yield f"`{cmd.program}` reaches the network (the sandbox has none)"
    for cmd in f.commands:
        if cmd.program == "python" and cmd.args[:2] in (
            ("-m", "http.server"),
            ("-m", "SimpleHTTPServer"),
        ):
            yield "`python -m http.server` serves files over the network"
        elif cmd.program == "git" and cmd.subcommand() in {"clone", "fetch", "pull", "ls-remote"}:
            yield f"`git {cmd.subcommand()}` reaches the network"


def _url_action(f: ActionFacts) -> Iterable[str]:
    url = f.action.url
    if f.action.kind is not ActionKind.NETWORK or not url:
        return
    if re.match(r"(?i)^(file|gopher|dict|ldap|ftp)://", url):
        yield f"{url.split(':', 1)[0]}:// URLs read local files or speak legacy protocols"


def _url_suspicious(f: ActionFacts) -> Iterable[str]:
    url = f.action.url
    if not url:
        return
    if re.search(r"[?&/](token|key|secret|password|passwd|auth|session)=", url, re.IGNORECASE):
        yield "the URL carries a credential-looking parameter"
    if re.search(r"[A-Za-z0-9+/_-]{80,}", url):
        yield "the URL carries a long encoded blob"


def _outside_workspace(f: ActionFacts) -> Iterable[str]:
    for op in f.writes:
        path = op.resolved
        if f.action.in_workspace(path) or _DEVNULL.match(path):
            continue
        if any(is_within(path, t) for t in _TEMP_ROOTS) and not is_within(path, f.action.home_dir):
            continue  # scratch space, unless the home folder itself lives there
        yield f"writes {op.raw} → {path}, outside the workspace {f.action.workspace}"


def _read_outside(f: ActionFacts) -> Iterable[str]:
    if f.action.command is not None:
        return
    for op in f.reads:
        if not f.action.in_workspace(op.resolved):
            yield f"reads {op.resolved}, outside the workspace"


def _git_internals(f: ActionFacts) -> Iterable[str]:
    for op in f.writes:
        rel = f.relative(op)
        if rel is not None and (rel == ".git" or rel.startswith(".git/")):
            yield f"writes {rel} (git internals: hooks and config execute code)"


def _ci_write(f: ActionFacts) -> Iterable[str]:
    for op in f.writes:
        rel = f.relative(op)
        if rel is not None and is_ci_path(rel):
            yield f"changes {rel}: CI/workflow files are never changed by Chimera"
    for interp, code in f.inline_code:
        if _ci_in_text(code) and re.search(
            r"['\"][wax]\+?['\"]|write|unlink|remove|rmtree|rename|replace|truncate", code
        ):
            yield f"{interp} code writes CI/workflow configuration"


def _ci_mention(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if cmd.program in READ_ONLY_PROGRAMS or cmd.program in _DATA_PROGRAMS:
            continue
        if cmd.program == "git" and cmd.subcommand() in {
            "diff",
            "log",
            "show",
            "status",
            "blame",
            "ls-files",
            "commit",
        }:
            continue
        reads, _ = _operands(cmd)
        for raw in reads:
            rel = f.action.relative(f.action.resolve(raw, cmd.cwd))
            if rel is not None and is_ci_path(rel):
                yield f"`{cmd.program}` operates on CI configuration {rel}"
    for interp, code in f.inline_code:
        if _ci_in_text(code):
            yield f"{interp} code mentions CI/workflow configuration"


def _governance_files(f: ActionFacts) -> Iterable[str]:
    for op in f.writes:
        rel = f.relative(op)
        if rel is not None and _GOVERNANCE_FILES.match_file(rel):
            yield f"changes {rel} (repository governance/automation settings)"


_SYSTEM_DIRS = frozenset(
    {"/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64", "/opt", "/proc", "/root"}
    | {"/sbin", "/srv", "/sys", "/usr", "/var", "/mnt", "/media", "/snap", "/Users", "/System"}
)


def _destroy_root(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if cmd.program not in {"rm", "shred", "chmod", "chown", "find", "mv"}:
            continue
        if "--no-preserve-root" in cmd.args:
            yield f"`{cmd.program} --no-preserve-root`"
        for raw in _positional(cmd) if cmd.program != "find" else _operands(cmd)[1]:
            if cmd.program in {"chmod", "chown"} and raw == _positional(cmd)[0]:
                continue
            path = f.action.resolve(raw.rstrip("*") or "/", cmd.cwd)
            if raw.endswith("/*"):
                path = f.action.resolve(raw[:-2] or "/", cmd.cwd)
            if (
                path in _SYSTEM_DIRS
                or path == f.action.home_dir
                or (path != f.action.workspace and is_within(f.action.workspace, path))
            ):
                if cmd.program == "find" or _has_flag(cmd, "-r", "-R", "--recursive", "-f"):
                    yield f"`{cmd.program}` on {path} destroys the system, home or parent tree"
                elif cmd.program in {"rm", "shred", "mv"}:
                    yield f"`{cmd.program}` on {path}"


def _destroy_workspace(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if cmd.program == "rm" and _has_flag(cmd, "-r", "-R", "--recursive"):
            for raw in _positional(cmd):
                path = f.action.resolve(raw.rstrip("*") or ".", cmd.cwd)
                if path == f.action.workspace:
                    yield f"`rm -r {raw}` deletes the whole workspace"
    if f.action.kind is ActionKind.DELETE and f.action.command is None:
        for op in f.writes:
            if op.resolved == f.action.workspace:
                yield "deletes the workspace root"


_DEVICE = re.compile(r"^/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|mapper/|md|loop|sr)")


def _disk_destroy(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if re.match(
            r"^(mkfs(\.\w+)?|wipefs|fdisk|sfdisk|gdisk|parted|mkswap|blkdiscard)$", cmd.program
        ):
            yield f"`{cmd.program}` rewrites a disk or partition"
    for op in f.writes:
        if _DEVICE.match(op.resolved):
            yield f"writes to the block device {op.resolved}"


_FORK_BOMB = re.compile(r"(\S+)\s*\(\s*\)\s*\{[^}]*\1\s*\|\s*\1\s*&?[^}]*\}\s*;?\s*\1")


def _fork_bomb(f: ActionFacts) -> Iterable[str]:
    text = f.action.command or ""
    if _FORK_BOMB.search(text) or re.search(r":\(\)\s*\{\s*:\s*\|\s*:", text):
        yield "a fork bomb"
    for interp, code in f.inline_code:
        if re.search(r"while\s+(True|1)\s*:\s*os\.fork\(\)|for\s*\(;;\)\s*fork\(\)", code):
            yield f"{interp} fork bomb"


def _power(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        prog = cmd.program
        if prog in {"shutdown", "reboot", "halt", "poweroff"} or (
            prog == "init" and cmd.args[:1] in (("0",), ("6",))
        ):
            yield f"`{prog}` stops the machine"
        if prog == "systemctl" and cmd.subcommand() in {"poweroff", "reboot", "halt", "kexec"}:
            yield f"`systemctl {cmd.subcommand()}` stops the machine"
        if prog == "kill" and cmd.args[-1:] == ("-1",):
            yield "`kill -1` signals every process"


def _process_kill(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if cmd.program in {"killall", "pkill"}:
            yield f"`{cmd.program}` kills processes by name"


def _git_push(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if cmd.program != "git" or cmd.subcommand() != "push":
            continue
        if _has_flag(cmd, "-f", "--force", "--force-with-lease", "--mirror") or any(
            a.startswith("+") for a in cmd.args
        ):
            yield "`git push --force` rewrites remote history"
        elif (
            "--delete" in cmd.args
            or "-d" in cmd.args
            or any(a.startswith(":") for a in _positional(cmd))
        ):
            yield "`git push --delete` removes remote refs"
        else:
            yield "`git push` publishes from the agent (publishing is a separate, scanned job)"


def _git_remote(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if cmd.program != "git":
            continue
        sub = cmd.subcommand()
        pos = _positional(cmd)
        rest = pos[pos.index(sub) + 1 :] if sub in pos else []
        if (
            sub == "remote"
            and rest
            and rest[0]
            in {
                "add",
                "set-url",
                "rename",
                "remove",
                "rm",
                "set-branches",
            }
        ):
            yield f"`git remote {rest[0]}` changes where the repository talks to"
        if sub == "submodule" and rest[:1] == ["add"]:
            yield "`git submodule add` pulls in a remote repository"


_GIT_CONFIG_HARMLESS = re.compile(
    r"^(user\.(name|email|signingkey)|core\.(autocrlf|filemode|ignorecase|quotepath|eol)"
    r"|init\.defaultbranch|color\..*|advice\..*|pull\.(rebase|ff)|merge\.conflictstyle"
    r"|push\.default|rerere\.enabled|commit\.gpgsign|tag\.gpgsign|log\..*|diff\.(renames|algorithm)"
    r"|safe\.directory|fetch\.prune|rebase\.autosquash)$",
    re.IGNORECASE,
)
_GIT_CONFIG_DANGEROUS = re.compile(
    r"^(core\.(hookspath|sshcommand|pager|editor|fsmonitor|gitproxy|askpass|attributesfile"
    r"|worktree|excludesfile)|credential\..*|url\..*|remote\..*|alias\..*|http\..*|https\..*"
    r"|include\..*|includeif\..*|filter\..*|diff\..*\.(textconv|command)|protocol\..*"
    r"|gpg\.program|sequence\.editor|uploadpack\..*|receive\..*|branch\..*\.remote"
    r"|submodule\..*|merge\..*\.driver|sendemail\..*)$",
    re.IGNORECASE,
)
_GIT_CONFIG_READ = frozenset(
    {"--get", "--get-all", "--get-regexp", "--list", "-l", "--show-origin", "--get-urlmatch"}
)


def _git_config_parts(cmd: SimpleCommand) -> tuple[list[str], bool, bool]:
    """(positional args after ``config``, is a read, scope is global/system)."""
    args = list(cmd.args)
    if "config" not in args:
        return [], True, False
    rest = args[args.index("config") + 1 :]
    scope = any(a in {"--global", "--system"} for a in rest)
    is_read = any(a in _GIT_CONFIG_READ for a in rest)
    pos = [a for a in rest if not a.startswith("-")]
    if pos[:1] == ["get"] or pos[:1] == ["list"]:
        is_read = True
    if pos[:1] in (["set"], ["unset"]):
        pos = pos[1:]
        is_read = False
    if any(a in {"--unset", "--unset-all", "--add", "--replace-all", "-e", "--edit"} for a in rest):
        is_read = False
    elif len(pos) <= 1 and not is_read:
        is_read = True
    return pos, is_read, scope


def _git_config_block(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if cmd.program != "git":
            continue
        for value in _option_values(cmd, ["-c"]):
            key = value.split("=", 1)[0]
            if _GIT_CONFIG_DANGEROUS.match(key):
                yield f"`git -c {key}=…` injects configuration that runs code or redirects git"
        if cmd.subcommand() != "config":
            continue
        pos, is_read, _ = _git_config_parts(cmd)
        if is_read:
            continue
        key = pos[0] if pos else ""
        if not key or _GIT_CONFIG_DANGEROUS.match(key):
            yield f"`git config {key}` changes credentials, remotes, hooks or executed programs"


def _git_config_review(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if cmd.program != "git" or cmd.subcommand() != "config":
            continue
        pos, is_read, scope = _git_config_parts(cmd)
        if is_read or not pos or _GIT_CONFIG_DANGEROUS.match(pos[0]):
            continue
        if scope:
            yield f"`git config --global {pos[0]}` changes configuration outside the workspace"
        elif not _GIT_CONFIG_HARMLESS.match(pos[0]):
            yield f"`git config {pos[0]}` is not a known-harmless setting"


def _git_config_warn(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if cmd.program != "git" or cmd.subcommand() != "config":
            continue
        pos, is_read, scope = _git_config_parts(cmd)
        if not is_read and pos and not scope and _GIT_CONFIG_HARMLESS.match(pos[0]):
            yield f"`git config {pos[0]}` changes local repository settings"


def _git_rewrite(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if cmd.program == "git-filter-repo":
            yield "`git filter-repo` rewrites history"
        if cmd.program != "git":
            continue
        sub = cmd.subcommand()
        if sub in {"filter-branch", "filter-repo", "replace"}:
            yield f"`git {sub}` rewrites history"
        elif sub == "update-ref" and "-d" in cmd.args:
            yield "`git update-ref -d` deletes a ref"
        elif sub == "reflog" and "expire" in cmd.args:
            yield "`git reflog expire` drops recovery points"
        elif sub == "update-index" and _has_flag(cmd, "--assume-unchanged", "--skip-worktree"):
            yield "`git update-index` hides changes from git status"


def _git_discard(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if cmd.program != "git":
            continue
        sub = cmd.subcommand()
        if sub == "reset" and "--hard" in cmd.args:
            yield "`git reset --hard` discards uncommitted work"
        elif sub == "clean" and _has_flag(cmd, "-f", "--force"):
            yield "`git clean -f` deletes untracked files"
        elif sub == "branch" and _has_flag(cmd, "-D"):
            yield "`git branch -D` deletes a branch"
        elif sub == "stash" and ("drop" in cmd.args or "clear" in cmd.args):
            yield "`git stash drop/clear` discards stashed work"
        elif sub == "commit" and _has_flag(cmd, "--no-verify", "-n"):
            yield "`git commit --no-verify` skips the repository's hooks"


_PIP_LIKE = frozenset(
    {"pip", "pipx", "pip3", "uv", "poetry", "pdm", "conda", "mamba", "easy_install"}
)
_JS_LIKE = frozenset({"npm", "yarn", "pnpm", "bun"})
_VCS_SPEC = re.compile(r"^(git|hg|svn|bzr)\+|^(https?|ftp|file|git|ssh)://|^[\w.-]+@[\w.-]+:")
_INDEX_OPTS = (
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    "--trusted-host",
    "--registry",
    "--source",
    "--index",
)


_INSTALL_OPTS_WITH_VALUE = frozenset(
    {"-r", "--requirement", "-c", "--constraint", "-t", "--target", "--prefix", "--root"}
    | {"--platform", "--python-version", "--src", "--cache-dir", "--log", "--proxy"}
    | {"--upgrade-strategy", "--progress-bar", "--python", "-p", "--only-binary", "--no-binary"}
    | set(_INDEX_OPTS)
)


def _install_parts(f: ActionFacts) -> Iterable[tuple[SimpleCommand, list[str]]]:
    """(command, package arguments) for each package-manager install."""
    for cmd in f.commands:
        prog = cmd.program
        args = list(cmd.args)
        if prog == "python" and args[:2] == ["-m", "pip"]:
            args = args[2:]
            prog = "pip"
        if prog == "uv" and args[:1] == ["pip"]:
            args = args[1:]
            prog = "pip"
        if prog in _PIP_LIKE | _JS_LIKE | {"gem", "cargo", "go", "composer", "brew"}:
            pos: list[str] = []
            skip = False
            for arg in args:
                if skip:
                    skip = False
                elif arg in {"-e", "--editable"}:
                    continue  # the editable target is itself a package spec
                elif arg in _INSTALL_OPTS_WITH_VALUE:
                    skip = True
                elif not arg.startswith("-"):
                    pos.append(arg)
            if pos and pos[0] in {"install", "add", "i", "get", "require", "inject"}:
                yield cmd, pos[1:]


def _install_url(f: ActionFacts) -> Iterable[str]:
    for cmd, packages in _install_parts(f):
        for pkg in packages:
            if (
                _VCS_SPEC.search(pkg)
                or pkg.startswith("github:")
                or (cmd.program in _JS_LIKE and re.fullmatch(r"[\w.-]+/[\w.-]+(#.*)?", pkg))
            ):
                yield f"`{cmd.program}` installs from a URL or repository: {pkg}"
        for value in _option_values(cmd, list(_INDEX_OPTS)):
            if not _is_loopback(value) and not value.startswith((".", "/")):
                yield f"`{cmd.program}` installs from an extra index or registry: {value}"
        for value in _option_values(cmd, ["-r", "--requirement", "-c", "--constraint"]):
            if _is_url(value):
                yield f"`{cmd.program}` reads requirements from a URL: {value}"
        if cmd.program == "cargo" and "--git" in cmd.args:
            yield "`cargo install --git` builds code from a repository"


_MALICIOUS_PINS = re.compile(r"(?i)^litellm\s*={2,3}\s*1\.82\.[78]$")


def _install_malicious(f: ActionFacts) -> Iterable[str]:
    for _, packages in _install_parts(f):
        for pkg in packages:
            if _MALICIOUS_PINS.match(pkg):
                yield f"{pkg} is a known-malicious release"


def _is_project_install(pkg: str) -> bool:
    return bool(re.fullmatch(r"\.(/)?(\[[\w,.-]+\])?", pkg.strip("'\""))) or (
        pkg.endswith((".whl", ".tar.gz", ".zip")) and not _is_url(pkg)
    )


def _install_named(f: ActionFacts) -> Iterable[str]:
    for cmd, packages in _install_parts(f):
        named = [
            p
            for p in packages
            if not _is_project_install(p)
            and not _VCS_SPEC.search(p)
            and not p.startswith(("./", "/", "../"))
        ]
        if cmd.program in {"go", "cargo", "brew", "gem", "pipx"}:
            named = named or packages
        if named:
            yield f"`{cmd.program}` adds packages from the registry: {', '.join(named[:5])}"


def _install_system(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        prog, sub = cmd.program, cmd.subcommand()
        system = {"apt", "apt-get", "yum", "dnf", "apk", "zypper", "pacman", "snap", "port"}
        changes = {"install", "add", "remove", "purge", "upgrade", "dist-upgrade"}
        if prog in system and (sub in changes or (prog == "pacman" and _has_flag(cmd, "-S", "-R"))):
            yield f"`{prog} {sub}` changes the system's packages"
        if prog in _JS_LIKE and _has_flag(cmd, "-g", "--global") and sub in {"install", "i", "add"}:
            yield f"`{prog} install -g` installs outside the workspace"
        if (
            prog == "pip"
            and sub == "install"
            and _has_flag(cmd, "--user", "--target", "--prefix", "--root")
        ):
            yield "`pip install --user/--target` installs outside the workspace"


def _package_config(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        prog, sub = cmd.program, cmd.subcommand()
        if (
            prog == "pip"
            and sub == "config"
            and any(a in {"set", "edit", "unset"} for a in cmd.args)
        ):
            yield "`pip config` changes where packages come from"
        if (
            prog in _JS_LIKE
            and sub in {"config", "set"}
            and any(a in {"set", "delete", "edit"} or "registry" in a for a in cmd.args)
        ):
            yield f"`{prog} config` changes where packages come from"


_DECODERS = frozenset({"base64", "base32", "xxd", "openssl", "gunzip", "zcat", "uudecode", "rev"})


def _pipe_to_shell(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if cmd.program not in SHELLS | INTERPRETERS or not cmd.stdin_piped:
            continue
        if any(a in {"-c", "-e"} for a in cmd.args):
            continue
        script_args = [a for a in cmd.args if not a.startswith("-")]
        if script_args and script_args[0] != "-":
            continue
        upstream = set(cmd.pipe_from)
        if upstream & (_NETWORK_TOOLS | {"openssl"}):
            yield f"downloads code and pipes it into `{cmd.program}` (curl | sh)"
        elif upstream & _DECODERS:
            yield f"decodes hidden text and pipes it into `{cmd.program}`"
    for body in f.substitutions:
        if re.search(r"\b(curl|wget)\b", body) and any(
            c.program in SHELLS | INTERPRETERS | {"eval", "source", "."} for c in f.commands
        ):
            yield "runs code fetched inside a command substitution (bash <(curl ...))"
            break
    for cmd in f.commands:
        if (
            cmd.program in {"source", "."}
            and any(PLACEHOLDER_RE.search(a) for a in cmd.args)
            and any(re.search(r"\b(curl|wget)\b", s) for s in f.substitutions)
        ):
            yield "sources code fetched from the network"


def _download_exec(f: ActionFacts) -> Iterable[str]:
    downloaded: set[str] = set()
    for cmd in f.commands:
        if cmd.program in {"curl", "wget"}:
            for value in _option_values(cmd, ["-o", "--output", "-O", "--output-document"]):
                downloaded.add(f.action.resolve(value, cmd.cwd))
            if cmd.program == "wget" and not _option_values(cmd, ["-O", "--output-document"]):
                for url in _hosts(cmd):
                    name = url.rstrip("/").rsplit("/", 1)[-1]
                    if name:
                        downloaded.add(f.action.resolve(name, cmd.cwd))
        elif downloaded and cmd.argv:
            runs = [cmd.argv[0]]
            if cmd.program in SHELLS | INTERPRETERS | {"source", ".", "exec"}:
                runs.extend(a for a in cmd.args if not a.startswith("-"))
            for arg in runs:
                if f.action.resolve(arg, cmd.cwd) in downloaded:
                    yield f"runs {arg} right after downloading it"
                    break


def _pipe_to_shell_other(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if cmd.program in SHELLS and cmd.stdin_piped and not any(a in {"-c"} for a in cmd.args):
            script_args = [a for a in cmd.args if not a.startswith("-")]
            if not script_args and not (set(cmd.pipe_from) & (_NETWORK_TOOLS | _DECODERS)):
                yield f"pipes generated text into `{cmd.program}`"
        if cmd.program == "eval" and any(PLACEHOLDER_RE.search(a) for a in cmd.args):
            yield "`eval` of a command substitution runs text decided at run time"


_GH_MUTATING = {
    "pr": {"create", "merge", "close", "edit", "comment", "review", "ready", "reopen"},
    "issue": {"create", "close", "edit", "comment", "delete", "transfer", "reopen", "lock"},
    "repo": {"create", "delete", "edit", "fork", "rename", "archive", "sync", "deploy-key"},
    "release": {"create", "delete", "edit", "upload"},
    "gist": {"create", "edit", "delete"},
    "run": {"rerun", "cancel", "delete"},
    "workflow": {"run", "enable", "disable"},
    "label": {"create", "edit", "delete", "clone"},
}


def _github_cli(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if cmd.program != "gh":
            continue
        pos = _positional(cmd)
        group = pos[0] if pos else ""
        action = pos[1] if len(pos) > 1 else ""
        if group in {"api", "secret", "variable", "ssh-key", "gpg-key", "extension", "alias"} or (
            action in _GH_MUTATING.get(group, set())
        ):
            shown = f"gh {group} {action}".strip()
            yield f"`{shown}` acts on GitHub with the user's credentials"


def _privilege(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        for wrapper in cmd.wrappers:
            if wrapper in {"sudo", "doas"}:
                yield f"`{wrapper}` escalates privileges (the sandbox runs without them)"
        if cmd.program in {"sudo", "doas", "su", "pkexec", "runuser", "chroot", "nsenter"}:
            yield f"`{cmd.program}` escalates privileges or changes namespaces"
        if cmd.program in {"mount", "umount", "insmod", "modprobe", "sysctl", "setcap", "iptables"}:
            yield f"`{cmd.program}` changes the system"
        if cmd.program in {"gdb", "strace", "ltrace", "gcore"} and _has_flag(cmd, "-p", "--pid"):
            yield f"`{cmd.program} -p` attaches to another process (can read its secrets)"
        if cmd.program == "crontab" or (
            cmd.program == "systemctl" and cmd.subcommand() in {"enable", "start", "edit"}
        ):
            yield f"`{cmd.program}` schedules or starts persistent jobs"


def _docker_host(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if cmd.program not in {"docker", "podman"}:
            continue
        if "--privileged" in cmd.args or any(a.startswith("--pid=host") for a in cmd.args):
            yield f"`{cmd.program} --privileged` escapes the container"
        for value in _option_values(cmd, ["-v", "--volume", "--mount"]):
            host = value.split(":", 1)[0]
            if host in {"/", "/etc", "/root", "/var/run/docker.sock", "/home"} or host.startswith(
                "~"
            ):
                yield f"`{cmd.program} -v {value}` mounts host secrets or the whole file system"


def _unparseable(f: ActionFacts) -> Iterable[str]:
    if f.parse_error:
        yield f"the command could not be parsed ({f.parse_error}); a person should look"


def _generic_tool_strings(f: ActionFacts) -> Iterable[str]:
    if f.action.kind is not ActionKind.TOOL:
        return
    for text in f.action.iter_strings():
        if text.startswith(("/", "~", ".")) and "\n" not in text:
            resolved = f.action.resolve(text)
            reason = secret_file_reason(f.action, resolved) or secret_dir_reason(f.action, resolved)
            if reason:
                yield f"a tool argument names {reason}"


def default_rules() -> tuple[Rule, ...]:
    """The shipped rules, most specific first. Ids are stable: tests and audits cite them."""
    B, R, W = Verdict.BLOCK, Verdict.REVIEW, Verdict.WARN
    return (
        # secrets
        Rule("secret-env-dump", "dumps the whole environment", B, _env_dump),
        Rule("secret-env-read", "reads a credential environment variable", B, _env_secret_read),
        Rule("secret-env-print", "prints a credential variable", B, _secret_var_print),
        Rule("secret-env-reference", "expands a credential variable", R, _secret_var_reference),
        Rule("secret-proc-environ", "reads /proc/*/environ or memory", B, _proc_environ),
        Rule("secret-file-read", "reads a credential file or .env", B, _secret_file),
        Rule("secret-keychain", "reads a credential store", B, _keychain),
        Rule("secret-dir", "touches a credential directory", R, _secret_dir),
        Rule("secret-in-content", "writes a known secret format", B, _secret_in_content),
        Rule("secret-private-key", "writes a private key block", R, _private_key_content),
        Rule("key-material-read", "reads a key-like file inside the workspace", W, _key_material),
        Rule(
            "secret-tool-argument",
            "a tool argument names a credential path",
            B,
            _generic_tool_strings,
        ),
        Rule("cloud-metadata", "reaches the instance metadata service", B, _cloud_metadata),
        # exfiltration
        Rule("net-upload", "sends data to a remote host", B, _net_upload),
        Rule("net-pipe-in", "feeds local data into a network tool", B, _net_pipe_in),
        Rule(
            "net-substitution", "puts command output into a network request", B, _net_substitution
        ),
        Rule("net-dns-exfil", "encodes data into DNS lookups", B, _dns_exfil),
        Rule("net-dev-tcp", "opens sockets through /dev/tcp", B, _dev_tcp),
        Rule("net-reverse-shell", "attaches a shell to a socket", B, _reverse_shell),
        Rule("net-remote-copy", "copies files to a remote host", B, _remote_copy),
        Rule("net-inline-env", "inline code sends environment or credentials", B, _inline_net),
        Rule("net-url-scheme", "a URL with a local-file or legacy scheme", B, _url_action),
        Rule(
            "net-url-suspicious", "a URL carrying credentials or encoded data", R, _url_suspicious
        ),
        Rule("net-inline", "inline code talks to the network", R, _inline_net_only),
        Rule("net-local-post", "posts to a local test server", W, _net_upload_local),
        Rule("net-access", "reaches the network", W, _network_fetch),
        # workspace and CI
        Rule("write-outside-workspace", "writes outside the workspace", B, _outside_workspace),
        Rule("write-git-internals", "writes .git/ internals (hooks, config)", B, _git_internals),
        Rule("ci-config-write", "changes CI/workflow configuration", B, _ci_write),
        Rule("ci-config-touch", "a non-read-only command on CI configuration", R, _ci_mention),
        Rule("governance-file-write", "changes governance/automation files", R, _governance_files),
        Rule("read-outside-workspace", "a file tool reads outside the workspace", W, _read_outside),
        # destruction
        Rule("destroy-system", "destroys the system, home or a parent tree", B, _destroy_root),
        Rule("destroy-disk", "rewrites a disk", B, _disk_destroy),
        Rule("destroy-fork-bomb", "a fork bomb", B, _fork_bomb),
        Rule("destroy-power", "stops the machine or every process", B, _power),
        Rule("destroy-workspace", "deletes the whole workspace", R, _destroy_workspace),
        Rule("process-kill", "kills processes by name", R, _process_kill),
        # installs
        Rule(
            "install-from-url",
            "installs packages from a URL, repository or extra index",
            B,
            _install_url,
        ),
        Rule("install-malicious", "installs a known-malicious release", B, _install_malicious),
        Rule("install-pipe-to-shell", "runs code fetched from the network", B, _pipe_to_shell),
        Rule("install-download-exec", "runs a file right after downloading it", B, _download_exec),
        Rule("install-package-config", "changes package sources", B, _package_config),
        Rule("install-system", "installs outside the workspace", R, _install_system),
        Rule("install-package", "adds a dependency from the registry", W, _install_named),
        # git
        Rule("git-push", "pushes from the agent", B, _git_push),
        Rule("git-remote", "changes remotes or submodules", B, _git_remote),
        Rule(
            "git-config",
            "changes git configuration that runs code or redirects git",
            B,
            _git_config_block,
        ),
        Rule(
            "git-config-unknown",
            "changes git configuration of unknown effect",
            R,
            _git_config_review,
        ),
        Rule("git-history-rewrite", "rewrites or hides history", R, _git_rewrite),
        Rule("git-config-local", "changes harmless local git settings", W, _git_config_warn),
        Rule("git-discard", "discards work or skips hooks", W, _git_discard),
        # execution shape
        Rule("shell-pipe", "pipes generated text into a shell or eval", R, _pipe_to_shell_other),
        Rule("privilege", "escalates privileges or changes the system", R, _privilege),
        Rule("github-cli", "acts on GitHub through the gh CLI", R, _github_cli),
        Rule("container-escape", "a container with host access", B, _docker_host),
        Rule("unparseable", "the command cannot be parsed lexically", R, _unparseable),
    )


__all__ = [
    "CI_PATTERNS",
    "READ_ONLY_PROGRAMS",
    "ActionFacts",
    "Operand",
    "Rule",
    "RuleMatch",
    "RuleSet",
    "RuleTest",
    "Verdict",
    "default_rules",
    "find_secret_formats",
    "is_ci_path",
    "is_secret_name",
    "secret_dir_reason",
    "secret_file_reason",
]
