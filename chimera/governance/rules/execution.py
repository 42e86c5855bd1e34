"""Family ``execution``: the shape of execution — evasion, escalation, escape.

Generated text piped into a shell or ``eval``, privilege escalation and persistence, the
``gh`` CLI acting with the user's credentials, containers with host access, and commands no
lexer can parse (a person looks).
"""

from __future__ import annotations

from collections.abc import Iterable

from chimera.governance.rules.argv import has_flag, option_values, positional
from chimera.governance.rules.facts import DECODERS, NETWORK_TOOLS, ActionFacts
from chimera.governance.rules.model import Rule, Verdict
from chimera.governance.shell import PLACEHOLDER_RE, SHELLS


def _pipe_to_shell_other(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if cmd.program in SHELLS and cmd.stdin_piped and not any(a in {"-c"} for a in cmd.args):
            script_args = [a for a in cmd.args if not a.startswith("-")]
            if not script_args and not (set(cmd.pipe_from) & (NETWORK_TOOLS | DECODERS)):
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
        pos = positional(cmd)
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
        if cmd.program in {"gdb", "strace", "ltrace", "gcore"} and has_flag(cmd, "-p", "--pid"):
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
        for value in option_values(cmd, ["-v", "--volume", "--mount"]):
            host = value.split(":", 1)[0]
            if host in {"/", "/etc", "/root", "/var/run/docker.sock", "/home"} or host.startswith(
                "~"
            ):
                yield f"`{cmd.program} -v {value}` mounts host secrets or the whole file system"


def _unparseable(f: ActionFacts) -> Iterable[str]:
    if f.parse_error:
        yield f"the command could not be parsed ({f.parse_error}); a person should look"


EXECUTION_RULES: tuple[Rule, ...] = (
    Rule(
        "shell-pipe",
        "pipes generated text into a shell or eval",
        Verdict.REVIEW,
        _pipe_to_shell_other,
    ),
    Rule("privilege", "escalates privileges or changes the system", Verdict.REVIEW, _privilege),
    Rule("github-cli", "acts on GitHub through the gh CLI", Verdict.REVIEW, _github_cli),
    Rule("container-escape", "a container with host access", Verdict.BLOCK, _docker_host),
    Rule("unparseable", "the command cannot be parsed lexically", Verdict.REVIEW, _unparseable),
)
"""Evasion, escalation and escape, in precedence order."""


__all__ = ["EXECUTION_RULES"]
