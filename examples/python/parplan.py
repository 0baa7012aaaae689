#!/usr/bin/env python3
"""Drive libparplan from Python with ctypes — Debian's python3, no extra packages.

    python3 examples/python/parplan.py [path/to/libparplan.so]

The library's JSON entry takes one scenario (the format of a `parplan sweep`
line, docs/sweep.md) and returns the ranked plans as JSON, so no C struct
layouts leak into Python."""
import ctypes
import json
import os
import sys


class Parplan:
    def __init__(self, path=None):
        path = path or os.environ.get("PARPLAN_LIB", "libparplan.so")
        self.lib = ctypes.CDLL(path)
        self.lib.pp_plan_request.restype = ctypes.c_void_p  # char *, freed with pp_free
        self.lib.pp_plan_request.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]
        self.lib.pp_free.argtypes = [ctypes.c_void_p]
        self.lib.pp_free.restype = None
        self.lib.pp_version.restype = ctypes.c_char_p

    def version(self):
        return self.lib.pp_version().decode()

    def plan(self, **scenario):
        """Returns (status, result dict). status 0 ok, -1 bad input, -2 nothing fits."""
        status = ctypes.c_int(0)
        ptr = self.lib.pp_plan_request(json.dumps(scenario).encode(), ctypes.byref(status))
        if not ptr:
            raise MemoryError("pp_plan_request returned NULL")
        try:
            text = ctypes.string_at(ptr).decode()
        finally:
            self.lib.pp_free(ptr)
        return status.value, json.loads(text)


def main():
    pp = Parplan(sys.argv[1] if len(sys.argv) > 1 else None)
    print("libparplan", pp.version())
    st, res = pp.plan(model="llama3-8b", cluster="dgx-h100", gpus=8, global_batch=256, seq=4096, top=3)
    assert st == 0, res
    for p in res["plans"]:
        s = p["strategy"]
        print(f"dp{s['dp']} tp{s['tp']} pp{s['pp']} zero{s['zero']} {s['precision']} mb{s['micro_batch']}: "
              f"{p['throughput']['tokens_per_s']:.0f} tokens/s, peak {p['memory']['peak_bytes'] / 2**30:.1f} GiB")
    st, res = pp.plan(model="no-such-model", cluster="dgx-h100", global_batch=8)
    assert st == -1 and "unknown model" in res["error"]["message"], res
    print("bad input ->", res["error"]["message"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
