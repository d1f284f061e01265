#!/usr/bin/env python3
"""The example store adapter with one bug a store author could ship: an append that
presents an older fence token than the current one is accepted (`<=` where `==` is
meant), so a zombie's write lands after a newer worker took the fence. The kits would
catch it too; the simulator test shows that `loom sim --store cmd:...` does, by PLACE-05.

Usage: python3 stale_fence_adapter.py [adapter arguments...]
"""

import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ADAPTER = os.path.join(HERE, "..", "..", "..", "examples", "python-sqlite-store", "adapter.py")

_spec = importlib.util.spec_from_file_location("adapter", ADAPTER)
a = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(a)


def check_fence(current, presented):
    ok = (current == 0) if presented is None else (current != 0 and presented <= current)
    if not ok:
        raise a.StoreError("fenced", f"append presented fence {presented}, the current fence is {current}",
                           presented=presented, current=current)


a.check_fence = check_fence

if __name__ == "__main__":
    sys.exit(a.main(sys.argv))
