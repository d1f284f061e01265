#!/usr/bin/env python3
"""Deliberately broken variants of the example store adapter, one bug per name.

Each variant loads examples/python-sqlite-store/adapter.py unchanged and replaces one
function or method with a version that has a one-line bug of the kind a careful author
still ships: a limit checked with >= instead of >, a length counted in characters, two
checks in the wrong order, a float written with 15 digits, a fact left unset. The
judging-power test (buggy-stores/tests/judging_power.rs) runs each through the kits and
requires the case citing the named rule to fail.

Usage: python3 buggy_adapter.py BUG [adapter arguments...]
       python3 buggy_adapter.py --list
"""

import importlib.util
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ADAPTER = os.environ.get("LOOM_EXAMPLE_ADAPTER") or os.path.join(
    HERE, "..", "..", "examples", "python-sqlite-store", "adapter.py")

_spec = importlib.util.spec_from_file_location("adapter", ADAPTER)
a = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(a)
S = a.Store

BUGS = {}


def bug(name):
    def register(fn):
        BUGS[name] = fn
        return fn
    return register


def _walk(value, leaf):
    """`value` with every non-container replaced by leaf(x)."""
    if isinstance(value, dict):
        return {k: _walk(v, leaf) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, leaf) for v in value]
    return leaf(value)


def _patch_dump(leaf):
    orig = a.dump
    a.dump = lambda value: orig(_walk(value, leaf))


@bug("faithful")
def _():
    pass  # the control: the example adapter as it is


# -- boundaries -----------------------------------------------------------------------

@bug("batch-limit-inclusive")
def _():
    orig = a.check_append_batch

    def check(execution_id, first, events):
        if len(events) >= a.APPEND_BATCH_EVENTS_MAX:  # the bug: >= refuses the limit itself
            raise a.invalid("too many events in one append")
        return orig(execution_id, first, events)
    a.check_append_batch = check


@bug("content-limit-inclusive")
def _():
    orig = S.content_put

    def put(self, p):
        if a.decoded_size(p["data"]) >= a.CONTENT_BYTES_MAX:  # the bug: >=
            raise a.invalid("content too large")
        return orig(self, p)
    S.content_put = put


@bug("document-limit-in-characters")
def _():
    def check_document(value):
        text = a.dump(value)
        if len(text) > a.DOCUMENT_BYTES_MAX:  # the bug: characters, not UTF-8 bytes
            raise a.invalid("document too large")
        return text
    a.check_document = check_document


@bug("document-limit-default-separators")
def _():
    def check_document(value):
        text = a.dump(value)
        # The bug: measured on json.dumps' default output, whose ", " and ": "
        # separators make a structured document longer than its compact text.
        if len(a.json.dumps(value, ensure_ascii=False).encode("utf-8")) > a.DOCUMENT_BYTES_MAX:
            raise a.invalid("document too large")
        return text
    a.check_document = check_document


@bug("id-limit-in-characters")
def _():
    def check_id(what, value):
        if not isinstance(value, str) or value == "":
            raise a.invalid(f"{what} must be a non-empty string")
        if len(value) > a.ID_BYTES_MAX:  # the bug: characters, not UTF-8 bytes
            raise a.invalid(f"{what} too long")
    a.check_id = check_id


@bug("page-cursor-when-full")
def _():
    orig = S.list_executions_page

    def page(self, p):
        out = orig(self, p)
        if out["nextCursor"] is None and out["ids"] and len(out["ids"]) == p["limit"]:
            out["nextCursor"] = out["ids"][-1]  # the bug: a full page always says "more"
        return out
    S.list_executions_page = page


@bug("query-cursor-when-full")
def _():
    orig = S.rm_query

    def query(self, p):
        out = orig(self, p)
        if out["nextCursor"] is None and out["docs"] and len(out["docs"]) == p["limit"]:
            # the bug: a full page always hands out a cursor
            serial = self.bump("read_model_cursor")
            token = f"rm{serial}.full"
            self.db.execute("INSERT INTO read_model_cursors VALUES (?, ?, ?, ?)",
                            (serial, token, p["collection"], out["docs"][-1]["id"]))
            out["nextCursor"] = token
        return out
    S.rm_query = query


