"""Added code that fetches and executes, or sends the environment: the governance rules reused.

The governance RuleSet (:mod:`chimera.governance.rules`) already knows the shapes of ``curl |
sh``, download-then-run, uploads, reverse shells, ``/dev/tcp`` and inline code that reads the
environment and talks to the network — for commands an agent is about to run. Code a patch
adds runs later (a test hook, a Makefile recipe, an install script), so the scan asks the same
rules about it:

* **shell text** — each added line of a shell-like file (``*.sh``, Makefiles, Dockerfiles,
  ``tox.ini``, ``justfile``), each JSON string of ``package.json``, and each string literal of
  any other file (``os.system('curl … | sh')``, ``subprocess.run("…", shell=True)``) is
  parsed as a command;
* **inline code** — each window of up to 12 consecutive added lines of a program file is
  handed to the rules as the body of ``<interpreter> <<EOF`` (``net-inline-env``: reads the
  environment and talks to the network), and checked for ``exec``/``eval`` of fetched text.

Every hit is **review** with rule id ``code:<governance rule id>``: the patch is published, a
person decides. Prose (``*.md``, ``*.rst``, ``*.txt``) is not code and is skipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from chimera.github.scan.model import Finding, finding
from chimera.github.scan.secrets import runs
from chimera.governance.actions import Action
from chimera.governance.rules import RuleSet, Verdict, default_rules

__all__ = ["code_findings"]

_SHELL_RULES = (
    "install-pipe-to-shell",
    "install-download-exec",
    "net-upload",
    "net-pipe-in",
    "net-reverse-shell",
    "net-dev-tcp",
    "net-dns-exfil",
    "net-inline-env",
    "cloud-metadata",
)
_INLINE_RULES = ("net-inline-env", "net-reverse-shell", "cloud-metadata")
# Lines judged together as one piece of inline code: a statement and its neighbours, not a
# whole module (a module that reads a setting and makes requests is ordinary code).
_WINDOW = 12
_SHELL_SET = RuleSet([r for r in default_rules() if r.id in _SHELL_RULES])
_INLINE_SET = RuleSet([r for r in default_rules() if r.id in _INLINE_RULES])
# Only text that names a network tool, a shell or the environment can match a shell rule.
_SHELL_HINT = re.compile(
    r"\b(curl|wget|nc|ncat|netcat|socat|telnet|scp|rsync|dig|nslookup|env|printenv)\b|/dev/tcp"
    r"|169\.254\.169\.254|metadata\.google"
)
_CODE_HINT = re.compile(
    r"environ|getenv|process\.env|ENV\[|socket|169\.254\.169\.254|metadata\.google", re.I
)
_FETCH_EXEC = re.compile(
    r"\b(exec|eval|execfile|compile|Function|runInThisContext)\s*\(.{0,200}"
    r"(urlopen|urllib|requests\.|httpx\.|fetch\(|axios|http\.get|https\.get|Net::HTTP|curl|wget)",
    re.I,
)
_INTERPRETERS = {
    ".py": "python",
    ".pyw": "python",
    ".js": "node",
    ".mjs": "node",
    ".cjs": "node",
    ".ts": "node",
    ".rb": "ruby",
    ".pl": "perl",
    ".php": "php",
}
_SHELL_FILES = re.compile(
    r"(^|/)(makefile|gnumakefile|[^/]*\.mk|[^/]*\.(sh|bash|zsh|ksh)|dockerfile[^/]*|tox\.ini"
    r"|justfile|procfile|\.envrc)$"
)
_PROSE = re.compile(r"\.(md|markdown|rst|txt|adoc|html?)$")
_JSON_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_LITERAL = re.compile(r""""((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)'|`([^`\n]*)`""")
_RECIPE_PREFIX = re.compile(r"^\s*(RUN\s+|[-@+]+)?", re.I)


def _shell(path: str, text: str, workspace: str, line: int) -> Iterator[Finding]:
    if not _SHELL_HINT.search(text):
        return
    for match in _SHELL_SET.evaluate(Action.for_command(text, workspace)):
        why = "; ".join(match.reasons)
        yield finding(Verdict.REVIEW, f"code:{match.rule.id}", path, f"added code {why}", line)


def _inline(path: str, interp: str, code: str, workspace: str, line: int) -> Iterator[Finding]:
    if _FETCH_EXEC.search(code):
        why = "added code executes text fetched from the network"
        yield finding(Verdict.REVIEW, "code:fetch-exec", path, why, line)
    if not _CODE_HINT.search(code):
        return
    end = "CHIMERA_SCAN_EOF"
    while end in code:
        end += "_"
    action = Action.for_command(f"{interp} <<'{end}'\n{code}\n{end}\n", workspace)
    for match in _INLINE_SET.evaluate(action):
        why = "; ".join(match.reasons)
        yield finding(Verdict.REVIEW, f"code:{match.rule.id}", path, f"added {why}", line)


def _strings(path: str, text: str) -> list[str]:
    if path.casefold().endswith(".json"):
        out: list[str] = []
        for raw in _JSON_STRING.findall(text):
            try:
                out.append(json.loads(f'"{raw}"'))
            except ValueError:
                out.append(raw)
        return out
    return [next(g for g in groups if g) for groups in _LITERAL.findall(text) if any(groups)]


def _logical_lines(added: list[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """Shell lines with backslash continuations joined (reported at their first line)."""
    start, parts = 0, list[str]()
    for lineno, text in added:
        if not parts:
            start = lineno
        stripped = text.rstrip()
        if stripped.endswith("\\"):
            parts.append(stripped[:-1])
            continue
        parts.append(text)
        yield start, " ".join(parts)
        parts = []
    if parts:
        yield start, " ".join(parts)


def code_findings(path: str, added: list[tuple[int, str]], workspace: str) -> Iterator[Finding]:
    """Review findings for added code that fetches and executes or sends the environment.

    Args:
        path: the repository-relative path.
        added: ``(line number, text)`` of the added lines.
        workspace: the absolute repository root the governance rules resolve paths against.
    """
    key = path.casefold()
    if _PROSE.search(key):
        return
    if _SHELL_FILES.search(key):
        for lineno, text in _logical_lines(added):
            yield from _shell(path, _RECIPE_PREFIX.sub("", text, count=1), workspace, lineno)
    else:
        for lineno, text in added:
            if not _SHELL_HINT.search(text):
                continue
            for literal in _strings(path, text):
                yield from _shell(path, literal, workspace, lineno)
    interp = next((v for k, v in _INTERPRETERS.items() if key.endswith(k)), None)
    if interp is None:
        return
    for run in runs(added, limit=_WINDOW):
        yield from _inline(path, interp, "\n".join(t for _, t in run), workspace, run[0][0])
