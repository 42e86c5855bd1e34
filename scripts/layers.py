"""Chimera's layer order, the import graph of ``chimera/``, and ``specs/layers.yaml`` from them.

One layer imports only the layers below it (peers on one layer are independent, except on the
ground floor). ``specs/layers.yaml`` holds one ``absent`` requirement per forbidden import edge
(as an import-linter "layers" contract would say it) and is generated from :data:`LAYERS`::

    python scripts/layers.py --write    # regenerate specs/layers.yaml
    python scripts/layers.py --check    # exit 1 if the file or the import graph disagrees

A layer can be split into rooms (:data:`ROOMS`): subpackages whose imports of each other are
declared one by one, each with its reason; every other sideways import between them is
forbidden, in the generated file and in the AST check.

About 500 lines on purpose: the layer order, the rooms and the Spec rendered from both are one
idea (what may import what), and the AST check must read the very lists the Spec is written from.

Regular expressions can be fooled (a parenthesised ``from chimera import (\\n core)``), so
``tests/unit/architecture/test_layers.py`` also builds the AST import graph — function-local
and ``TYPE_CHECKING`` imports count as edges — and asserts it is acyclic and allowed.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC_FILE = ROOT / "specs" / "layers.yaml"

# Bottom to top. A name is a top-level module or subpackage of ``chimera``; names not yet
# built are listed so that the edges towards them are forbidden before they exist.
LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "__init__",
        # Written by the build (setuptools-scm): the version and the commit built from.
        "_version",
        "errors",
        "plugins",
        "stats",
        "protocols",
        "call_context",
        "atomic",
        "confine",
        "localstate",
        "runner",
        "verifier",
    ),
    ("config",),
    ("spec",),
    ("providers",),
    ("sandbox", "tools"),
    ("governance",),
    ("integrations",),
    ("fusion",),
    ("economics",),
    ("core",),
    ("memory",),
    ("crews",),
    # The flywheel is built on measurement: skills are kept and refined through its harness
    # and gates, so evolution sits above eval.
    ("eval",),
    ("evolution",),
    ("meta",),
    ("orchestration",),
    ("scheduler",),
    ("github",),
    ("migration",),
    ("cli",),
    ("__main__",),
    # Test support (the local GitHub fake and OpenAI stub): above everything, so no
    # production layer can import it.
    ("testing",),
)
GROUND = LAYERS[0]
VENDORED = ("eval/chains/",)
"""Folders (relative to ``chimera/``) of third-party code shipped as benchmark data: not Chimera."""
GENERATED = ("_version.py",)
"""Files the build writes (never committed, absent from a fresh clone): not walked."""
PLUGIN_ALLOWED = frozenset({"errors", "spec"})
"""What ``pytest_chimera`` may import: the Spec and the error tree (it must stay light)."""

# Rooms: the subpackages of one layer, and which room may import which, each allowed edge with
# its reason: ``{layer: {room: {room it may import: why}}}`` (``"*"``: every room of the
# layer). Any other import between two rooms of the layer is forbidden, a module of the layer
# outside every room is reported, and the rooms' graph must be acyclic. A layer not named here
# has no rooms to check.
# rooms: begin
ROOMS: dict[str, dict[str, dict[str, str]]] = {
    "github": {
        "client": {},
        "scan": {},
        "trust": {
            "client": "identities and branch-store commits are read and written through the API",
        },
        "gate": {
            "client": "permission checks and who started a run are API reads",
            "trust": "the rules read the Action's settings and parse carriers and markers once",
        },
        "conversation": {
            "client": "comments, check runs and costs are written and read through the API",
            "trust": "documents show the run report and keep state in the hidden markers",
        },
        "queue": {
            "client": "the queue's state is labels and comments, kept through the API",
            "trust": "claims and queued markers are parsed by the carriers' grammar",
            "conversation": "a slot's claim is the run's one outcome comment",
            "gate": "which labels hold slots is who set them (the starter rule)",
        },
        "agent": {
            "trust": "the child's request is a versioned hand-off file",
        },
        "verify": {
            "trust": "verify judges the base commit decide recorded and passes on its verdict",
            "scan": "a paused step's patch is read with the scan's path reader",
        },
        "publish": {
            "client": "publishing is pushes, PRs, labels and comments through the API",
            "trust": "publish acts only on what it re-derives from the trust chain",
            "conversation": "publish writes the PR body, the outcome comment and the Spec check",
            "queue": "publish moves the queue's labels and honours a newer stop claim",
            "gate": "the open Chimera PR is found by the permissions' rule (chimera_pull)",
            "scan": "the patch is scanned before it is pushed",
        },
        "action": {
            "client": "a job reaches GitHub through the client its context builds",
            "trust": "the context carries the Action's settings and the run's link",
            "conversation": "a job's result ends in the one outcome comment",
            "queue": "jobs share the ChangeQueue the context makes, and cancel its claims",
            "gate": "cancelling and refusing follow the permissions' rules",
        },
        "doctor": {
            "client": "every check is an API read",
            "queue": "the labels doctor checks are the queue's labels",
        },
        "jobs": {
            "*": "a job wires the rooms it needs; no room imports a job",
        },
    },
}
# rooms: end


def level(name: str) -> int:
    for i, layer in enumerate(LAYERS):
        if name in layer:
            return i
    raise KeyError(f"chimera.{name} is in no layer of scripts/layers.py")


def forbidden(src: str, dst: str) -> bool:
    """Whether ``chimera.src`` may not import ``chimera.dst``."""
    if src == dst:
        return False
    a, b = level(src), level(dst)
    return a < b or (a == b and a != 0)


def chimera_files(pkg_root: Path) -> list[Path]:
    """Chimera's own ``.py`` files (vendored benchmark projects left out)."""
    return [
        p
        for p in sorted(pkg_root.rglob("*.py"))
        if not any(p.relative_to(pkg_root).as_posix().startswith(v) for v in VENDORED)
        and p.relative_to(pkg_root).as_posix() not in GENERATED
    ]


