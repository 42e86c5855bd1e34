"""``contains`` and ``absent``: a pattern is (not) found in a file or a set of files."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, ClassVar, Self

from pydantic import Field, ValidationInfo, field_validator, model_validator

from chimera.spec.check_context import MatchNeed, ScanRequest, ScanResult, TextMatch
from chimera.spec.kinds.fields import Glob, Globs, RelPath
from chimera.spec.model import Check, CheckOutcome, Evidence, Status, one_line

if TYPE_CHECKING:
    from chimera.spec.check_context import CheckContext


def _match_evidence(m: TextMatch) -> Evidence:
    # The file to edit is named first; a symlinked name says which link selected it.
    note = f"via symlink {m.link}" if m.link is not None else ""
    return Evidence(file=m.file, line=m.line, col=m.col, snippet=m.snippet, note=note)


def _plural(n: int, word: str) -> str:
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word}{'es' if word.endswith(('ch', 'sh', 's', 'x')) else 's'}"


def _unscannable_evidence(result: ScanResult) -> list[Evidence]:
    return [Evidence(file=u.file, note=u.reason) for u in result.unscannable]


def _timeout_evidence(result: ScanResult, shown: str) -> list[Evidence]:
    timed_out = [Evidence(file=f, note=f"pattern {shown} timed out") for f in result.timeouts]
    return timed_out + [
        Evidence(file=f, note=f"not searched: {shown} had already timed out repeatedly")
        for f in result.skipped
    ]


def _names(items: list[str], limit: int = 3) -> str:
    head = ", ".join(items[:limit])
    rest = len(items) - limit
    return head + (f" and {rest} more" if rest > 0 else "")


class MatchMode(StrEnum):
    ANY = "any"
    ALL = "all"


class _TextCheck(Check):
    path: RelPath | None = Field(
        default=None, description="One file relative to the root (or give 'paths')."
    )
    paths: Globs | None = Field(
        default=None,
        description="Gitignore-style globs over the files git sees (or give 'path').",
    )
    exclude: list[Glob] = Field(
        default_factory=list, description="Globs removed from the 'paths' selection."
    )
    # `regex` comes first so that `pattern`'s validator knows how to read the pattern.
    regex: bool = Field(default=True, description="false: 'pattern' is a literal string.")
    pattern: str = Field(
        min_length=1,
        description="Regular expression (Python 'regex' syntax, MULTILINE) or a literal.",
    )

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str, info: ValidationInfo) -> str:
        # A bad regex is a problem of the spec file, reported with every other one in the
        # loader's single pass, with the engine's own compiler and flags.
        if info.data.get("regex", True):
            from chimera.spec.engine.patterns import pattern_problem

            problem = pattern_problem(value)
            if problem is not None:
                raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _one_scope(self) -> Self:
        if (self.path is None) == (self.paths is None):
            raise ValueError("give exactly one of 'path' or 'paths'")
        return self

    def scope(self) -> str:
        if self.path is not None:
            return self.path
        text = ", ".join(self.paths or [])
        if self.exclude:
            text += " excluding " + ", ".join(self.exclude)
        return text

    def shown_pattern(self) -> str:
        """The pattern as messages name it, on one line (``/regex/`` or ``'literal'``)."""
        return repr(self.pattern) if not self.regex else f"/{one_line(self.pattern)}/"

    def scan_request(self, need: MatchNeed) -> ScanRequest:
        """The engine request for this check (``paths``/``exclude`` as tuples)."""
        return ScanRequest(
            pattern=self.pattern,
            regex=self.regex,
            path=self.path,
            paths=tuple(self.paths) if self.paths is not None else None,
            exclude=tuple(self.exclude),
            need=need,
        )

    def _unreadable_message(self, result: ScanResult) -> str:
        parts = []
        if result.unscannable:
            parts.append(
                _plural(len(result.unscannable), "selected file")
                + " cannot be scanned: "
                + _names([f"{u.file} ({u.reason})" for u in result.unscannable])
            )
        if result.timeouts:
            timeout_files = list(result.timeouts)
            parts.append(f"pattern {self.shown_pattern()} timed out in " + _names(timeout_files))
        if result.skipped:
            parts.append(
                f"{_plural(len(result.skipped), 'file')} not searched after repeated time-outs"
            )
        return "; ".join(parts)


class Contains(_TextCheck):
    """The pattern is found in ``path``, or in any (``match: all``: every) file of ``paths``.

    Fail-closed: an unreadable selected file (or one where the pattern timed out) never
    helps. With ``match: all`` a readable file without a match makes the requirement
    ``failed``, the unreadable files listed too; with no such counter-example an unreadable
    file makes it ``error``. A scope that selects zero files is ``error``.
    """

    kind_name: ClassVar[str] = "contains"
    cacheable: ClassVar[bool] = True

    match: MatchMode = Field(
        default=MatchMode.ANY,
        description="any: one file must match; all: every selected file must match.",
    )

    def describe(self) -> str:
        quant = " (every file)" if self.match is MatchMode.ALL and self.paths else ""
        return f"contains {self.shown_pattern()} in {self.scope()}{quant}"

    def _need(self) -> MatchNeed:
        return MatchNeed.FIRST_PER_FILE if self.match is MatchMode.ALL else MatchNeed.FIRST

    def prepare(self, ctx: CheckContext) -> None:
        ctx.announce_scan(self.scan_request(self._need()))

    def check(self, ctx: CheckContext) -> CheckOutcome:
        result = ctx.scan(self.scan_request(self._need()))
        shown = self.shown_pattern()
        if result.error is not None:
            return CheckOutcome(Status.ERROR, result.error)
        if result.missing is not None:
            return CheckOutcome(
                Status.FAILED,
                f"{result.missing} does not exist (looking for {shown})",
                (Evidence(file=result.missing, note="missing"),),
            )
        unreadable = _unscannable_evidence(result) + _timeout_evidence(result, shown)
        if self.match is MatchMode.ALL and self.paths is not None:
            # The one rule of every kind: a readable counter-example makes it `failed` (the
            # unreadable files listed too); without one, an unreadable file makes it `error`.
            unread = {e.file for e in unreadable}
            without = [f for f in result.files if f not in result.matches and f not in unread]
            if without:
                message = (
                    f"{shown} not found in {_plural(len(without), 'file')} of "
                    f"{len(result.files)}: {_names(without)}"
                )
                if unreadable:
                    message += f" (and {self._unreadable_message(result)})"
                return CheckOutcome(
                    Status.FAILED,
                    message,
                    tuple([Evidence(file=f, note="no match") for f in without] + unreadable),
                )
            if unreadable:
                return CheckOutcome(
                    Status.ERROR,
                    f"cannot check every file for {shown}: {self._unreadable_message(result)}",
                    tuple(unreadable),
                )
            first = [_match_evidence(ms[0]) for ms in result.matches.values()]
            return CheckOutcome(
                Status.PASSED,
                f"{shown} found in all {_plural(len(result.files), 'selected file')}",
                tuple(first),
            )
        for file in result.files:
            found = result.matches.get(file)
            if found:
                return CheckOutcome(
                    Status.PASSED, f"{shown} found in {file}", (_match_evidence(found[0]),)
                )
        if unreadable:
            # Fail closed: the pattern may be in a file we could not read.
            return CheckOutcome(
                Status.ERROR,
                f"{shown} not found in any readable file, and {self._unreadable_message(result)}",
                tuple(unreadable),
            )
        where = self.path if self.path is not None else _plural(len(result.files), "selected file")
        if self.path is not None:
            evidence = (Evidence(file=self.path, note="no match"),)
        else:
            evidence = (
                Evidence(note=f"no match in {_plural(len(result.files), 'file')} searched"),
            )
        return CheckOutcome(Status.FAILED, f"{shown} not found in {where}", evidence)


class Absent(_TextCheck):
    """The pattern is found in no selected file.

    Fail-closed: a selected file that cannot be scanned (binary, undecodable, over the size
    limit, broken link, the pattern timed out) turns the requirement red with the reason: a
    match in a readable file makes it ``failed`` (the unreadable files listed too), otherwise
    it is ``error``. A missing ``path`` is ``failed`` (a missing target never passes: a
    misspelt path must not read as clean); a ``paths`` scope selecting zero files is
    ``error``.
    """

    kind_name: ClassVar[str] = "absent"
    cacheable: ClassVar[bool] = True

    def describe(self) -> str:
        return f"absent {self.shown_pattern()} from {self.scope()}"

    def prepare(self, ctx: CheckContext) -> None:
        ctx.announce_scan(self.scan_request(MatchNeed.ALL))

    def check(self, ctx: CheckContext) -> CheckOutcome:
        result = ctx.scan(self.scan_request(MatchNeed.ALL))
        shown = self.shown_pattern()
        if result.error is not None:
            return CheckOutcome(Status.ERROR, result.error)
        if result.missing is not None:
            # A missing target never passes: a misspelt path must not read as "clean".
            return CheckOutcome(
                Status.FAILED,
                f"{result.missing} does not exist (a missing target never passes)",
                (Evidence(file=result.missing, note="missing"),),
            )
        unreadable = _unscannable_evidence(result) + _timeout_evidence(result, shown)
        found = [_match_evidence(m) for ms in result.matches.values() for m in ms]
        total = result.total_matches
        if total:
            message = (
                f"{shown} found: {_plural(total, 'match')} in "
                f"{_plural(result.files_matched, 'file')}"
            )
            if unreadable:
                message += f" (and {self._unreadable_message(result)})"
            if len(found) < total:
                # The engine listed the first matches only (its evidence limit): the others
                # come before the unreadable files in the full list, and are counted.
                return CheckOutcome(
                    Status.FAILED, message, tuple(found), total - len(found) + len(unreadable)
                )
            return CheckOutcome(Status.FAILED, message, tuple(found + unreadable))
        if unreadable:
            # Fail closed: a file we could not scan is never evidence of absence.
            return CheckOutcome(
                Status.ERROR,
                f"cannot show {shown} is absent: {self._unreadable_message(result)}",
                tuple(unreadable),
            )
        n = len(result.files)
        if self.path is not None:
            searched = Evidence(file=self.path, note="no match")
        else:
            searched = Evidence(note=f"no match in {_plural(n, 'file')} searched")
        return CheckOutcome(
            Status.PASSED, f"{shown} absent from {_plural(n, 'selected file')}", (searched,)
        )
