"""The local paths the base commit's workflows run: ``uses: ./tools/ci`` protects ``tools/ci/``.

A workflow step ``uses: ./path`` runs the action in that folder of the checkout (its
``action.yml`` and every script it calls) with the workflow's token and secrets; a job
``uses: ./.github/workflows/x.yml`` runs a reusable workflow. A patch that rewrites
``tools/ci/prep.py`` under such an action therefore changes what CI runs, though no file of
``.github/`` changes. What is protected is read from the **base** commit only — never from the
patch, which could drop the ``uses:`` line in the same change:

1. every file under ``.github/workflows/`` at the base, YAML-parsed (every ``uses`` key at any
   depth) and also read line by line (``uses: ./x``), so a file PyYAML cannot read still counts;
2. each local action found, its ``action.yml`` / ``action.yaml`` at the base, read the same
   way for the local actions its composite steps use, until none is new;
3. a folder other than the root is protected whole; the root (``uses: ./``) protects its
   manifest — protecting the whole root would block every change to an action's own
   repository;
4. every action, the root's included, also protects the files its manifest names, wherever
   they lie: ``runs.main`` / ``pre`` / ``post`` (JavaScript actions) and a local
   ``runs.image`` (Docker), relative to the action's folder; in the ``run:`` of its composite
   steps, a path after the action's folder (``${{ github.action_path }}/FILE``,
   ``$GITHUB_ACTION_PATH/FILE``, ``${GITHUB_ACTION_PATH}/FILE``, or a step variable set to
   ``${{ github.action_path }}``), and a path from the step's working folder (the checkout's
   root unless ``working-directory`` says otherwise: ``run: bash scripts/prep.sh``) — one
   that names a script (a ``.sh``, ``.py``, ... file, or one starting ``./``) or a file of
   the base commit. A composite step runs such a file with the workflow's token and secrets
   as surely as a file inside the action's folder.

Paths are resolved as GitHub does for a step's ``uses: ./`` (against the checkout's root) and
compared case-folded. (GitHub Docs: "Workflow syntax — jobs.<job_id>.steps[*].uses", "Metadata
syntax for GitHub Actions".)
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chimera.github.scan.model import Finding
from chimera.github.scan.paths import git_lines, normalise, read_blobs
from chimera.github.scan.table import row
from chimera.spec.yamlload import parse_yaml

__all__ = ["UsedPaths", "used_paths"]

WORKFLOWS = ".github/workflows"
_MANIFESTS = ("action.yml", "action.yaml")
_USES_LINE = re.compile(r"""^\s*(?:-\s*)?["']?uses["']?\s*:\s*["']?(\.[^\s"'#]*)""", re.M)
_ACTION_PATH = re.compile(r"github\.action_path\s*\}\}[/\\]+([^\s\"'`;|&)]+)")
_ACTION_PATH_EXPR = re.compile(r"\$\{\{\s*github\.action_path\s*\}\}")
# A path after the action's folder in a step's `run:`: the expression, `$NAME/` or `${NAME}/`
# (`name` is the variable; the caller keeps GITHUB_ACTION_PATH and the step's aliases of it).
_ACTION_REF = re.compile(
    r"(?:\$\{\{\s*github\.action_path\s*\}\}|\$\{?(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}?)"
    r"[/\\]+(?P<path>[^\s\"'`;|&)]+)"
)
# Words of a `run:` script (shell separators and quotes split them) that look like a path.
_WORD_SPLIT = re.compile(r"[\s\"'`;|&()<>=]+")
_PATH_WORD = re.compile(r"(?:\./)?[A-Za-z0-9_.-][A-Za-z0-9_./-]*")
_SCRIPT_SUFFIXES = (
    ".sh",
    ".bash",
    ".zsh",
    ".py",
    ".js",
    ".mjs",
    ".cjs",
    ".ts",
    ".rb",
    ".pl",
    ".ps1",
    ".php",
)
_MAX_ACTIONS = 200
_RUNS = "never changed by Chimera: a base workflow runs it"


@dataclass(frozen=True)
class UsedPaths:
    """What base workflows run from the checkout.

    Attributes:
        folders: case-folded folders protected whole → where the base uses them.
        files: case-folded single files (the root action's) → where.
    """

    folders: dict[str, str]
    files: dict[str, str]

    def findings(self, path: str) -> list[Finding]:
        """``action-path`` findings for the changed ``path`` (normalised, repo-relative)."""
        key = path.casefold()
        out: list[Finding] = []
        for folder, where in self.folders.items():
            if key == folder or key.startswith(folder + "/"):
                out.append(row("action-path").hit(path, f"{_RUNS}: {where}"))
                break
            if folder.startswith(key + "/"):
                # A file or symlink where a folder on the way stands redirects `uses:`.
                why = f"{_RUNS} (a folder on the way to {folder}/): {where}"
                out.append(row("action-path").hit(path, why))
                break
        if key in self.files:
            out.append(row("action-path").hit(path, f"{_RUNS}: {self.files[key]}"))
        return out


def _local(target: str) -> str | None:
    """The checkout-relative folder of ``uses: ./x`` (``""`` for the root); ``None`` when it is
    not a local path or leaves the checkout."""
    if not target.startswith("./") and target != ".":
        return None
    resolved = posixpath.normpath(target)
    if resolved == ".":
        return ""
    if resolved.startswith("../") or resolved == ".." or resolved.startswith("/"):
        return None
    return resolved


def _walk_uses(node: Any) -> list[str]:
    """Every ``uses`` string value at any depth (iterative: a deep document is data)."""
    found: list[str] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if key == "uses" and isinstance(value, str):
                    found.append(value.strip())
                else:
                    stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _parse(text: str) -> Any:
    """The document (the Spec's YAML reader: alias bombs refused), or ``None``; the line
    reading of :func:`_uses_in` covers a file this cannot read."""
    doc = parse_yaml(text)
    return None if doc.syntax_error else doc.value


def _uses_in(text: str) -> list[str]:
    """Local ``uses:`` targets of a workflow or action text (parsed and line by line)."""
    targets = [t for t in _walk_uses(_parse(text)) if t.startswith(".")]
    targets += _USES_LINE.findall(text)
    return list(dict.fromkeys(targets))


def _inside(folder: str, name: str) -> str | None:
    """``name`` (relative to ``folder``) as a repository path, or ``None`` when it is not a
    plain path inside the repository (absolute, an expression, or leaving it)."""
    name = name.strip()
    if not name or "${{" in name or "$" in name or "://" in name or name.startswith("/"):
        return None
    resolved = posixpath.normpath(posixpath.join(folder, name))
    if resolved in (".", "..") or resolved.startswith(("../", "/")):
        return None
    return resolved


def _step_files(folder: str, step: dict[str, Any]) -> tuple[list[str], list[str]]:
    """``(named, maybe)``: files a composite step's ``run:`` runs — ``named`` certainly
    (after the action's folder, or a script path), ``maybe`` only when the base commit holds
    them (a path-like word from the working folder)."""
    run = step.get("run")
    if not isinstance(run, str):
        return [], []
    env = step.get("env")
    aliases = {"GITHUB_ACTION_PATH"}
    if isinstance(env, dict):
        aliases |= {
            str(k) for k, v in env.items() if isinstance(v, str) and _ACTION_PATH_EXPR.search(v)
        }
    named: list[str] = []
    for match in _ACTION_REF.finditer(run):
        ours = match.group("name") is None or match.group("name") in aliases
        if ours and (path := _inside(folder, match.group("path"))) is not None:
            named.append(path)
    cwd = step.get("working-directory")
    where = _inside("", cwd) if isinstance(cwd, str) and cwd.strip() else ""
    maybe: list[str] = []
    if where is not None:
        for word in _WORD_SPLIT.split(run):
            if not _PATH_WORD.fullmatch(word) or (path := _inside(where, word)) is None:
                continue
            script = word.startswith("./") or word.lower().endswith(_SCRIPT_SUFFIXES)
            (named if script else maybe).append(path)
    return named, maybe


def _action_files(folder: str, manifest: str, text: str) -> tuple[list[str], list[str]]:
    """``(named, maybe)`` (see :func:`_step_files`): the files an action's manifest makes run
    — ``runs.main/pre/post``, a local image, ``${{ github.action_path }}/FILE`` anywhere in
    it, and what its composite steps run."""
    doc = _parse(text)
    runs = doc.get("runs") if isinstance(doc, dict) else None
    named: list[str] = [manifest]
    maybe: list[str] = []
    if isinstance(runs, dict):
        for key in ("main", "pre", "post", "image"):
            value = runs.get(key)
            if isinstance(value, str) and (path := _inside(folder, value)) is not None:
                named.append(path)
        steps = runs.get("steps")
        for step in steps if isinstance(steps, list) else []:
            if isinstance(step, dict):
                sure, unsure = _step_files(folder, step)
                named += sure
                maybe += unsure
    named += [p for m in _ACTION_PATH.findall(text) if (p := _inside(folder, m)) is not None]
    return named, maybe


def _tree(repo: Path, base: str, under: str) -> dict[str, str] | None:
    """``path → blob id`` of the blobs under ``under`` at ``base`` (``None``: git failed)."""
    lines = git_lines(repo, ["ls-tree", "-r", "-z", "--full-tree", base, "--", under or "."])
    if lines is None:
        return None
    out: dict[str, str] = {}
    for entry in lines:
        meta, _, raw = entry.partition(b"\t")
        fields = meta.split(b" ")
        path = normalise(raw)
        if len(fields) == 3 and fields[1] == b"blob" and path is not None:
            out[path] = fields[2].decode()
    return out


def used_paths(repo: Path, base: str) -> UsedPaths | str:
    """The paths base workflows run (see the module docstring).

    Args:
        repo: the repository holding ``base``.
        base: the commit the patch applies to.

    Returns:
        A :class:`UsedPaths`, or a one-line reason the base could not be read.
    """
    workflows = _tree(repo, base, WORKFLOWS)
    if workflows is None:
        return f"the base commit {base[:12]} cannot be read"
    blobs = read_blobs(repo, list(workflows.values()))
    queue: list[tuple[str, str]] = []  # (folder, where it is used)
    for path, blob in sorted(workflows.items()):
        text = blobs.get(blob, b"").decode("utf-8", "replace")
        queue += [(t, f"`uses: {t}` in {path}") for t in _uses_in(text)]
    folders: dict[str, str] = {}
    files: dict[str, str] = {}
    maybe: list[tuple[str, str]] = []  # path-like words of `run:` steps, kept if at the base
    seen: set[str] = set()
    while queue and len(seen) < _MAX_ACTIONS:
        target, where = queue.pop(0)
        folder = _local(target)
        if folder is None or folder.casefold() in seen:
            continue
        seen.add(folder.casefold())
        if folder:
            folders.setdefault(folder.casefold(), where)
        if folder.endswith((".yml", ".yaml")):
            continue  # a reusable workflow (under .github/, blocked whole anyway)
        manifests = {
            p: b
            for p in (posixpath.join(folder, m) for m in _MANIFESTS)
            for b in [(_tree(repo, base, p) or {}).get(p)]
            if b is not None
        }
        texts = read_blobs(repo, list(manifests.values()))
        for manifest, blob in manifests.items():
            text = texts.get(blob, b"").decode("utf-8", "replace")
            named, unsure = _action_files(folder, manifest, text)
            for name in named:
                files.setdefault(name.casefold(), f"{where}, which runs it")
            maybe += [(name, f"{where}, which runs it") for name in unsure]
            queue += [(t, f"{where}, then `uses: {t}` in {manifest}") for t in _uses_in(text)]
    for name, where in _existing(repo, base, maybe):
        files.setdefault(name.casefold(), where)
    return UsedPaths(folders, files)


def _existing(repo: Path, base: str, wanted: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The ``(path, where)`` pairs whose path is a file of ``base`` (one ``git ls-tree``)."""
    paths = list(dict.fromkeys(p for p, _ in wanted))
    if not paths:
        return []
    args = ["ls-tree", "-r", "-z", "--full-tree", "--name-only", base, "--", *paths]
    found = {normalise(raw) for raw in git_lines(repo, args) or []}
    return [(p, w) for p, w in wanted if p in found]
