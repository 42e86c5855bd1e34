"""Family ``workspace``: confinement to the workspace, and tampering with CI inside it.

Writes outside the workspace or into ``.git/`` internals, changes to CI/workflow and
governance files (CODEOWNERS, ``chimera.toml`` ...), file-tool reads outside the workspace.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from chimera.governance.rules.argv import DATA_PROGRAMS, READ_ONLY_PROGRAMS, operands
from chimera.governance.rules.facts import ActionFacts
from chimera.governance.rules.model import Rule, Verdict
from chimera.governance.rules.paths import GOVERNANCE_FILES, ci_in_text, is_ci_path
from chimera.governance.shell import is_within

_DEVNULL = re.compile(r"^/dev/(null|stdout|stderr|tty|fd/\d+|zero|random|urandom)$")
_TEMP_ROOTS = ("/tmp", "/var/tmp", "/dev/shm")


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
        if ci_in_text(code) and re.search(
            r"['\"][wax]\+?['\"]|write|unlink|remove|rmtree|rename|replace|truncate", code
        ):
            yield f"{interp} code writes CI/workflow configuration"


def _ci_mention(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if cmd.program in READ_ONLY_PROGRAMS or cmd.program in DATA_PROGRAMS:
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
        reads, _ = operands(cmd)
        for raw in reads:
            rel = f.action.relative(f.action.resolve(raw, cmd.cwd))
            if rel is not None and is_ci_path(rel):
                yield f"`{cmd.program}` operates on CI configuration {rel}"
    for interp, code in f.inline_code:
        if ci_in_text(code):
            yield f"{interp} code mentions CI/workflow configuration"


def _governance_files(f: ActionFacts) -> Iterable[str]:
    for op in f.writes:
        rel = f.relative(op)
        if rel is not None and GOVERNANCE_FILES.match_file(rel):
            yield f"changes {rel} (repository governance/automation settings)"


WORKSPACE_RULES: tuple[Rule, ...] = (
    Rule(
        "write-outside-workspace", "writes outside the workspace", Verdict.BLOCK, _outside_workspace
    ),
    Rule(
        "write-git-internals",
        "writes .git/ internals (hooks, config)",
        Verdict.BLOCK,
        _git_internals,
    ),
    Rule("ci-config-write", "changes CI/workflow configuration", Verdict.BLOCK, _ci_write),
    Rule(
        "ci-config-touch",
        "a non-read-only command on CI configuration",
        Verdict.REVIEW,
        _ci_mention,
    ),
    Rule(
        "governance-file-write",
        "changes governance/automation files",
        Verdict.REVIEW,
        _governance_files,
    ),
    Rule(
        "read-outside-workspace",
        "a file tool reads outside the workspace",
        Verdict.WARN,
        _read_outside,
    ),
)
"""Workspace confinement and CI tampering, in precedence order."""


__all__ = ["WORKSPACE_RULES"]