# -- orderings ------------------------------------------------------------------------

@bug("list-sequences-text-order")
def _():
    orig = S.snap_list
    S.snap_list = lambda self, p: sorted(orig(self, p), key=str)  # the bug: text order


@bug("archive-clash-keeps-new")
def _():
    def archive(self, p):
        eid, envelopes = p["executionId"], p["envelopes"]
        a.check_archive_batch(eid, envelopes)
        clash = None
        new = 0
        for e in envelopes:
            row = self.db.execute("SELECT envelope FROM archive WHERE execution_id = ? AND sequence = ?",
                                  (eid, e["sequence"])).fetchone()
            if row is None:
                self.db.execute("INSERT INTO archive VALUES (?, ?, ?)", (eid, e["sequence"], a.dump(e)))
                new += 1
            elif json.loads(row[0]) != e and clash is None:
                clash = e["sequence"]
        if clash is not None:
            err = a.StoreError("already-exists", f"a different envelope at {clash}")
            err.commit = True  # the bug: the new envelopes of a refused batch stay
            raise err
        return new
    S.archive = archive


@bug("blocked-head")
def _():
    orig = S.claim

    def claim(self, p):
        if self.target_registered(p["target"]):
            self.expire(p["nowMs"])
            head = self.db.execute("SELECT compute_target FROM dispatch WHERE queue_position IS NOT NULL "
                                   "ORDER BY queue_position LIMIT 1").fetchone()
            if head is not None and head[0] is not None and head[0] != p["target"]:
                return None  # the bug: a head pinned elsewhere blocks everyone behind it
        return orig(self, p)
    S.claim = claim


@bug("expire-answers-latest-first")
def _():
    orig = S.expire_leases

    def expire_leases(self, p):
        # the bug: the re-queued ids are reported newest first (ORDER BY ... DESC in
        # the reporting query), though they were re-queued in dispatch order
        return sorted(orig(self, p), reverse=True)
    S.expire_leases = expire_leases


@bug("requeue-at-front")
def _():
    def requeue(self, dispatch_id):
        # the bug: a re-queued package goes back to the front, in dispatch order
        self.db.execute(
            "UPDATE dispatch SET queue_position = ?, lease_id = NULL, target = NULL, worker_id = NULL, "
            "deadline_ms = NULL WHERE dispatch_id = ?", (dispatch_id - 10**9, dispatch_id))
    S.requeue = requeue


@bug("query-case-insensitive-order")
def _():
    orig = S.rm_query

    def query(self, p):
        out = orig(self, p)
        out["docs"].sort(key=lambda d: d["id"].casefold())  # the bug: not byte order
        return out
    S.rm_query = query


# -- order of checks ------------------------------------------------------------------

@bug("fence-if-at-least")
def _():
    orig = S.acquire_fence_if

    def fence_if(self, p):
        current = self.stream(p["executionId"])["fence"] or None
        expected = p.get("expectedCurrent")
        if expected is not None and current is not None and expected >= current:  # the bug: >=
            return self.bump_fence(p["executionId"])
        return orig(self, p)
    S.acquire_fence_if = fence_if


@bug("anchor-before-batch")
def _():
    def append_if_unchanged(self, p):
        eid, anchor, events = p["executionId"], p["anchor"], p["events"]
        current = self.anchor(self.stream(eid))
        if current != anchor:  # the bug: the anchor is compared before the batch is validated
            raise a.StoreError("anchor-changed", "the stream changed")
        a.check_append_batch(eid, anchor["nextSequence"], events)
        return self.write(eid, events)
    S.append_if_unchanged = append_if_unchanged


