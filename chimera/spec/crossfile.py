"""What a file's validation produced (its entries and problems) and the checks across
files: duplicate ids, ``depends_on`` naming an unknown id, dependency cycles."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from chimera.errors import SpecProblem
from chimera.spec.fieldproblems import suggest
from chimera.spec.model import Requirement
from chimera.spec.yamlload import Mark


@dataclass
class FileEntry:
    """One requirement mapping of a file, valid or not."""

    result: FileResult
    mark: Mark
    id: str | None = None
    id_mark: Mark | None = None
    depends_on: list[tuple[str, Mark]] = field(default_factory=list)
    requirement: Requirement | None = None


@dataclass
class FileResult:
    path: Path
    display: str
    problems: list[SpecProblem] = field(default_factory=list)
    entries: list[FileEntry] = field(default_factory=list)

    def add(self, mark: Mark | None, message: str) -> None:
        # One problem, one line: a plugin's validator message may span several.
        message = " ".join(message.split("\n"))
        if mark is None:
            self.problems.append(SpecProblem(self.display, 0, 0, message))
        else:
            self.problems.append(SpecProblem(self.display, mark.line, mark.col, message))

    def location(self, mark: Mark) -> str:
        return f"{self.display}:{mark.line}:{mark.col}"

    def sorted_problems(self) -> list[SpecProblem]:
        return sorted(self.problems, key=lambda p: (p.line, p.col))


# --------------------------------------------------------------------------- across files


def cross_file_checks(results: list[FileResult]) -> None:
    entries = [e for r in results for e in r.entries]
    first: dict[str, FileEntry] = {}
    for entry in entries:
        if entry.id is None or entry.id_mark is None:
            continue
        earlier = first.get(entry.id)
        if earlier is None:
            first[entry.id] = entry
            continue
        assert earlier.id_mark is not None
        entry.result.add(
            entry.id_mark,
            f"duplicate id '{entry.id}': already defined at "
            f"{earlier.result.location(earlier.id_mark)}",
        )

    known = sorted(first)
    for entry in entries:
        for dep, mark in entry.depends_on:
            if dep in first:
                continue
            suggestion = suggest(dep, known)
            hint = f"; did you mean '{suggestion}'?" if suggestion else ""
            entry.result.add(mark, f"depends_on names unknown id '{dep}'{hint}")

    _report_cycles([first[i] for i in first], first)


def _report_cycles(order: list[FileEntry], by_id: dict[str, FileEntry]) -> None:
    """Find dependency cycles with an iterative DFS (requirements in file order).

    A cycle is reported once, on the requirement of the cycle the search reached first, at
    its ``depends_on`` entry leading into the cycle: ``dependency cycle: a -> b -> a``.
    """
    white, grey, black = 0, 1, 2
    color = dict.fromkeys(by_id, white)
    reported: set[frozenset[tuple[str, str]]] = set()
    for start in order:
        assert start.id is not None
        if color[start.id] != white:
            continue
        stack: list[tuple[str, Iterator[tuple[str, Mark]]]] = [(start.id, iter(start.depends_on))]
        color[start.id] = grey
        while stack:
            node, edges = stack[-1]
            for dep, _mark in edges:
                if dep not in by_id:
                    continue
                if color[dep] == white:
                    color[dep] = grey
                    stack.append((dep, iter(by_id[dep].depends_on)))
                    break
                if color[dep] == grey:
                    ids = [n for n, _ in stack]
                    cycle = [*ids[ids.index(dep) :], dep]
                    edge_set = frozenset(itertools.pairwise(cycle))
                    if edge_set not in reported:
                        reported.add(edge_set)
                        _report_cycle(cycle, by_id)
            else:
                color[node] = black
                stack.pop()


def _report_cycle(cycle: list[str], by_id: dict[str, FileEntry]) -> None:
    head = by_id[cycle[0]]
    nxt = cycle[1]
    mark = next((m for dep, m in head.depends_on if dep == nxt), head.mark)
    head.result.add(mark, f"dependency cycle: {' -> '.join(cycle)}")
