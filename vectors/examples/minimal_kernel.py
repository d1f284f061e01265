#!/usr/bin/env python3
"""A minimal Loom kernel adapter: answers `hello` and the `digest` method (RFC 8785
canonical JSON, FNV-1a 64, emit digests and flow hashes), and `unsupported` for
everything else. It claims only `digest` vectors, so the runner reports every other
kind as skip-not-claimed. Copy it to start your own adapter
(docs/guides/kernel-implementers.md).

Canonical JSON is where hand-written kernels go wrong, so this one is complete:
numbers are IEEE doubles written as ECMAScript's Number.prototype.toString writes them
(an integer above 2^53 rounds, `-0` is `0`, exponents below 1e-6 and from 1e21), keys
sort by UTF-16 code units, strings use the minimal escapes. Requests are read with
Python's JSON parser, which keeps the raw request's key order, so the sort really is
this code's."""
import hashlib
import json
import sys
from decimal import Decimal

FNV_OFFSET = 0xcbf29ce484222325
FNV_PRIME = 0x100000001b3


def fnv1a64(data: bytes) -> str:
    h = FNV_OFFSET
    for b in data:
        h ^= b
        h = (h * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return format(h, "016x")


def es_number(x) -> str:
    """ECMAScript Number::toString of a JSON number (ints become doubles first)."""
    try:
        x = float(x)
    except OverflowError:
        return "null"
    if x != x or x in (float("inf"), float("-inf")):
        return "null"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    # repr gives the shortest digits that read back as x (the closest when two tie).
    t = Decimal(repr(abs(x))).as_tuple()
    all_digits = "".join(map(str, t.digits))
    digits = all_digits.rstrip("0") or "0"
    exp = t.exponent + len(all_digits) - len(digits)
    k = len(digits)
    n = k + exp  # the decimal point sits after the n-th digit
    if k <= n <= 21:
        s = digits + "0" * (n - k)
    elif 0 < n <= 21:
        s = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        s = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        s = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e >= 0 else "-") + str(abs(e))
    return sign + s


def es_string(s: str) -> str:
    # ensure_ascii=False: `"`, `\\`, \b \f \n \r \t and other controls as lowercase
    # \u00xx; `/`, DEL, U+2028 and everything non-ASCII as they are.
    return json.dumps(s, ensure_ascii=False)


def canonical(value) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return es_number(value)
    if isinstance(value, str):
        return es_string(value)
    if isinstance(value, list):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    keys = sorted(value, key=lambda k: k.encode("utf-16-be", "surrogatepass"))
    return "{" + ",".join(es_string(k) + ":" + canonical(value[k]) for k in keys) + "}"


def digest(params):
    op = params.get("op")
    if op == "fnv1a64":
        return {"fnv1a64": fnv1a64(params["text"].encode("utf-8"))}
    if op == "emit":
        text = "%d|[%s,%s]" % (params["segment"], es_string(params["eventType"]), canonical(params["payload"]))
        return {"digest": fnv1a64(text.encode("utf-8")), "input": text}
    if op == "canonical":
        return {"canonical": canonical(params["value"])}
    if op == "flowHash":
        text = canonical(params["value"]).encode("utf-8")
        if params.get("algorithm") == "sha256":
            return {"flowHash": "sha256:" + hashlib.sha256(text).hexdigest()}
        return {"flowHash": "fnv1a:" + fnv1a64(text)}
    raise ValueError("unknown digest op %r" % op)


def handle(method, params):
    if method == "hello":
        return {"result": {"name": "minimal-python-kernel", "version": "0.0.2",
                           "protocolVersion": 1, "kinds": ["digest"]}}
    if method == "digest":
        try:
            return {"result": digest(params)}
        except (KeyError, TypeError, ValueError) as e:
            return {"error": {"kind": "bad-request", "message": str(e)}}
    return {"unsupported": {"message": "%s is not implemented" % method}}


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        answer = handle(request.get("method"), request.get("params") or {})
        answer["id"] = request.get("id")
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