@bug("dispatch-duplicate-before-target")
def _():
    orig = S.dispatch

    def dispatch(self, p):
        pkg = p["package"]
        if isinstance(pkg.get("executionId"), str) and pkg.get("flowId") and self.db.execute(
                "SELECT 1 FROM dispatch WHERE execution_id = ?", (pkg["executionId"],)).fetchone():
            raise a.StoreError("already-exists", "already queued")  # the bug: before the target check
        return orig(self, p)
    S.dispatch = dispatch


# -- value fidelity -------------------------------------------------------------------

@bug("floats-15-digits")
def _():
    _patch_dump(lambda x: float("%.15g" % x) if isinstance(x, float) else x)


@bug("big-ints-as-floats")
def _():
    _patch_dump(lambda x: float(x) if isinstance(x, int) and not isinstance(x, bool) and abs(x) > 2**53 else x)


@bug("astral-replaced")
def _():
    _patch_dump(lambda x: "".join(c if ord(c) < 0x10000 else "\ufffd" for c in x) if isinstance(x, str) else x)


@bug("uppercase-digest-accepted")
def _():
    orig = S.content_get

    def get(self, p):
        if isinstance(p.get("digest"), str):
            p = dict(p, digest=p["digest"].lower())  # the bug: any spelling is accepted
        return orig(self, p)
    S.content_get = get


# -- facts inside errors --------------------------------------------------------------

@bug("fenced-current-wrong")
def _():
    def check_fence(current, presented):
        ok = (current == 0) if presented is None else (current != 0 and presented == current)
        if not ok:
            # the bug: the fact names the token presented, not the current one
            raise a.StoreError("fenced", "fenced", presented=presented, current=presented or 0)
    a.check_fence = check_fence


@bug("bytes-read-counts-chunks")
def _():
    orig = S.content_put_stream

    def put_stream(self, p):
        out = orig(self, p)
        aborted = out.get("aborted")
        if aborted and aborted["kind"] == "chunk-error":
            # the bug: counts chunks instead of bytes
            aborted["bytesRead"] = next(i for i, c in enumerate(p["chunks"]) if "error" in c)
        return out
    S.content_put_stream = put_stream


@bug("state-conflict-facts")
def _():
    orig = S.state_put

    def put(self, p):
        try:
            return orig(self, p)
        except a.StoreError as e:
            if e.kind == "conflict":
                e.facts["actualNext"] = e.facts["expectedNext"]  # the bug: echoes the request
            raise
    S.state_put = put


# -- timestamps -----------------------------------------------------------------------

@bug("store-now-seconds")
def _():
    orig_hello = S.hello

    def hello(self, p):
        out = orig_hello(self, p)
        out["spis"]["eventStore"]["methods"] = out["spis"]["eventStore"]["methods"] + ["storeNow"]
        return out
    S.hello = hello
    orig_handlers = a.handlers

    def handlers(store):
        table = orig_handlers(store)
        table["eventStore.storeNow"] = lambda _p: int(time.time())  # the bug: seconds
        return table
    a.handlers = handlers


# -- only the exploration campaign finds these: every kit passes them --------------

@bug("state-delete-at-version-zero")
def _():
    orig = S.state_delete

    def delete(self, p):
        if p.get("expectedVersion") == 0:
            row = self.state_row(p["key"])
            if row is not None and row[2]:
                # the bug: 0 read as "any version" (a falsy check for "no expectation")
                p = dict(p, expectedVersion=row[1])
        return orig(self, p)
    S.state_delete = delete


@bug("fence-if-forgets-deleted-stream")
def _():
    orig = S.acquire_fence_if

    def acquire_fence_if(self, p):
        eid = p["executionId"]
        s = self.stream(eid)
        if s["exists"] and not s["live"] and s["incarnation"] > 0:
            # the bug: the current fence is looked up on live streams and fence-only
            # rows, so a deleted stream's row (not live, once created) is skipped and
            # expecting "never fenced" wins
            a.check_id("execution id", eid)
            expected = p.get("expectedCurrent")
            if expected is not None:
                raise a.StoreError("fence-conflict", f"expected current fence {expected}, it is None",
                                   expected=expected, current=None)
            return self.bump_fence(eid)
        return orig(self, p)
    S.acquire_fence_if = acquire_fence_if


