"""Robust structured (JSON) output from a model: extraction, validation, one repair round.

Models wrap JSON in Markdown fences, add a sentence before or after it, or get a field wrong.
:func:`extract_json` finds the first JSON object in fenced blocks first, then anywhere in the
text (``json.JSONDecoder.raw_decode`` from each ``{``, so trailing text is ignored).
:func:`ask_structured` validates it against a pydantic model and, when it is invalid, sends
the model its own output with the validation error once (the repair round) — the pattern of
Instructor / OpenAI structured-output retries, capped at one so the cost stays bounded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from chimera.errors import StructuredOutputError
from chimera.fusion.accounting import CallRecord, recorded_call
from chimera.governance.redactor import cut_redacted as _cut
from chimera.protocols import Completion, Message, Purpose, SupportsComplete

M = TypeVar("M", bound=BaseModel)

_FENCE = re.compile(r"```[ \t]*(?:json|JSON|javascript|js)?[ \t]*\r?\n(.*?)```", re.DOTALL)


def extract_json(text: str) -> Any:
    """Return the first JSON object (preferred) or array found in ``text``.

    Fenced blocks are tried first, in order; then every ``{`` (and, failing that, ``[``)
    position in the raw text is tried with ``raw_decode``, which stops at the end of the value,
    so prose after the JSON is ignored.

    Raises:
        ValueError: no JSON value can be decoded; the message says what was seen.
    """
    decoder = json.JSONDecoder()
    for match in _FENCE.finditer(text):
        body = match.group(1).strip()
        try:
            return json.loads(body)
        except json.JSONDecodeError:
            found = _scan(decoder, body)
            if found is not None:
                return found[0]
    found = _scan(decoder, text)
    if found is None:
        snippet = _cut(" ".join(text.split()), 80)
        raise ValueError(f"no JSON object found in the output (starts: {snippet!r})")
    return found[0]


def _scan(decoder: json.JSONDecoder, text: str) -> tuple[Any] | None:
    for opener in ("{", "["):
        start = text.find(opener)
        while start != -1:
            try:
                value, _ = decoder.raw_decode(text, start)
            except json.JSONDecodeError:
                start = text.find(opener, start + 1)
                continue
            return (value,)
    return None


def parse_structured(
    text: str, model: type[M], *, extra_check: Callable[[M], list[str]] | None = None
) -> M:
    """Extract and validate ``text`` as ``model``.

    ``extra_check`` returns semantic problems (an empty list when the value is acceptable).

    Raises:
        ValueError: no JSON, a schema violation, or a problem from ``extra_check``; the
            message is short enough to send back to the model in a repair round.
    """
    data = extract_json(text)
    try:
        value = model.model_validate(data)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
            for err in exc.errors()[:8]
        ]
        raise ValueError("; ".join(problems)) from exc
    if extra_check is not None:
        problems = extra_check(value)
        if problems:
            raise ValueError("; ".join(problems[:8]))
    return value


def repair_message(error: str, schema_hint: str) -> Message:
    """The user message of the repair round: what was wrong and what is expected."""
    return {
        "role": "user",
        "content": (
            "Your previous output could not be used: "
            f"{error}\n\nReply again with ONLY one JSON object, no prose and no Markdown, "
            f"of this shape:\n{schema_hint}"
        ),
    }


def ask_structured(
    backend: SupportsComplete,
    messages: Sequence[Message],
    model: type[M],
    *,
    schema_hint: str,
    role: str,
    name: str,
    model_name: str = "",
    purpose: Purpose = Purpose.PLAN,
    max_tokens: int | None = None,
    extra_check: Callable[[M], list[str]] | None = None,
    ledger: list[CallRecord] | None = None,
) -> tuple[M, list[CallRecord]]:
    """Ask ``backend`` for a ``model``-shaped JSON answer, with one repair round.

    Every call is appended to ``ledger`` as it completes (or fails), so a caller that passes
    its own list still sees what was spent when this raises.

    Returns:
        The validated value and the itemised calls of this exchange (one, or two with the
        repair round).

    Raises:
        StructuredOutputError: still invalid after the repair round (``calls`` holds both).
        ProviderError, BudgetExceeded: from the backend, unchanged.
    """
    records: list[CallRecord] = []
    convo = list(messages)
    error = ""
    for round_no in (0, 1):
        completion = _call(
            backend,
            convo,
            records,
            ledger,
            role=role if round_no == 0 else f"{role}-repair",
            name=name,
            model_name=model_name,
            purpose=purpose,
            max_tokens=max_tokens,
        )
        try:
            return parse_structured(completion.text, model, extra_check=extra_check), records
        except ValueError as exc:
            error = str(exc)
        convo = [*convo, {"role": "assistant", "content": completion.text}]
        convo.append(repair_message(error, schema_hint))
    raise StructuredOutputError(
        f"{role} output from {name} is invalid after one repair round: {error}",
        calls=tuple(records),
    )


def _call(
    backend: SupportsComplete,
    messages: Sequence[Message],
    records: list[CallRecord],
    ledger: list[CallRecord] | None,
    *,
    role: str,
    name: str,
    model_name: str,
    purpose: Purpose,
    max_tokens: int | None,
) -> Completion:
    rec, completion, failure = recorded_call(
        partial(backend.complete, messages, purpose=purpose, max_tokens=max_tokens),
        role=role,
        name=name,
        model=model_name,
    )
    _note(records, ledger, rec)
    if failure is not None:
        raise failure
    assert completion is not None
    return completion


def _note(records: list[CallRecord], ledger: list[CallRecord] | None, rec: CallRecord) -> None:
    records.append(rec)
    if ledger is not None:
        ledger.append(rec)
