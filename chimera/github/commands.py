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

:func:`comment_decision` maps an ``issue_comment`` payload to a
:class:`~chimera.github.events.Decision` offline; the decide mode owns ``run``, ``retry``,
``approve`` and ``fix`` (they start jobs), the command mode (:mod:`chimera.github.jobs.command`)
owns ``stop``, ``status`` and unknown verbs (they must answer while a run holds the issue's
concurrency lock).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chimera.github.decision import Act, ApiCheck, Decision, run_checks
from chimera.github.settings import ActionSettings

__all__ = [
    "COMMAND_VERBS",
    "DECIDE_VERBS",
    "HANDLE",
    "VERBS",
    "Command",
    "comment_decision",
    "parse_command",
    "visible_lines",
]

HANDLE = "@chimera"
VERBS = ("run", "retry", "approve", "fix", "stop", "status")
# Commands that start jobs (the fix and review workflows' decide) ...
DECIDE_VERBS = frozenset({"run", "retry", "approve", "fix"})
# ... and those answered by the light command workflow (no per-issue lock), unknown ones too.
COMMAND_VERBS = frozenset({"stop", "status", "unknown"})

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
HELP = (
    "Chimera understands `@chimera run` or `@chimera retry` (on an issue), "
    "`@chimera approve <head sha>` and `@chimera fix <what to change>` (on a Chimera PR), "
    "`@chimera stop` and `@chimera status`"
)


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
        if verb not in VERBS:
            return Command("unknown", word=word[:40])
        if verb == "approve":
            return Command(verb, rest.split()[0] if rest.split() else "", word)
        if verb == "fix":
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
    :func:`~chimera.github.events.decide` fills for every event).

    Returns a decision whose ``command`` names the verb (``None``: not a command). A PR
    comment's issue is unknown offline (the payload names no branch): ``issue`` is ``None``
    and :func:`~chimera.github.permissions.resolve` derives it from the PR's branch.
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


def _verb_decision(
    command: Command, author: str, number: int, on_pull: bool, fields: dict[str, Any]
) -> Decision:
    verb = command.verb
    perm = ApiCheck("permission", author, f"{author} needs the write, maintain or admin role")
    if verb == "unknown":
        said = f"`{command.word}` is not a command" if command.word else "no command was given"
        return Decision(Act.IGNORE, f"{said}. {HELP}", explain=True, **fields)
    if verb in ("run", "retry"):
        if on_pull:
            return Decision(
                Act.IGNORE,
                f"`@chimera {verb}` works on the issue; on a Chimera PR use "
                "`@chimera fix <what to change>`",
                explain=True,
                **fields,
            )
        return Decision(
            Act.RUN,
            f"{author} asked `@chimera {verb}` on #{number}",
            checks=(
                ApiCheck("not_bot", author, "the commenter is not a bot"),
                *run_checks(author, number),
            ),
            **fields,
        )
    if verb in ("stop", "status"):
        return Decision(
            Act.CANCEL if verb == "stop" else Act.STATUS,
            f"{author} asked `@chimera {verb}` on #{number}",
            checks=(perm,),
            **fields,
        )
    if not on_pull:
        return Decision(
            Act.IGNORE,
            f"`@chimera {verb}` works on a Chimera pull request, not on an issue",
            explain=True,
            **fields,
        )
    pr_check = ApiCheck("chimera_pr", f"#{number}", "the PR carries Chimera's state marker")
    if verb == "approve":
        sha = command.argument.lower()
        if not _SHA.fullmatch(sha):
            return Decision(
                Act.IGNORE,
                "`@chimera approve` needs the head commit's SHA (7 to 40 hex digits), "
                "so an approval is always of the commit you reviewed",
                explain=True,
                **fields,
            )
        return Decision(
            Act.RESUME,
            f"{author} approved {sha[:12]} on PR #{number} by comment",
            review_commit=sha,
            checks=(
                perm,
                pr_check,
                ApiCheck("not_triggerer", author, "the approver did not trigger the run"),
                ApiCheck("head_commit", f"#{number}", "the SHA is a prefix of the current head"),
            ),
            **fields,
        )
    if not command.argument:
        return Decision(
            Act.IGNORE,
            "`@chimera fix` needs the change to make, e.g. `@chimera fix rename total to sum`",
            explain=True,
            **fields,
        )
    return Decision(
        Act.RERUN,
        f"{author} asked `@chimera fix` on PR #{number}: the issue runs again on the same "
        "branch with the comment as (tainted) feedback",
        feedback=command.argument,
        checks=(perm, pr_check),
        **fields,
    )
