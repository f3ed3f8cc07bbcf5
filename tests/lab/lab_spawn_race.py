#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
"""lab.spawn_race: a process ibat-lab has just spawned is at once seen as alive and as its own.

Popen returns as soon as the child's old address space is released in execve, before the kernel
has filled /proc/<pid>/cmdline and environ; pid_alive() read them empty in that window and
'up' reported "ibsim exited while loading" for an ibsim that was starting normally."""
import importlib.machinery
import importlib.util
import os
import sys
import tempfile

loader = importlib.machinery.SourceFileLoader("ibat_lab", os.environ["IBAT_LAB"])
spec = importlib.util.spec_from_loader("ibat_lab", loader)
lab = importlib.util.module_from_spec(spec)
loader.exec_module(lab)

with tempfile.TemporaryDirectory() as folder:
    lab.owner_mark = f"{lab.OWNER_ENV}={folder}".encode()
    out = os.path.join(folder, "out.log")
    misses = 0
    for _ in range(2000):
        pid = lab.spawn(["sleep", "5"], None, lab.subprocess.DEVNULL, out)
        if not lab.pid_alive(pid, "sleep"):
            misses += 1
        os.kill(pid, 9)
        os.waitpid(pid, 0)
if misses:
    sys.exit(f"FAIL: {misses} of 2000 freshly spawned processes were reported dead")
print("ok: 2000 freshly spawned processes were each seen alive and owned")
