""":class:`ActionFacts`: what the rules need to know about one Action, computed once."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from chimera.governance.actions import Action, ActionKind
from chimera.governance.rules.argv import DATA_PROGRAMS, PATTERN_FIRST, operands, positional
from chimera.governance.shell import PLACEHOLDER_RE, SimpleCommand


@dataclass(frozen=True, slots=True)
class Operand:
    """A path an action touches: as written, resolved, and the command it came from."""

    raw: str
    resolved: str
    command: SimpleCommand | None = None


NETWORK_TOOLS = frozenset(
    {"curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "ssh", "scp", "sftp", "ftp"}
    | {"rsync", "rclone", "http", "https", "xh", "httpie", "aria2c", "lftp", "tftp"}
)
DECODERS = frozenset({"base64", "base32", "xxd", "openssl", "gunzip", "zcat", "uudecode", "rev"})


def is_network_command(cmd: SimpleCommand) -> bool:
    """Whether a simple command talks to the network by itself (``openssl s_client`` too).

    ``rsync``/``scp`` count only with a ``host:path`` operand: a local copy is not networking.
    """
    if cmd.program in {"rsync", "scp"}:
        return any(re.match(r"^([\w.-]+@)?[\w.-]+:(?!//)", a) for a in cmd.args)
    if cmd.program == "openssl":
        return cmd.subcommand() in {"s_client", "s_server"}
    return cmd.program in NETWORK_TOOLS


VAR_REF = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")


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

    def _paths(self, file_kinds: tuple[ActionKind, ...], side: int) -> tuple[Operand, ...]:
        """A file action's own paths (when its kind is in ``file_kinds``), then every
        command's read (``side`` 0) or write (1) operands, substitutions left out."""
        out: list[Operand] = []
        if self.action.command is None and self.action.kind in file_kinds:
            out.extend(self._resolve(p, None) for p in self.action.paths)
        for cmd in self.commands:
            raws = operands(cmd)[side]
            out.extend(self._resolve(p, cmd) for p in raws if not PLACEHOLDER_RE.search(p))
        return tuple(out)

    @cached_property
    def reads(self) -> tuple[Operand, ...]:
        return self._paths((ActionKind.READ, ActionKind.TOOL), 0)

    @cached_property
    def writes(self) -> tuple[Operand, ...]:
        return self._paths((ActionKind.WRITE, ActionKind.EDIT, ActionKind.DELETE), 1)

    @cached_property
    def scan_texts(self) -> tuple[str, ...]:
        """Strings that may carry a signature: operands, inline code, tool strings, URL."""
        texts: list[str] = []
        for cmd in self.commands:
            if cmd.program in DATA_PROGRAMS:
                continue
            if cmd.program == "git" and cmd.subcommand() in {"commit", "tag", "notes"}:
                continue
            pos = positional(cmd)
            if cmd.program in PATTERN_FIRST and pos:
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


__all__ = [
    "DECODERS",
    "NETWORK_TOOLS",
    "VAR_REF",
    "ActionFacts",
    "Operand",
    "is_network_command",
]
