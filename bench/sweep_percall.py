#!/usr/bin/env python3
"""bench/sweep_percall.py LIBPARPLAN.so [SPEC.json]: the CPU time of the
scenarios of a grid spec run one by one through pp_plan_request on one
thread, with no sweep machinery: the baseline that `parplan sweep`'s own
CPU ms per scenario is compared with (bench/sweep_bench.sh). Prints one
markdown table cell: "N scenarios, S CPU s, M ms each"."""
import ctypes
import itertools
import json
import os
import sys
import time

lib = ctypes.CDLL(os.path.abspath(sys.argv[1]))
lib.pp_plan_request.restype = ctypes.c_void_p
lib.pp_plan_request.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]
lib.pp_free.argtypes = [ctypes.c_void_p]
spec = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "sweep_grid.json")
grid = json.load(open(spec))["grid"]
keys = list(grid)
t0, n = time.process_time(), 0
for values in itertools.product(*(v if isinstance(v, list) else [v] for v in (grid[k] for k in keys))):
    status = ctypes.c_int()
    lib.pp_free(lib.pp_plan_request(json.dumps(dict(zip(keys, values))).encode(), ctypes.byref(status)))
    n += 1
cpu = time.process_time() - t0
print("%d scenarios, %.2f CPU s, %.2f ms each" % (n, cpu, 1000 * cpu / n))
