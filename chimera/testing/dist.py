"""Chimera as users install it: the sdist and wheel built from a checkout, and fresh virtual
environments that install the wheel (plain, or with extras) for tests that run the installed
``chimera`` and ``pytest`` in a project outside the checkout, so nothing is imported from the
source tree.

Building runs ``python -m build`` (PyPA's front end, isolated build environments);
installing runs pip in each new environment, so both reach the package index for what is
not cached yet. pip's own cache is shared between environments.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Dists",
    "Venv",
    "VenvCache",
    "build_dists",
    "clean_env",
    "run_install_step",
    "wheel_names",
]

# Variables that would let a child import Chimera's source tree or another environment's
# packages instead of what the environment installed; and the switch that keeps a child from
# caching bytecode (environments install without compiling, so their first imports cache it).
_LEAKS = (
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "VIRTUAL_ENV",
    "PYTHONUSERBASE",
    "PYTHONDONTWRITEBYTECODE",
)


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without the variables that leak another install into a
    child (``PYTHONPATH``, ``VIRTUAL_ENV``, ...), with ``extra`` on top."""
    env = {k: v for k, v in os.environ.items() if k not in _LEAKS}
    env["PYTHONNOUSERSITE"] = "1"
    return env | dict(extra or {})


@dataclass(frozen=True)
class Dists:
    """The built distributions: ``sdist`` (``.tar.gz``) and ``wheel`` (``.whl``)."""

    sdist: Path
    wheel: Path

    @property
    def version(self) -> str:
        """The version in the wheel's file name (``pytest_chimera-<version>-py3-none-any``)."""
        return self.wheel.name.split("-")[1]


def build_dists(source: Path, out: Path, *, timeout: float = 600) -> Dists:
    """``python -m build`` of ``source`` into ``out``: the sdist, then the wheel built from
    the sdist (the front end's default, so the wheel is what the sdist builds).

    Raises:
        subprocess.CalledProcessError: the build failed (its output is in the exception).
    """
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(source)],
        check=True,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=clean_env(),
    )
    (sdist,) = sorted(out.glob("*.tar.gz"))
    (wheel,) = sorted(out.glob("*.whl"))
    return Dists(sdist, wheel)


def wheel_names(wheel: Path) -> list[str]:
    """The paths inside ``wheel``, sorted."""
    with zipfile.ZipFile(wheel) as archive:
        return sorted(archive.namelist())


