"""Run ``chimera cascade-bench`` on stub models whose pass rates are set by the task file.

Usage::

    python bench/cascade.py [--tasks bench/cascade_tasks.yaml] [--json]

The task file's ``stub`` section gives each stub model a pass rate, a price (registered with
LiteLLM) and token counts (a fixed number or a ``[low, high]`` range drawn per task). A local
OpenAI-compatible stub server answers each call with the pass or the fail text, decided per
(model, task) by a seeded draw, so every run of the same file gives the same numbers. The
cascade and the top model alone run through LiteLLM over HTTP, exactly as the real command
does, and the same accounting code reports the cost tail.

Stub numbers measure the bookkeeping (which tier answered, that escalations are paid, the cost
distribution's arithmetic), NOT model quality: the pass rates are inputs, not results.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

from chimera.config import ChimeraConfig, ModelPrice
from chimera.economics.bench import BenchFile, load_bench_file, run_configured_bench
from chimera.protocols import SupportsComplete
from chimera.providers import BudgetedBackend, LiteLLMBackend, TokenBudget, register_prices
from chimera.testing import OpenAIStubServer, StubReply

DISCLAIMER = (
    "stub models: these numbers measure the bookkeeping (routing, paid escalations, the cost "
    "distribution), NOT model quality; the pass rates are inputs set by the task file"
)


def _draw(seed: int, *parts: str) -> random.Random:
    digest = hashlib.sha256(":".join([str(seed), *parts]).encode()).digest()
    return random.Random(digest)


def _tokens(spec: Any, rng: random.Random) -> int:
    if isinstance(spec, list):
        return rng.randint(int(spec[0]), int(spec[1]))
    return int(spec)


def plan_replies(bench: BenchFile) -> dict[str, list[StubReply]]:
    """Each stub model's replies, in the exact order the bench will call it."""
    assert bench.stub is not None and bench.cascade is not None
    stub = bench.stub
    seed = int(stub.get("seed", 0))
    models: dict[str, dict[str, Any]] = stub["models"]
    top = bench.top_model or bench.cascade.tiers[-1].route
    queues: dict[str, list[StubReply]] = {m: [] for m in models}

    def reply(model: str, task: str) -> tuple[StubReply, bool]:
        spec = models[model]
        rng = _draw(seed, model, task)
        passed = rng.random() < float(spec["pass_rate"])
        text = stub.get("pass_text", "ANSWER-OK") if passed else stub.get("fail_text", "no")
        prompt = _tokens(spec.get("prompt_tokens", 500), rng)
        completion = _tokens(spec.get("completion_tokens", 200), rng)
        return StubReply(text=text, prompt_tokens=prompt, completion_tokens=completion), passed

    for task in bench.tasks:
        for tier in bench.cascade.tiers:
            answer, passed = reply(tier.route, task.id)
            queues[tier.route].append(answer)
            if passed:
                break
        queues[top].append(reply(top, task.id)[0])
    return queues


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = Path(__file__).resolve().parent
    parser.add_argument("--tasks", type=Path, default=here / "cascade_tasks.yaml")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    bench = load_bench_file(args.tasks)
    if bench.stub is None or bench.cascade is None:
        parser.error(f"{args.tasks}: the stub bench needs a 'stub' section and a 'cascade'")
    models: dict[str, dict[str, Any]] = bench.stub["models"]
    register_prices(
        {
            m: ModelPrice(input_per_mtok=s["input_per_mtok"], output_per_mtok=s["output_per_mtok"])
            for m, s in models.items()
        }
    )
    with OpenAIStubServer() as server:
        for model, replies in plan_replies(bench).items():
            if replies:
                server.add_reply(model.removeprefix("openai/"), *replies)

        def backend_for(model: str, budget: TokenBudget) -> SupportsComplete:
            inner = LiteLLMBackend(model, api_base=server.api_base, api_key="stub", num_retries=0)
            return BudgetedBackend(inner, budget, model=model, default_max_tokens=1024)

        report = run_configured_bench(
            bench,
            ChimeraConfig(),
            cascade_name=None,
            top_model=None,
            backend_for=backend_for,
            note=DISCLAIMER,
        )
        calls = len(server.completion_requests())
    if args.json:
        sys.stdout.write(json.dumps({**report.to_json(), "http_calls": calls}, indent=2) + "\n")
    else:
        sys.stdout.write(report.render() + f"\n  HTTP calls to the stub server: {calls}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
