"""A wall-clock bound for one ``regex`` search, without a thread or a process per search.

The ``regex`` module's own ``timeout=`` measures the process's CPU time (C's ``clock()``),
checked every 256 steps of its matcher: on a loaded machine a 2 s limit took 10-13 s of wall
time. The same check also runs Python's signal handlers (``PyErr_CheckSignals``), so a
``SIGALRM`` from a one-shot real-time timer (``setitimer(ITIMER_REAL)``) whose handler raises
stops the search within 256 steps of the deadline, measured on the wall clock.

That needs the main thread of a POSIX process whose ``SIGALRM`` nobody else uses: the timer is
armed only when ``SIGALRM`` has Python's default disposition or no handler of Python's own
(``signal.getsignal`` is ``SIG_DFL``) and no real-time timer is running (pytest-timeout's
``signal`` method uses one). Otherwise :func:`within` runs the search as it is, and ``regex``'s
own CPU-time limit (always passed too) is the bound. Only the ``regex`` fallback needs this:
RE2 runs in linear time.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

_SIGALRM = getattr(signal, "SIGALRM", None)
_ITIMER_REAL = getattr(signal, "ITIMER_REAL", None)


class _Expired(BaseException):
    """Raised by the ``SIGALRM`` handler while a bounded search runs (a ``BaseException``, so
    no ``except Exception`` between the handler and :func:`within` swallows it)."""


class _Armed:
    active = False


def _on_alarm(signum: int, frame: object) -> None:
    if _Armed.active:
        _Armed.active = False
        raise _Expired


def can_bound() -> bool:
    """Whether :func:`within` can bound a search by the wall clock here and now."""
    if _SIGALRM is None or _ITIMER_REAL is None:
        return False
    if threading.current_thread() is not threading.main_thread():
        return False
    if signal.getsignal(_SIGALRM) is not signal.SIG_DFL:
        return False
    return signal.getitimer(_ITIMER_REAL) == (0.0, 0.0)


def within(seconds: float, search: Callable[[], T]) -> T:
    """``search()``, stopped after ``seconds`` of wall-clock time when :func:`can_bound`.

    Raises:
        TimeoutError: the deadline passed (on the wall clock, or ``regex``'s own CPU-time
            limit when no timer could be armed).
    """
    if seconds <= 0 or not can_bound():
        return search()
    assert _SIGALRM is not None and _ITIMER_REAL is not None
    signal.signal(_SIGALRM, _on_alarm)
    try:
        _Armed.active = True
        signal.setitimer(_ITIMER_REAL, seconds)
        try:
            return search()
        finally:
            _Armed.active = False
            signal.setitimer(_ITIMER_REAL, 0)
    except _Expired:
        raise TimeoutError("regex timed out") from None
    finally:
        # The handler checks ``active`` first, so a signal already pending when the timer
        # was cleared finds it off and does nothing.
        signal.signal(_SIGALRM, signal.SIG_DFL)
