"""The ``@chimera`` verb table against what reads it: the parser, the decision, the help text,
the two jobs that answer comments, and the workflows' ``if:`` filters that start those jobs.

The workflows checked are whichever hold Chimera's jobs: the examples, and the reusable
workflow ``.github/workflows/chimera.yml`` when the repository has one. A job's filter is its
own ``if:`` and the ``if:`` of the step that runs the mode, evaluated on a comment event by a
small evaluator of GitHub's expression syntax (first shown to read the forms the workflows
use).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from chimera.cli.action import JOB_MODES
from chimera.github.gate.commands import (
    COMMAND_VERBS,
    DECIDE_VERBS,
    HANDLE,
    HELP,
    UNKNOWN,
    VERB_TABLE,
    VERBS,
    comment_decision,
    parse_command,
)
from chimera.github.gate.decision import Act
from chimera.github.trust.settings import ActionSettings

ROOT = Path(__file__).resolve().parents[3]
SHA = "0123456789abcdef0123456789abcdef01234567"

# -- a small evaluator of GitHub's expressions ------------------------------------------------

_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<op>&&|\|\||==|!=|!|\(|\)|,)"
    r"|(?P<num>\d+)|(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*))"
)


class _Missing:
    """A context value that is not there: falsy, equal to nothing but itself."""

    def __bool__(self) -> bool:
        return False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Missing) or other == ""

    def __hash__(self) -> int:
        return 0


MISSING = _Missing()


def _lookup(context: Mapping[str, Any], path: str) -> Any:
    value: Any = context
    for key in path.split("."):
        if not isinstance(value, Mapping) or key not in value:
            return MISSING
        value = value[key]
    return value


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.lower() == b.lower()  # GitHub compares strings case-insensitively
    return bool(a == b)


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "contains": lambda hay, needle: isinstance(hay, str) and str(needle).lower() in hay.lower(),
    "startsWith": lambda s, p: isinstance(s, str) and s.lower().startswith(str(p).lower()),
    "always": lambda: True,
    "format": lambda fmt, *args: str(fmt).format(*args),
}


def evaluate(expression: str, context: Mapping[str, Any]) -> Any:
    """``expression`` (GitHub's syntax, with or without ``${{ }}``) over ``context``."""
    text = expression.strip()
    if text.startswith("${{") and text.endswith("}}"):
        text = text[3:-2]
    tokens: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text.rstrip()):
        match = _TOKEN.match(text, pos)
        assert match is not None, f"cannot read {text[pos:]!r}"
        kind = match.lastgroup
        assert kind is not None
        tokens.append((kind, match.group(kind)))
        pos = match.end()
    it = iter([*tokens, ("end", "")])
    current = [next(it)]

    def take() -> tuple[str, str]:
        token = current[0]
        current[0] = next(it)
        return token

    def primary() -> Any:
        kind, value = take()
        if (kind, value) == ("op", "("):
            result = disjunction()
            assert take() == ("op", ")")
            return result
        if (kind, value) == ("op", "!"):
            return not primary()
        if kind == "str":
            return value[1:-1].replace("''", "'")
        if kind == "num":
            return int(value)
        assert kind == "name", value
        if value in ("true", "false"):
            return value == "true"
        if current[0] == ("op", "("):
            take()
            args = []
            while current[0] != ("op", ")"):
                args.append(disjunction())
                if current[0] == ("op", ","):
                    take()
            take()
            return _FUNCTIONS[value](*args)
        return _lookup(context, value)

    def comparison() -> Any:
        left = primary()
        while current[0] in (("op", "=="), ("op", "!=")):
            _, op = take()
            right = primary()
            left = _same(left, right) if op == "==" else not _same(left, right)
        return left

    def conjunction() -> Any:
        left = comparison()
        while current[0] == ("op", "&&"):
            take()
            right = comparison()
            left = left and right
        return left

    def disjunction() -> Any:
        left = conjunction()
        while current[0] == ("op", "||"):
            take()
            right = conjunction()
            left = left or right
        return left

    result = disjunction()
    assert current[0] == ("end", ""), current[0]
    return result


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("github.event_name == 'issue_comment'", True),
        ("github.event_name == 'issues'", False),
        ("!github.event.issue.pull_request", True),
        ("github.event.issue.pull_request && true", False),
        ("contains(github.event.comment.body, '@CHIMERA')", True),
        ("startsWith(github.event.pull_request.head.ref, 'chimera/issue-')", False),
        ("(github.event_name == 'issues' || contains(github.event.comment.body, 'x'))", False),
        ("${{ github.event.label.name == env.CHIMERA_LABEL }}", True),
        ("always() && needs.decide.outputs.proceed == 'true'", False),
    ],
)
def test_the_evaluator_reads_the_forms_the_workflows_use(expression: str, expected: bool) -> None:
    context = {
        "github": {
            "event_name": "issue_comment",
            "event": {"comment": {"body": "@chimera run"}, "issue": {"number": 3}},
        },
        "env": {},
    }
    assert bool(evaluate(expression, context)) is expected


