"""A fork server for the kill-and-resume test: each request runs ``chimera`` in a new process.

Every ``chimera`` process of a scripted run spends most of its CPU importing: the CLI's
modules, then LiteLLM (its token counter prices every model call), seconds per process. The
kill-and-resume test starts dozens of processes, so this server imports all of that once and
``fork()``s a child per request. The child is a real, separate process running the
``chimera`` console script's entry point (``chimera.cli.main``) on the request's arguments, in
its own session (process group), with its own stdout/stderr files; SIGKILLing it leaves the
disk exactly as killing a cold ``chimera`` would. Only the import phase, which writes nothing,
is skipped.

Protocol (one JSON object per line): the server prints ``{"ready": true}`` once warm; then for
each request ``{"argv": [...], "cwd": DIR, "out": FILE, "err": FILE, "rc": FILE}`` it starts
the child and answers ``{"pid": PID}``. A child that ends on its own writes its exit status to
``rc`` (atomically) as its last act; a killed child writes nothing. Children are reaped by the
kernel (SIGCHLD ignored here; the child restores the default before running).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import traceback
from pathlib import Path


def _warm() -> None:
    import chimera.cli.run
    import chimera.core.autonomous
    import chimera.spec.drift
    import chimera.orchestration.session_factory
    import chimera.orchestration.surfaces
    import chimera.sandbox
    import chimera.spec.loader
    from chimera.providers.pricing import count_tokens

    del chimera
    count_tokens("scripted:warm-up", [{"role": "user", "content": "warm up"}])


def _child(request: dict[str, object]) -> None:
    code = 3
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setsid()
        os.chdir(str(request["cwd"]))
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        for fd, key in ((1, "out"), (2, "err")):
            target = os.open(str(request[key]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(target, fd)
        from chimera.cli import main

        argv = request["argv"]
        assert isinstance(argv, list)
        code = main([str(a) for a in argv])
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            rc = Path(str(request["rc"]))
            tmp = rc.with_name(rc.name + ".tmp")
            tmp.write_text(str(code), encoding="utf-8")
            tmp.replace(rc)
        finally:
            os._exit(code)


def serve() -> None:
    _warm()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    sys.stdout.write(json.dumps({"ready": True}) + "\n")
    sys.stdout.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request)
        sys.stdout.write(json.dumps({"pid": pid}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
