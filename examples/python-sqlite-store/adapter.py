#!/usr/bin/env python3
"""A Loom store adapter over SQLite, speaking the stdio store protocol.

This is the template a store author copies: replace the SQL with calls to your
backend and keep the protocol plumbing. Standard library only (json, sqlite3, sys).

Protocol (docs/protocols/store.md): one JSON request per line on stdin,
one JSON response per line on stdout, answered in order:

    {"id": 1, "method": "eventStore.append", "params": {...}}
    {"id": 1, "result": {...}}       or       {"id": 1, "error": {"kind": "conflict", ...}}

Logs go to stderr; stdout carries protocol lines only.

Usage: python3 adapter.py [--db PATH] [--lie]
  --db PATH   keep the data in PATH (default: an in-memory database)
  --lie       claim `storeNow` without implementing it (a deliberately broken
              adapter, for the kit meta-tests: the probe must catch it)
"""

import json
import sqlite3
import sys

PROTOCOL_VERSION = "1.0"
EVENT_STORE_SPI_VERSION = "2.6.0"
SNAPSHOT_STORE_SPI_VERSION = "1.3.0"
ARCHIVE_STORE_SPI_VERSION = "1.1.0"
BRANCH_REGISTRY_SPI_VERSION = "1.0.0"

# Limits, the same as the reference stores (loom_kernel::spi).
APPEND_BATCH_EVENTS_MAX = 10_000
LIST_PAGE_LIMIT_MAX = 10_000
ID_BYTES_MAX = 1024
SEQUENCE_MAX = 2**63 - 1
BRANCH_CHAIN_LEN_MAX = 1024

EVENT_METHODS = [
    "readRange", "acquireFence", "acquireFenceIf", "appendIfUnchanged",
    "deleteThrough", "sealingCapability", "copyPrefix", "deleteExecution",
    "listExecutionsPage",
]
SNAPSHOT_METHODS = ["deleteExecution", "loadLatestSealed", "pruneSnapshots", "listSequences"]
ARCHIVE_METHODS = ["deleteExecution", "replaceSegments"]

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
"""

TABLES = ["streams", "events", "counters", "snapshots", "archive", "branches"]
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
    if not events:
        raise invalid("an append must carry at least one event")
    if len(events) > APPEND_BATCH_EVENTS_MAX:
        raise invalid(f"more than {APPEND_BATCH_EVENTS_MAX} events in one append")
    for idx, e in enumerate(events):
        if e.get("executionId") != execution_id:
            raise invalid(f"event {idx} names another execution")
        if e.get("sequence") != first + idx:
            raise invalid(f"event {idx} has sequence {e.get('sequence')}, expected {first + idx}")


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


def dump(value):
    # Compact and key order kept: the kits compare parsed JSON, never bytes, but keeping
    # what we were given is the honest default for a log.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class Store:
    def __init__(self, path, lie):
        self.path = path
        self.lie = lie
        self.db = None
        self.reset()

    def reset(self):
        # Called before every kit case, so it must be cheap: the connection and the
        # schema are kept, and every table is emptied in one transaction. A case
        # therefore starts from exactly the state of a fresh database (counters
        # included, so incarnations restart), without paying to reparse the schema
        # (dropping and re-creating the tables cost about 5x more per case).
        if self.db is None:
            # isolation_level=None: we open every transaction ourselves (BEGIN
            # IMMEDIATE), so each request is all or nothing.
            self.db = sqlite3.connect(self.path, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=MEMORY")
            for table in TABLES:
                self.db.execute(f"DROP TABLE IF EXISTS {table}")
            self.db.executescript(SCHEMA)
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
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")
        return result

    def hello(self, _params):
        event_methods = list(EVENT_METHODS)
        if self.lie:
            event_methods.append("storeNow")
        return {
            "name": "python-sqlite-store",
            "version": "0.1.0",
            "protocolVersion": PROTOCOL_VERSION,
            "spis": {
                "eventStore": {"spiVersion": EVENT_STORE_SPI_VERSION, "methods": event_methods},
                "snapshotStore": {"spiVersion": SNAPSHOT_STORE_SPI_VERSION, "methods": SNAPSHOT_METHODS},
                "archiveStore": {"spiVersion": ARCHIVE_STORE_SPI_VERSION, "methods": ARCHIVE_METHODS},
                "branchRegistry": {"spiVersion": BRANCH_REGISTRY_SPI_VERSION, "methods": []},
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

    def new_incarnation(self):
        self.db.execute("INSERT OR IGNORE INTO counters VALUES ('incarnation', 0)")
        self.db.execute("UPDATE counters SET value = value + 1 WHERE name = 'incarnation'")
        return self.db.execute("SELECT value FROM counters WHERE name = 'incarnation'").fetchone()[0]

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
    }


def main(argv):
    path, lie = ":memory:", False
    args = list(argv[1:])
    while args:
        arg = args.pop(0)
        if arg == "--db" and args:
            path = args.pop(0)
        elif arg == "--lie":
            lie = True
        else:
            print(f"unknown argument {arg!r}", file=sys.stderr)
            return 2
    store = Store(path, lie)
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
