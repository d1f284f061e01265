#!/usr/bin/env python3
"""A Loom store adapter over SQLite, speaking the stdio store protocol.

This is the template a store author copies: replace the SQL with calls to your
backend and keep the protocol plumbing. Standard library only (json, sqlite3, sys).

Protocol (docs/protocols/store.md): one JSON request per line on stdin,
one JSON response per line on stdout, answered in order:

    {"id": 1, "method": "eventStore.append", "params": {...}}
    {"id": 1, "result": {...}}       or       {"id": 1, "error": {"kind": "conflict", ...}}

Logs go to stderr; stdout carries protocol lines only. Blobs (ContentStore) travel
as standard base64 strings, because JSON has no bytes.

Usage: python3 adapter.py [--db PATH] [--lease-ms MS] [--lie] [--lie-partial-stream]
  --db PATH             keep the data in PATH (default: an in-memory database). Several
                        processes given the same PATH share it (store protocol 1.2:
                        hello answers sharedBackend: true, and `loom conform --clients N`
                        runs the concurrent cases against them)
  --lease-ms MS         the dispatcher's lease duration (default 30000); `loom sim`, whose
                        runs last about 26 simulated seconds, wants a shorter one (1000)
  --lie                 claim `storeNow` without implementing it (a deliberately broken
                        adapter, for the kit meta-tests: the probe must catch it)
  --lie-partial-stream  keep what an aborted putStream received (breaks the ADR 0059
                        all-or-nothing rule; the putStream abort cases must catch it)
"""

import base64
import binascii
import hashlib
import json
import re
import secrets
import sqlite3
import sys

PROTOCOL_VERSION = "1.2"
EVENT_STORE_SPI_VERSION = "2.6.0"
SNAPSHOT_STORE_SPI_VERSION = "1.3.0"
ARCHIVE_STORE_SPI_VERSION = "1.1.0"
BRANCH_REGISTRY_SPI_VERSION = "1.0.0"
DISPATCHER_SPI_VERSION = "1.0.0"
TIMER_STORE_SPI_VERSION = "1.0.0"
CONTENT_STORE_SPI_VERSION = "1.5.0"
DURABLE_STATE_STORE_SPI_VERSION = "1.0.0"
READ_MODEL_STORE_SPI_VERSION = "1.0.0"

# Limits, the same as the reference stores (loom_kernel::spi).
APPEND_BATCH_EVENTS_MAX = 10_000
LIST_PAGE_LIMIT_MAX = 10_000
ID_BYTES_MAX = 1024
SEQUENCE_MAX = 2**63 - 1
BRANCH_CHAIN_LEN_MAX = 1024
DISPATCH_QUEUE_LEN_MAX = 1_000_000
LEASE_DURATION_MS = 30_000  # how long a claim lasts; a renew extends it by as much
TIMER_DUE_LIMIT_MAX = 10_000
CONTENT_BYTES_MAX = 8 * 1024 * 1024
DOCUMENT_BYTES_MAX = 1024 * 1024
READ_MODEL_LIMIT_MAX = 1_000
# Read-model cursors we remember; the oldest are forgotten first (a client holding
# one gets invalid-argument and starts over). Bounded so the table cannot grow forever.
ISSUED_CURSORS_MAX = 10_000
DIGEST_RE = re.compile(r"\Asha256:[0-9a-f]{64}\Z")

EVENT_METHODS = [
    "readRange", "acquireFence", "acquireFenceIf", "appendIfUnchanged",
    "deleteThrough", "sealingCapability", "copyPrefix", "deleteExecution",
    "listExecutionsPage",
]
SNAPSHOT_METHODS = ["deleteExecution", "loadLatestSealed", "pruneSnapshots", "listSequences"]
ARCHIVE_METHODS = ["deleteExecution", "replaceSegments"]
CONTENT_METHODS = ["putStream", "contentAccess", "sealsContent"]

SCHEMA = """
CREATE TABLE streams (
    execution_id TEXT PRIMARY KEY,
    live INTEGER NOT NULL,
    incarnation INTEGER NOT NULL,
    next_sequence INTEGER NOT NULL,
    fence INTEGER NOT NULL
);
CREATE TABLE events (
    execution_id TEXT NOT NULL,
    sequence INTEGER NOT NULL,
    envelope TEXT NOT NULL,
    PRIMARY KEY (execution_id, sequence)
);
CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE snapshots (
    execution_id TEXT NOT NULL,
    sequence INTEGER NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (execution_id, sequence)
);
CREATE TABLE archive (
    execution_id TEXT NOT NULL,
    sequence INTEGER NOT NULL,
    envelope TEXT NOT NULL,
    PRIMARY KEY (execution_id, sequence)
);
CREATE TABLE branches (
    execution_id TEXT PRIMARY KEY,
    parent_execution_id TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE TABLE targets (name TEXT PRIMARY KEY);
CREATE TABLE dispatch (
    dispatch_id INTEGER PRIMARY KEY,
    execution_id TEXT NOT NULL UNIQUE,
    package TEXT NOT NULL,
    compute_target TEXT,
    queue_position INTEGER,
    lease_id INTEGER,
    target TEXT,
    worker_id TEXT,
    deadline_ms INTEGER
);
CREATE TABLE timers (
    execution_id TEXT NOT NULL,
    key TEXT NOT NULL,
    wake_at_ms INTEGER NOT NULL,
    PRIMARY KEY (execution_id, key)
);
CREATE TABLE content (digest TEXT PRIMARY KEY, bytes BLOB NOT NULL, public INTEGER NOT NULL);
CREATE TABLE content_owners (digest TEXT NOT NULL, owner TEXT NOT NULL, PRIMARY KEY (digest, owner));
CREATE TABLE state (key TEXT PRIMARY KEY, value TEXT, version INTEGER NOT NULL, live INTEGER NOT NULL);
CREATE TABLE read_models (
    collection TEXT NOT NULL,
    id TEXT NOT NULL,
    doc TEXT NOT NULL,
    PRIMARY KEY (collection, id)
);
CREATE TABLE read_model_cursors (
    serial INTEGER PRIMARY KEY,
    token TEXT NOT NULL UNIQUE,
    collection TEXT NOT NULL,
    last_id TEXT NOT NULL
);
"""