# -- concurrency: correct one request at a time, wrong when clients race ---------------
# Each needs several processes on one --db file (loom conform --clients N); the kits,
# which drive one client, pass them.


def _between_transactions(store, pause_s=0.001):
    """End the request's transaction and start another: what a client without a
    transaction or compare-and-set does between its read and its write. The pause only
    widens the window another process's request falls into (a case that races one
    request per client, not many, needs a wider one to lose the race reliably)."""
    store.db.execute("COMMIT")
    time.sleep(pause_s)
    store.db.execute("BEGIN IMMEDIATE")


@bug("racy-append")
def _():
    """append checks the stream's next sequence, then writes in a second transaction,
    trusting the check, with INSERT OR REPLACE: two racing appends at one sequence are
    both acknowledged and the later overwrites the earlier (SPI-23)."""
    orig = S.append

    def append(self, p):
        eid, expected, events, fence = p["executionId"], p["expectedNext"], p["events"], p.get("fence")
        s = self.stream(eid)
        if not s["live"]:
            return orig(self, p)
        a.check_append_batch(eid, expected, events)
        a.check_fence(s["fence"], fence)
        if s["next"] != expected:
            raise a.StoreError("conflict", f"expected next sequence {expected}, the stream is at {s['next']}",
                               expectedNext=expected, actualNext=s["next"])
        _between_transactions(self)
        for e in events:
            self.db.execute("INSERT OR REPLACE INTO events VALUES (?, ?, ?)", (eid, e["sequence"], a.dump(e)))
        nxt = events[-1]["sequence"] + 1
        self.db.execute("UPDATE streams SET next_sequence = ? WHERE execution_id = ?", (nxt, eid))
        return {"firstSequence": expected, "nextSequence": nxt}
    S.append = append


@bug("claim-without-cas")
def _():
    """claim picks the oldest queued package, then leases it in a second transaction
    without checking that it is still queued: two racing workers lease one dispatch
    (PLACE-02)."""
    def claim(self, p):
        target, worker, now_ms = p["target"], p["workerId"], p["nowMs"]
        if not self.target_registered(target):
            raise a.StoreError("not-found", f"target {target!r} is not registered")
        self.expire(now_ms)
        row = self.db.execute(
            "SELECT dispatch_id, package FROM dispatch WHERE queue_position IS NOT NULL "
            "AND (compute_target IS NULL OR compute_target = ?) ORDER BY queue_position LIMIT 1",
            (target,)).fetchone()
        if row is None:
            return None
        _between_transactions(self)
        lease_id, deadline = self.bump("lease"), min(now_ms + a.LEASE_DURATION_MS, 2**63 - 1)
        self.db.execute("UPDATE dispatch SET queue_position = NULL, lease_id = ?, target = ?, worker_id = ?, "
                        "deadline_ms = ? WHERE dispatch_id = ?", (lease_id, target, worker, deadline, row[0]))
        return {"leaseId": lease_id, "dispatchId": row[0], "package": json.loads(row[1]),
                "target": target, "workerId": worker, "deadlineMs": deadline}
    S.claim = claim


@bug("racy-state-put")
def _():
    """durableStateStore.put compares the expected version in one transaction and
    writes version + 1 in another: two racing writers that both read version v are both
    told they wrote v + 1 (SPI-20's compare-and-set)."""
    def state_put(self, p):
        key, expected = p["key"], p.get("expectedVersion")
        a.check_id("key", key)
        text = a.check_document(p["value"])
        row = self.state_row(key)
        current = row[1] if row is not None and row[2] else None
        if current != expected:
            raise a.StoreError("conflict", f"expected version {expected or 0}, the key is at {current or 0}",
                               expectedNext=expected or 0, actualNext=current or 0)
        version = (row[1] if row is not None else 0) + 1
        _between_transactions(self)
        self.db.execute("INSERT INTO state VALUES (?, ?, ?, 1) ON CONFLICT(key) DO UPDATE "
                        "SET value = excluded.value, version = excluded.version, live = 1",
                        (key, text, version))
        return version
    S.state_put = state_put


