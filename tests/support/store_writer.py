"""A design writer for tests/store/test_store.py, run in a subprocess and killed mid-design.

Usage: python store_writer.py STORE_FOLDER. Opens the store, starts a design, adds 3 attempts,
prints "ready <design id>", then writes attempts with large payloads until it is stopped.
On SIGINT (KeyboardInterrupt) it records the design as "interrupted" and prints "finished".
"""

from __future__ import annotations

import signal
import sys
import time

from gymwright.llm.base import Usage
from gymwright.store import AttemptRecord, Store


def attempt(index: int, size: int) -> AttemptRecord:
    text = f"reply {index} " + "x" * size
    return AttemptRecord(
        index=index, stage="spec", prompt=[{"role": "user", "content": "y" * size}],
        reply=text, parsed={"name": f"s{index}", "blob": ["z" * 64] * (size // 64)},
        report={"passed": False, "diagnostics": [{"path": "rewards", "message": "m" * size}]},
        passed=False, usage=Usage(10, 20), wall_s=0.01)


def main(folder: str) -> None:
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started with SIGINT ignored
    store = Store.open(folder)
    design_id = store.start_design("kill me", model="scripted:test", mode="spec",
                                   template_hash="t" * 8, settings={"max_attempts": 10**6})
    for i in range(3):
        store.add_attempt(design_id, attempt(i, 100))
    print("ready", design_id, flush=True)
    started = time.monotonic()
    index = 3
    try:
        while True:
            store.add_attempt(design_id, attempt(index, 300_000))
            index += 1
    except KeyboardInterrupt:
        store.finish_design(design_id, status="interrupted", spec_sha=None,
                            result={"stopped_after": index}, usage=Usage(10 * index, 20 * index),
                            wall_s=time.monotonic() - started)
        print("finished", flush=True)
    store.close()


if __name__ == "__main__":
    main(sys.argv[1])
