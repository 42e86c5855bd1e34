"""Shared fixtures of the scheduler tests: real git repositories with a local bare remote,
and a real SSH signing key."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from chimera.scheduler.journal import GitJournal, SignedBy

APP = ("chimera[bot]", "chimera[bot]@users.noreply.github.com")


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **(env or {})},
    )
    return done.stdout.strip()


@dataclass
class Remote:
    bare: Path
    key: Path
    allowed: Path
    fingerprint: str
    root: Path
    app: tuple[str, str] = APP

    def git(self, cwd: Path, *args: str) -> str:
        return git(cwd, *args)

    def signing_flags(self) -> list[str]:
        """``-c`` flags that make ``git commit -S`` sign with the App's key as the App."""
        return [
            "-c", "gpg.format=ssh", "-c", f"user.signingkey={self.key}",
            "-c", f"user.name={APP[0]}", "-c", f"user.email={APP[1]}",
        ]  # fmt: skip

    def clone(self, name: str, *, signed: bool = True) -> GitJournal:
        repo = self.root / name
        git(self.root, "init", "-q", str(repo))
        return GitJournal(
            repo,
            remote=str(self.bare),
            identity=APP,
            signing_key=self.key if signed else None,
            allowed_signers=self.allowed,
        )

    @property
    def trust(self) -> SignedBy:
        return SignedBy(frozenset({self.fingerprint}))


@pytest.fixture
def remote(tmp_path: Path) -> Remote:
    if shutil.which("ssh-keygen") is None:
        pytest.skip("ssh-keygen is not installed (needed to sign journal commits)")
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    key = tmp_path / "app_key"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "app", "-f", str(key)], check=True
    )
    public = key.with_suffix(".pub").read_text().strip()
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f'{APP[1]} namespaces="git" {public}\n')
    fingerprint = subprocess.run(
        ["ssh-keygen", "-l", "-E", "sha256", "-f", str(key.with_suffix(".pub"))],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()[1]
    return Remote(bare, key, allowed, fingerprint, tmp_path)
