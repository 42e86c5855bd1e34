"""Which commits of a branch store may carry trusted operations.

Anyone with push access to a repository can push to an orphan branch and write any author
name, so names and e-mails prove nothing. A :class:`TrustPolicy` looks at what *was* verified:

* :class:`SignedBy`: git's own signature check (``%G?`` is ``G``) by an allowed key
  fingerprint (``%GF``), or :class:`SignedAs` by an allowed principal (``%GS``: the name in
  the allowed-signers file, or a GPG key's user id);
* :class:`VerifiedBy`: a lookup (on GitHub, :func:`chimera.github.trust.branchcommit.github_trust`
  asks the API whether GitHub signed the commit for Chimera's App, or verified the signature
  of a person with write access);
* :class:`AnyOf` combines policies; :class:`TrustNothing`, the default, trusts no commit
  (fail closed).

The memory replay (:mod:`~chimera.memory.replay`) and the scheduler's tick journal
(:mod:`chimera.scheduler.journal`) both replay through these policies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "AnyOf",
    "CommitInfo",
    "SignedAs",
    "SignedBy",
    "TrustNothing",
    "TrustPolicy",
    "VerifiedBy",
]


@dataclass(frozen=True)
class CommitInfo:
    """One commit of a branch store, as git reports it.

    Attributes:
        sha: the commit.
        author_name, author_email, committer_email: claims, not proof.
        signature: git's ``%G?``: ``G`` good and valid, ``N`` none, others bad or unknown.
        signer: the signing key's fingerprint (``%GF``), ``""`` when unsigned.
        parent: the first parent (``""`` for the root).
        principal: the signer as git names it (``%GS``: the allowed-signers principal, or the
            GPG key's user id), ``""`` when unsigned.
        message: the commit message.
    """

    sha: str
    author_name: str = ""
    author_email: str = ""
    committer_email: str = ""
    signature: str = "N"
    signer: str = ""
    parent: str = ""
    principal: str = ""
    message: str = ""


class TrustPolicy(Protocol):
    """Whether a commit's operations may be replayed as trusted."""

    def trusted(self, commit: CommitInfo) -> bool: ...


class TrustNothing:
    """The default: no commit is trusted."""

    def trusted(self, commit: CommitInfo) -> bool:
        return False


@dataclass(frozen=True)
class SignedBy:
    """Trusts a good signature (``%G?`` is ``G``) by one of ``fingerprints`` (``None``: any key
    git itself accepts — its keyring, or the allowed-signers file for SSH signatures)."""

    fingerprints: frozenset[str] | None = None

    def trusted(self, commit: CommitInfo) -> bool:
        if commit.signature != "G":
            return False
        return self.fingerprints is None or commit.signer in self.fingerprints


@dataclass(frozen=True)
class SignedAs:
    """Trusts a good signature (``%G?`` is ``G``) whose principal (``%GS``) is in
    ``principals``."""

    principals: frozenset[str]

    def trusted(self, commit: CommitInfo) -> bool:
        return commit.signature == "G" and commit.principal in self.principals


@dataclass(frozen=True)
class VerifiedBy:
    """Trusts what ``lookup(sha)`` says (the GitHub adapter asks the API whether the App made
    the commit and GitHub signed it)."""

    lookup: Callable[[str], bool]

    def trusted(self, commit: CommitInfo) -> bool:
        return bool(self.lookup(commit.sha))


@dataclass(frozen=True)
class AnyOf:
    """Trusts a commit any of ``policies`` trusts."""

    policies: Sequence[TrustPolicy]

    def trusted(self, commit: CommitInfo) -> bool:
        return any(p.trusted(commit) for p in self.policies)
