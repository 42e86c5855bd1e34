"""The JSON Schema of a spec file, generated from the pydantic models.

Editors (VS Code's YAML extension, JetBrains IDEs) use it to validate and complete spec
files: point them at the output of ``chimera schema`` (for example with a
``# yaml-language-server: $schema=...`` comment). The schema is built from the common
requirement fields (:class:`chimera.spec.loader.RequirementFields`) and each registered
kind's ``model_json_schema``, so a plugin's kind appears in it as soon as it is installed.

Shape (JSON Schema draft 2020-12)::

    {"type": "object", "required": ["requirements"], "additionalProperties": false,
     "properties": {"requirements": {"type": "array", "items": {"$ref": "#/$defs/Requirement"}}},
     "$defs": {"Requirement": {common fields + one property per kind,
                               "additionalProperties": false,
                               "oneOf": [{"required": ["defines"]}, ...]},   # exactly one
               "Defines": {...}, "Contains": {...}, ...}}

The loader stays the authority (it also rejects duplicate keys, duplicate ids, unknown
``depends_on`` ids and cycles, which a per-file schema cannot express).
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from chimera.spec.registry import KindRegistry, get_registry

__all__ = ["SCHEMA_DIALECT", "spec_json_schema"]

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

_REF_TEMPLATE = "#/$defs/{model}"


def spec_json_schema(registry: KindRegistry | None = None) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one spec file for the kinds in ``registry``.

    Args:
        registry: requirement kinds; default :func:`chimera.spec.registry.get_registry`.

    Returns:
        A fresh JSON-serialisable dict (safe to mutate).
    """
    from chimera.spec.loader import ID_PATTERN, RequirementFields

    kinds = registry if registry is not None else get_registry()
    models: list[type[BaseModel]] = [RequirementFields, *kinds.kinds.values()]
    refs, generated = models_json_schema(
        [(model, "validation") for model in models], ref_template=_REF_TEMPLATE
    )
    defs: dict[str, Any] = copy.deepcopy(generated.get("$defs", {}))

    common_name = _def_name(refs[(RequirementFields, "validation")])
    requirement = defs.pop(common_name)
    properties: dict[str, Any] = requirement.setdefault("properties", {})
    for name, kind in kinds.kinds.items():
        kind_def = _def_name(refs[(kind, "validation")])
        summary = (defs[kind_def].get("description") or "").split("\n\n", 1)[0]
        properties[name] = {
            "$ref": _REF_TEMPLATE.format(model=kind_def),
            "description": summary.replace("\n", " ") or f"The '{name}' check.",
        }
    requirement["title"] = "Requirement"
    requirement["description"] = (
        "One requirement: an id, optional title / risk / depends_on / owner, and exactly one "
        f"check ({', '.join(kinds.names)})."
    )
    requirement["additionalProperties"] = False
    requirement["oneOf"] = [{"required": [name]} for name in kinds.names]
    # A plugin's kind class may itself be called Requirement; keep both definitions.
    requirement_def = "Requirement"
    while requirement_def in defs:
        requirement_def = "Chimera" + requirement_def
    defs[requirement_def] = requirement

    return {
        "$schema": SCHEMA_DIALECT,
        "title": "Chimera spec file",
        "description": (
            "A file of executable requirements checked by `pytest --chimera-spec` and "
            "`chimera check`. Ids are unique across the whole spec directory and match "
            f"{ID_PATTERN}."
        ),
        "type": "object",
        "properties": {
            "requirements": {
                "type": "array",
                "description": "The requirements of this file, in order.",
                "items": {"$ref": _REF_TEMPLATE.format(model=requirement_def)},
            }
        },
        "required": ["requirements"],
        "additionalProperties": False,
        "$defs": defs,
    }


def _def_name(ref_schema: dict[str, Any]) -> str:
    ref = ref_schema["$ref"]
    prefix = _REF_TEMPLATE.split("{", 1)[0]
    if not isinstance(ref, str) or not ref.startswith(prefix):
        raise ValueError(f"unexpected $ref from pydantic: {ref!r}")
    return ref[len(prefix) :]
