"""Family ``env-exfiltration``: dumping the environment or reading the credentials in it.

The environment is where CI and developer shells keep tokens; ``env``, ``printenv TOKEN``,
``echo $API_KEY``, ``os.environ`` in inline code and ``/proc/*/environ`` all expose it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from chimera.governance.rules.argv import positional
from chimera.governance.rules.facts import VAR_REF, ActionFacts
from chimera.governance.rules.model import Rule, Verdict
from chimera.governance.rules.paths import PROC_ENVIRON
from chimera.governance.secret_detectors import is_secret_name


def _env_dump(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        prog, pos = cmd.program, positional(cmd)
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
            for name in positional(cmd):
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
            for m in VAR_REF.finditer(word):
                if is_secret_name(m.group(1)):
                    yield f"`{cmd.program}` prints the credential variable ${m.group(1)}"


def _secret_var_reference(f: ActionFacts) -> Iterable[str]:
    for cmd in f.commands:
        if cmd.program in {"export", "unset"}:
            continue
        words = [*cmd.args, *(r.target for r in cmd.redirects)]
        for word in words:
            for m in VAR_REF.finditer(word):
                if is_secret_name(m.group(1)):
                    yield f"`{cmd.program}` expands the credential variable ${m.group(1)}"


def _proc_environ(f: ActionFacts) -> Iterable[str]:
    texts = list(f.scan_texts)
    if f.action.command is not None:
        texts.append(f.action.command)
    for text in texts:
        m = PROC_ENVIRON.search(text)
        if m:
            yield f"{m.group(0)} exposes another process's environment or memory"


ENV_EXFILTRATION_RULES: tuple[Rule, ...] = (
    Rule("secret-env-dump", "dumps the whole environment", Verdict.BLOCK, _env_dump),
    Rule(
        "secret-env-read",
        "reads a credential environment variable",
        Verdict.BLOCK,
        _env_secret_read,
    ),
    Rule("secret-env-print", "prints a credential variable", Verdict.BLOCK, _secret_var_print),
    Rule(
        "secret-env-reference",
        "expands a credential variable",
        Verdict.REVIEW,
        _secret_var_reference,
    ),
    Rule("secret-proc-environ", "reads /proc/*/environ or memory", Verdict.BLOCK, _proc_environ),
)
"""Environment dumps and credential-variable reads, in precedence order."""


__all__ = ["ENV_EXFILTRATION_RULES"]
