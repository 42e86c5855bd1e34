"""Small benchmark chains whose scripted model's effect is known: for tests of the learning loop.

:func:`write_rule_chain` writes a chain file beside a tiny project: every task (one family)
asks for ``extra_<id>.py`` with ``f()`` returning a word's plural; its scripted model writes the
right plural only when the task's *rule marker* is in its plan prompt (a skill that carries the
marker), else the regular ``<word>s``. So which skill helps which task is known in advance,
and a test of the gates measures bookkeeping, never a model. The shipped 12-task chain has too
few tasks per family for a gate to act on (see the learning page); these chains have enough.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml

Word = tuple[str, str, str]
"""``(task id, word, its plural)``."""


def rule_task(tid: str, word: str, plural: str, needs: str, *, family: str) -> dict[str, object]:
    """One chain task (the mapping a chain file holds)."""
    check = f"python -c \"from extra_{tid} import f; assert f() == '{plural}'\""
    return {
        "id": tid,
        "family": family,
        "task": f"Plural nouns: add extra_{tid}.py with f() returning the plural noun of {word}.",
        "requirements": [{"id": f"{tid}-works", "command": {"run": check, "timeout": 60}}],
        "path": f"extra_{tid}.py",
        "right": f"def f() -> str:\n    return '{plural}'\n",
        "wrong": f"def f() -> str:\n    return '{word}s'\n",
        "needs": needs,
    }


def write_rule_chain(
    folder: Path, rules: Mapping[str, Sequence[Word]], *, family: str = "plurals"
) -> Path:
    """Write ``folder/chain.yaml`` and ``folder/project/`` (a one-file project) with one task
    per word, each needing its rule's marker; returns the chain file's path."""
    (folder / "project").mkdir(parents=True, exist_ok=True)
    (folder / "project" / "README.md").write_text("A tiny project for learning tests.\n")
    tasks = [
        rule_task(tid, word, plural, marker, family=family)
        for marker, words in rules.items()
        for tid, word, plural in words
    ]
    chain = {"name": f"{family}-chain", "project": "project", "max_attempts": 1, "tasks": tasks}
    path = folder / "chain.yaml"
    path.write_text(yaml.safe_dump(chain, sort_keys=False), encoding="utf-8")
    return path


REGULAR: tuple[Word, ...] = (
    ("a1", "box", "boxes"), ("a2", "fox", "foxes"), ("a3", "bus", "buses"),
    ("a4", "dish", "dishes"), ("a5", "match", "matches"),
)  # fmt: skip
IRREGULAR: tuple[Word, ...] = (
    ("b1", "goose", "geese"), ("b2", "mouse", "mice"), ("b3", "child", "children"),
    ("b4", "foot", "feet"), ("b5", "tooth", "teeth"), ("b6", "person", "people"),
    ("b7", "man", "men"),
)  # fmt: skip

__all__ = ["IRREGULAR", "REGULAR", "Word", "rule_task", "write_rule_chain"]