TABLES = ["streams", "events", "counters", "snapshots", "archive", "branches", "targets",
          "dispatch", "timers", "content", "content_owners", "state", "read_models",
          "read_model_cursors"]
# One transaction, so a reset is all or nothing too. `DELETE FROM t` without a WHERE
# clause is SQLite's truncate optimisation: it drops the table's pages wholesale.
RESET_SCRIPT = "BEGIN IMMEDIATE;" + "".join(f"DELETE FROM {t};" for t in TABLES) + "COMMIT;"


class StoreError(Exception):
    """An SPI error: `kind` is one of the protocol's stable names; `facts` are extra keys."""

    def __init__(self, kind, message, **facts):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.facts = facts
        # True when the request's writes must be committed even though it answers this
        # error (the dispatcher re-queues an expired lease and reports it lost).
        self.commit = False

    def to_json(self):
        out = {"kind": self.kind, "message": self.message}
        out.update(self.facts)
        return out


def invalid(message):
    return StoreError("invalid-argument", message)


def check_id(what, value):
    if not isinstance(value, str) or value == "":
        raise invalid(f"{what} must be a non-empty string")
    if len(value.encode("utf-8")) > ID_BYTES_MAX:
        raise invalid(f"{what} is longer than {ID_BYTES_MAX} bytes")


def check_seq(what, value):
    if not isinstance(value, int) or isinstance(value, bool) or value < 0 or value > SEQUENCE_MAX:
        raise invalid(f"{what} must be an integer in 0..={SEQUENCE_MAX}")


def check_append_batch(execution_id, first, events):
    check_id("execution id", execution_id)
    # The expected next sequence is a sequence too: past SEQUENCE_MAX it is invalid,
    # not a conflict (found by the exploration campaign: this adapter answered
    # `conflict` with expectedNext 2^64 - 1 where the reference stores refuse).
    check_seq("expected next sequence", first)
    if not events:
        raise invalid("an append must carry at least one event")
    if len(events) > APPEND_BATCH_EVENTS_MAX:
        raise invalid(f"more than {APPEND_BATCH_EVENTS_MAX} events in one append")
    for idx, e in enumerate(events):
        if e.get("executionId") != execution_id:
            raise invalid(f"event {idx} names another execution")
        if e.get("sequence") != first + idx:
            raise invalid(f"event {idx} has sequence {e.get('sequence')}, expected {first + idx}")
        check_seq("sequence", e["sequence"])


def check_archive_batch(execution_id, envelopes):
    check_id("execution id", execution_id)
    if len(envelopes) > APPEND_BATCH_EVENTS_MAX:
        raise invalid(f"more than {APPEND_BATCH_EVENTS_MAX} envelopes in one call")
    previous = None
    for idx, e in enumerate(envelopes):
        if e.get("executionId") != execution_id:
            raise invalid(f"envelope {idx} names another execution")
        check_seq("sequence", e.get("sequence"))
        if previous is not None and e["sequence"] <= previous:
            raise invalid(f"envelope {idx}: sequences must be strictly ascending")
        previous = e["sequence"]


def check_fence(current, presented):
    ok = (current == 0) if presented is None else (current != 0 and presented == current)
    if not ok:
        raise StoreError("fenced", f"append presented fence {presented}, the current fence is {current}",
                         presented=presented, current=current)


def check_int(what, value, lo, hi):
    if not isinstance(value, int) or isinstance(value, bool) or value < lo or value > hi:
        raise invalid(f"{what} must be an integer in {lo}..={hi}")


def check_digest(digest):
    if not isinstance(digest, str) or not DIGEST_RE.match(digest):
        raise invalid(f"{digest!r} is not sha256:<64 lowercase hex>")


def check_owner(owner):
    if owner is not None:
        check_id("owner", owner)


def check_document(value):
    text = dump(value)
    if len(text.encode("utf-8")) > DOCUMENT_BYTES_MAX:
        raise invalid(f"the document is longer than {DOCUMENT_BYTES_MAX} bytes")
    return text


def decoded_size(text):
    """How many bytes the base64 `text` decodes to, without decoding it (so an oversize
    blob is refused before we spend time and memory on it)."""
    if not isinstance(text, str):
        raise invalid("content must be a base64 string")
    return len(text) // 4 * 3 - (len(text) - len(text.rstrip("=")))


def b64decode(text):
    """Strict base64: anything that is not padded standard base64 is invalid-argument."""
    try:
        try:
            return binascii.a2b_base64(text, strict_mode=True)  # Python 3.11+: fastest
        except TypeError:
            return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as e:
        raise invalid(f"content is not valid base64: {e}") from None


def content_ref(data):
    return {"digest": "sha256:" + hashlib.sha256(data).hexdigest(), "size": len(data)}


