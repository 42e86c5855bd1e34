"""The example workflows' concurrency groups, evaluated for real event shapes.

GitHub keeps one pending run per concurrency group and cancels the others, so an event that is
not a trigger (a `bug` label, Chimera's own labels, a "commented" review) must never share the
group of a pending trigger run. The group expressions are evaluated here with a small
evaluator of the expression subset they use (``&&``, ``||``, ``==``, ``format``,
``startsWith``, property paths).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
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
            raise AssertionError(f"unknown function {text}")
        found: Any = self.context
        for part in text.split("."):
            found = found.get(part) if isinstance(found, dict) else None
        return found


def group(workflow: str, event_name: str, event: dict[str, Any], run_id: int) -> str:
    data = yaml.safe_load((ROOT / "examples" / "workflows" / workflow).read_text())
    expr = str(data["concurrency"]["group"])
    match = re.fullmatch(r"\$\{\{(.*)\}\}", expr.strip(), re.S)
    assert match is not None, expr
    inputs = event.get("inputs", {})
    ctx = {
        "github": {"event_name": event_name, "event": event, "run_id": run_id},
        "inputs": inputs,
    }
    return str(_Eval(match.group(1), ctx).run())


def _labeled(label: str, issue: int = 7) -> dict[str, Any]:
    return {"action": "labeled", "label": {"name": label}, "issue": {"number": issue}}


def _review(state: str, head: str = "chimera/issue-7") -> dict[str, Any]:
    return {
        "action": "submitted",
        "review": {"state": state},
        "pull_request": {"number": 9, "head": {"ref": head}},
    }


def test_a_trigger_and_a_queue_dispatch_share_the_issues_group() -> None:
    assert group("chimera-fix.yml", "issues", _labeled("chimera"), 1) == "chimera-issue-7"
    dispatch = {"inputs": {"issue-number": "7", "labeller": ""}}
    assert group("chimera-fix.yml", "workflow_dispatch", dispatch, 2) == "chimera-issue-7"


@pytest.mark.parametrize("label", ["bug", "chimera:running", "chimera:queued", "risk:high"])
def test_other_labels_never_share_a_pending_triggers_group(label: str) -> None:
    trigger = group("chimera-fix.yml", "issues", _labeled("chimera"), 1)
    other = group("chimera-fix.yml", "issues", _labeled(label), 2)
    assert other != trigger and other == "chimera-other-2"


def test_approvals_and_change_requests_share_the_prs_group_and_comments_do_not() -> None:
    approved = group("chimera-review.yml", "pull_request_review", _review("approved"), 1)
    changes = group("chimera-review.yml", "pull_request_review", _review("changes_requested"), 2)
    assert approved == changes == "chimera-pr-9"
    commented = group("chimera-review.yml", "pull_request_review", _review("commented"), 3)
    other_pr = group("chimera-review.yml", "pull_request_review", _review("approved", "feat"), 4)
    assert commented == "chimera-other-3" and other_pr == "chimera-other-4"


def _comment(body: str, *, pull: bool = False, number: int = 7) -> dict[str, Any]:
    issue: dict[str, Any] = {"number": number}
    if pull:
        issue["pull_request"] = {"url": "https://api.github.com/repos/o/r/pulls/7"}
    return {"action": "created", "comment": {"id": 1, "body": body}, "issue": issue}


@pytest.mark.parametrize("body", ["Thanks!", "cc @chimera", "@chimera run", "@chimera retry"])
def test_no_comment_ever_shares_a_pending_triggers_group(body: str) -> None:
    trigger = group("chimera-fix.yml", "issues", _labeled("chimera"), 1)
    comment = group("chimera-fix.yml", "issue_comment", _comment(body), 2)
    assert comment != trigger and comment == "chimera-other-2"


@pytest.mark.parametrize("body", ["Nice.", "@chimera approve abc1234", "@chimera fix the edge"])
def test_no_pr_comment_ever_shares_a_pending_reviews_group(body: str) -> None:
    approved = group("chimera-review.yml", "pull_request_review", _review("approved"), 1)
    comment = group("chimera-review.yml", "issue_comment", _comment(body, pull=True, number=9), 2)
    assert comment != approved and comment == "chimera-other-2"


def test_the_fix_groups_label_is_the_workflows_chimera_label() -> None:
    # The group cannot read env, so it names the label itself: it must be CHIMERA_LABEL's.
    data = yaml.safe_load((ROOT / "examples" / "workflows" / "chimera-fix.yml").read_text())
    label = data["env"]["CHIMERA_LABEL"]
    assert f"github.event.label.name == '{label}'" in data["concurrency"]["group"]
    assert group("chimera-fix.yml", "issues", _labeled(label), 1) == "chimera-issue-7"


def test_the_apps_schedule_label_is_a_trigger_in_the_issues_group_and_a_persons_is_not() -> None:
    app = _labeled("chimera:schedule") | {"sender": {"login": "app[bot]", "type": "Bot"}}
    person = _labeled("chimera:schedule") | {"sender": {"login": "alice", "type": "User"}}
    assert group("chimera-fix.yml", "issues", app, 1) == "chimera-issue-7"
    assert group("chimera-fix.yml", "issues", person, 2) == "chimera-other-2"


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
    data = yaml.safe_load((ROOT / "examples" / "workflows" / "chimera-tick.yml").read_text())
    expr = str(data["jobs"]["tick"]["if"])
    ctx = {"github": {"event_name": event_name, "event": event, "run_id": 1}, "inputs": {}}
    assert bool(_Eval(expr, ctx).run()) is runs
