#!/usr/bin/env python3
"""Run one command and report its CPU time and peak RSS: ``measure.py LIMIT_S ERR_PATH -- CMD...``.

Prints one JSON line ``{"rc", "wall", "cpu", "rss_mb", "killed"}`` (rc null when killed at the
wall-time limit). CPU and peak RSS are the child's own, from ``os.wait4`` (``ru_maxrss``).

Why a separate small launcher: on Linux a child's ``ru_maxrss`` starts from the memory of the
process that forked it (exec records the old address space's high-water mark, and with vfork
that is the parent's). Forked from a test runner that once held gigabytes, a 40 MB command would
report gigabytes; forked from this ~10 MB launcher it reports its own peak (+ at most ~10 MB).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time


def main() -> int:
    limit, err_path, sep, *cmd = sys.argv[1:]
    assert sep == "--" and cmd
    with open(err_path, "wb") as err:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL)
        killed = False
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if not killed and time.monotonic() - t0 > float(limit):
                p.kill()
                killed = True
            time.sleep(0.005)
        p.returncode = os.waitstatus_to_exitcode(status)     # reaped here: Popen must not wait again
    print(json.dumps({"rc": None if killed else p.returncode, "wall": time.monotonic() - t0,
                      "cpu": ru.ru_utime + ru.ru_stime, "rss_mb": ru.ru_maxrss / 1024, "killed": killed}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
