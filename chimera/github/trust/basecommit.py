"""What the trusted jobs read from the base commit: the Spec, the configuration, the tree.

The verify and publish jobs never take the Spec or ``[tool.chimera]`` from a working tree,
a PR head or the agent's artifact: they read the blobs of the base commit decide recorded
(checked out of that commit through a temporary index — ``git checkout-index``, as a checkout
writes them, so ``export-ignore`` and ``export-subst`` in the commit's ``.gitattributes``,
which ``git archive`` obeys, cannot leave the Spec or the tests out of the tree verify judges;
a link that leaves the folder is refused). :func:`spec_digest` names exactly what was read —
the blob ids of the spec files and configuration files at the base commit, plus the acceptance
block's hash — so publish can check that verify judged the same goal it is about to act on.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from chimera.errors import ChimeraError, ConfigError
from chimera.runner import stderr_line

if TYPE_CHECKING:
    from chimera.config.check import CheckSettings
    from chimera.config.model import ChimeraConfig

__all__ = [
    "CONFIG_FILES",
    "BaseFiles",
    "export_tree",
    "read_base_files",
    "sha256_text",
    "spec_digest",
]

CONFIG_FILES = ("pyproject.toml", "chimera.toml")


def sha256_text(text: str) -> str:
    """The SHA-256 of ``text`` encoded as UTF-8, in hex (patches, acceptance blocks)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _git(
    root: Path, *args: str, env: dict[str, str] | None = None, stdin: bytes | None = None
) -> bytes:
    proc = subprocess.run(
        ["git", *args], cwd=root, capture_output=True, check=False, env=env, input=stdin
    )
    if proc.returncode != 0:
        why = stderr_line(proc.stderr, exit_code=proc.returncode)
        raise ChimeraError(f"git {args[0]} failed: {why}")
    return proc.stdout


def _listing(root: Path, sha: str, paths: tuple[str, ...]) -> list[tuple[str, str]]:
    """``(path, blob id)`` of every file under ``paths`` at ``sha``, sorted."""
    out = _git(root, "ls-tree", "-r", "-z", "--full-tree", sha, "--", *paths)
    rows: list[tuple[str, str]] = []
    for entry in out.decode("utf-8", "surrogateescape").split("\0"):
        if not entry:
            continue
        meta, _, path = entry.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == "blob":
            rows.append((path, parts[2]))
    return sorted(rows)


def spec_digest(root: Path, sha: str, spec_path: str, acceptance_sha256: str) -> str:
    """SHA-256 (hex) over the blob ids of the spec files under ``spec_path`` and of the
    configuration files at commit ``sha``, and the acceptance block's hash.

    Raises:
        ChimeraError: ``sha`` is not a commit of the repository at ``root``.
    """
    h = hashlib.sha256()
    spec = spec_path.strip("/") or "."
    for path, blob in _listing(root, sha, (spec, *CONFIG_FILES)):
        h.update(f"{path}\0{blob}\n".encode("utf-8", "surrogateescape"))
    h.update(f"acceptance\0{acceptance_sha256}\n".encode())
    return h.hexdigest()


def export_tree(root: Path, sha: str, dest: Path, paths: tuple[str, ...] = ()) -> Path:
    """Check out ``paths`` (all when empty; missing ones skipped) of commit ``sha`` into
    ``dest``, as a checkout writes them (the commit's ``.gitattributes`` line endings and
    filters apply; ``export-ignore`` and ``export-subst`` do not: every file of the commit is
    there, as committed); returns ``dest``. ``root``'s own index and work tree are untouched.

    Raises:
        ChimeraError: ``sha`` is not a commit, the files cannot be written, or a link in them
            points outside ``dest``.
    """
    dest.mkdir(parents=True, exist_ok=True)
    wanted = tuple(p for p, _ in _listing(root, sha, paths)) if paths else ()
    if paths and not wanted:
        return dest
    prefix = f"{dest.resolve()}/"
    with tempfile.TemporaryDirectory(prefix="chimera-export-") as tmp:
        env = {**os.environ, "GIT_INDEX_FILE": str(Path(tmp) / "index")}
        _git(root, "read-tree", f"{sha}^{{tree}}", env=env)
        if wanted:
            listed = "".join(f"{p}\0" for p in wanted).encode("utf-8", "surrogateescape")
            _git(root, "checkout-index", "-f", "-z", "--stdin", f"--prefix={prefix}",
                 env=env, stdin=listed)  # fmt: skip
        else:
            _git(root, "checkout-index", "-f", "-a", f"--prefix={prefix}", env=env)
    _refuse_escaping_links(dest, sha)
    return dest