def node_of(path: Path, pkg_root: Path) -> str:
    rel = path.relative_to(pkg_root)
    return rel.parts[0].removesuffix(".py")


def _from_parts(node: ast.ImportFrom, module_parts: list[str], is_pkg: bool) -> list[str]:
    """The dotted parts of the module a ``from … import`` names, a relative one resolved
    against the importing module (``module_parts``; ``is_pkg``: it is a package's
    ``__init__``)."""
    if not node.level:
        return node.module.split(".") if node.module else []
    base = module_parts if is_pkg else module_parts[:-1]
    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
    return [*base, *(node.module.split(".") if node.module else [])]


def _targets(node: ast.AST, module_parts: list[str], is_pkg: bool) -> Iterator[str]:
    """Top-level chimera names one import statement reaches."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            parts = alias.name.split(".")
            if parts[0] == "chimera" and len(parts) > 1:
                yield parts[1]
    elif isinstance(node, ast.ImportFrom):
        parts = _from_parts(node, module_parts, is_pkg)
        if parts[:1] != ["chimera"]:
            return
        if len(parts) > 1:
            yield parts[1]
        else:  # from chimera import core, spec (or a name defined in chimera/__init__.py)
            for alias in node.names:
                known = any(alias.name in layer for layer in LAYERS)
                yield alias.name if known else "__init__"


def _modules(node: ast.AST, module_parts: list[str], is_pkg: bool) -> Iterator[str]:
    """Full dotted ``chimera.…`` names one import reaches (``from a import b``: ``a.b``)."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] == "chimera":
                yield alias.name
    elif isinstance(node, ast.ImportFrom):
        parts = _from_parts(node, module_parts, is_pkg)
        if parts[:1] != ["chimera"]:
            return
        for alias in node.names:
            yield ".".join([*parts, alias.name])


