"""TrustKernel: folding rules and assessors into one decision, failing softly, the judge seam."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from chimera.governance.actions import Action
from chimera.governance.judge import PrecedentStore, SemanticJudge, fingerprint
from chimera.governance.kernel import Decision, TrustKernel
from chimera.governance.rules import Rule, RuleSet, Verdict
from chimera.protocols import Completion, Message, Purpose, ToolSchema

WS = "/home/dev/project"


def cmd(text: str) -> Action:
    return Action.for_command(text, WS, home="/home/dev")


class FakeJudgeModel:
    """A SupportsComplete that answers with fixed texts and records the requests."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.requests: list[Sequence[Message]] = []

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSchema] | None = None,
        purpose: Purpose = Purpose.ACT,
        max_tokens: int | None = None,
    ) -> Completion:
        assert tools is None and purpose is Purpose.REVIEW
        self.requests.append(messages)
        return Completion(text=self.answers.pop(0), model="fake-judge")


def test_combine_takes_the_worst_and_keeps_notes() -> None:
    warn = Decision(Verdict.WARN, ("a",), ("note",), "rules")
    review = Decision(Verdict.REVIEW, ("b",), ("why",), "taint")
    combined = Decision.combine([Decision.allow(), warn, review])
    assert combined.verdict is Verdict.REVIEW
    assert combined.rule_ids == ("b", "a")
    assert combined.reasons == ("why", "note")
    assert combined.source == "taint"
    assert Decision.combine([]).verdict is Verdict.ALLOW


def test_messages_tell_the_agent_what_happened() -> None:
    denied = Decision(Verdict.BLOCK, ("git-push",), ("`git push` publishes",))
    assert denied.message().startswith("Blocked by governance [git-push]: `git push` publishes.")
    assert "Do not retry" in denied.message()
    assert "Do not retry" not in Decision(Verdict.WARN, ("x",), ("y",)).message()
    assert denied.to_dict() == {
        "verdict": "block",
        "rule_ids": ["git-push"],
        "reasons": ["`git push` publishes"],
        "source": "rules",
    }


def test_a_crashing_rule_is_a_review_not_a_crash() -> None:
    def broken(_: Any) -> list[str]:
        raise RuntimeError("bug")

    kernel = TrustKernel(RuleSet([Rule("broken", "b", Verdict.BLOCK, broken)]))
    decision = kernel.evaluate(cmd("ls"))
    assert decision.verdict is Verdict.REVIEW and decision.rule_ids == ("kernel-error",)


def test_assessors_are_consulted() -> None:
    class NoMake:
        def assess_action(self, action: Action) -> Decision:
            if action.command and action.command.startswith("make"):
                return Decision(Verdict.REVIEW, ("no-make",), ("make is off",), "custom")
            return Decision.allow()

    kernel = TrustKernel()
    kernel.add_assessor(NoMake())
    assert kernel.evaluate(cmd("make all")).rule_ids == ("no-make",)
    assert kernel.evaluate(cmd("ls")).verdict is Verdict.ALLOW
    assert kernel.evaluate(cmd("git push")).verdict is Verdict.BLOCK


def test_judge_settles_only_rule_reviews_and_never_blocks(tmp_path: Path) -> None:
    model = FakeJudgeModel(
        '{"verdict": "block", "reason": "looks bad"}',
        'Sure! {"verdict": "allow", "reason": "a benign maintenance command"}',
    )
    store = PrecedentStore(tmp_path / "precedents.json")
    judge = SemanticJudge(model, store)
    kernel = TrustKernel(judge=judge)
    first = kernel.evaluate(cmd("pkill -f uvicorn"))
    assert first.verdict is Verdict.REVIEW  # "block" was clamped
    assert "semantic-judge" in first.rule_ids
    second = kernel.evaluate(cmd("git update-index --skip-worktree local.cfg"))
    assert second.verdict is Verdict.ALLOW and second.source == "judge"
    # the same question again is answered from the precedent, with no model call
    again = kernel.evaluate(cmd("git  update-index --skip-worktree  local.cfg"))
    assert again.verdict is Verdict.ALLOW and again.source == "precedent"
    assert judge.calls == 2 and len(model.requests) == 2
    # block and allow decisions never reach the judge
    assert kernel.evaluate(cmd("git push")).verdict is Verdict.BLOCK
    assert kernel.evaluate(cmd("ls")).verdict is Verdict.ALLOW
    assert judge.calls == 2
    # precedents persist
    reloaded = PrecedentStore(tmp_path / "precedents.json")
    assert len(reloaded) == 2
    # the action text reached the model fenced as data
    assert "UNTRUSTED-DATA" in model.requests[0][1]["content"]


