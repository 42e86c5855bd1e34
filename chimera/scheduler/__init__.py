"""Schedules: crons in a stated timezone and event-triggered standard operating procedures,
declared in ``.chimera.d/schedules/*.yaml``, decided by a model-free tick, with an injected
clock everywhere.

* :mod:`.model`, :mod:`.registry`, :mod:`.kinds` — declarations; trigger kinds via pluggy.
* :mod:`.loader` — one validation pass, every problem at ``file:line:col``.
* :mod:`.clock`, :mod:`.cron` — the injected clock; cronsim in the stated zone.
* :mod:`.state`, :mod:`.journal` — the op journal (an orphan git branch) and its replay.
* :mod:`.tick` — the pure decision: (declarations, state, now, events) → runs and skips.
* :mod:`.events` — webhook payloads → observed events.
* :mod:`.learner`, :mod:`.edit` — the CronLearner and a person's approval.
"""
