"""The reusable workflow's concurrency group and job conditions, evaluated for real events.

GitHub keeps one pending run per concurrency group and cancels the others, so an event that is
not a trigger (a `bug` label, Chimera's own labels, a "commented" review) must never share the
group of a pending trigger run; and one caller receives every event, so each job's ``if:``
must pick exactly its own events. The expressions are evaluated here with a small evaluator of
the subset they use (``&&``, ``||``, ``==``, ``!=``, ``!``, ``format``, ``startsWith``,
``contains``, property paths).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
REUSABLE = ROOT / ".github" / "workflows" / "chimera.yml"
CALLER_NAME = "Chimera"  # github.workflow inside the called workflow: the caller's name
LABEL = "chimera"  # the reusable workflow's default trigger label (its `label` input)
_TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<op>==|!=|&&|\|\||[(),!])|(?P<id>[\w.-]+))")


class _Eval:
    """A recursive-descent evaluator: ``or := and ('||' and)*``, ``and := cmp ('&&' cmp)*``."""

    def __init__(self, text: str, context: dict[str, Any]) -> None:
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text.rstrip()):
            m = _TOKEN.match(text, pos)
            assert m is not None, f"cannot read {text[pos:]!r}"
            kind = m.lastgroup or ""
            self.tokens.append((kind, m.group(kind)))
            pos = m.end()
        self.context = context
        self.i = 0

    def peek(self) -> str | None:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        self.i += 1
        return self.tokens[self.i - 1]

    def run(self) -> Any:
        value = self.or_()
        assert self.i == len(self.tokens)
        return value

    def or_(self) -> Any:
        value = self.and_()
        while self.peek() == "||":
            self.take()
            right = self.and_()
            value = value or right
        return value

    def and_(self) -> Any:
        value = self.cmp()
        while self.peek() == "&&":
            self.take()
            right = self.cmp()
            value = value and right
        return value

    def cmp(self) -> Any:
        left = self.unary()
        if self.peek() in ("==", "!="):
            op = self.take()[1]
            right = self.unary()
            equal = str(left).lower() == str(right).lower() if left is not None else right is None
            return equal if op == "==" else not equal
        return left

    def unary(self) -> Any:
        if self.peek() == "!":
            self.take()
            return not self.unary()
        return self.atom()

    def atom(self) -> Any:
        kind, text = self.take()
        if text == "(":
            value = self.or_()
            assert self.take()[1] == ")"
            return value
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if self.peek() == "(":
            self.take()
            args = [self.or_()]
            while self.peek() == ",":
                self.take()
                args.append(self.or_())
            assert self.take()[1] == ")"
            if text == "format":
                return re.sub(r"\{(\d+)\}", lambda m: str(args[1 + int(m.group(1))]), args[0])
            if text == "startsWith":
                return str(args[0] or "").lower().startswith(str(args[1]).lower())
            if text == "contains":
                return str(args[1]).lower() in str(args[0] or "").lower()
            raise AssertionError(f"unknown function {text}")
        found: Any = self.context
        for part in text.split("."):
            found = found.get(part) if isinstance(found, dict) else None
        return found


def _context(event_name: str, event: dict[str, Any], run_id: int, label: str) -> dict[str, Any]:
    github = {
        "event_name": event_name,
        "event": event,
        "run_id": run_id,
        "workflow": CALLER_NAME,
        "repository": "o/r",
    }
    return {"github": github, "inputs": {"label": label}}


def group(event_name: str, event: dict[str, Any], run_id: int, label: str = LABEL) -> str:
    """The reusable workflow's run group for an event (its ``label`` input: ``label``)."""
    data = yaml.safe_load(REUSABLE.read_text())
    expr = str(data["concurrency"]["group"])
    match = re.fullmatch(r"\$\{\{(.*)\}\}", expr.strip(), re.S)
    assert match is not None, expr
    return str(_Eval(match.group(1), _context(event_name, event, run_id, label)).run())


def named(group: str) -> str:
    return f"{CALLER_NAME}-{group}"


def _labeled(label: str, issue: int = 7) -> dict[str, Any]:
    return {"action": "labeled", "label": {"name": label}, "issue": {"number": issue}}


def _review(state: str, head: str = "chimera/issue-7") -> dict[str, Any]:
    return {
        "action": "submitted",
        "review": {"state": state},
        "pull_request": {"number": 9, "head": {"ref": head}},
    }


def test_a_trigger_and_a_queue_dispatch_share_the_issues_group() -> None:
    assert group("issues", _labeled("chimera"), 1) == named("chimera-issue-7")
    dispatch = {"inputs": {"issue-number": "7", "labeller": ""}}
    assert group("workflow_dispatch", dispatch, 2) == named("chimera-issue-7")


@pytest.mark.parametrize("label", ["bug", "chimera:running", "chimera:queued", "risk:high"])
def test_other_labels_never_share_a_pending_triggers_group(label: str) -> None:
    trigger = group("issues", _labeled("chimera"), 1)
    other = group("issues", _labeled(label), 2)
    assert other != trigger and other == named("chimera-other-2")


def test_approvals_and_change_requests_share_the_prs_group_and_comments_do_not() -> None:
    approved = group("pull_request_review", _review("approved"), 1)
    changes = group("pull_request_review", _review("changes_requested"), 2)
    assert approved == changes == named("chimera-pr-9")
    commented = group("pull_request_review", _review("commented"), 3)
    other_pr = group("pull_request_review", _review("approved", "feat"), 4)
    assert commented == named("chimera-other-3") and other_pr == named("chimera-other-4")


