"""Differential driver for memstore: runs lease.py's LeaseStore on JSON-line batches.

Usage: python3 lease_driver.py PATH/TO/lease.py
stdin: one JSON array of ops per line (one sequence, on a fresh LeaseStore).
stdout: one JSON array per line, one outcome per op:
  {"r": result, "err": message-or-null, "s": [holder, expiry, fence, data]}
lease.py runs its demo script at import time; we exec it with stdout captured
(its asserts still run, so a broken reference fails loudly here).
"""
import contextlib
import io
import json
import sys

path = sys.argv[1]
with open(path, encoding="utf-8") as f:
    src = f.read()
ns = {"__name__": "lease_reference"}
with contextlib.redirect_stdout(io.StringIO()):
    exec(compile(src, path, "exec"), ns)
LeaseStore = ns["LeaseStore"]
LeaseLostError = ns["LeaseLostError"]

print(json.dumps({"ready": True}), flush=True)

for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    store = LeaseStore()
    out = []
    for op in json.loads(line):
        kind = op["op"]
        r, err = None, None
        if kind == "acquire":
            r = store.acquire(op["owner"], ttl=op["ttl"], now=op["now"])
        elif kind == "renew":
            # lease.py's renew takes no fence; memstore's optional fence
            # (docs/specification.md §1) must equal the current fence when non-zero.
            if op["fence"] != 0 and op["fence"] != store.fence:
                r = False
            else:
                r = store.renew(op["owner"], ttl=op["ttl"], now=op["now"])
        elif kind == "release":
            if op["fence"] != 0 and op["fence"] != store.fence:
                r = False
            else:
                r = store.release(op["owner"])
        elif kind == "write":
            try:
                r = store.write(op["owner"], op["fence"], op["value"], now=op["now"])
            except LeaseLostError as e:
                err = str(e)
        elif kind == "read":
            r = store.data
        else:
            raise ValueError(kind)
        out.append({"r": r, "err": err,
                    "s": [store.holder, store.expiry, store.fence, store.data]})
    print(json.dumps(out), flush=True)
