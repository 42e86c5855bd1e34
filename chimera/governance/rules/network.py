"""Family ``network``: exfiltration and network access.

Data sent to a remote host (uploads, pipes into ``nc``, command output in a URL, DNS
lookups built from data), sockets through ``/dev/tcp``, reverse shells, remote copies, inline
code that talks to the network, suspicious URLs; plain network access is a warning (the
sandbox has none).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from chimera.governance.actions import ActionKind
from chimera.governance.rules.argv import has_flag, is_loopback, option_values, positional
from chimera.governance.rules.facts import VAR_REF, ActionFacts, is_network_command
from chimera.governance.rules.model import Rule, Verdict
from chimera.governance.rules.paths import TEXT_SECRETS
from chimera.governance.secret_detectors import is_secret_name
from chimera.governance.shell import PLACEHOLDER_RE, SHELLS, SimpleCommand

_NET_SENDERS = frozenset({"nc", "ncat", "netcat", "socat", "telnet", "ssh", "ftp"})
_DNS_TOOLS = frozenset({"dig", "nslookup", "host", "drill", "ping", "resolvectl"})


def _only_loopback(cmd: SimpleCommand) -> bool:
    pos = positional(cmd)
    hosts = [p for p in pos if not re.fullmatch(r"\d+", p)]
    return bool(hosts) and all(is_loopback(h) for h in hosts)


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
        method = option_values(cmd, ["-X", "--request", "--method"])
        if cmd.program in {"http", "https", "xh"} and any(
            re.match(r"^[\w-]+(:=|=|@)", a) for a in positional(cmd)[1:]
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
            for m in VAR_REF.finditer(arg):
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
        if cmd.program in {"nc", "ncat", "netcat"} and has_flag(
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
            pos = positional(cmd)
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
        if _NET_CODE.search(code) and (_ENV_CODE.search(code) or TEXT_SECRETS.search(code)):
            yield f"{interp} code reads the environment or credentials and talks to the network"


def _inline_net_only(f: ActionFacts) -> Iterable[str]:
    for interp, code in f.inline_code:
        if _NET_CODE.search(code):
            yield f"{interp} code talks to the network"


def _network_fetch(f: ActionFacts) -> Iterable[str]:
    for cmd in f.network_commands():
        if positional(cmd) and not _only_loopback(cmd):
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


NETWORK_RULES: tuple[Rule, ...] = (
    Rule("net-upload", "sends data to a remote host", Verdict.BLOCK, _net_upload),
    Rule("net-pipe-in", "feeds local data into a network tool", Verdict.BLOCK, _net_pipe_in),
    Rule(
        "net-substitution",
        "puts command output into a network request",
        Verdict.BLOCK,
        _net_substitution,
    ),
    Rule("net-dns-exfil", "encodes data into DNS lookups", Verdict.BLOCK, _dns_exfil),
    Rule("net-dev-tcp", "opens sockets through /dev/tcp", Verdict.BLOCK, _dev_tcp),
    Rule("net-reverse-shell", "attaches a shell to a socket", Verdict.BLOCK, _reverse_shell),
    Rule("net-remote-copy", "copies files to a remote host", Verdict.BLOCK, _remote_copy),
    Rule(
        "net-inline-env", "inline code sends environment or credentials", Verdict.BLOCK, _inline_net
    ),
    Rule("net-url-scheme", "a URL with a local-file or legacy scheme", Verdict.BLOCK, _url_action),
    Rule(
        "net-url-suspicious",
        "a URL carrying credentials or encoded data",
        Verdict.REVIEW,
        _url_suspicious,
    ),
    Rule("net-inline", "inline code talks to the network", Verdict.REVIEW, _inline_net_only),
    Rule("net-local-post", "posts to a local test server", Verdict.WARN, _net_upload_local),
    Rule("net-access", "reaches the network", Verdict.WARN, _network_fetch),
)
"""Exfiltration shapes first, plain network access last."""


__all__ = ["NETWORK_RULES"]