def _refuse_escaping_links(dest: Path, sha: str) -> None:
    """Refuse a link in ``dest`` whose target is absolute or leaves ``dest`` (what tar's
    ``data`` filter refused when the tree came from ``git archive``)."""
    top = dest.resolve()
    for folder, dirs, files in os.walk(top):
        for name in (*dirs, *files):
            path = Path(folder) / name
            if not path.is_symlink():
                continue
            target = path.readlink()
            resolved = Path(os.path.normpath(Path(folder) / target))
            if target.is_absolute() or not resolved.is_relative_to(top):
                rel = path.relative_to(top).as_posix()
                raise ChimeraError(
                    f"cannot extract {sha[:12]}: {rel!r} is a link to {str(target)!r}, outside "
                    "the tree"
                )


@dataclass(frozen=True)
class BaseFiles:
    """The Spec folder and configuration of the base commit, extracted.

    Attributes:
        folder: where they were extracted (a tree holding only those files).
        spec_dir: the spec path inside ``folder`` (may not exist: no Spec at the base).
        config: ``[tool.chimera]`` (or ``chimera.toml``) of the base commit.
        check: ``[tool.chimera.check]`` of the base commit.
    """

    folder: Path
    spec_dir: Path
    config: ChimeraConfig
    check: CheckSettings


def read_base_files(root: Path, sha: str, spec_path: str, dest: Path) -> BaseFiles:
    """Extract the spec files and configuration of commit ``sha`` into ``dest`` and read the
    configuration there.

    Raises:
        ChimeraError: ``sha`` is unknown or its files cannot be extracted.
        ConfigError: the base commit's configuration is invalid (one line, ``file: key``).
    """
    from chimera.config.check import load_check_settings
    from chimera.config.model import load_config

    spec = spec_path.strip("/") or "."
    export_tree(root, sha, dest, (spec, *CONFIG_FILES))
    try:
        config = load_config(dest)
        check = load_check_settings(dest)
    except ConfigError as exc:
        raise ConfigError(f"the base commit {sha[:12]}: {exc}") from exc
    return BaseFiles(folder=dest, spec_dir=dest / spec, config=config, check=check)


def changed_since(root: Path, base: str, patch: str, since: str) -> list[tuple[str, str]]:
    """``(path, status)`` of every file that differs between commit ``since`` and ``base``
    with ``patch`` applied (in a temporary index; the checkout is untouched). A resume's
    risk is judged on this: what a person approved at ``since`` needs no second approval.

    Raises:
        ChimeraError: a commit is unknown, or the patch does not apply to ``base``.
    """
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, GIT_INDEX_FILE=str(Path(tmp) / "index"))

        def git(*args: str, stdin: bytes | None = None) -> str:
            proc = subprocess.run(
                ["git", *args], cwd=root, env=env, input=stdin, capture_output=True, check=False
            )
            if proc.returncode != 0:
                why = stderr_line(proc.stderr, exit_code=proc.returncode)
                raise ChimeraError(f"git {args[0]} failed: {why}")
            return proc.stdout.decode("utf-8", "surrogateescape")

        git("read-tree", base)
        if patch.strip():
            git(
                "apply", "--cached", "--binary", "-", stdin=patch.encode("utf-8", "surrogateescape")
            )
        tree = git("write-tree").strip()
        out = git("diff-tree", "-r", "--no-renames", "--name-status", "-z", since, tree)
    parts = [p for p in out.split("\0") if p]
    return [(parts[i + 1], parts[i][:1]) for i in range(0, len(parts) - 1, 2)]
