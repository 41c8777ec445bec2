"""The process policy (hlotop.process) for the C allocator's big buffers: the browser
gives each back to the OS when freed; a report keeps freed ones for the next, so that
their pages are not faulted in again. Each case runs in a process of its own (the
policy holds for the rest of a process)."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

# Four megabytes made and freed twice; prints the page faults of the second time.
_SCRIPT = """
import resource, sys
from hlotop import process

process.give_back_big_buffers()
if sys.argv[1] == "reports":
    process.big_buffers_for_reports()
elif sys.argv[1] == "writing":
    process.big_buffers_for_writing()

def faults():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    buffer = b"x" * (4 << 20)  # every page written
    del buffer
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

faults()  # the first: its pages are new under any policy
print(faults())
"""

PAGES = (4 << 20) // 4096


def _second_buffer_faults(policy: str) -> int:
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT, policy], capture_output=True, text=True, check=True
    )
    return int(out.stdout)


pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt")


def test_the_browser_gives_a_freed_big_buffer_back():
    assert _second_buffer_faults("browser") >= PAGES * 9 // 10


@pytest.mark.parametrize("policy", ["reports", "writing"])
def test_a_report_reuses_a_freed_big_buffer(policy):
    assert _second_buffer_faults(policy) < PAGES // 10
