"""``chimera init --github``: the adopter's one workflow, pinned to this Chimera's release.

The caller (``chimera/cli/caller.yml``, shipped in the wheel; ``examples/workflows/chimera.yml``
is the same file) calls Chimera's reusable workflow by commit. The commit is the one the
running Chimera was built from (:data:`chimera.__commit__`, recorded by setuptools-scm), and
only a release build may name it: a version without ``.dev`` or a local part, from a clean
tree, installed as a package. Anything else (a source tree, an editable install, a commit
between tags, uncommitted changes) is refused with one line naming what to pin instead,
because a caller pinned to a commit that is no release runs code nobody released.

The file is written atomically; an existing one is never replaced without ``--force``, which
prints the unified diff first.
"""

from __future__ import annotations

import difflib
import re
import sysconfig
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from chimera.atomic import atomic_write_text
from chimera.errors import UsageError

CALLER_FILE = Path(".github") / "workflows" / "chimera.yml"
"""Where the caller goes, relative to the root (the queue dispatches this file name)."""

REPOSITORY = "chimera-dev/chimera"
"""Chimera's repository, whose reusable workflow the caller pins."""

PIN_LINE = re.compile(
    r"^(?P<head>\s+uses: [\w.-]+/[\w.-]+/\.github/workflows/chimera\.yml@)[0-9a-f]{40}  # .*$",
    re.M,
)
INSTEAD = (
    f"pin a commit yourself: `chimera init --github --pin <40-hex commit of {REPOSITORY}>` "
    f"(a release tag's: git ls-remote --tags https://github.com/{REPOSITORY})"
)
HAND_PIN = "pinned with --pin (no release tag)"
"""The pin's comment when the user chose the commit."""
_RELEASE = re.compile(r"\d+(?:\.\d+)*")


@dataclass(frozen=True)
class Build:
    """What the running Chimera knows about itself.

    Attributes:
        version: ``chimera.__version__`` (``1.2.3``; ``1.2.4.dev3+g…`` between tags).
        commit: ``chimera.__commit__``: 40 hex digits, or ``None`` (dirty tree, no git).
        package_dir: the folder ``chimera`` is imported from.
    """

    version: str
    commit: str | None
    package_dir: Path


def running_build() -> Build:
    """The :class:`Build` of this process's Chimera."""
    import chimera

    return Build(chimera.__version__, chimera.__commit__, Path(chimera.__file__).resolve().parent)


def _installed(package_dir: Path) -> bool:
    """Whether ``package_dir`` lies in an installation's library folder (a wheel's place);
    a source tree or an editable install imports from elsewhere."""
    roots = {Path(sysconfig.get_paths()[k]).resolve() for k in ("purelib", "platlib")}
    return any(package_dir.is_relative_to(root) for root in roots)


def release_pin(build: Build) -> tuple[str, str]:
    """``(commit, tag)`` the caller pins for ``build``.

    Raises:
        UsageError: ``build`` is no release build (one line: why, and what to pin instead).
    """
    where = f"this Chimera ({build.version})"
    if not _installed(build.package_dir):
        raise UsageError(
            f"{where} runs from a source tree or an editable install, not a release; {INSTEAD}"
        )
    if build.commit is None:
        raise UsageError(
            f"{where} was built from uncommitted changes or without git metadata; {INSTEAD}"
        )
    if not _RELEASE.fullmatch(build.version):
        raise UsageError(
            f"{where} was built from commit {build.commit[:12]}, which is no release; {INSTEAD}"
        )
    return build.commit, f"v{build.version}"


def caller_template() -> str:
    """The caller as shipped (its pin a placeholder)."""
    return files("chimera.cli").joinpath("caller.yml").read_text(encoding="utf-8")


def render_caller(commit: str, tag: str) -> str:
    """The caller pinned to ``commit``, ``tag`` in the pin's comment.

    Raises:
        ValueError: ``commit`` is not 40 hex digits, or the template has no pin line.
    """
    if not re.fullmatch(r"[0-9a-f]{40}", commit):
        raise ValueError(f"not a commit: {commit!r}")
    text, count = PIN_LINE.subn(lambda m: f"{m['head']}{commit}  # {tag}", caller_template())
    if count != 1:
        raise ValueError(f"the caller template has {count} pin lines, not one")
    return text


def write_caller(
    root: Path, shown: Path, *, force: bool, build: Build | None = None, pin: str | None = None
) -> str:
    """Write the pinned caller under ``root``; what to print (a diff first with ``force``).
    ``pin``: a commit the user chose (40 lowercase hex digits) instead of this build's release.

    Raises:
        UsageError: no release build and no ``pin``; ``pin`` is not a full commit; the file
            exists and ``force`` is off; it cannot be written.
    """
    if pin is not None:
        if not re.fullmatch(r"[0-9a-f]{40}", pin):
            raise UsageError(
                f"--pin {pin[:60]!r}: not a full commit (40 lowercase hex digits); a tag or a "
                "branch can move under the caller"
            )
        commit, tag = pin, HAND_PIN
    else:
        commit, tag = release_pin(build or running_build())
    text = render_caller(commit, tag)
    target = root / CALLER_FILE
    report = ""
    if target.exists():
        if not force:
            raise UsageError(f"{shown} already exists; pass --force to see the diff and replace it")
        old = target.read_text(encoding="utf-8", errors="replace")
        if old == text:
            return f"{shown} is already this caller ({tag}): unchanged\n"
        report = "".join(
            difflib.unified_diff(
                old.splitlines(keepends=True),
                text.splitlines(keepends=True),
                fromfile=f"{shown} (yours)",
                tofile=f"{shown} (chimera init --github)",
            )
        )
    try:
        atomic_write_text(target, text)
    except OSError as exc:
        raise UsageError(f"cannot write {shown}: {exc.strerror or exc}") from exc
    return report + f"wrote {shown}: calls {REPOSITORY} at {commit[:12]} ({tag})\n"
