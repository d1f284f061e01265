#!/usr/bin/env python3
"""A kernel in Python for the judging-power tests: it answers `digest` itself with the
canonical JSON of vectors/examples/minimal_kernel.py, optionally with one realistic bug,
and passes every other request line, byte for byte, to the adapter it wraps (the
reference kernel), so it claims every kind.

    digest_proxy.py --bug NAME -- ADAPTER COMMAND...

Bugs (each the kind of thing a Python implementation gets wrong):
  none            faithful
  insertion-order keys written in the order the request had them (no sort)
  code-point      keys sorted with sorted(), i.e. by code point, not UTF-16 units
  python-floats   numbers written by json.dumps (1e-06, 1e+21, integers exact)
  exact-integers  integers written exactly instead of as doubles (2^53 + 1 stays odd)
  ensure-ascii    strings written by json.dumps with its default ensure_ascii=True
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import minimal_kernel as mk  # noqa: E402

BUGS = ["none", "insertion-order", "code-point", "python-floats", "exact-integers", "ensure-ascii"]


def plant(bug):
    """Replaces one function of the minimal kernel with its buggy twin."""
    if bug == "insertion-order" or bug == "code-point":
        def canonical(value, _orig=mk.canonical):
            if isinstance(value, dict):
                keys = list(value) if bug == "insertion-order" else sorted(value)
                return "{" + ",".join(mk.es_string(k) + ":" + canonical(value[k]) for k in keys) + "}"
            if isinstance(value, list):
                return "[" + ",".join(canonical(v) for v in value) + "]"
            return _orig(value)
        mk.canonical = canonical
    elif bug == "python-floats":
        mk.es_number = lambda x: json.dumps(x)
    elif bug == "exact-integers":
        orig = mk.es_number
        mk.es_number = lambda x: str(x) if isinstance(x, int) else orig(x)
    elif bug == "ensure-ascii":
        mk.es_string = lambda s: json.dumps(s)


def main():
    args = sys.argv[1:]
    if "--" not in args or args[:1] != ["--bug"] or args[1] not in BUGS:
        sys.stderr.write(__doc__)
        sys.exit(2)
    bug = args[1]
    plant(bug)
    adapter = subprocess.Popen(" ".join(args[args.index("--") + 1:]), shell=True,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        method = request.get("method")
        if method == "digest":
            answer = mk.handle("digest", request.get("params") or {})
            answer["id"] = request.get("id")
            out = json.dumps(answer)
        else:
            adapter.stdin.write(line if line.endswith("\n") else line + "\n")
            adapter.stdin.flush()
            out = adapter.stdout.readline().rstrip("\n")
            if method == "hello":
                answer = json.loads(out)
                answer["result"]["name"] = "python-digest-proxy:" + bug
                out = json.dumps(answer)
        sys.stdout.write(out + "\n")
        sys.stdout.flush()
    adapter.stdin.close()
    adapter.wait()


if __name__ == "__main__":
    main()