@bug("racy-renew")
def _():
    """renew reads the lease and checks its deadline in one transaction, then writes the
    row back (lease and new deadline) in another: an expiry that re-queued the package in
    between is undone, so the renewal and the expiry both succeed and the package is
    leased while it sits in the queue (PLACE-02)."""
    def renew(self, p):
        lease, now_ms = p["lease"], p["nowMs"]
        deadline = self.live_lease(lease)
        if deadline is None:
            raise a.StoreError("lease-lost", f"lease {lease['leaseId']} is no longer live")
        if deadline <= now_ms:
            self.requeue(lease["dispatchId"])
            lost = a.StoreError("lease-lost", f"lease {lease['leaseId']} expired")
            lost.commit = True
            raise lost
        new_deadline = min(now_ms + a.LEASE_DURATION_MS, 2**63 - 1)
        _between_transactions(self, pause_s=0.02)
        self.db.execute("UPDATE dispatch SET queue_position = NULL, lease_id = ?, target = ?, worker_id = ?, "
                        "deadline_ms = ? WHERE dispatch_id = ?",
                        (lease["leaseId"], lease["target"], lease["workerId"], new_deadline, lease["dispatchId"]))
        return dict(lease, deadlineMs=new_deadline)
    S.renew = renew


@bug("racy-timer-cancel")
def _():
    """timerStore.cancel looks the timer up in one transaction and deletes it in another,
    answering what the lookup saw: two racing sweepers are both told the timer existed,
    so both fire it (REPLAY-10)."""
    def timer_cancel(self, p):
        found = self.db.execute("SELECT 1 FROM timers WHERE execution_id = ? AND key = ?",
                                (p["executionId"], p["key"])).fetchone() is not None
        _between_transactions(self)
        self.db.execute("DELETE FROM timers WHERE execution_id = ? AND key = ?", (p["executionId"], p["key"]))
        return found
    S.timer_cancel = timer_cancel


@bug("racy-timer-schedule")
def _():
    """timerStore.schedule looks for the timer in one transaction and writes it with
    INSERT OR REPLACE in another: a racing schedule moves the deadline that an earlier one
    stored, and each is told its own deadline stands (REPLAY-10)."""
    def timer_schedule(self, p):
        t = p["timer"]
        a.check_id("execution id", t.get("executionId"))
        a.check_id("timer key", t.get("key"))
        row = self.db.execute("SELECT wake_at_ms FROM timers WHERE execution_id = ? AND key = ?",
                              (t["executionId"], t["key"])).fetchone()
        if row is not None:
            return {"executionId": t["executionId"], "wakeAtMs": row[0], "key": t["key"]}
        _between_transactions(self)
        self.db.execute("INSERT OR REPLACE INTO timers VALUES (?, ?, ?)",
                        (t["executionId"], t["key"], t["wakeAtMs"]))
        return {"executionId": t["executionId"], "wakeAtMs": t["wakeAtMs"], "key": t["key"]}
    S.timer_schedule = timer_schedule


@bug("racy-upsert")
def _():
    """readModelStore.upsert looks the document up in one transaction, then inserts or
    updates in another: two racing inserts of a new id collide and the later is answered
    with a backend error instead of replacing (SPI-20: an upsert inserts or replaces)."""
    def rm_upsert(self, p):
        a.check_id("collection", p["collection"])
        a.check_id("document id", p["id"])
        text = a.check_document(p["doc"])
        exists = self.db.execute("SELECT 1 FROM read_models WHERE collection = ? AND id = ?",
                                 (p["collection"], p["id"])).fetchone() is not None
        _between_transactions(self)
        if exists:
            self.db.execute("UPDATE read_models SET doc = ? WHERE collection = ? AND id = ?",
                            (text, p["collection"], p["id"]))
        else:
            self.db.execute("INSERT INTO read_models VALUES (?, ?, ?)", (p["collection"], p["id"], text))
        return None
    S.rm_upsert = rm_upsert


