"""One pass over a YAML file whose top level picks one plugin kind: a crew file, an agent profile.

The Spec loader's discipline, shared by :mod:`chimera.crews.loader` and
:mod:`chimera.meta.loader` (meta sits above crews, so it reuses this one): every problem is
kept at ``file:line:col`` with its whitespace folded, the one kind key is chosen among the
part's field names with a suggestion for a misspelt key, and each pydantic error is mapped
back to its YAML node. A part states only its wording (:attr:`KindFileValidator.noun` and the
pydantic labels).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, ValidationError

from chimera.errors import SpecProblem
from chimera.spec.yamlload import Mark, NodePath, YamlDocument, type_name
from chimera.spec.yamlproblems import pydantic_problems, unknown_message

__all__ = ["KindFileValidator"]


class KindFileValidator:
    """Problems of one file, the kind key it chooses and its validated models.

    Args:
        source: the file as problems show it.
        kinds: the part's kind names (the registry's, in order).
        common: the part's own top-level field names.
        offset: lines to add to every problem (a block inside a longer text).
    """

    noun: ClassVar[str] = "crew"
    """How the file is named in its messages (``"crew"``, ``"profile"``)."""
    skip_broken: ClassVar[bool] = False
    """Leave out pydantic errors on nodes the YAML reader already reported."""

    def unknown_parent(self, label: str) -> str:
        """How an unknown key's parent is named, from its label (``""`` at the top)."""
        return label or self.noun

    def missing_in(self, label: str) -> str:
        """How a missing field's parent is named, from its label."""
        return f"'{label}'"

    def __init__(
        self, source: str, kinds: Sequence[str], common: Sequence[str], offset: int = 0
    ) -> None:
        self.source = source
        self.kinds = tuple(kinds)
        self.common = tuple(common)
        self.offset = offset
        self.doc = YamlDocument()
        self.problems: list[SpecProblem] = []

    def add(self, mark: Mark | None, message: str) -> None:
        """A problem at ``mark`` (``None``: the file as a whole)."""
        line, col = (mark.line + self.offset, mark.col) if mark else (0, 0)
        self.problems.append(SpecProblem(self.source, line, col, " ".join(message.split())))

    def top_mapping(self, empty: str, what: str) -> dict[str, Any] | None:
        """The file's top-level mapping, or ``None`` after the problem: ``empty`` for an empty
        file (unless the YAML reader already reported one), else ``what`` must be a mapping."""
        doc, value = self.doc, self.doc.value
        if doc.empty or value is None:
            if not doc.issues:
                self.add(Mark(1, 1), empty)
            return None
        if not isinstance(value, dict):
            self.add(doc.mark(()), f"{what} must be a mapping, got {type_name(value)}")
            return None
        return value

    def kind_keys(self, value: dict[str, Any]) -> tuple[list[str], bool]:
        """The kind keys of the top-level ``value`` and whether an unknown key looks like a
        misspelt kind; every unknown key is a problem (with a suggestion)."""
        allowed = (*self.common, *self.kinds)
        chosen: list[str] = []
        misspelt = False
        for key in value:
            if key in self.kinds:
                chosen.append(key)
            elif key not in self.common:
                self.add(
                    self.doc.key_mark((key,)), unknown_message(key, "at the top level", allowed)
                )
                close = difflib.get_close_matches(key, list(allowed), n=1, cutoff=0.6)
                misspelt = misspelt or (bool(close) and close[0] in self.kinds)
        return chosen, misspelt

    def one_kind(self, chosen: list[str], misspelt: bool) -> str | None:
        """The one kind key, or ``None`` after the problem (none, or several); a misspelt kind
        key already explains a missing one."""
        doc = self.doc
        if not chosen and not misspelt:
            kinds = ", ".join(self.kinds)
            self.add(doc.mark(()), f"the {self.noun} has no kind: add exactly one of {kinds}")
        elif len(chosen) > 1:
            self.add(
                doc.key_mark((chosen[1],)),
                f"the {self.noun} has {len(chosen)} kinds ({', '.join(chosen)}): keep exactly one",
            )
        return chosen[0] if len(chosen) == 1 else None

    def model(self, path: NodePath, model: type[BaseModel], raw: object) -> Any:
        """``model`` validated from the node at ``path``, or ``None`` after its problems."""
        if path in self.doc.broken:
            return None
        try:
            return model.model_validate(raw)
        except ValidationError as exc:
            for mark, message in pydantic_problems(
                exc,
                self.doc,
                path,
                model,
                top=self.noun,
                unknown_parent=self.unknown_parent,
                missing_in=self.missing_in,
                skip_broken=self.skip_broken,
            ):
                self.add(mark, message)
        except Exception as exc:  # a plugin kind's validator raised what pydantic does not wrap
            self.add(self.doc.mark(path), f"validation failed: {type(exc).__name__}: {exc}")
        return None
