"""``@chimera`` commands in issue and PR comments: parsing, and what each one means.

A comment is a command when one of its visible lines starts with ``@chimera`` (outside code
fences, ``>`` quotes and HTML comments, so quoting an earlier command repeats nothing and a
hidden one does nothing); the first such line counts.

=====================  ==========  =====================================================
command                where       meaning
=====================  ==========  =====================================================
``run`` / ``retry``    issue       the same as adding the trigger label
``approve <sha>``      Chimera PR  the human checkpoint, like an approving review of
                                   ``<sha>`` (7 to 40 hex digits; must be the PR's head)
``fix <text>``         Chimera PR  a run on the same branch whose task is ``<text>``
``stop``               either      cancel the running workflow run, the queued place and
                                   a paused run
``status``             either      queue position, run link, PR, cost so far
=====================  ==========  =====================================================

Rules (the same as for labels and reviews): only a ``created`` comment event counts (an
edit could turn an old, already-answered comment into a new command); the commenter must be
a person with the write, maintain or admin role (asked through the API); a bot's comment —
Chimera's own included — gets no reply at all; anyone else gets one polite refusal. The
comment's text is untrusted input, like an issue body: it is compared and fenced, never
interpolated into a shell.

:data:`VERB_TABLE` is the one place a verb is defined: its action, the job that answers it
(the decide mode owns the verbs that start jobs; the command mode,
:mod:`chimera.github.jobs.command`, owns ``stop``, ``status`` and unknown verbs, which must
answer while a run holds the issue's concurrency lock), where it works, who may give it, its
argument and its help line. :func:`parse_command`, :func:`comment_decision` and :data:`HELP`
read it; a test checks the workflows' ``if:`` filters send each verb to its job.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from chimera.github.gate.decision import Act, ApiCheck, Decision, run_checks
from chimera.github.trust.settings import ActionSettings

__all__ = [
    "COMMAND_VERBS",
    "DECIDE_VERBS",
    "HANDLE",
    "HELP",
    "UNKNOWN",
    "VERBS",
    "VERB_TABLE",
    "Command",
    "Verb",
    "comment_decision",
    "parse_command",
    "visible_lines",
]

HANDLE = "@chimera"
UNKNOWN = "unknown"
"""The verb of a misspelt or missing command (answered with :data:`HELP`)."""


@dataclass(frozen=True)
class Verb:
    """One ``@chimera`` verb: a row of :data:`VERB_TABLE`.

    Attributes:
        name: the verb as written (lower case).
        action: the decision when the command is well-formed where it works.
        job: the Action mode that answers it: ``decide`` (it starts jobs, under the issue's
            concurrency lock) or ``command`` (it must answer while a run holds that lock).
        where: ``issue``, ``pull`` (a Chimera PR) or ``either``.
        permission: the role the commenter needs, asked through the API (``write``: the
            write, maintain or admin role).
        usage: how to write it, for the help reply (Markdown).
        checks: the API checks the decision asks for, in order (names of
            :class:`~chimera.github.gate.decision.ApiCheck`).
        argument: ``""`` (none), ``sha`` (the first word: 7 to 40 hex digits) or ``text``
            (the rest of the line and every line after it; required).
        reason: the decision's reason; ``{author}``, ``{verb}``, ``{number}`` and ``{sha}``
            (the first 12 digits) are filled in.
        elsewhere: the refusal when given where it does not work.
        malformed: the refusal when the argument is missing or malformed.
    """

    name: str
    action: Act
    job: str
    where: str
    permission: str
    usage: str
    checks: tuple[str, ...]
    argument: str = ""
    reason: str = "{author} asked `@chimera {verb}` on #{number}"
    elsewhere: str = ""
    malformed: str = ""

    def works_on(self, on_pull: bool) -> bool:
        """Whether the verb works on a PR (``on_pull``) or an issue."""
        return self.where == "either" or self.where == ("pull" if on_pull else "issue")


_ON_ISSUE = (
    "`@chimera {verb}` works on the issue; on a Chimera PR use `@chimera fix <what to change>`"
)
_ON_PULL = "`@chimera {verb}` works on a Chimera pull request, not on an issue"
_RUN_CHECKS = ("not_bot", "permission", "issue_state", "chimera_pr", "queue_slot")
_VERBS = (
    Verb("run", Act.RUN, "decide", "issue", "write", "`@chimera run`",
         _RUN_CHECKS, elsewhere=_ON_ISSUE),
    Verb("retry", Act.RUN, "decide", "issue", "write", "`@chimera retry`",
         _RUN_CHECKS, elsewhere=_ON_ISSUE),
    Verb("approve", Act.RESUME, "decide", "pull", "write",
         "`@chimera approve <head sha>`",
         ("permission", "chimera_pr", "not_triggerer", "head_commit"), argument="sha",
         reason="{author} approved {sha} on PR #{number} by comment", elsewhere=_ON_PULL,
         malformed="`@chimera approve` needs the head commit's SHA (7 to 40 hex digits), so an "
         "approval is always of the commit you reviewed"),
    Verb("fix", Act.RERUN, "decide", "pull", "write",
         "`@chimera fix <what to change>`",
         ("permission", "chimera_pr"), argument="text",
         reason="{author} asked `@chimera fix` on PR #{number}: the issue runs again on the "
         "same branch with the comment as (tainted) feedback", elsewhere=_ON_PULL,
         malformed="`@chimera fix` needs the change to make, e.g. "
         "`@chimera fix rename total to sum`"),
    Verb("stop", Act.CANCEL, "command", "either", "write", "`@chimera stop`", ("permission",)),
    Verb("status", Act.STATUS, "command", "either", "write", "`@chimera status`",
         ("permission",)),
)  # fmt: skip
VERB_TABLE: Mapping[str, Verb] = MappingProxyType({verb.name: verb for verb in _VERBS})
"""Every verb, by name, in the order the help lists them."""
VERBS = tuple(VERB_TABLE)
DECIDE_VERBS = frozenset(name for name, verb in VERB_TABLE.items() if verb.job == "decide")
"""The verbs the decide job answers (they start jobs)."""
COMMAND_VERBS = frozenset(
    {UNKNOWN, *(name for name, verb in VERB_TABLE.items() if verb.job == "command")}
)
"""The verbs the command job answers (no per-issue lock), unknown ones too."""


def _help() -> str:
    """The help reply, from the table: the verbs grouped by where they work (synonyms, one
    action, joined by "or")."""
    parts = []
    for where, place in (("issue", " (on an issue)"), ("pull", " (on a Chimera PR)"),
                         ("either", "")):  # fmt: skip
        group = [verb for verb in _VERBS if verb.where == where]
        joiner = " or " if len({verb.action for verb in group}) == 1 else " and "
        parts.append(joiner.join(verb.usage for verb in group) + place)
    return "Chimera understands " + ", ".join(parts)


HELP = _help()
"""The reply to an unknown verb: every verb of :data:`VERB_TABLE` and where it works."""

_LINE = re.compile(r"^@chimera(?:\[bot\])?[:,]?(?=\s|$)(?P<rest>.*)$", re.IGNORECASE)
_SHA = re.compile(r"[0-9a-f]{7,40}")
_FENCE = re.compile(r"^(`{3,}|~{3,})")
_TAG_OPEN = re.compile(r"<[A-Za-z][A-Za-z0-9-]*(?=[\s/>]|$)")
# A link's title (a tooltip, never shown): after `](url ` inline, or `[label]: url ` in a
# reference definition; the group is its opening quote.
_TITLE_OPEN = re.compile(
    r"\]\(\s*(?:<[^>]*>|[^\s()]+)\s+(?P<q>[\"'(])|^\s{0,3}\[[^\]]+\]:\s*(?:<[^>]*>|\S+)\s+(?P<r>[\"'(])"
)
_CLOSE = {'"': '"', "'": "'", "(": ")"}


@dataclass(frozen=True)
class Command:
    """One parsed command.

    Attributes:
        verb: one of :data:`VERBS`, or ``unknown`` (a misspelt or missing verb).
        argument: the rest: ``approve``'s SHA (first word), ``fix``'s text (the rest of its
            line and every line after it), ``""`` for the others.
        word: the verb as written (at most 40 characters; for the help reply).
    """

    verb: str
    argument: str = ""
    word: str = ""


def _hide(raw: str) -> tuple[str, str | None]:
    """``raw`` without its HTML comments, and what ends a hidden part it leaves open: ``-->``
    (a comment), ``>`` (a tag whose attributes go on to the next line) or a quote (a link's
    title that does); ``None``: none."""
    title = _TITLE_OPEN.search(raw)
    if title is not None:
        quote = title.group("q") or title.group("r")
        if _CLOSE[quote] not in raw[title.end() :]:
            shown, hidden = _hide(raw[: title.end() - 1])  # the text before the quote
            return shown, hidden or _CLOSE[quote]
    out = ""
    while True:
        comment = raw.find("<!--")
        tag = _TAG_OPEN.search(raw)
        if comment < 0 and tag is None:
            return out + raw, None
        if tag is None or 0 <= comment < tag.start():
            end = raw.find("-->", comment + 4)
            if end < 0:
                return out + raw[:comment], "-->"
            raw = raw[:comment] + raw[end + 3 :]
            continue
        end = raw.find(">", tag.end())
        if end < 0:
            # An attribute value (an image's alt text, a title) shows nowhere.
            return out + raw[: tag.start()], ">"
        out, raw = out + raw[: end + 1], raw[end + 1 :]


def visible_lines(body: str) -> list[str]:
    """``body``'s lines as GitHub renders them visibly: every HTML comment (``<!-- ... -->``,
    across lines too) outside a fenced code block is removed, and an unterminated one hides
    everything after it, as it does on GitHub; so are the lines inside an HTML tag that spans
    lines (``<img alt="`` ... ``">``: its attributes are never shown), and a link's title that
    does (``[x](url "`` ... ``")``, a tooltip). Fenced blocks are kept
    as they are (their text shows literally; :func:`parse_command` skips them anyway)."""
    lines = (body or "").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    out: list[str] = []
    fence: str | None = None
    hidden: str | None = None
    for raw in lines:
        if hidden is not None:
            end = raw.find(hidden)
            if end < 0:
                out.append("")
                continue
            raw = raw[end + len(hidden) :]
            hidden = None
        opened = _FENCE.match(raw.strip())
        if fence is not None:
            if opened and raw.strip().startswith(fence):
                fence = None
            out.append(raw)
            continue
        if opened:
            fence = opened.group(1)
            out.append(raw)
            continue
        raw, hidden = _hide(raw)
        out.append(raw)
    return out


def parse_command(body: str) -> Command | None:
    """The first ``@chimera`` command in a comment's ``body``, or ``None`` when there is none.

    Only visible text counts (:func:`visible_lines`: a command inside an HTML comment is no
    command); lines inside fenced code blocks and quoted lines (``>``) never count; the handle
    must start the line (``thanks @chimera`` is not a command) and matches
    case-insensitively.
    """
    lines = visible_lines(body)
    fence: str | None = None
    for index, raw in enumerate(lines):
        line = raw.strip()
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and line.startswith(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        match = _LINE.match(line)
        if match is None:
            continue
        words = match.group("rest").split(None, 1)
        word = words[0] if words else ""
        verb = word.lower().rstrip(":,.!")
        rest = words[1] if len(words) > 1 else ""
        spec = VERB_TABLE.get(verb)
        if spec is None:
            return Command(UNKNOWN, word=word[:40])
        if spec.argument == "sha":
            return Command(verb, rest.split()[0] if rest.split() else "", word)
        if spec.argument == "text":
            text = "\n".join([rest, *lines[index + 1 :]]).strip()
            return Command(verb, text, word)
        return Command(verb, "", word)
    return None


def _get(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def comment_decision(
    payload: Mapping[str, Any], settings: ActionSettings, base: dict[str, Any]
) -> Decision:
    """Decide an ``issue_comment`` event from its payload alone (``base``: the fields
    :func:`~chimera.github.gate.events.decide` fills for every event).

    Returns a decision whose ``command`` names the verb (``None``: not a command). A PR
    comment's issue is unknown offline (the payload names no branch): ``issue`` is ``None``
    and :func:`~chimera.github.gate.permissions.resolve` derives it from the PR's branch.
    """
    comment = payload.get("comment") or {}
    user = comment.get("user") if isinstance(comment, Mapping) else None
    author = _get(user, "login")
    author = author if isinstance(author, str) and author else base["sender"]
    number = _int(_get(payload, "issue", "number"))
    on_pull = _get(payload, "issue", "pull_request") is not None
    fields = base | {
        "issue": None if on_pull else number,
        "pull": number if on_pull else None,
        "actor": author,
    }
    if base["event_action"] != "created":
        return Decision(
            Act.IGNORE,
            f"a comment was {base['event_action'] or 'changed'}; only a new comment is a command",
            **fields,
        )
    body = _get(comment, "body")
    command = parse_command(body if isinstance(body, str) else "")
    if command is None or number is None:
        return Decision(Act.IGNORE, "the comment holds no @chimera command", **fields)
    fields["command"] = command.verb
    if settings.is_self(author):
        return Decision(Act.IGNORE, f"the comment is Chimera's own ({author})", **fields)
    if _get(user, "type") == "Bot" or str(author).endswith("[bot]"):
        # No reply at all: two bots answering each other would never stop.
        return Decision(Act.IGNORE, f"{author} is a bot; only people give commands", **fields)
    return _verb_decision(command, author, number, on_pull, fields)


def _check(name: str, author: str, number: int, on_pull: bool) -> ApiCheck:
    """The API check ``name`` of a command by ``author`` on issue or PR ``number``."""
    if name == "permission":
        return ApiCheck(name, author, f"{author} needs the write, maintain or admin role")
    if name == "not_bot":
        return ApiCheck(name, author, "the commenter is not a bot")
    if name == "not_triggerer":
        return ApiCheck(name, author, "the approver did not trigger the run")
    if name == "head_commit":
        return ApiCheck(name, f"#{number}", "the SHA is a prefix of the current head")
    if name == "chimera_pr" and on_pull:
        return ApiCheck(name, f"#{number}", "the PR carries Chimera's state marker")
    return next(check for check in run_checks(author, number) if check.name == name)


def _verb_decision(
    command: Command, author: str, number: int, on_pull: bool, fields: dict[str, Any]
) -> Decision:
    verb = VERB_TABLE.get(command.verb)
    if verb is None:
        said = f"`{command.word}` is not a command" if command.word else "no command was given"
        return Decision(Act.IGNORE, f"{said}. {HELP}", explain=True, **fields)
    if not verb.works_on(on_pull):
        return Decision(Act.IGNORE, verb.elsewhere.format(verb=verb.name), explain=True, **fields)
    extra: dict[str, Any] = {}
    sha = ""
    if verb.argument == "sha":
        sha = command.argument.lower()
        if not _SHA.fullmatch(sha):
            return Decision(Act.IGNORE, verb.malformed, explain=True, **fields)
        extra["review_commit"] = sha
    elif verb.argument == "text":
        if not command.argument:
            return Decision(Act.IGNORE, verb.malformed, explain=True, **fields)
        extra["feedback"] = command.argument
    reason = verb.reason.format(author=author, verb=verb.name, number=number, sha=sha[:12])
    checks = tuple(_check(name, author, number, on_pull) for name in verb.checks)
    return Decision(verb.action, reason, checks=checks, **extra, **fields)