# -- durability: correct while the process lives, wrong after a kill -------------------
# Each needs a --db file; the durability kit kills the adapter and starts it again.


@bug("ack-before-commit")
def _():
    """an append is answered before its transaction commits; the commit happens when the
    next request arrives. A client never notices, since every later request sees it; a
    kill right after the answer loses the acknowledged append (SPI-23)."""
    orig_tx = S.tx

    def tx(self, fn, *args):
        if getattr(self, "_uncommitted", False) and self.db.in_transaction:
            self.db.execute("COMMIT")  # (a reset in between rolled it back instead)
        self._uncommitted = False
        if getattr(fn, "__name__", "") != "append":
            return orig_tx(self, fn, *args)
        self.db.execute("BEGIN IMMEDIATE")
        try:
            result = fn(*args)
        except a.StoreError as e:
            self.db.execute("COMMIT" if e.commit else "ROLLBACK")
            raise
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self._uncommitted = True
        return result
    S.tx = tx


@bug("incarnation-in-memory")
def _():
    """the incarnation counter lives in the process, not the database: after a restart it
    starts again at 1, so a stream created after a kill gets an incarnation lower than
    streams before it (SPI-07: incarnations are monotonic)."""
    counter = [0]

    def new_incarnation(self):
        counter[0] += 1
        return counter[0]
    S.new_incarnation = new_incarnation


# -- under simulation: correct for one client in one process lifetime, wrong when the
# deploy simulator (`loom sim --store cmd:...`) runs a process per host and kills them.
# They count requests, never read a clock. Each needs a --db file (one per seed:
# --db /tmp/s-{seed}.db) and, for the simulator's 26 s runs, --lease-ms 1000.

WRITE_BEHIND_FLUSH_APPENDS = 4  # a process flushes its write-behind cache every 4th append
FENCE_CACHE_ENTRIES = 2  # the fence-token cache holds two executions
REPLICA_LAG_READS = 3  # the replica trails the primary by three reads of a stream


@bug("write-behind-appends")
def _():
    """an append is acknowledged from a write-behind cache: its rows reach the file at
    once but stay marked unsynced until the process's next flush (every 4th append). A
    process killed and started again has lost its cache: it drops the unsynced rows, and
    with them acknowledged appends (SPI-23)."""
    table = "CREATE TABLE IF NOT EXISTS wb_unsynced (client INTEGER, execution_id TEXT, sequence INTEGER)"
    orig_append = S.append

    def append(self, p):
        out = orig_append(self, p)
        self.db.execute(table)
        for e in p["events"]:
            self.db.execute("INSERT INTO wb_unsynced VALUES (?, ?, ?)",
                            (self.wb_client, p["executionId"], e["sequence"]))
        self.wb_appends = getattr(self, "wb_appends", 0) + 1
        if self.wb_appends % WRITE_BEHIND_FLUSH_APPENDS == 0:
            self.db.execute("DELETE FROM wb_unsynced WHERE client = ?", (self.wb_client,))
        return out
    S.append = append
    orig_hello = S.hello

    def hello(self, params):
        self.wb_client = params.get("clientIndex") or 0
        out = orig_hello(self, params)
        # the bug: a process started again forgets what its cache had not flushed
        self.db.execute("BEGIN IMMEDIATE")
        self.db.execute(table)
        rows = self.db.execute("SELECT execution_id, MIN(sequence) FROM wb_unsynced WHERE client = ? "
                               "GROUP BY execution_id", (self.wb_client,)).fetchall()
        for eid, lo in rows:
            self.db.execute("DELETE FROM events WHERE execution_id = ? AND sequence >= ?", (eid, lo))
            self.db.execute("UPDATE streams SET next_sequence = ? WHERE execution_id = ? AND next_sequence > ?",
                            (lo, eid, lo))
        self.db.execute("DELETE FROM wb_unsynced WHERE client = ?", (self.wb_client,))
        self.db.execute("COMMIT")
        return out
    S.hello = hello


