"""Which requirement kinds a report cache may reuse is a property each kind class declares."""

from __future__ import annotations

from typing import ClassVar

from chimera.spec.kinds.command import Command
from chimera.spec.kinds.defines import Defines
from chimera.spec.kinds.text import Absent, Contains
from chimera.spec.model import Check


def test_the_tree_only_kinds_are_cacheable_and_command_is_not() -> None:
    assert [k.is_cacheable() for k in (Contains, Absent, Defines)] == [True, True, True]
    assert Command.is_cacheable() is False
    assert Check.is_cacheable() is False


def test_a_subclass_must_declare_it_again() -> None:
    class Stricter(Contains):
        kind_name: ClassVar[str] = "stricter_contains"

    class Declared(Contains):
        kind_name: ClassVar[str] = "declared_contains"
        cacheable: ClassVar[bool] = True

    assert Stricter.is_cacheable() is False
    assert Declared.is_cacheable() is True