def room_graph(pkg_root: Path, layer: str) -> dict[str, dict[str, list[str]]]:
    """``{src room: {dst room: [file:line, ...]}}`` for imports between rooms of ``layer``.

    A room is a subpackage ``chimera/<layer>/<room>/``; a module directly under
    ``chimera/<layer>/`` (other than ``__init__.py``) is in no room and has no edges here.
    """
    graph: dict[str, dict[str, list[str]]] = {}
    prefix = ["chimera", layer]
    for path in chimera_files(pkg_root):
        rel = path.relative_to(pkg_root.parent)
        parts = list(rel.with_suffix("").parts)
        if parts[:2] != prefix or len(parts) < 4:
            continue
        src = parts[2]
        is_pkg = path.name == "__init__.py"
        module_parts = parts[:-1] if is_pkg else parts
        tree = ast.parse(path.read_bytes(), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for target in _modules(node, module_parts, is_pkg):
                dst = target.split(".")
                if dst[:2] == prefix and len(dst) > 2 and dst[2] != src:
                    where = f"{rel.as_posix()}:{node.lineno}"
                    graph.setdefault(src, {}).setdefault(dst[2], []).append(where)
    return graph


def room_allowed(decl: dict[str, dict[str, str]], src: str, dst: str) -> bool:
    uses = decl.get(src, {})
    return src == dst or dst in uses or "*" in uses


def existing_rooms(pkg_root: Path, layer: str) -> tuple[list[str], list[str]]:
    """The room folders of ``chimera/<layer>/`` and the modules directly under it."""
    folder = pkg_root / layer
    if not folder.is_dir():
        return [], []
    rooms = sorted(p.name for p in folder.iterdir() if (p / "__init__.py").is_file())
    loose = sorted(
        p.relative_to(pkg_root.parent).as_posix()
        for p in folder.glob("*.py")
        if p.name != "__init__.py"
    )
    return rooms, loose


def room_violations(
    pkg_root: Path, rooms: dict[str, dict[str, dict[str, str]]] | None = None
) -> list[str]:
    """Undeclared imports between rooms, modules and folders in no room, and one room cycle."""
    problems: list[str] = []
    for layer, decl in sorted((ROOMS if rooms is None else rooms).items()):
        present, loose = existing_rooms(pkg_root, layer)
        for path in loose:
            problems.append(f"{path} is in no room of chimera.{layer} (ROOMS in scripts/layers.py)")
        for room in present:
            if room not in decl:
                problems.append(f"chimera.{layer}.{room} is in no room of scripts/layers.py")
        for room, uses in sorted(decl.items()):
            for dst in sorted(set(uses) - {"*"} - set(decl)):
                problems.append(f"ROOMS[{layer!r}][{room!r}] names {dst!r}, which is no room")
        graph = room_graph(pkg_root, layer)
        for src, dsts in sorted(graph.items()):
            for dst, where in sorted(dsts.items()):
                if not room_allowed(decl, src, dst):
                    problems.append(
                        f"{where[0]}: chimera.{layer}.{src} imports chimera.{layer}.{dst}"
                        " (an edge not allowed in ROOMS)"
                    )
        cycle = find_cycle(graph)
        if cycle:
            problems.append(f"import cycle between rooms of chimera.{layer}: " + " -> ".join(cycle))
    return problems


def import_graph(pkg_root: Path) -> dict[str, dict[str, list[str]]]:
    """``{src: {dst: [file:line, ...]}}`` for every import between top-level names."""
    graph: dict[str, dict[str, list[str]]] = {}
    for path in chimera_files(pkg_root):
        src = node_of(path, pkg_root)
        rel = path.relative_to(pkg_root.parent)
        module_parts = list(rel.with_suffix("").parts)
        is_pkg = path.name == "__init__.py"
        if is_pkg:
            module_parts = module_parts[:-1]
        tree = ast.parse(path.read_bytes(), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for dst in _targets(node, module_parts, is_pkg):
                if dst != src:
                    where = f"{rel.as_posix()}:{node.lineno}"
                    graph.setdefault(src, {}).setdefault(dst, []).append(where)
    return graph


def find_cycle(graph: dict[str, dict[str, list[str]]]) -> list[str] | None:
    """One cycle of the graph as ``[a, b, ..., a]``, or ``None``."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, {})):
            if state.get(m) == 1:
                return [*stack[stack.index(m) :], m]
            if m not in state and (found := visit(m)):
                return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state and (found := visit(n)):
            return found
    return None


def existing_nodes(pkg_root: Path) -> list[str]:
    names = {node_of(p, pkg_root) for p in chimera_files(pkg_root)}
    return sorted(names, key=lambda n: (level(n), n))


def _scope(src: str, pkg_root: Path) -> str:
    if (pkg_root / src).is_dir():
        return f"paths: ['chimera/{src}/**/*.py']"
    return f"path: chimera/{src}.py"


def _pattern(package: str, dst: str) -> str:
    # A statement that imports chimera.<dst> (or chimera.<dst>.x), either spelling.
    return (
        rf"^[ \t]*(?:from[ \t]+{package}\.{dst}\b|import[ \t]+{package}\.{dst}\b"
        rf"|from[ \t]+{package}[ \t]+import[^\n]*\b{dst}\b)"
    )


def _ident(name: str) -> str:
    return name.strip("_").replace("_", "-") or name


def render_spec(pkg_root: Path) -> str:
    """The text of ``specs/layers.yaml`` for the modules that exist under ``pkg_root``."""
    nodes = existing_nodes(pkg_root)
    everything = [n for layer in LAYERS for n in layer]
    order = " < ".join(", ".join(layer) for layer in LAYERS)
    lines = [
        "# Generated by scripts/layers.py from its LAYERS; edit that list, then run",
        "# `python scripts/layers.py --write`. One absent requirement per forbidden import edge.",
        f"# Layers, bottom to top: {order}.",
        "# Peers on one layer (other than the ground floor) are independent.",
        *_room_comments(),
        "requirements:",
    ]
    for src in nodes:
        for dst in everything:
            if not forbidden(src, dst):
                continue
            lines += [
                f"  - id: layer-{_ident(src)}-not-{_ident(dst)}",
                f"    title: chimera.{src} does not import chimera.{dst} (a higher or peer layer)",
                "    owner: scripts/layers.py",
                "    absent:",
                f"      pattern: '{_pattern('chimera', dst)}'",
                f"      {_scope(src, pkg_root)}",
            ]
    lines += _room_requirements(pkg_root)
    for dst in everything:
        if dst in PLUGIN_ALLOWED or dst in ("__init__", "__main__"):
            continue
        lines += [
            f"  - id: layer-plugin-not-{_ident(dst)}",
            f"    title: the pytest plugin does not import chimera.{dst} (only spec and errors)",
            "    owner: scripts/layers.py",
            "    absent:",
            f"      pattern: '{_pattern('chimera', dst)}'",
            "      paths: ['pytest_chimera/**/*.py']",
        ]
    return "\n".join(lines) + "\n"


def _room_comments() -> list[str]:
    lines: list[str] = []
    for layer, decl in sorted(ROOMS.items()):
        lines.append(f"# Rooms of chimera.{layer}; the imports allowed between them, and why:")
        for src, uses in decl.items():
            if not uses:
                lines.append(f"#   {src}: imports no other room")
            for dst, why in uses.items():
                lines.append(f"#   {src} -> {'every room' if dst == '*' else dst}: {why}")
        lines.append("# Every other import between two of these rooms is forbidden.")
    return lines


def _room_requirements(pkg_root: Path) -> list[str]:
    lines: list[str] = []
    for layer, decl in sorted(ROOMS.items()):
        present, _ = existing_rooms(pkg_root, layer)
        package = "chimera\\." + layer
        for src in present:
            for dst in decl:
                if src not in decl or room_allowed(decl, src, dst):
                    continue
                lines += [
                    f"  - id: room-{_ident(layer)}-{_ident(src)}-not-{_ident(dst)}",
                    f"    title: chimera.{layer}.{src} does not import chimera.{layer}.{dst}"
                    " (a sideways import not allowed in ROOMS)",
                    "    owner: scripts/layers.py",
                    "    absent:",
                    f"      pattern: '{_pattern(package, dst)}'",
                    f"      paths: ['chimera/{layer}/{src}/**/*.py']",
                ]
    return lines


def violations(pkg_root: Path, plugin_root: Path) -> list[str]:
    """Every forbidden edge of the AST graph, every unlisted name, and one cycle if any."""
    problems: list[str] = []
    graph = import_graph(pkg_root)
    for src, dsts in sorted(graph.items()):
        for dst, where in sorted(dsts.items()):
            try:
                bad = forbidden(src, dst)
            except KeyError as exc:
                problems.append(str(exc.args[0]))
                continue
            if bad:
                problems.append(f"{where[0]}: chimera.{src} imports chimera.{dst} (upward/peer)")
    for node in existing_nodes_safe(pkg_root):
        problems.append(f"chimera.{node} is in no layer of scripts/layers.py")
    cycle = find_cycle(graph)
    if cycle:
        problems.append("import cycle between subpackages: " + " -> ".join(cycle))
    problems += room_violations(pkg_root)
    plugin = import_graph_of_plugin(plugin_root)
    for dst, where in sorted(plugin.items()):
        if dst not in PLUGIN_ALLOWED:
            problems.append(f"{where[0]}: the pytest plugin imports chimera.{dst}")
    return problems


def existing_nodes_safe(pkg_root: Path) -> Iterable[str]:
    known = {n for layer in LAYERS for n in layer}
    return sorted({node_of(p, pkg_root) for p in chimera_files(pkg_root)} - known)


def import_graph_of_plugin(plugin_root: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for path in sorted(plugin_root.rglob("*.py")):
        tree = ast.parse(path.read_bytes(), filename=str(path))
        rel = path.relative_to(plugin_root.parent).as_posix()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for dst in _targets(node, [], False):
                    out.setdefault(dst, []).append(f"{rel}:{node.lineno}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", action="store_true", help="regenerate specs/layers.yaml")
    group.add_argument("--check", action="store_true", help="check the file and the graph")
    args = parser.parse_args(argv)
    pkg_root = ROOT / "chimera"
    text = render_spec(pkg_root)
    if args.write:
        SPEC_FILE.write_text(text, encoding="utf-8")
        print(f"wrote {SPEC_FILE.relative_to(ROOT)} ({text.count('- id:')} requirements)")
        return 0
    problems = violations(pkg_root, ROOT / "pytest_chimera")
    if SPEC_FILE.read_text(encoding="utf-8") != text:
        problems.append("specs/layers.yaml is stale: run python scripts/layers.py --write")
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