def test_judge_keeps_review_on_garbage_and_skips_taint_reviews() -> None:
    from chimera.governance.taint import SourceKind, TaintLedger

    model = FakeJudgeModel("no json here")
    judge = SemanticJudge(model)
    kernel = TrustKernel(judge=judge)
    assert kernel.evaluate(cmd("pkill -f x")).verdict is Verdict.REVIEW
    ledger = TaintLedger()
    ledger.taint("x", SourceKind.ISSUE_BODY)
    tainted = TrustKernel(assessors=[ledger], judge=judge)
    assert tainted.evaluate(cmd("make deploy")).verdict is Verdict.REVIEW
    assert judge.calls == 1  # the taint review was not offered to the judge


def test_fingerprint_ignores_workspace_and_spacing() -> None:
    a = Action.for_command("ls  -la", "/a/b")
    b = Action.for_command("ls -la", "/c/d")
    assert fingerprint(a) == fingerprint(b)
    assert fingerprint(a, ("x",)) != fingerprint(a)


def test_bad_precedent_file(tmp_path: Path) -> None:
    from chimera.errors import GovernanceError

    path = tmp_path / "p.json"
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(GovernanceError, match="not a precedent store"):
        PrecedentStore(path)


def test_kernel_never_raises_on_shell_noise() -> None:
    """A seeded fuzz over shell fragments: every text gets a decision, no rule crashes."""
    import random

    fragments = [
        *("ls", "cat", "rm", "-rf", "/", "~", ".env", "|", "||", "&&", ";", "&", ">", ">>"),
        *("<", "<<", "EOF", "$(", "`", ")", "(", "'", '"', "curl", "-d", "@-", "http://x"),
        *("nc", "bash", "-c", "python", "import os;print(os.environ)", "git", "push", "\\"),
        *("\n", "#", "{", "}", "$HOME", "..", "*", "2>&1", "sudo", "env", "xargs", "find"),
        *("-exec", "-delete", "of=/dev/sda", "dd", "pip", "install", "git+https://x", "<("),
        *("eval", "--", "-", "=", "%ENV", "/proc/1/environ", "$((1+2))", "${A:-b}", ":()"),
    ]
    rng = random.Random(20261130)
    kernel = TrustKernel()
    for _ in range(1500):
        text = " ".join(rng.choice(fragments) for _ in range(rng.randint(1, 12)))
        if rng.random() < 0.3:
            text = text.replace(" ", "")
        decision = kernel.evaluate(Action.for_command(text, WS, home="/home/dev"))
        assert "kernel-error" not in decision.rule_ids, (text, decision.reasons)
        args: Any = rng.choice([text, {"path": text}, {"url": text, "x": [text, {"y": text}]}])
        tool = rng.choice(["read_file", "write_file", "mcp_x", "fetch_url", "run_command"])
        decision = kernel.evaluate(Action.from_tool_call(tool, args, WS))
        assert "kernel-error" not in decision.rule_ids, (tool, args, decision.reasons)


def test_evaluate_command_for_agent_written_checks() -> None:
    kernel = TrustKernel()
    assert kernel.evaluate_command("pytest -q tests/test_x.py", WS).executes
    assert kernel.evaluate_command("cat ~/.aws/credentials", WS, home="/home/dev").denied