def _comment(body: str, *, pull: bool = False, number: int = 7) -> dict[str, Any]:
    issue: dict[str, Any] = {"number": number}
    if pull:
        issue["pull_request"] = {"url": "https://api.github.com/repos/o/r/pulls/7"}
    return {"action": "created", "comment": {"id": 1, "body": body}, "issue": issue}


@pytest.mark.parametrize("body", ["Thanks!", "cc @chimera", "@chimera run", "@chimera retry"])
def test_no_comment_ever_shares_a_pending_triggers_group(body: str) -> None:
    trigger = group("issues", _labeled("chimera"), 1)
    comment = group("issue_comment", _comment(body), 2)
    assert comment != trigger and comment == named("chimera-other-2")


@pytest.mark.parametrize("body", ["Nice.", "@chimera approve abc1234", "@chimera fix the edge"])
def test_no_pr_comment_ever_shares_a_pending_reviews_group(body: str) -> None:
    approved = group("pull_request_review", _review("approved"), 1)
    comment = group("issue_comment", _comment(body, pull=True, number=9), 2)
    assert comment != approved and comment == named("chimera-other-2")


def test_the_issues_group_follows_the_label_input() -> None:
    """The group reads the trigger label from the ``label`` input, as decide does: renamed
    once, in the caller's ``with:``, it is renamed everywhere."""
    assert group("issues", _labeled("autofix"), 1, label="autofix") == named("chimera-issue-7")
    assert group("issues", _labeled("chimera"), 2, label="autofix") == named("chimera-other-2")
    on = yaml.safe_load(REUSABLE.read_text())[True]
    assert on["workflow_call"]["inputs"]["label"]["default"] == LABEL


def test_the_apps_schedule_label_is_a_trigger_in_the_issues_group_and_a_persons_is_not() -> None:
    app = _labeled("chimera:schedule") | {"sender": {"login": "app[bot]", "type": "Bot"}}
    person = _labeled("chimera:schedule") | {"sender": {"login": "alice", "type": "User"}}
    assert group("issues", app, 1) == named("chimera-issue-7")
    assert group("issues", person, 2) == named("chimera-other-2")


@pytest.mark.parametrize(
    ("event_name", "event", "runs"),
    [
        ("issues", _labeled("chimera:schedule"), False),  # the tick's own filing
        ("issues", _labeled("deploy"), True),  # an event SOP's label
        ("schedule", {}, True),
        ("pull_request", {"action": "closed"}, True),
    ],
)
def test_the_ticks_own_filing_label_starts_no_tick(
    event_name: str, event: dict[str, Any], runs: bool
) -> None:
    assert ("tick" in routed(event_name, event)) is runs


def _jobs() -> dict[str, Any]:
    data = yaml.safe_load(REUSABLE.read_text())
    assert isinstance(data, dict)
    return dict(data["jobs"])


def routed(event_name: str, event: dict[str, Any]) -> set[str]:
    """The jobs whose own ``if:`` admits the event (the jobs that follow decide or refresh
    run only on their outputs, so only these are the event's)."""
    ctx = _context(event_name, event, 1, LABEL)
    return {
        name
        for name, job in _jobs().items()
        if "needs." not in str(job.get("if", ""))
        and bool(_Eval(str(job.get("if", "true")), ctx).run())
    }


_PR = {"number": 9, "head": {"ref": "chimera/issue-7", "repo": {"full_name": "o/r"}}}


@pytest.mark.parametrize(
    ("event_name", "event", "jobs"),
    [
        ("issues", _labeled("chimera"), {"app", "decide", "tick"}),
        ("issues", _labeled("chimera:schedule"), {"app", "decide"}),
        ("issues", _labeled("bug"), {"app", "tick"}),
        ("issues", {"action": "unlabeled", "label": {"name": "chimera"}}, {"app", "drain"}),
        ("issue_comment", _comment("@chimera stop"), {"app", "decide", "command"}),
        ("issue_comment", _comment("Thanks!"), {"app"}),
        ("pull_request_review", _review("approved"), {"app", "decide"}),
        ("pull_request_review", _review("approved", "feat"), {"app"}),
        ("pull_request", {"action": "closed", "pull_request": _PR}, {"app", "drain", "tick"}),
        ("schedule", {}, {"app", "drain", "tick"}),
        # The queue's dispatch starts the issue's run; one without an issue: a tick, a drain.
        ("workflow_dispatch", {"inputs": {"issue-number": "7"}}, {"app", "decide"}),
        ("workflow_dispatch", {"inputs": {"issue-number": ""}}, {"app", "drain", "tick"}),
        (
            "pull_request_target",
            {"action": "synchronize", "pull_request": _PR},
            {"app", "refresh"},
        ),
    ],
)
def test_each_event_reaches_exactly_the_jobs_of_its_purpose(
    event_name: str, event: dict[str, Any], jobs: set[str]
) -> None:
    assert routed(event_name, event) == jobs


def test_a_forks_push_to_a_chimera_named_branch_is_never_refreshed() -> None:
    fork = {"number": 9, "head": {"ref": "chimera/issue-7", "repo": {"full_name": "x/r"}}}
    event = {"action": "synchronize", "pull_request": fork}
    assert routed("pull_request_target", event) == set()
