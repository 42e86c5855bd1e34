"""Retry-prompt size under failure carry-forward: attempts 1..20 with 50 KB diffs.

Not run in CI. For each attempt count N it builds the history of N failed attempts (each with
a distinct failure signature — the worst case for dedupe — and a 50 KB real-looking diff),
renders the retry prompt the AutonomousAgent would send, and counts its tokens with LiteLLM's
counter (tiktoken for the model given). Three arms, measured in the same run:

* ``naive``: every record in full with its whole diff (no cap, no ceiling) — the baseline;
* ``carry`` (default): verdicts and causes, no diff (``diff_feedback`` off);
* ``carry+diff``: ``--diff-feedback`` on, diffs capped at 2,000 characters.

Both carry arms must stay under the history token ceiling (``--ceiling``, default 6000); the
script exits 1 if either does not. Usage: ``python bench/carry_forward.py [--model gpt-4o]``.
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_MODE", "PRODUCTION")

from chimera.core.attempts import (
    AttemptHistory,
    AttemptRecord,
    FailureSignature,
    Verdict,
)
from chimera.providers import count_tokens


def fake_diff(n: int, size: int = 50_000) -> str:
    lines = [f"--- a/src/module_{n}.py", f"+++ b/src/module_{n}.py", "@@ -1,400 +1,420 @@"]
    i = 0
    while sum(len(x) + 1 for x in lines) < size:
        lines.append(f"+    value_{i} = compute_{n}(value_{i - 1}, factor={i % 7})  # step {i}")
        i += 1
    return "\n".join(lines) + "\n"


def record(n: int, diff: str, record_diff_chars: int) -> AttemptRecord:
    sig = FailureSignature(
        Verdict.VERIFY_FAILED, (f"req-{n}: failed: symbol <path> not found variant {n}",)
    )
    verifier = "\n".join(
        f"[req-{n}] failed: pattern 'total_{n}' not found\n  src/module_{n}.py:{k}:1: line {k}"
        for k in range(12)
    )
    return AttemptRecord.build(
        number=n,
        verdict=Verdict.VERIFY_FAILED,
        signature=sig,
        cause=f"verification failed; still red: req-{n} (failed: pattern not found)",
        verifier_output=verifier,
        diff=diff,
        record_diff_chars=record_diff_chars,
        files_changed=3,
        added=420,
        removed=12,
        first_failing_step=f"step {n}: edit_file(src/module_{n}.py): old text not found",
    )


def naive(records: list[tuple[AttemptRecord, str]]) -> str:
    parts = ["## Previous attempts"]
    for rec, diff in records:
        parts.append(
            f"### Attempt {rec.number} ({rec.verdict.value})\n{rec.cause}\n"
            f"{rec.verifier_output}\n```diff\n{diff}```"
        )
    return "\n\n".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="gpt-4o")
    parser.add_argument("--ceiling", type=int, default=6000)
    parser.add_argument("--attempts", type=int, default=20)
    parser.add_argument("--diff-kb", type=int, default=50)
    args = parser.parse_args()

    def tokens(text: str) -> int:
        return count_tokens(args.model, [{"role": "user", "content": text}])

    head = (
        f"attempts 1..{args.attempts}, {args.diff_kb} KB diffs, ceiling {args.ceiling}, "
        f"tokens by LiteLLM for {args.model}"
    )
    print(head)
    print(f"{'N':>3} {'naive':>9} {'carry':>7} {'carry+diff':>11} {'collapsed':>9} {'ratio':>7}")
    history_off = AttemptHistory()
    history_on = AttemptHistory()
    raw: list[tuple[AttemptRecord, str]] = []
    worst = 0
    for n in range(1, args.attempts + 1):
        diff = fake_diff(n, args.diff_kb * 1000)
        rec = record(n, diff, 2000)
        history_off.add(rec)
        history_on.add(rec)
        raw.append((rec, diff))
        off = history_off.render(
            diff_feedback=False, token_ceiling=args.ceiling, count_tokens=tokens
        )
        on = history_on.render(diff_feedback=True, token_ceiling=args.ceiling, count_tokens=tokens)
        base = tokens(naive(raw))
        worst = max(worst, off.tokens, on.tokens)
        ratio = on.tokens / base
        print(f"{n:>3} {base:>9} {off.tokens:>7} {on.tokens:>11} {on.collapsed:>9} {ratio:>7.3f}")
        assert on.distinct == n and off.distinct == n  # nothing dropped
    ok = worst <= args.ceiling
    print(f"max carried history: {worst} tokens (ceiling {args.ceiling}): {'OK' if ok else 'OVER'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
