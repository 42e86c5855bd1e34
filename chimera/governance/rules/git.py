"""Family ``git``: pushes, remotes, configuration that runs code, history rewrites.

Publishing is a separate, scanned job, so the agent never pushes; ``git config`` keys are
sorted into dangerous (hooks, credentials, URLs: block), unknown (review) and harmless (warn).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from chimera.governance.rules.argv import has_flag, option_values, positional
from chimera.governance.rules.facts import ActionFacts
from chimera.governance.rules.model import Rule, Verdict
from chimera.governance.shell import SimpleCommand


def _git(f: ActionFacts) -> Iterator[tuple[SimpleCommand, str]]:
    """Each ``git`` command of the action, with its subcommand."""
    for cmd in f.commands:
        if cmd.program == "git":
            yield cmd, cmd.subcommand()


def _git_push(f: ActionFacts) -> Iterable[str]:
    for cmd, sub in _git(f):
        if sub != "push":
            continue
        if has_flag(cmd, "-f", "--force", "--force-with-lease", "--mirror") or any(
            a.startswith("+") for a in cmd.args
        ):
            yield "`git push --force` rewrites remote history"
        elif (
            "--delete" in cmd.args
            or "-d" in cmd.args
            or any(a.startswith(":") for a in positional(cmd))
        ):
            yield "`git push --delete` removes remote refs"
        else:
            yield "`git push` publishes from the agent (publishing is a separate, scanned job)"


def _git_remote(f: ActionFacts) -> Iterable[str]:
    for cmd, sub in _git(f):
        pos = positional(cmd)
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


def _config_changes(f: ActionFacts) -> Iterator[tuple[str, bool]]:
    """``(key, scope is global/system)`` of each ``git config`` that writes (``""``: no key)."""
    for cmd, sub in _git(f):
        if sub == "config":
            pos, is_read, scope = _git_config_parts(cmd)
            if not is_read:
                yield (pos[0] if pos else ""), scope


def _git_config_block(f: ActionFacts) -> Iterable[str]:
    for cmd, sub in _git(f):
        for value in option_values(cmd, ["-c"]):
            key = value.split("=", 1)[0]
            if _GIT_CONFIG_DANGEROUS.match(key):
                yield f"`git -c {key}=…` injects configuration that runs code or redirects git"
        if sub != "config":
            continue
        pos, is_read, _ = _git_config_parts(cmd)
        if is_read:
            continue
        key = pos[0] if pos else ""
        if not key or _GIT_CONFIG_DANGEROUS.match(key):
            yield f"`git config {key}` changes credentials, remotes, hooks or executed programs"


def _git_config_review(f: ActionFacts) -> Iterable[str]:
    for key, scope in _config_changes(f):
        if not key or _GIT_CONFIG_DANGEROUS.match(key):
            continue
        if scope:
            yield f"`git config --global {key}` changes configuration outside the workspace"
        elif not _GIT_CONFIG_HARMLESS.match(key):
            yield f"`git config {key}` is not a known-harmless setting"


def _git_config_warn(f: ActionFacts) -> Iterable[str]:
    for key, scope in _config_changes(f):
        if key and not scope and _GIT_CONFIG_HARMLESS.match(key):
            yield f"`git config {key}` changes local repository settings"


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
        elif sub == "update-index" and has_flag(cmd, "--assume-unchanged", "--skip-worktree"):
            yield "`git update-index` hides changes from git status"


def _git_discard(f: ActionFacts) -> Iterable[str]:
    for cmd, sub in _git(f):
        if sub == "reset" and "--hard" in cmd.args:
            yield "`git reset --hard` discards uncommitted work"
        elif sub == "clean" and has_flag(cmd, "-f", "--force"):
            yield "`git clean -f` deletes untracked files"
        elif sub == "branch" and has_flag(cmd, "-D"):
            yield "`git branch -D` deletes a branch"
        elif sub == "stash" and ("drop" in cmd.args or "clear" in cmd.args):
            yield "`git stash drop/clear` discards stashed work"
        elif sub == "commit" and has_flag(cmd, "--no-verify", "-n"):
            yield "`git commit --no-verify` skips the repository's hooks"


GIT_RULES: tuple[Rule, ...] = (
    Rule("git-push", "pushes from the agent", Verdict.BLOCK, _git_push),
    Rule("git-remote", "changes remotes or submodules", Verdict.BLOCK, _git_remote),
    Rule(
        "git-config",
        "changes git configuration that runs code or redirects git",
        Verdict.BLOCK,
        _git_config_block,
    ),
    Rule(
        "git-config-unknown",
        "changes git configuration of unknown effect",
        Verdict.REVIEW,
        _git_config_review,
    ),
    Rule("git-history-rewrite", "rewrites or hides history", Verdict.REVIEW, _git_rewrite),
    Rule("git-config-local", "changes harmless local git settings", Verdict.WARN, _git_config_warn),
    Rule("git-discard", "discards work or skips hooks", Verdict.WARN, _git_discard),
)
"""Git pushes, remotes, configuration and history, in precedence order."""


__all__ = ["GIT_RULES"]
