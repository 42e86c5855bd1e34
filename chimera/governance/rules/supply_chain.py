"""Family ``supply-chain``: package installs and running code fetched from the network.

Installs from a URL, repository or extra index, known-malicious releases, ``curl | sh`` and
download-then-run (:data:`FETCH_AND_EXECUTE_RULES`), package-source changes, system-wide
installs; a plain registry install is a warning.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from chimera.governance.rules.argv import has_flag, hosts, is_loopback, is_url, option_values
from chimera.governance.rules.facts import DECODERS, NETWORK_TOOLS, ActionFacts
from chimera.governance.rules.model import Rule, Verdict
from chimera.governance.shell import INTERPRETERS, PLACEHOLDER_RE, SHELLS, SimpleCommand

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
        for value in option_values(cmd, list(_INDEX_OPTS)):
            if not is_loopback(value) and not value.startswith((".", "/")):
                yield f"`{cmd.program}` installs from an extra index or registry: {value}"
        for value in option_values(cmd, ["-r", "--requirement", "-c", "--constraint"]):
            if is_url(value):
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
        pkg.endswith((".whl", ".tar.gz", ".zip")) and not is_url(pkg)
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
        if prog in system and (sub in changes or (prog == "pacman" and has_flag(cmd, "-S", "-R"))):
            yield f"`{prog} {sub}` changes the system's packages"
        if prog in _JS_LIKE and has_flag(cmd, "-g", "--global") and sub in {"install", "i", "add"}:
            yield f"`{prog} install -g` installs outside the workspace"
        if (
            prog == "pip"
            and sub == "install"
            and has_flag(cmd, "--user", "--target", "--prefix", "--root")
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
        if upstream & (NETWORK_TOOLS | {"openssl"}):
            yield f"downloads code and pipes it into `{cmd.program}` (curl | sh)"
        elif upstream & DECODERS:
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
            for value in option_values(cmd, ["-o", "--output", "-O", "--output-document"]):
                downloaded.add(f.action.resolve(value, cmd.cwd))
            if cmd.program == "wget" and not option_values(cmd, ["-O", "--output-document"]):
                for url in hosts(cmd):
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


FETCH_AND_EXECUTE_RULES: tuple[Rule, ...] = (
    Rule(
        "install-pipe-to-shell", "runs code fetched from the network", Verdict.BLOCK, _pipe_to_shell
    ),
    Rule(
        "install-download-exec",
        "runs a file right after downloading it",
        Verdict.BLOCK,
        _download_exec,
    ),
)
"""Running code fetched from the network (``curl | sh``, download then run)."""

SUPPLY_CHAIN_RULES: tuple[Rule, ...] = (
    Rule(
        "install-from-url",
        "installs packages from a URL, repository or extra index",
        Verdict.BLOCK,
        _install_url,
    ),
    Rule(
        "install-malicious", "installs a known-malicious release", Verdict.BLOCK, _install_malicious
    ),
    *FETCH_AND_EXECUTE_RULES,
    Rule("install-package-config", "changes package sources", Verdict.BLOCK, _package_config),
    Rule("install-system", "installs outside the workspace", Verdict.REVIEW, _install_system),
    Rule("install-package", "adds a dependency from the registry", Verdict.WARN, _install_named),
)
"""Installs and fetched code, in precedence order."""


__all__ = ["FETCH_AND_EXECUTE_RULES", "SUPPLY_CHAIN_RULES"]
