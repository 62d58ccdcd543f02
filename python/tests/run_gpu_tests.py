#!/usr/bin/env python3
"""Runs test_gpu.py's tests without pytest (for a GPU machine that lacks
it): each test_* function in turn; unittest.SkipTest skips. Prints
'N passed, N failed, N skipped'; exits 1 on a failure."""
import os
import sys
import time
import traceback
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]
import test_gpu  # noqa: E402

counts = {"passed": 0, "failed": 0, "skipped": 0}
for name in sorted(n for n in dir(test_gpu) if n.startswith("test_")):
    start = time.time()
    try:
        getattr(test_gpu, name)()
        outcome = "passed"
    except unittest.SkipTest as e:
        outcome = f"skipped ({e})"
    except Exception:
        traceback.print_exc()
        outcome = "failed"
    counts[outcome.split()[0]] += 1
    print(f"{name}: {outcome} ({time.time() - start:.1f}s)", flush=True)
print(f"{counts['passed']} passed, {counts['failed']} failed, "
      f"{counts['skipped']} skipped")
sys.exit(1 if counts["failed"] else 0)
