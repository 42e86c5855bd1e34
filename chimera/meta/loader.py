"""Reading profiles: every problem in one pass, each at ``file:line:col``, with suggestions.

The Spec loader's discipline, for profiles: the YAML is parsed with positions
(:func:`~chimera.spec.yamlload.parse_yaml`: duplicate keys, bad tags and alias bombs are
problems, never silent), then the common fields and the one kind key are validated and each
pydantic error is mapped back to its YAML node. The same validator reads a profile file and a
candidate the designer wrote inside its answer (``line_offset`` places the block in the
answer). Nothing raises a traceback for bad input: :func:`check_profile_text` returns the
problems, :func:`load_profile` raises :class:`~chimera.errors.ProfileError` with all of them.
"""

from __future__ import annotations

from pathlib import Path

from chimera.crews.kindfile import KindFileValidator
from chimera.errors import ProfileError, SpecProblem
from chimera.meta.profile import AGENT_TOOLS, COMMON_FIELDS, Profile, ProfileFields, ProfileKind
from chimera.meta.registry import ProfileKindRegistry, get_profile_registry
from chimera.plugins import KindCheck
from chimera.spec.loader import display_path
from chimera.spec.yamlload import parse_yaml
from chimera.spec.yamlproblems import unknown_message

__all__ = ["ProfileCheck", "check_profile_file", "check_profile_text", "load_profile"]


class ProfileCheck(KindCheck[Profile]):
    """One profile's validation (:class:`~chimera.plugins.KindCheck`)."""

    @property
    def profile(self) -> Profile | None:
        """The valid profile (``value``), ``None`` when it has a problem."""
        return self.value


def load_profile(path: Path, *, registry: ProfileKindRegistry | None = None) -> Profile:
    """The validated profile in ``path``.

    Raises:
        ProfileError: the file has problems (``.problems`` lists every one).
        PluginError: the default kind registry could not be built.
    """
    checked = check_profile_file(path, registry=registry)
    if checked.profile is None:
        raise ProfileError(checked.problems)
    return checked.profile


def check_profile_file(path: Path, *, registry: ProfileKindRegistry | None = None) -> ProfileCheck:
    """Validate the profile file ``path`` in one pass; never raises for bad input."""
    shown = display_path(Path(path))
    try:
        text = Path(path).read_bytes().decode("utf-8-sig")
    except IsADirectoryError:
        message = "is a folder: pass the profile's YAML file"
        return ProfileCheck(shown, None, [SpecProblem(shown, 0, 0, message)])
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return ProfileCheck(shown, None, [SpecProblem(shown, 0, 0, f"cannot read: {reason}")])
    except UnicodeDecodeError as exc:
        message = f"not UTF-8 text: byte {exc.object[exc.start]:#04x} at {exc.start}"
        return ProfileCheck(shown, None, [SpecProblem(shown, 0, 0, message)])
    return check_profile_text(text, shown, registry=registry)


def check_profile_text(
    text: str,
    source: str,
    *,
    line_offset: int = 0,
    registry: ProfileKindRegistry | None = None,
) -> ProfileCheck:
    """Validate profile YAML ``text`` shown as ``source`` (lines shifted by ``line_offset``)."""
    return _Validator(text, source, line_offset, registry or get_profile_registry()).run()


class _Validator(KindFileValidator):
    noun = "profile"
    skip_broken = True

    def __init__(self, text: str, source: str, offset: int, registry: ProfileKindRegistry) -> None:
        super().__init__(source, registry.names, COMMON_FIELDS, offset)
        self.text = text
        self.registry = registry

    def unknown_parent(self, label: str) -> str:
        return label

    def missing_in(self, label: str) -> str:
        return label or "the profile"

    def run(self) -> ProfileCheck:
        self.doc = doc = parse_yaml(self.text)
        for issue in doc.issues:
            self.add(issue.mark, issue.message)
        profile = None if doc.syntax_error else self._top()
        return ProfileCheck.of(self.source, profile, self.problems)

    def _top(self) -> Profile | None:
        doc = self.doc
        value = self.top_mapping(
            "empty profile: expected a mapping with 'profile:' and a kind", "a profile"
        )
        if value is None:
            return None
        chosen, misspelt = self.kind_keys(value)
        common = {k: v for k, v in value.items() if k in COMMON_FIELDS}
        if "model" in common and "rung" in common:
            # Checked here, not by the model's own validator, which runs only once every
            # field is valid: one pass reports it beside the fields' problems.
            self.add(doc.key_mark(("rung",)), "a profile names a 'model' or a 'rung', not both")
            del common["rung"]
        self._tools(common.get("tools"))
        fields = self.model((), ProfileFields, common)
        chosen_kind = self.one_kind(chosen, misspelt)
        kind: ProfileKind | None = None
        if chosen_kind is not None:
            kind_type = self.registry.get(chosen_kind)
            assert kind_type is not None
            raw = value[chosen_kind]
            kind = self.model((chosen_kind,), kind_type, {} if raw is None else raw)
        if self.problems or fields is None or kind is None:
            return None
        return Profile(fields, kind, self.source)

    def _tools(self, tools: object) -> None:
        if not isinstance(tools, list):
            return
        for j, tool in enumerate(tools):
            if isinstance(tool, str) and tool not in AGENT_TOOLS:
                mark = self.doc.mark(("tools", j))
                self.add(mark, unknown_message(tool, "in 'tools'", AGENT_TOOLS, what="tool"))