# -- the workflows that hold Chimera's jobs ---------------------------------------------------


def workflow_files() -> list[Path]:
    files = sorted((ROOT / "examples" / "workflows").glob("*.yml"))
    reusable = ROOT / ".github" / "workflows" / "chimera.yml"
    if reusable.is_file():
        files.append(reusable)
    return files


def mode_jobs(mode: str) -> Iterator[tuple[Path, str, list[str], Mapping[str, Any]]]:
    """``(file, job id, [job if, step if], the workflow's env)`` of every job whose step runs
    Chimera in ``mode``."""
    for path in workflow_files():
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        env = data.get("env") or {}
        for job_id, job in (data.get("jobs") or {}).items():
            for step in job.get("steps") or []:
                if (step.get("with") or {}).get("mode") == mode:
                    filters = [str(f) for f in (job.get("if"), step.get("if")) if f is not None]
                    yield path, job_id, filters, env


def comment_context(body: str, on_pull: bool, env: Mapping[str, Any]) -> dict[str, Any]:
    issue: dict[str, Any] = {"number": 7}
    if on_pull:
        issue["pull_request"] = {"url": "https://api.github.com/repos/o/r/pulls/7"}
    event = {"action": "created", "comment": {"body": body}, "issue": issue}
    return {"github": {"event_name": "issue_comment", "event": event}, "env": dict(env)}


def example(verb: str) -> str:
    argument = {"sha": SHA[:12], "text": "rename total to sum"}.get(VERB_TABLE[verb].argument, "")
    return f"{HANDLE} {verb} {argument}".rstrip()


def places(verb: str) -> list[bool]:
    """Where ``verb`` works: ``on_pull`` values."""
    return [on_pull for on_pull in (False, True) if VERB_TABLE[verb].works_on(on_pull)]


def admitting(mode: str, body: str, on_pull: bool) -> list[str]:
    return [
        f"{path.name}:{job_id}"
        for path, job_id, filters, env in mode_jobs(mode)
        if all(evaluate(f, comment_context(body, on_pull, env)) for f in filters)
    ]


def test_the_workflows_hold_a_decide_and_a_command_job() -> None:
    assert list(mode_jobs("decide")) and list(mode_jobs("command"))


@pytest.mark.parametrize("verb", VERBS)
def test_each_verb_reaches_its_job_everywhere_it_works(verb: str) -> None:
    job = VERB_TABLE[verb].job
    for on_pull in places(verb):
        where = "a PR" if on_pull else "an issue"
        assert admitting(job, example(verb), on_pull), (
            f"no {job} job's if: lets `{example(verb)}` on {where} through"
        )


@pytest.mark.parametrize("on_pull", [False, True])
def test_an_unknown_verb_reaches_the_command_job_for_its_help_reply(on_pull: bool) -> None:
    assert admitting("command", f"{HANDLE} frobnicate", on_pull)


@pytest.mark.parametrize("mode", ["decide", "command"])
def test_a_comment_without_the_handle_starts_no_comment_job(mode: str) -> None:
    # Only a comment's own filter decides here: label and dispatch events never match.
    assert admitting(mode, "thanks, looks good", on_pull=False) == []
    assert admitting(mode, "thanks, looks good", on_pull=True) == []


# -- the table against the code that reads it -------------------------------------------------


def test_each_verb_is_answered_by_exactly_one_job_mode() -> None:
    assert {*VERBS, UNKNOWN} == DECIDE_VERBS | COMMAND_VERBS
    assert not DECIDE_VERBS & COMMAND_VERBS
    assert {verb.job for verb in VERB_TABLE.values()} <= JOB_MODES.keys()


def test_the_help_names_every_verb() -> None:
    for verb in VERB_TABLE.values():
        assert verb.usage in HELP


@pytest.mark.parametrize("verb", VERBS)
def test_the_decision_follows_the_table(verb: str) -> None:
    spec = VERB_TABLE[verb]
    settings = ActionSettings()
    base = {"event": "issue_comment", "event_action": "created", "sender": "alice"}
    for on_pull in (False, True):
        body = example(verb)
        payload = comment_context(body, on_pull, {})["github"]["event"]
        payload["comment"]["user"] = {"login": "alice", "type": "User"}
        decision = comment_decision(payload, settings, dict(base))
        command = parse_command(body)
        assert command is not None and command.verb == verb
        if on_pull not in places(verb):
            assert decision.action is Act.IGNORE and decision.explain
            continue
        assert decision.action is spec.action
        checks = tuple(check.name for check in decision.checks)
        assert checks == spec.checks
        assert spec.permission == "write" and "permission" in checks
