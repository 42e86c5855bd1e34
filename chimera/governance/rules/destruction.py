"""Family ``destruction``: destroying the system, a disk, the workspace or every process."""

from __future__ import annotations

import re
from collections.abc import Iterable

from chimera.governance.actions import ActionKind
from chimera.governance.rules.argv import has_flag, operands, positional
from chimera.governance.rules.facts import ActionFacts
from chimera.governance.rules.model import Rule, Verdict
from chimera.governance.shell import is_within

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
        for raw in positional(cmd) if cmd.program != "find" else operands(cmd)[1]:
            if cmd.program in {"chmod", "chown"} and raw == positional(cmd)[0]:
                continue
            path = f.action.resolve(raw.rstrip("*") or "/", cmd.cwd)
            if raw.endswith("/*"):
                path = f.action.resolve(raw[:-2] or "/", cmd.cwd)
            if (
                path in _SYSTEM_DIRS
                or path == f.action.home_dir
                or (path != f.action.workspace and is_within(f.action.workspace, path))
            ):
                if cmd.program == "find" or has_flag(cmd, "-r", "-R", "--recursive", "-f"):
                    yield f"`{cmd.program}` on {path} destroys the system, home or parent tree"
                elif cmd.program in {"rm", "shred", "mv"}:
                    yield f"`{cmd.program}` on {path}"


def _destroy_workspace(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if cmd.program == "rm" and has_flag(cmd, "-r", "-R", "--recursive"):
            for raw in positional(cmd):
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


DESTRUCTION_RULES: tuple[Rule, ...] = (
    Rule(
        "destroy-system", "destroys the system, home or a parent tree", Verdict.BLOCK, _destroy_root
    ),
    Rule("destroy-disk", "rewrites a disk", Verdict.BLOCK, _disk_destroy),
    Rule("destroy-fork-bomb", "a fork bomb", Verdict.BLOCK, _fork_bomb),
    Rule("destroy-power", "stops the machine or every process", Verdict.BLOCK, _power),
    Rule("destroy-workspace", "deletes the whole workspace", Verdict.REVIEW, _destroy_workspace),
    Rule("process-kill", "kills processes by name", Verdict.REVIEW, _process_kill),
)
"""System, disk and process destruction, in precedence order."""


__all__ = ["DESTRUCTION_RULES"]
