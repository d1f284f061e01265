#!/usr/bin/env python3
"""A minimal Loom kernel adapter: answers `hello` and the `digest` method's fnv1a64
and emit ops, and `unsupported` for everything else. It claims only `digest` vectors,
so the runner reports every other kind as skip-not-claimed. Copy it to start your own
adapter (docs/guides/kernel-implementers.md)."""
import json
import sys

FNV_OFFSET = 0xcbf29ce484222325
FNV_PRIME = 0x100000001b3


def fnv1a64(data: bytes) -> str:
    h = FNV_OFFSET
    for b in data:
        h ^= b
        h = (h * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return format(h, "016x")


def canonical(value) -> str:
    # Good enough for the payloads of the digest vectors that use integers and plain
    # strings; a real kernel implements RFC 8785 in full.
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: k.encode("utf-16-be"))
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + canonical(value[k]) for k in keys) + "}"
    if isinstance(value, list):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def handle(method, params):
    if method == "hello":
        return {"result": {"name": "minimal-python-kernel", "version": "0.0.1",
                           "protocolVersion": 1, "kinds": ["digest"]}}
    if method == "digest" and params.get("op") == "fnv1a64":
        return {"result": {"fnv1a64": fnv1a64(params["text"].encode("utf-8"))}}
    if method == "digest" and params.get("op") == "emit":
        text = "%d|[%s,%s]" % (params["segment"], json.dumps(params["eventType"]), canonical(params["payload"]))
        return {"result": {"digest": fnv1a64(text.encode("utf-8")), "input": text}}
    if method == "digest" and params.get("op") == "canonical":
        return {"result": {"canonical": canonical(params["value"])}}
    return {"unsupported": {"message": "%s is not implemented" % method}}


for line in sys.stdin:
    if not line.strip():
        continue
    request = json.loads(line)
    answer = handle(request.get("method"), request.get("params") or {})
    answer["id"] = request.get("id")
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