@bug("fence-cache-drops")
def _():
    """fence tokens are kept in a per-process write-back cache of two executions; an
    entry pushed out is dropped, not written back. Another process (or this one, once
    the entry is gone) hands out a token again or a lower one, and accepts appends
    presenting it (PLACE-05)."""
    orig_stream = S.stream

    def cache(self):
        return self.__dict__.setdefault("_fence_cache", {})

    def stream(self, eid):
        s = orig_stream(self, eid)
        c = cache(self)
        return dict(s, fence=c[eid]) if eid in c else s
    S.stream = stream

    def bump_fence(self, eid):
        s = self.stream(eid)
        token = s["fence"] + 1
        if not s["exists"]:
            self.db.execute("INSERT INTO streams VALUES (?, 0, 0, 0, 0)", (eid,))
        c = cache(self)
        c.pop(eid, None)
        c[eid] = token  # the bug: the token lives in the cache only
        while len(c) > FENCE_CACHE_ENTRIES:
            c.pop(next(iter(c)))  # the bug: dropped without being written back
        return token
    S.bump_fence = bump_fence


@bug("stale-replica-reads")
def _():
    """reads are served by a replica that trails the primary: each process answers a
    read of a stream with the stream as long as it was three reads of it earlier, so a
    read misses appends acknowledged before it was sent (SPI-23)."""
    orig_read = S.read

    def read(self, p):
        rows = orig_read(self, p)
        seen = self.__dict__.setdefault("_replica", {}).setdefault(p["executionId"], [])
        seen.append(len(rows))
        if len(seen) > REPLICA_LAG_READS:
            seen.pop(0)
        return rows[:seen[0]]  # the bug: the length of REPLICA_LAG_READS reads ago
    S.read = read


REPLICA_LAG_WRITES = 3  # the shared replica applies appends three appends (store-wide) late


@bug("replica-3-writes-behind")
def _():
    """reads are served by a replica shared by every process that applies appends three
    appends (counted over the whole store) late, except that a process always sees its
    own appends (read-your-writes, as a sticky session gives): a read misses another
    host's append only when fewer than three appends reached the store since it, which
    takes several hosts writing one execution in quick succession (SPI-23)."""
    table = ("CREATE TABLE IF NOT EXISTS replica_log (n INTEGER PRIMARY KEY AUTOINCREMENT, "
             "client INTEGER, execution_id TEXT, next_sequence INTEGER)")
    orig_append = S.append

    def append(self, p):
        out = orig_append(self, p)
        self.db.execute(table)
        self.db.execute("INSERT INTO replica_log (client, execution_id, next_sequence) VALUES (?, ?, ?)",
                        (getattr(self, "replica_client", 0), p["executionId"], out["nextSequence"]))
        return out
    S.append = append
    orig_hello = S.hello

    def hello(self, params):
        self.replica_client = params.get("clientIndex") or 0
        return orig_hello(self, params)
    S.hello = hello
    orig_reset = S.reset

    def reset(self):
        orig_reset(self)
        # the replica starts empty with the store (a replay on the same --db file)
        self.db.execute(table)
        self.db.execute("DELETE FROM replica_log")
    S.reset = reset
    orig_read = S.read

    def read(self, p):
        rows = orig_read(self, p)
        self.db.execute(table)
        top = self.db.execute("SELECT COALESCE(MAX(n), 0) FROM replica_log").fetchone()[0]
        seen = self.db.execute(
            "SELECT COALESCE(MAX(next_sequence), 0) FROM replica_log WHERE execution_id = ? "
            "AND (n <= ? OR client = ?)",
            (p["executionId"], top - REPLICA_LAG_WRITES, self.replica_client)).fetchone()[0]
        return rows[:seen]  # the bug: the replica's length, not the primary's
    S.read = read