@dataclass(frozen=True)
class Venv:
    """A virtual environment at ``path`` (made by :meth:`create`)."""

    path: Path

    @classmethod
    def create(cls, path: Path, requirements: Sequence[str] = (), *, timeout: float = 900) -> Venv:
        """A new environment at ``path`` with pip, then ``pip install`` of ``requirements``
        (a wheel's path with ``[extras]``, a name; none: an empty environment).

        Raises:
            subprocess.CalledProcessError: the venv or the install failed.
        """
        subprocess.run(
            [sys.executable, "-m", "venv", str(path)],
            check=True,
            capture_output=True,
            timeout=timeout,
            env=clean_env(),
        )
        venv = cls(path)
        if requirements:
            # --no-compile: compiling every installed module (LiteLLM's thousands) costs about
            # a quarter of an install; the modules a test imports are compiled on first use.
            venv.pip("install", "--disable-pip-version-check", "-q", "--no-compile", *requirements)
        return venv

    @property
    def bin(self) -> Path:
        """The folder of its programs (``python``, ``pip``, ``chimera``, ``pytest``)."""
        return self.path / "bin"

    @property
    def python(self) -> Path:
        return self.bin / "python"

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """An environment for its programs: its ``bin`` first on ``PATH``, nothing leaked."""
        env = clean_env(extra)
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        env["VIRTUAL_ENV"] = str(self.path)
        return env

    def run(
        self,
        argv: Sequence[str],
        cwd: Path,
        *,
        env: Mapping[str, str] | None = None,
        timeout: float = 600,
        stdin: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` (``argv[0]`` is looked up in its ``bin`` first) in ``cwd``; never
        raises for a non-zero exit."""
        program = self.bin / argv[0]
        command = [str(program) if program.exists() else argv[0], *argv[1:]]
        return subprocess.run(
            command,
            cwd=cwd,
            env=self.env(env),
            capture_output=True,
            text=True,
            timeout=timeout,
            input=stdin,
            check=False,
        )

    def pip(self, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
        """``python -m pip ARGS`` in this environment.

        Raises:
            subprocess.CalledProcessError: pip failed.
        """
        return subprocess.run(
            [str(self.python), "-m", "pip", *args],
            check=True,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=self.env(),
        )

    def distributions(self) -> set[str]:
        """The normalised names of the distributions installed here (pip and setuptools
        left out)."""
        out = self.pip("list", "--format=freeze", "--disable-pip-version-check").stdout
        names = {line.split("==")[0].strip().lower().replace("_", "-") for line in out.splitlines()}
        return {n for n in names if n and n not in ("pip", "setuptools", "wheel")}


def run_install_step(
    action_yml: Path,
    mode: str,
    *,
    python_bin: Path,
    version: str = "",
    action_path: Path | None = None,
    seals_heldout: bool = False,
    env: Mapping[str, str] | None = None,
    timeout: float = 900,
) -> subprocess.CompletedProcess[str]:
    """Run ``action.yml``'s "Install Chimera" step for ``mode`` under bash, as the runner
    would with its ``${{ }}`` values filled in: ``python`` is the one in ``python_bin`` (put
    first on ``PATH``), ``version`` the ``chimera-version`` input (empty: install from
    ``action_path``, the action's own source), ``seals_heldout`` whether verify has a public
    key. Never raises for a non-zero exit.
    """
    import yaml

    action = yaml.safe_load(action_yml.read_text(encoding="utf-8"))
    (step,) = [s for s in action["runs"]["steps"] if s.get("name") == "Install Chimera"]
    values = {
        "CHIMERA_MODE": mode,
        "CHIMERA_SEALS_HELDOUT": "true" if seals_heldout else "false",
        "CHIMERA_VERSION": version,
        "CHIMERA_ACTION_PATH": str(action_path or action_yml.parent),
    }
    assert set(step["env"]) == set(values), f"the step's inputs changed: {sorted(step['env'])}"
    full = clean_env(env) | values
    full["PATH"] = f"{python_bin}{os.pathsep}{full.get('PATH', '')}"
    return subprocess.run(
        ["bash", "-e", "-c", step["run"]],
        env=full,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


class VenvCache:
    """Environments made once per folder and shared by the tests (and the xdist workers) that
    ask for the same one: each is made under a file lock, and a finished one is marked so a
    later caller reuses it.

    Args:
        folder: where the environments live (shared by every worker of a run).
        dists: the distributions they install from.
    """

    def __init__(self, folder: Path, dists: Dists) -> None:
        self.folder = folder
        self.dists = dists
        folder.mkdir(parents=True, exist_ok=True)

    def _made(self, name: str, make: Callable[[Path], None]) -> Venv:
        from filelock import FileLock

        path = self.folder / name
        done = self.folder / f"{name}.done"
        with FileLock(str(self.folder / f"{name}.lock")):
            if not done.exists():
                if path.exists():
                    shutil.rmtree(path)  # a half-made one from a failed attempt
                make(path)
                done.write_text("ok\n", encoding="utf-8")
        return Venv(path)

    def wheel(self, extras: str = "", *, also: Sequence[str] = ()) -> Venv:
        """The wheel installed with ``extras`` (``""``: plain; ``"agent,eval"``) and the
        distributions ``also`` names (a user's own, such as ``pytest-xdist``)."""
        name = "-".join(["wheel", extras.replace(",", "-") or "plain", *also])
        target = f"{self.dists.wheel}[{extras}]" if extras else str(self.dists.wheel)

        def make(path: Path) -> None:
            Venv.create(path, [target, *also])

        return self._made(name, make)

    def action(self, action_yml: Path, mode: str, *, seals_heldout: bool = False) -> Venv:
        """What ``action.yml``'s install step installs for ``mode``: the step is run once with
        a ``python`` that records its arguments, to read the requirement it installs
        (``pytest-chimera[EXTRAS]==VERSION``); the environment with the wheel and those
        extras (:meth:`wheel`, shared with every test that asks for the same) is returned, after
        the step itself has run into it for real — ``chimera-version`` set to the built
        version, the wheel's folder among pip's links — and found it complete (once per
        requirement: it must succeed and install nothing more).

        Raises:
            AssertionError: the step failed, or installed something the environment lacked.
        """
        probe = self.folder / f"probe-{mode}-{int(seals_heldout)}"
        probe.mkdir(exist_ok=True)
        fake = probe / "python"
        fake.write_text(f'#!/bin/sh\necho "$*" >> {probe}/calls\n', encoding="utf-8")
        fake.chmod(0o755)
        (probe / "calls").unlink(missing_ok=True)
        run_install_step(
            action_yml, mode, python_bin=probe, version=self.dists.version,
            seals_heldout=seals_heldout,
        )  # fmt: skip
        requirement = (probe / "calls").read_text(encoding="utf-8").split()[-1]
        expected = re.fullmatch(r"pytest-chimera(?:\[([a-z,]+)\])?==(.+)", requirement)
        assert expected is not None and expected.group(2) == self.dists.version, requirement
        extras = expected.group(1) or ""
        venv = self.wheel(extras)
        links = " ".join(
            filter(None, [os.environ.get("PIP_FIND_LINKS", ""), str(self.dists.wheel.parent)])
        )

        def step(_: Path) -> None:
            before = venv.distributions()
            proc = run_install_step(
                action_yml, mode, python_bin=venv.bin, version=self.dists.version,
                seals_heldout=seals_heldout, env={"PIP_FIND_LINKS": links},
            )  # fmt: skip
            assert proc.returncode == 0, proc.stdout + proc.stderr
            assert f"Chimera {mode}: pip install {requirement}" in proc.stdout
            assert venv.distributions() == before, "the step installed more than the wheel's"

        self._made(f"step-{extras or 'plain'}", step)
        return venv