def dump(value):
    # Compact and key order kept: the kits compare parsed JSON, never bytes, but keeping
    # what we were given is the honest default for a log.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class Store:
    def __init__(self, path, lie, lie_partial_stream=False):
        self.path = path
        self.lie = lie
        self.lie_partial_stream = lie_partial_stream
        self.db = None

    def open(self, client_index):
        # isolation_level=None: we open every transaction ourselves (BEGIN IMMEDIATE),
        # so each request is all or nothing, also against other processes on the same
        # file. timeout: how long BEGIN IMMEDIATE waits for another process's write.
        self.db = sqlite3.connect(self.path, isolation_level=None, timeout=30)
        if self.path == ":memory:":
            self.db.execute("PRAGMA journal_mode=MEMORY")
        else:
            # WAL lets readers in other processes go on while one writes.
            self.db.execute("PRAGMA journal_mode=WAL")
        have = {row[0] for row in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if client_index == 0 and not set(TABLES) <= have:
            # Client 0 (the only one, or the first of several: the harness starts it
            # before the others) lays out the schema when the file lacks it; the others
            # use it. A file that has it keeps its data: a process started again after
            # a crash must read what the one before it acknowledged.
            for table in TABLES:
                self.db.execute(f"DROP TABLE IF EXISTS {table}")
            self.db.executescript(SCHEMA)

    def reset(self):
        # Called before every kit case, so it must be cheap: the connection and the
        # schema are kept, and every table is emptied in one transaction. A case
        # therefore starts from exactly the state of a fresh database (counters
        # included, so incarnations restart), without paying to reparse the schema
        # (dropping and re-creating the tables cost about 5x more per case). With
        # several clients on one file, only client 0 is sent `reset`.
        if self.db is None:
            self.open(0)
            return
        if self.db.in_transaction:
            # Only reachable if a handler escaped its transaction; never carry it over.
            self.db.execute("ROLLBACK")
        self.db.executescript(RESET_SCRIPT)

    # -- plumbing ---------------------------------------------------------------

    def tx(self, fn, *args):
        self.db.execute("BEGIN IMMEDIATE")
        try:
            result = fn(*args)
        except StoreError as e:
            self.db.execute("COMMIT" if e.commit else "ROLLBACK")
            raise
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")
        return result

    def hello(self, params):
        if self.db is None:
            self.open(params.get("clientIndex") or 0)
        event_methods = list(EVENT_METHODS)
        if self.lie:
            event_methods.append("storeNow")
        return {
            "name": "python-sqlite-store",
            "version": "0.1.0",
            "protocolVersion": PROTOCOL_VERSION,
            # Processes started with the same --db file share it; an in-memory database
            # is each process's own.
            "sharedBackend": self.path != ":memory:",
            # What it acknowledged is committed to the file before the answer is
            # written, so it survives the process being killed (SIGKILL).
            "durable": self.path != ":memory:",
            "spis": {
                "eventStore": {"spiVersion": EVENT_STORE_SPI_VERSION, "methods": event_methods},
                "snapshotStore": {"spiVersion": SNAPSHOT_STORE_SPI_VERSION, "methods": SNAPSHOT_METHODS},
                "archiveStore": {"spiVersion": ARCHIVE_STORE_SPI_VERSION, "methods": ARCHIVE_METHODS},
                "branchRegistry": {"spiVersion": BRANCH_REGISTRY_SPI_VERSION, "methods": []},
                "dispatcher": {"spiVersion": DISPATCHER_SPI_VERSION, "methods": []},
                "timerStore": {"spiVersion": TIMER_STORE_SPI_VERSION, "methods": []},
                "contentStore": {"spiVersion": CONTENT_STORE_SPI_VERSION, "methods": CONTENT_METHODS},
                "durableStateStore": {"spiVersion": DURABLE_STATE_STORE_SPI_VERSION, "methods": []},
                "readModelStore": {"spiVersion": READ_MODEL_STORE_SPI_VERSION, "methods": []},
            },
        }

    # -- EventStore ---------------------------------------------------------------

    def stream(self, execution_id):
        row = self.db.execute(
            "SELECT live, incarnation, next_sequence, fence FROM streams WHERE execution_id = ?",
            (execution_id,)).fetchone()
        if row is None:
            return {"live": False, "incarnation": 0, "next": 0, "fence": 0, "exists": False}
        live, inc, nxt, fence = row
        return {"live": bool(live), "incarnation": inc, "next": nxt if live else 0, "fence": fence, "exists": True}

    def anchor(self, s):
        return {"incarnation": s["incarnation"], "nextSequence": s["next"], "fence": s["fence"]}

    def bump(self, name):
        """The next value of a store-wide counter (1, 2, ...); `reset` restarts them."""
        self.db.execute("INSERT OR IGNORE INTO counters VALUES (?, 0)", (name,))
        self.db.execute("UPDATE counters SET value = value + 1 WHERE name = ?", (name,))
        return self.db.execute("SELECT value FROM counters WHERE name = ?", (name,)).fetchone()[0]

    def new_incarnation(self):
        return self.bump("incarnation")

    def write(self, execution_id, events):
        s = self.stream(execution_id)
        if not s["live"]:
            inc = self.new_incarnation()
            self.db.execute("DELETE FROM events WHERE execution_id = ?", (execution_id,))
            self.db.execute(
                "INSERT INTO streams VALUES (?, 1, ?, 0, ?) ON CONFLICT(execution_id) DO UPDATE "
                "SET live = 1, incarnation = excluded.incarnation, next_sequence = 0",
                (execution_id, inc, s["fence"]))
            s = self.stream(execution_id)
        first = s["next"]
        for e in events:
            self.db.execute("INSERT INTO events VALUES (?, ?, ?)", (execution_id, e["sequence"], dump(e)))
        nxt = events[-1]["sequence"] + 1
        self.db.execute("UPDATE streams SET next_sequence = ? WHERE execution_id = ?", (nxt, execution_id))
        return {"firstSequence": first, "nextSequence": nxt}

    def append(self, p):
        eid, expected, events, fence = p["executionId"], p["expectedNext"], p["events"], p.get("fence")
        check_append_batch(eid, expected, events)
        s = self.stream(eid)
        check_fence(s["fence"], fence)
        if s["next"] != expected:
            raise StoreError("conflict", f"expected next sequence {expected}, the stream is at {s['next']}",
                             expectedNext=expected, actualNext=s["next"])
        return self.write(eid, events)

    def read_rows(self, execution_id, lo=0, hi=SEQUENCE_MAX):
        if not self.stream(execution_id)["live"]:
            return []
        rows = self.db.execute(
            "SELECT envelope FROM events WHERE execution_id = ? AND sequence BETWEEN ? AND ? ORDER BY sequence",
            (execution_id, lo, hi))
        return [json.loads(r[0]) for r in rows]

    def read(self, p):
        return self.read_rows(p["executionId"])

    def list_executions(self, _p):
        return [r[0] for r in self.db.execute("SELECT execution_id FROM streams WHERE live = 1 ORDER BY execution_id")]

    def read_range(self, p):
        lo, hi = p["from"], p["to"]
        check_seq("from", lo)
        check_seq("to", hi)
        if lo > hi:
            raise invalid(f"readRange from {lo} > to {hi}")
        return self.read_rows(p["executionId"], lo, hi)

    def bump_fence(self, execution_id):
        s = self.stream(execution_id)
        token = s["fence"] + 1
        if s["exists"]:
            self.db.execute("UPDATE streams SET fence = ? WHERE execution_id = ?", (token, execution_id))
        else:
            self.db.execute("INSERT INTO streams VALUES (?, 0, 0, 0, ?)", (execution_id, token))
        return token

    def acquire_fence(self, p):
        check_id("execution id", p["executionId"])
        return self.bump_fence(p["executionId"])

    def acquire_fence_if(self, p):
        eid, expected = p["executionId"], p.get("expectedCurrent")
        check_id("execution id", eid)
        current = self.stream(eid)["fence"] or None
        if current != expected:
            raise StoreError("fence-conflict", f"expected current fence {expected}, it is {current}",
                             expected=expected, current=current)
        return self.bump_fence(eid)

    def observe(self, p):
        return self.anchor(self.stream(p["executionId"]))

    def append_if_unchanged(self, p):
        eid, anchor, events = p["executionId"], p["anchor"], p["events"]
        check_append_batch(eid, anchor["nextSequence"], events)
        current = self.anchor(self.stream(eid))
        if current != anchor:
            raise StoreError("anchor-changed", f"observed {anchor}, the stream is now {current}")
        return self.write(eid, events)

    def sealing_capability(self, _p):
        return None  # this store seals nothing

    def delete_through(self, p):
        eid, through = p["executionId"], p["through"]
        check_seq("through", through)
        if not self.stream(eid)["live"]:
            raise StoreError("not-found", f"no execution {eid!r}")
        cur = self.db.execute("DELETE FROM events WHERE execution_id = ? AND sequence <= ?", (eid, through))
        return cur.rowcount

    def copy_prefix(self, p):
        src, dst, through = p["source"], p["target"], p["through"]
        check_id("source execution id", src)
        check_id("target execution id", dst)
        check_seq("through", through)
        if src == dst:
            raise invalid("copyPrefix source and target are the same execution")
        s = self.stream(src)
        if not s["live"]:
            raise StoreError("not-found", f"no execution {src!r}")
        rows = self.read_rows(src, 0, through)
        if not rows or rows[0]["sequence"] != 0:
            raise invalid("the source no longer holds sequence 0 (compacted)")
        if through >= s["next"]:
            raise invalid(f"through {through} is past the source's head ({s['next']})")
        t = self.stream(dst)
        if t["live"]:
            raise StoreError("conflict", "the target already has a stream", expectedNext=0, actualNext=t["next"])
        for e in rows:
            e["executionId"] = dst
        return self.write(dst, rows)

    def delete_execution(self, p):
        eid = p["executionId"]
        if not self.stream(eid)["live"]:
            return False
        self.db.execute("DELETE FROM events WHERE execution_id = ?", (eid,))
        self.db.execute("UPDATE streams SET live = 0, next_sequence = 0 WHERE execution_id = ?", (eid,))
        return True

    def list_executions_page(self, p):
        cursor, limit = p.get("cursor"), p["limit"]
        if not isinstance(limit, int) or limit < 1 or limit > LIST_PAGE_LIMIT_MAX:
            raise invalid(f"page limit {limit} is outside 1..={LIST_PAGE_LIMIT_MAX}")
        rows = self.db.execute(
            "SELECT execution_id FROM streams WHERE live = 1 AND execution_id > ? ORDER BY execution_id LIMIT ?",
            ("" if cursor is None else cursor, limit + 1)).fetchall()
        ids = [r[0] for r in rows[:limit]]
        return {"ids": ids, "nextCursor": ids[-1] if len(rows) > limit else None}

    # -- SnapshotStore ------------------------------------------------------------

    def snap_save(self, p):
        eid, record = p["executionId"], p["record"]
        check_id("execution id", eid)
        check_seq("snapshot sequence", record.get("sequence"))
        self.db.execute("INSERT OR REPLACE INTO snapshots VALUES (?, ?, ?)", (eid, record["sequence"], dump(record)))
        return None

    def snap_latest(self, p):
        row = self.db.execute(
            "SELECT record FROM snapshots WHERE execution_id = ? ORDER BY sequence DESC LIMIT 1",
            (p["executionId"],)).fetchone()
        return None if row is None else json.loads(row[0])

    def snap_delete(self, p):
        return self.db.execute("DELETE FROM snapshots WHERE execution_id = ?", (p["executionId"],)).rowcount

    def snap_prune(self, p):
        check_seq("throughSequence", p["throughSequence"])
        return self.db.execute("DELETE FROM snapshots WHERE execution_id = ? AND sequence <= ?",
                               (p["executionId"], p["throughSequence"])).rowcount

    def snap_list(self, p):
        return [r[0] for r in self.db.execute(
            "SELECT sequence FROM snapshots WHERE execution_id = ? ORDER BY sequence", (p["executionId"],))]

    # -- ArchiveStore ---------------------------------------------------------------

    def archive(self, p):
        eid, envelopes = p["executionId"], p["envelopes"]
        check_archive_batch(eid, envelopes)
        new = []
        for e in envelopes:
            row = self.db.execute("SELECT envelope FROM archive WHERE execution_id = ? AND sequence = ?",
                                  (eid, e["sequence"])).fetchone()
            if row is None:
                new.append(e)
            elif json.loads(row[0]) != e:
                raise StoreError("already-exists", f"a different envelope is archived at sequence {e['sequence']}")
        for e in new:
            self.db.execute("INSERT INTO archive VALUES (?, ?, ?)", (eid, e["sequence"], dump(e)))
        return len(new)

    def read_archived(self, p):
        return [json.loads(r[0]) for r in self.db.execute(
            "SELECT envelope FROM archive WHERE execution_id = ? ORDER BY sequence", (p["executionId"],))]

    def archive_delete(self, p):
        return self.db.execute("DELETE FROM archive WHERE execution_id = ?", (p["executionId"],)).rowcount

    def replace_segments(self, p):
        eid, envelopes = p["executionId"], p["envelopes"]
        check_archive_batch(eid, envelopes)
        self.db.execute("DELETE FROM archive WHERE execution_id = ?", (eid,))
        for e in envelopes:
            self.db.execute("INSERT INTO archive VALUES (?, ?, ?)", (eid, e["sequence"], dump(e)))
        return None

    # -- BranchRegistry -------------------------------------------------------------

    def branch_register(self, p):
        r = p["record"]
        check_id("execution id", r.get("executionId"))
        check_id("parent execution id", r.get("parentExecutionId"))
        check_seq("forkedAtSequence", r.get("forkedAtSequence"))
        chain = r.get("chain", [])
        if r["executionId"] == r["parentExecutionId"]:
            raise invalid("an execution cannot be its own parent")
        if len(chain) > BRANCH_CHAIN_LEN_MAX:
            raise invalid(f"chain is longer than {BRANCH_CHAIN_LEN_MAX}")
        for ancestor in chain:
            check_id("chain entry", ancestor)
            if ancestor == r["executionId"]:
                raise invalid("the execution appears in its own chain")
        if chain and chain[-1] != r["parentExecutionId"]:
            raise invalid("a non-empty chain must end with the parent")
        if self.db.execute("SELECT 1 FROM branches WHERE execution_id = ?", (r["executionId"],)).fetchone():
            raise StoreError("already-exists", f"{r['executionId']!r} is already registered")
        self.db.execute("INSERT INTO branches VALUES (?, ?, ?)", (r["executionId"], r["parentExecutionId"], dump(r)))
        return None

    def branch_get(self, p):
        row = self.db.execute("SELECT record FROM branches WHERE execution_id = ?", (p["executionId"],)).fetchone()
        return None if row is None else json.loads(row[0])

    def branch_children(self, p):
        return [json.loads(r[0]) for r in self.db.execute(
            "SELECT record FROM branches WHERE parent_execution_id = ? ORDER BY execution_id",
            (p["parentExecutionId"],))]

    # -- ExecutionDispatcher ----------------------------------------------------------
    # A FIFO queue: `queue_position` orders queued packages (NULL while leased); a
    # leased row holds its lease id, target, worker and deadline. Every time comes from
    # the caller's `nowMs`: the dispatcher never reads a clock.

    def requeue(self, dispatch_id):
        self.db.execute(
            "UPDATE dispatch SET queue_position = ?, lease_id = NULL, target = NULL, worker_id = NULL, "
            "deadline_ms = NULL WHERE dispatch_id = ?", (self.bump("queue_position"), dispatch_id))

    def expire(self, now_ms):
        ids = [r[0] for r in self.db.execute(
            "SELECT dispatch_id FROM dispatch WHERE lease_id IS NOT NULL AND deadline_ms <= ? "
            "ORDER BY dispatch_id", (now_ms,)).fetchall()]
        for dispatch_id in ids:
            self.requeue(dispatch_id)
        return ids

    def target_registered(self, name):
        return self.db.execute("SELECT 1 FROM targets WHERE name = ?", (name,)).fetchone() is not None

    def live_lease(self, lease):
        """The stored deadline of `lease` if it is still its dispatch's lease, else None."""
        row = self.db.execute("SELECT lease_id, deadline_ms FROM dispatch WHERE dispatch_id = ?",
                              (lease["dispatchId"],)).fetchone()
        if row is None or row[0] is None or row[0] != lease["leaseId"]:
            return None
        return row[1]

    def register_target(self, p):
        check_id("target", p["name"])
        return self.db.execute("INSERT OR IGNORE INTO targets VALUES (?)", (p["name"],)).rowcount == 1

    def targets(self, _p):
        return [r[0] for r in self.db.execute("SELECT name FROM targets ORDER BY name")]

    def dispatch(self, p):
        pkg = p["package"]
        check_id("execution id", pkg.get("executionId"))
        check_id("flow id", pkg.get("flowId"))
        hint, target = pkg.get("resumeHint"), pkg.get("computeTarget")
        if hint is not None and (not isinstance(hint, str) or len(hint.encode("utf-8")) > ID_BYTES_MAX):
            raise invalid(f"resume hint must be a string of at most {ID_BYTES_MAX} bytes")
        if target is not None:
            check_id("compute target", target)
            if not self.target_registered(target):
                raise StoreError("not-found", f"compute target {target!r} is not registered")
        if self.db.execute("SELECT 1 FROM dispatch WHERE execution_id = ?", (pkg["executionId"],)).fetchone():
            raise StoreError("already-exists", f"execution {pkg['executionId']!r} is already queued or leased")
        if self.db.execute("SELECT COUNT(*) FROM dispatch").fetchone()[0] >= DISPATCH_QUEUE_LEN_MAX:
            raise invalid(f"the dispatcher holds {DISPATCH_QUEUE_LEN_MAX} packages")
        dispatch_id = self.bump("dispatch")
        package = {k: pkg[k] for k in ("executionId", "flowId", "resumeHint", "computeTarget")
                   if pkg.get(k) is not None}
        self.db.execute("INSERT INTO dispatch (dispatch_id, execution_id, package, compute_target, "
                        "queue_position) VALUES (?, ?, ?, ?, ?)",
                        (dispatch_id, pkg["executionId"], dump(package), target, self.bump("queue_position")))
        return dispatch_id

    def claim(self, p):
        target, worker, now_ms = p["target"], p["workerId"], p["nowMs"]
        check_id("worker id", worker)
        check_int("nowMs", now_ms, -2**63, 2**63 - 1)
        if not self.target_registered(target):
            raise StoreError("not-found", f"target {target!r} is not registered")
        self.expire(now_ms)
        row = self.db.execute(
            "SELECT dispatch_id, package FROM dispatch WHERE queue_position IS NOT NULL "
            "AND (compute_target IS NULL OR compute_target = ?) ORDER BY queue_position LIMIT 1",
            (target,)).fetchone()
        if row is None:
            return None
        lease_id, deadline = self.bump("lease"), min(now_ms + LEASE_DURATION_MS, 2**63 - 1)
        self.db.execute("UPDATE dispatch SET queue_position = NULL, lease_id = ?, target = ?, worker_id = ?, "
                        "deadline_ms = ? WHERE dispatch_id = ?", (lease_id, target, worker, deadline, row[0]))
        return {"leaseId": lease_id, "dispatchId": row[0], "package": json.loads(row[1]),
                "target": target, "workerId": worker, "deadlineMs": deadline}

    def renew(self, p):
        lease, now_ms = p["lease"], p["nowMs"]
        deadline = self.live_lease(lease)
        if deadline is None:
            raise StoreError("lease-lost", f"lease {lease['leaseId']} is no longer live")
        if deadline <= now_ms:
            self.requeue(lease["dispatchId"])
            lost = StoreError("lease-lost", f"lease {lease['leaseId']} expired")
            lost.commit = True  # the re-queue stands even though the answer is an error
            raise lost
        new_deadline = min(now_ms + LEASE_DURATION_MS, 2**63 - 1)
        self.db.execute("UPDATE dispatch SET deadline_ms = ? WHERE dispatch_id = ?",
                        (new_deadline, lease["dispatchId"]))
        return dict(lease, deadlineMs=new_deadline)

    def complete(self, p):
        lease = p["lease"]
        if self.live_lease(lease) is None:
            raise StoreError("lease-lost", f"lease {lease['leaseId']} is no longer live")
        self.db.execute("DELETE FROM dispatch WHERE dispatch_id = ?", (lease["dispatchId"],))
        return None

    def release(self, p):
        lease = p["lease"]
        if self.live_lease(lease) is None:
            raise StoreError("lease-lost", f"lease {lease['leaseId']} is no longer live")
        self.requeue(lease["dispatchId"])
        return None

    def expire_leases(self, p):
        return self.expire(p["nowMs"])

    # -- TimerStore -------------------------------------------------------------------

    def timer_schedule(self, p):
        t = p["timer"]
        check_id("execution id", t.get("executionId"))
        check_id("timer key", t.get("key"))
        check_int("wakeAtMs", t.get("wakeAtMs"), -2**63, 2**63 - 1)
        row = self.db.execute("SELECT wake_at_ms FROM timers WHERE execution_id = ? AND key = ?",
                              (t["executionId"], t["key"])).fetchone()
        if row is not None:  # idempotent: a replayed schedule cannot move a deadline
            return {"executionId": t["executionId"], "wakeAtMs": row[0], "key": t["key"]}
        self.db.execute("INSERT INTO timers VALUES (?, ?, ?)", (t["executionId"], t["key"], t["wakeAtMs"]))
        return {"executionId": t["executionId"], "wakeAtMs": t["wakeAtMs"], "key": t["key"]}

    def timer_due(self, p):
        check_int("due limit", p["limit"], 1, TIMER_DUE_LIMIT_MAX)
        return [{"executionId": r[0], "wakeAtMs": r[1], "key": r[2]} for r in self.db.execute(
            "SELECT execution_id, wake_at_ms, key FROM timers WHERE wake_at_ms <= ? "
            "ORDER BY wake_at_ms, execution_id, key LIMIT ?", (p["nowMs"], p["limit"]))]

    def timer_cancel(self, p):
        return self.db.execute("DELETE FROM timers WHERE execution_id = ? AND key = ?",
                               (p["executionId"], p["key"])).rowcount == 1

    # -- ContentStore -----------------------------------------------------------------
    # Content is addressed by the sha256 of its bytes. Bytes put without an owner are
    # public; bytes put only by owners are readable only by a get naming one of them.

    def publish(self, data, owner):
        ref = content_ref(data)
        self.db.execute("INSERT INTO content VALUES (?, ?, ?) ON CONFLICT(digest) DO UPDATE "
                        "SET public = MAX(public, excluded.public)",
                        (ref["digest"], data, 1 if owner is None else 0))
        if owner is not None:
            self.db.execute("INSERT OR IGNORE INTO content_owners VALUES (?, ?)", (ref["digest"], owner))
        return ref

    def content_put(self, p):
        owner = p.get("owner")
        check_owner(owner)
        size = decoded_size(p["data"])
        if size > CONTENT_BYTES_MAX:
            raise invalid(f"content is {size} bytes, the limit is {CONTENT_BYTES_MAX}")
        return self.publish(b64decode(p["data"]), owner)

    def content_get(self, p):
        digest, owner = p["digest"], p.get("owner")
        check_digest(digest)
        check_owner(owner)
        row = self.db.execute(
            "SELECT bytes FROM content c WHERE c.digest = ? AND (c.public = 1 OR (? IS NOT NULL AND "
            "EXISTS (SELECT 1 FROM content_owners o WHERE o.digest = c.digest AND o.owner = ?)))",
            (digest, owner, owner)).fetchone()
        return None if row is None else base64.b64encode(row[0]).decode("ascii")

    def content_put_stream(self, p):
        owner = p.get("owner")
        check_owner(owner)
        # Chunks collect in a private buffer; nothing is written until the stream has
        # ended well, so an abort leaves no object, whole or partial (ADR 0059).
        buffer = bytearray()
        aborted = None
        for chunk in p["chunks"]:
            if "error" in chunk:
                aborted = {"kind": "chunk-error", "message": str(chunk["error"]), "bytesRead": len(buffer)}
                break
            if len(buffer) + decoded_size(chunk["data"]) > CONTENT_BYTES_MAX:
                aborted = {"kind": "too-large", "limitBytes": CONTENT_BYTES_MAX}
                break
            buffer.extend(b64decode(chunk["data"]))
        if aborted is not None:
            if self.lie_partial_stream and buffer:
                self.publish(bytes(buffer), owner)  # the deliberate bug: a prefix is kept
            return {"aborted": aborted}
        return {"stored": self.publish(bytes(buffer), owner)}

    def content_seals(self, _p):
        return False  # the bytes sit in SQLite as they were put

    # -- DurableStateStore ------------------------------------------------------------
    # Compare-and-set by version. A deleted key keeps its row (live = 0) and its last
    # version, so a re-created key continues above it and an old version never matches.

    def state_row(self, key):
        return self.db.execute("SELECT value, version, live FROM state WHERE key = ?", (key,)).fetchone()

    def state_get(self, p):
        check_id("key", p["key"])
        row = self.state_row(p["key"])
        if row is None or not row[2]:
            return None
        return {"value": json.loads(row[0]), "version": row[1]}

    def state_put(self, p):
        key, expected = p["key"], p.get("expectedVersion")
        check_id("key", key)
        text = check_document(p["value"])
        if expected is not None:
            check_seq("expectedVersion", expected)
        if expected == 0:
            expected = None  # 0 is "absent", as the conflict facts spell it (decision 0006)
        row = self.state_row(key)
        current = row[1] if row is not None and row[2] else None
        if current != expected:
            raise StoreError("conflict", f"expected version {expected or 0}, the key is at {current or 0} "
                             "(0 = absent)", expectedNext=expected or 0, actualNext=current or 0)
        version = (row[1] if row is not None else 0) + 1
        self.db.execute("INSERT INTO state VALUES (?, ?, ?, 1) ON CONFLICT(key) DO UPDATE "
                        "SET value = excluded.value, version = excluded.version, live = 1",
                        (key, text, version))
        return version

    def state_delete(self, p):
        key, expected = p["key"], p["expectedVersion"]
        check_id("key", key)
        check_seq("expectedVersion", expected)
        row = self.state_row(key)
        if row is None or not row[2]:
            raise StoreError("not-found", f"no state under {key!r}")
        if row[1] != expected:
            raise StoreError("conflict", f"expected version {expected}, the key is at {row[1]}",
                             expectedNext=expected, actualNext=row[1])
        self.db.execute("UPDATE state SET value = NULL, live = 0 WHERE key = ?", (key,))
        return None

    # -- ReadModelStore ---------------------------------------------------------------
    # Cursors are random tokens we hand out and remember (bounded), so only a cursor we
    # issued, for the collection we issued it for, is accepted; anything else is
    # invalid-argument, never a silent restart from the top.

    def rm_upsert(self, p):
        check_id("collection", p["collection"])
        check_id("document id", p["id"])
        text = check_document(p["doc"])
        self.db.execute("INSERT INTO read_models VALUES (?, ?, ?) ON CONFLICT(collection, id) DO UPDATE "
                        "SET doc = excluded.doc", (p["collection"], p["id"], text))
        return None

    def rm_get(self, p):
        check_id("collection", p["collection"])
        check_id("document id", p["id"])
        row = self.db.execute("SELECT doc FROM read_models WHERE collection = ? AND id = ?",
                              (p["collection"], p["id"])).fetchone()
        # Wrapped, because a stored document may itself be JSON null.
        return None if row is None else {"doc": json.loads(row[0])}

    def rm_query(self, p):
        collection, limit, cursor = p["collection"], p["limit"], p.get("cursor")
        check_id("collection", collection)
        check_int("query limit", limit, 1, READ_MODEL_LIMIT_MAX)
        after = None
        if cursor is not None:
            row = None
            if isinstance(cursor, str):
                row = self.db.execute("SELECT collection, last_id FROM read_model_cursors WHERE token = ?",
                                      (cursor,)).fetchone()
            if row is None:
                raise invalid("the cursor was not issued by this store (or was forgotten)")
            if row[0] != collection:
                raise invalid("the cursor was issued for another collection")
            after = row[1]
        rows = self.db.execute(
            "SELECT id, doc FROM read_models WHERE collection = ? AND (? IS NULL OR id > ?) ORDER BY id LIMIT ?",
            (collection, after, after, limit + 1)).fetchall()
        docs = [{"id": r[0], "doc": json.loads(r[1])} for r in rows[:limit]]
        next_cursor = None
        if len(rows) > limit:
            serial = self.bump("read_model_cursor")
            next_cursor = f"rm{serial}.{secrets.token_hex(8)}"
            self.db.execute("INSERT INTO read_model_cursors VALUES (?, ?, ?, ?)",
                            (serial, next_cursor, collection, docs[-1]["id"]))
            self.db.execute("DELETE FROM read_model_cursors WHERE serial <= ?", (serial - ISSUED_CURSORS_MAX,))
        return {"docs": docs, "nextCursor": next_cursor}


def handlers(store):
    return {
        "hello": store.hello,
        "reset": lambda _p: store.reset(),
        "eventStore.append": store.append,
        "eventStore.read": store.read,
        "eventStore.listExecutions": store.list_executions,
        "eventStore.readRange": store.read_range,
        "eventStore.acquireFence": store.acquire_fence,
        "eventStore.acquireFenceIf": store.acquire_fence_if,
        "eventStore.observe": store.observe,
        "eventStore.appendIfUnchanged": store.append_if_unchanged,
        "eventStore.sealingCapability": store.sealing_capability,
        "eventStore.deleteThrough": store.delete_through,
        "eventStore.copyPrefix": store.copy_prefix,
        "eventStore.deleteExecution": store.delete_execution,
        "eventStore.listExecutionsPage": store.list_executions_page,
        "snapshotStore.save": store.snap_save,
        "snapshotStore.loadLatest": store.snap_latest,
        "snapshotStore.deleteExecution": store.snap_delete,
        "snapshotStore.loadLatestSealed": store.snap_latest,  # seals nothing: same as loadLatest
        "snapshotStore.pruneSnapshots": store.snap_prune,
        "snapshotStore.listSequences": store.snap_list,
        "archiveStore.archive": store.archive,
        "archiveStore.readArchived": store.read_archived,
        "archiveStore.deleteExecution": store.archive_delete,
        "archiveStore.replaceSegments": store.replace_segments,
        "branchRegistry.register": store.branch_register,
        "branchRegistry.get": store.branch_get,
        "branchRegistry.children": store.branch_children,
        "dispatcher.registerTarget": store.register_target,
        "dispatcher.targets": store.targets,
        "dispatcher.dispatch": store.dispatch,
        "dispatcher.claim": store.claim,
        "dispatcher.renew": store.renew,
        "dispatcher.complete": store.complete,
        "dispatcher.release": store.release,
        "dispatcher.expireLeases": store.expire_leases,
        "timerStore.schedule": store.timer_schedule,
        "timerStore.due": store.timer_due,
        "timerStore.cancel": store.timer_cancel,
        "contentStore.put": store.content_put,
        "contentStore.get": store.content_get,
        "contentStore.putStream": store.content_put_stream,
        "contentStore.sealsContent": store.content_seals,
        "durableStateStore.get": store.state_get,
        "durableStateStore.put": store.state_put,
        "durableStateStore.delete": store.state_delete,
        "readModelStore.upsert": store.rm_upsert,
        "readModelStore.get": store.rm_get,
        "readModelStore.query": store.rm_query,
    }


def main(argv):
    path, lie, lie_partial_stream = ":memory:", False, False
    args = list(argv[1:])
    while args:
        arg = args.pop(0)
        if arg == "--db" and args:
            path = args.pop(0)
        elif arg == "--lease-ms" and args:
            global LEASE_DURATION_MS
            LEASE_DURATION_MS = int(args.pop(0))
        elif arg == "--lie":
            lie = True
        elif arg == "--lie-partial-stream":
            lie_partial_stream = True
        else:
            print(f"unknown argument {arg!r}", file=sys.stderr)
            return 2
    store = Store(path, lie, lie_partial_stream)
    table = handlers(store)
    # Methods that only read or that manage the session run outside a transaction.
    no_tx = {"hello", "reset"}
    for line in sys.stdin:
        if not line.strip():
            continue
        request_id = None
        try:
            request = json.loads(line)
            request_id = request.get("id")
            method = request.get("method")
            params = request.get("params") or {}
            fn = table.get(method)
            if store.db is None and method != "hello":
                store.open(0)  # a request before hello: serve it as the only client
            if fn is None:
                raise StoreError("unsupported", f"method {method!r} is not implemented",
                                 method=method.split(".")[-1] if isinstance(method, str) else "")
            result = fn(params) if method in no_tx else store.tx(fn, params)
            response = {"id": request_id, "result": result}
        except StoreError as e:
            response = {"id": request_id, "error": e.to_json()}
        except (KeyError, TypeError, ValueError) as e:
            response = {"id": request_id, "error": {"kind": "invalid-argument", "message": f"bad params: {e!r}"}}
        except sqlite3.Error as e:
            response = {"id": request_id, "error": {"kind": "backend", "message": str(e)}}
        sys.stdout.write(json.dumps(response, separators=(",", ":")) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