@bug("timer-cancel-keeps")
def _():
    """timerStore.cancel answers that the timer was removed and keeps it (a soft delete
    whose flag is never read by due): a fired timer is answered as due again, so it
    fires twice (REPLAY-10)."""
    def timer_cancel(self, p):
        row = self.db.execute("SELECT 1 FROM timers WHERE execution_id = ? AND key = ?",
                              (p["executionId"], p["key"])).fetchone()
        return row is not None  # the bug: answers "removed", removes nothing
    S.timer_cancel = timer_cancel


COMMIT_TIMEOUT_AT_APPEND = 5  # a process's commit "times out" once, at its 5th append


def _commit_times_out(undo):
    """A process's 5th append commits, but is answered `backend` ("the commit did not
    finish within the commit timeout"; the count stands in for a slow disk): a write of
    unknown outcome, which a store may give. With `undo`, the adapter takes the timeout
    for a failure and, before its next append, removes the rows that write left if
    nothing was appended after them."""
    orig_append = S.append

    def append(self, p):
        timed_out = self.__dict__.pop("_timed_out", None)
        if undo and timed_out is not None:
            eid, first, nxt = timed_out
            s = self.stream(eid)
            if s["live"] and s["next"] == nxt:  # nothing appended after it
                self.db.execute("DELETE FROM events WHERE execution_id = ? AND sequence >= ?", (eid, first))
                self.db.execute("UPDATE streams SET next_sequence = ? WHERE execution_id = ?", (first, eid))
        out = orig_append(self, p)
        self._appends = getattr(self, "_appends", 0) + 1
        if self._appends == COMMIT_TIMEOUT_AT_APPEND:
            self._timed_out = (p["executionId"], out["firstSequence"], out["nextSequence"])
            timeout = a.StoreError("backend", "the commit did not finish within the commit timeout")
            timeout.commit = True  # it did finish, after the adapter stopped waiting
            raise timeout
        return out
    S.append = append


@bug("commit-times-out")
def _():
    """a control, not a bug: each process's 5th append commits and is answered
    `backend`, and stays. The simulator must judge those writes of unknown outcome both
    ways and pass."""
    _commit_times_out(undo=False)


@bug("timed-out-append-undone")
def _():
    """the append whose commit timed out (above) is removed again, before the process's
    next append, if nothing was appended after it: a clean-up of what the adapter took
    for a failed write. Other hosts may have read those events in between; to them an
    event that landed is gone (SPI-23). Each answer alone is one a correct store may
    give: only judging the write of unknown outcome both ways (simulator/src/linear.rs)
    finds no order that explains them all."""
    _commit_times_out(undo=True)


CRASH_AT_REQUEST = 40  # the control below crashes once, at this request of client 1


@bug("crashes-once")
def _():
    """a control, not a bug: the faithful adapter whose client-1 process dies (exit 1,
    after a line on stderr) at its 40th request, once per --db file (a marker file next
    to it remembers). Everything it acknowledged is committed, so the simulator must
    pass it, report the crash with the adapter's stderr, and take no failed read for
    lost data."""
    orig_tx = S.tx
    orig_hello = S.hello

    def hello(self, params):
        self.crash_client = params.get("clientIndex") or 0
        self.crash_requests = 0
        return orig_hello(self, params)
    S.hello = hello

    def tx(self, fn, *args):
        self.crash_requests = getattr(self, "crash_requests", 0) + 1
        marker = self.path + ".crashed"
        if (getattr(self, "crash_client", 0) == 1 and self.crash_requests == CRASH_AT_REQUEST
                and self.path != ":memory:" and not os.path.exists(marker)):
            open(marker, "w").close()
            print(f"crashes-once: dying at request {CRASH_AT_REQUEST}", file=sys.stderr, flush=True)
            os._exit(1)
        return orig_tx(self, fn, *args)
    S.tx = tx


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    if argv[1] == "--list":
        print("\n".join(sorted(BUGS)))
        return 0
    patch = BUGS.get(argv[1])
    if patch is None:
        print(f"unknown bug {argv[1]!r}; --list names them", file=sys.stderr)
        return 2
    patch()
    return a.main([argv[0]] + argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
