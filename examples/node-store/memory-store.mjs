// @ts-check
// An in-memory Loom store: every SPI of the stdio store protocol 1.1 (EventStore,
// SnapshotStore, ArchiveStore, BranchRegistry, ExecutionDispatcher, TimerStore,
// ContentStore, DurableStateStore, ReadModelStore), in plain JavaScript.
//
// Replace the Maps with calls to your backend, one SPI at a time. Two habits keep it
// passing the kits:
//
//   1. Every method checks everything before it changes anything, so a refused request
//      writes nothing (with a database: one transaction per request).
//   2. Sequences, fences, versions and times are BigInts inside, because the contract
//      allows values up to 2^63 - 1 and a JS number is exact only up to 2^53 - 1. They
//      go back on the wire through `wire()`, as a number when it is exact.

import { createHash, randomBytes } from "node:crypto";
import { equal, stringify } from "./json.mjs";
import { PROTOCOL_VERSION, StoreError, invalid } from "./protocol.mjs";

// Limits, the same as the reference stores (loom_kernel::spi).
const APPEND_BATCH_EVENTS_MAX = 10_000;
const LIST_PAGE_LIMIT_MAX = 10_000;
const ID_BYTES_MAX = 1024;
const SEQUENCE_MAX = 2n ** 63n - 1n;
const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;
const BRANCH_CHAIN_LEN_MAX = 1024;
const DISPATCH_QUEUE_LEN_MAX = 1_000_000;
const LEASE_DURATION_MS = 30_000n; // how long a claim lasts; a renew extends it by as much
const TIMER_DUE_LIMIT_MAX = 10_000;
const CONTENT_BYTES_MAX = 8 * 1024 * 1024;
const DOCUMENT_BYTES_MAX = 1024 * 1024;
const READ_MODEL_LIMIT_MAX = 1_000;
// Read-model cursors remembered; the oldest are forgotten first (a client holding one
// gets invalid-argument and starts over). Bounded so the table cannot grow forever.
const ISSUED_CURSORS_MAX = 10_000;
const DIGEST = /^sha256:[0-9a-f]{64}$/;

export const EVENT_METHODS = [
  "readRange",
  "acquireFence",
  "acquireFenceIf",
  "appendIfUnchanged",
  "deleteThrough",
  "sealingCapability",
  "copyPrefix",
  "deleteExecution",
  "listExecutionsPage",
];
const SNAPSHOT_METHODS = ["deleteExecution", "loadLatestSealed", "pruneSnapshots", "listSequences"];
const ARCHIVE_METHODS = ["deleteExecution", "replaceSegments"];
const CONTENT_METHODS = ["putStream", "contentAccess", "sealsContent"];

// ---- values ---------------------------------------------------------------------------

/** An integer parameter as a BigInt, or null when it is not an integer. @param {any} v */
const big = (v) =>
  typeof v === "bigint" ? v : typeof v === "number" && Number.isInteger(v) ? BigInt(v) : null;

/** A BigInt for the wire: a number when a double holds it exactly. @param {bigint} b */
const wire = (b) => (b >= -(2n ** 53n) + 1n && b <= 2n ** 53n - 1n ? Number(b) : b);

/** Ids sort by their UTF-8 bytes, as the contract says (not by UTF-16 units). */
const byBytes = (/** @type {string} */ a, /** @type {string} */ b) =>
  Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));

/** @param {string} what @param {any} v */
function checkId(what, v) {
  if (typeof v !== "string" || v === "") throw invalid(`${what} must be a non-empty string`);
  if (Buffer.byteLength(v, "utf8") > ID_BYTES_MAX) {
    throw invalid(`${what} is longer than ${ID_BYTES_MAX} bytes`);
  }
  return v;
}

/** @param {string} what @param {any} v @param {bigint} lo @param {bigint} hi */
function checkInt(what, v, lo, hi) {
  const b = big(v);
  if (b === null || b < lo || b > hi) throw invalid(`${what} must be an integer in ${lo}..=${hi}`);
  return b;
}

/** @param {string} what @param {any} v */
const checkSeq = (what, v) => checkInt(what, v, 0n, SEQUENCE_MAX);

/** @param {any} v */
function checkDocument(v) {
  if (Buffer.byteLength(stringify(v), "utf8") > DOCUMENT_BYTES_MAX) {
    throw invalid(`the document is longer than ${DOCUMENT_BYTES_MAX} bytes`);
  }
}

/** Strict base64: decoding and re-encoding must give the same text. @param {any} text */
function b64decode(text) {
  if (typeof text !== "string") throw invalid("content must be a base64 string");
  const bytes = Buffer.from(text, "base64");
  if (bytes.toString("base64") !== text) throw invalid("content is not padded standard base64");
  return bytes;
}

/** How many bytes base64 `text` decodes to, before decoding it. @param {any} text */
function decodedSize(text) {
  if (typeof text !== "string") throw invalid("content must be a base64 string");
  const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  return Math.floor(text.length / 4) * 3 - padding;
}

/** @param {Buffer} bytes */
const contentRef = (bytes) => ({
  digest: `sha256:${createHash("sha256").update(bytes).digest("hex")}`,
  size: bytes.length,
});

// ---- the store ------------------------------------------------------------------------

/**
 * @typedef {{live: boolean, incarnation: number, next: bigint, fence: bigint, events: any[]}} Stream
 * @typedef {{executionId: string, package: any, computeTarget: string | null,
 *   queuePosition: number | null, leaseId: number | null, target: string | null,
 *   workerId: string | null, deadlineMs: bigint | null}} Dispatch
 */

export class MemoryStore {
  /** @param {{lie?: boolean}} [options] lie: claim storeNow without implementing it */
  constructor(options = {}) {
    this.lie = options.lie ?? false;
    this.reset();
  }

  /** Drops every piece of state, counters included (called before every case). */
  reset() {
    /** @type {Map<string, Stream>} */
    this.streams = new Map();
    this.counters = { incarnation: 0, queuePosition: 0, dispatch: 0, lease: 0, cursor: 0 };
    /** @type {Map<string, Map<bigint, any>>} */
    this.snapshots = new Map();
    /** @type {Map<string, Map<bigint, any>>} */
    this.archives = new Map();
    /** @type {Map<string, any>} */
    this.branches = new Map();
    /** @type {Set<string>} */
    this.targetNames = new Set();
    /** @type {Map<number, Dispatch>} */
    this.dispatches = new Map();
    /** @type {Map<string, Map<string, bigint>>} */
    this.timers = new Map();
    /** @type {Map<string, {bytes: Buffer, public: boolean, owners: Set<string>}>} */
    this.content = new Map();
    /** @type {Map<string, {value: any, version: bigint, live: boolean}>} */
    this.state = new Map();
    /** @type {Map<string, Map<string, any>>} */
    this.readModels = new Map();
    /** @type {Map<string, {collection: string, lastId: string}>} */
    this.cursors = new Map();
  }

  hello() {
    const eventMethods = this.lie ? [...EVENT_METHODS, "storeNow"] : EVENT_METHODS;
    return {
      name: "node-memory-store",
      version: "0.1.0",
      protocolVersion: PROTOCOL_VERSION,
      spis: {
        eventStore: { spiVersion: "2.6.0", methods: eventMethods },
        snapshotStore: { spiVersion: "1.3.0", methods: SNAPSHOT_METHODS },
        archiveStore: { spiVersion: "1.1.0", methods: ARCHIVE_METHODS },
        branchRegistry: { spiVersion: "1.0.0", methods: [] },
        dispatcher: { spiVersion: "1.0.0", methods: [] },
        timerStore: { spiVersion: "1.0.0", methods: [] },
        contentStore: { spiVersion: "1.5.0", methods: CONTENT_METHODS },
        durableStateStore: { spiVersion: "1.0.0", methods: [] },
        readModelStore: { spiVersion: "1.0.0", methods: [] },
      },
    };
  }

  /** The wire methods, by name. @returns {Record<string, (p: any) => any>} */
  methods() {
    /** @type {Record<string, (p: any) => any>} */
    const table = {};
    for (const [prefix, names] of Object.entries(METHODS)) {
      for (const [wireName, fn] of Object.entries(names)) {
        table[`${prefix}.${wireName}`] = (p) => fn.call(this, p);
      }
    }
    return table;
  }

  // ---- EventStore -----------------------------------------------------------------

  /** @param {string} id @returns {Stream} */
  stream(id) {
    return this.streams.get(id) ?? { live: false, incarnation: 0, next: 0n, fence: 0n, events: [] };
  }

  /** @param {Stream} s */
  anchor(s) {
    return { incarnation: s.incarnation, nextSequence: wire(s.live ? s.next : 0n), fence: wire(s.fence) };
  }

  /** @param {string} id @param {bigint} first @param {any} events */
  checkBatch(id, first, events) {
    checkId("execution id", id);
    if (!Array.isArray(events) || events.length === 0) {
      throw invalid("an append must carry at least one event");
    }
    if (events.length > APPEND_BATCH_EVENTS_MAX) {
      throw invalid(`more than ${APPEND_BATCH_EVENTS_MAX} events in one append`);
    }
    events.forEach((e, i) => {
      if (e?.executionId !== id) throw invalid(`event ${i} names another execution`);
      if (big(e.sequence) !== first + BigInt(i)) {
        throw invalid(`event ${i} has sequence ${e.sequence}, expected ${first + BigInt(i)}`);
      }
    });
  }

  /** Appends a checked batch, creating the stream (a new incarnation) if it is not live.
   * @param {string} id @param {any[]} events */
  write(id, events) {
    let s = this.streams.get(id);
    if (!s || !s.live) {
      const fence = s?.fence ?? 0n;
      s = { live: true, incarnation: ++this.counters.incarnation, next: 0n, fence, events: [] };
      this.streams.set(id, s);
    }
    const first = s.next;
    s.events.push(...events);
    s.next = /** @type {bigint} */ (big(events[events.length - 1].sequence)) + 1n;
    return { firstSequence: wire(first), nextSequence: wire(s.next) };
  }

  /** @param {any} p */
  append(p) {
    const id = p.executionId;
    const expected = checkSeq("expectedNext", p.expectedNext);
    this.checkBatch(id, expected, p.events);
    const s = this.stream(id);
    const presented = p.fence ?? null;
    const ok = presented === null ? s.fence === 0n : s.fence !== 0n && big(presented) === s.fence;
    if (!ok) {
      throw new StoreError("fenced", `append presented fence ${presented}, the current fence is ${s.fence}`, {
        presented,
        current: wire(s.fence),
      });
    }
    const next = s.live ? s.next : 0n;
    if (next !== expected) {
      throw new StoreError("conflict", `expected next sequence ${expected}, the stream is at ${next}`, {
        expectedNext: wire(expected),
        actualNext: wire(next),
      });
    }
    return this.write(id, p.events);
  }

  /** @param {string} id @param {bigint} lo @param {bigint} hi */
  readRows(id, lo = 0n, hi = SEQUENCE_MAX) {
    const s = this.stream(id);
    if (!s.live) return [];
    return s.events.filter((e) => {
      const seq = /** @type {bigint} */ (big(e.sequence));
      return seq >= lo && seq <= hi;
    });
  }

  /** @param {any} p */
  read(p) {
    return this.readRows(p.executionId);
  }

  listExecutions() {
    return [...this.streams].filter(([, s]) => s.live).map(([id]) => id).sort(byBytes);
  }

  /** @param {any} p */
  readRange(p) {
    const lo = checkSeq("from", p.from);
    const hi = checkSeq("to", p.to);
    if (lo > hi) throw invalid(`readRange from ${lo} > to ${hi}`);
    return this.readRows(p.executionId, lo, hi);
  }

  /** @param {string} id */
  bumpFence(id) {
    const s = this.streams.get(id);
    if (s) {
      s.fence += 1n;
      return wire(s.fence);
    }
    this.streams.set(id, { live: false, incarnation: 0, next: 0n, fence: 1n, events: [] });
    return 1;
  }

  /** @param {any} p */
  acquireFence(p) {
    return this.bumpFence(checkId("execution id", p.executionId));
  }

  /** @param {any} p */
  acquireFenceIf(p) {
    const id = checkId("execution id", p.executionId);
    const expected = p.expectedCurrent ?? null;
    const fence = this.stream(id).fence;
    const current = fence === 0n ? null : fence;
    if ((expected === null) !== (current === null) || (expected !== null && big(expected) !== current)) {
      throw new StoreError("fence-conflict", `expected current fence ${expected}, it is ${current}`, {
        expected,
        current: current === null ? null : wire(current),
      });
    }
    return this.bumpFence(id);
  }

  /** @param {any} p */
  observe(p) {
    return this.anchor(this.stream(p.executionId));
  }

  /** @param {any} p */
  appendIfUnchanged(p) {
    const id = p.executionId;
    const given = p.anchor;
    const first = checkSeq("anchor.nextSequence", given?.nextSequence);
    this.checkBatch(id, first, p.events);
    const now = this.anchor(this.stream(id));
    const same = ["incarnation", "nextSequence", "fence"].every(
      (k) => big(given[k]) !== null && big(given[k]) === big(/** @type {any} */ (now)[k]),
    );
    if (!same || Object.keys(given).length !== 3) {
      throw new StoreError("anchor-changed", `observed ${stringify(given)}, the stream is now ${stringify(now)}`);
    }
    return this.write(id, p.events);
  }

  sealingCapability() {
    return null; // this store seals nothing
  }

  /** @param {any} p */
  deleteThrough(p) {
    const through = checkSeq("through", p.through);
    const s = this.stream(p.executionId);
    if (!s.live) throw new StoreError("not-found", `no execution ${p.executionId}`);
    const before = s.events.length;
    s.events = s.events.filter((e) => /** @type {bigint} */ (big(e.sequence)) > through);
    return before - s.events.length;
  }

  /** @param {any} p */
  copyPrefix(p) {
    const src = checkId("source execution id", p.source);
    const dst = checkId("target execution id", p.target);
    const through = checkSeq("through", p.through);
    if (src === dst) throw invalid("copyPrefix source and target are the same execution");
    const s = this.stream(src);
    if (!s.live) throw new StoreError("not-found", `no execution ${src}`);
    const rows = this.readRows(src, 0n, through);
    if (rows.length === 0 || big(rows[0].sequence) !== 0n) {
      throw invalid("the source no longer holds sequence 0 (compacted)");
    }
    if (through >= s.next) throw invalid(`through ${through} is past the source's head (${s.next})`);
    const t = this.stream(dst);
    if (t.live) {
      throw new StoreError("conflict", "the target already has a stream", {
        expectedNext: 0,
        actualNext: wire(t.next),
      });
    }
    return this.write(
      dst,
      rows.map((e) => ({ ...e, executionId: dst })),
    );
  }

  /** @param {any} p */
  deleteExecution(p) {
    const s = this.streams.get(p.executionId);
    if (!s || !s.live) return false;
    s.live = false;
    s.next = 0n;
    s.events = [];
    return true;
  }

  /** @param {any} p */
  listExecutionsPage(p) {
    const limit = Number(checkInt("page limit", p.limit, 1n, BigInt(LIST_PAGE_LIMIT_MAX)));
    const cursor = p.cursor ?? null;
    if (cursor !== null && typeof cursor !== "string") throw invalid("cursor must be a string or null");
    const ids = this.listExecutions().filter((id) => cursor === null || byBytes(id, cursor) > 0);
    const page = ids.slice(0, limit);
    return { ids: page, nextCursor: ids.length > limit ? page[page.length - 1] : null };
  }

  // ---- SnapshotStore --------------------------------------------------------------

  /** @param {any} p */
  snapSave(p) {
    const id = checkId("execution id", p.executionId);
    const seq = checkSeq("snapshot sequence", p.record?.sequence);
    if (!this.snapshots.has(id)) this.snapshots.set(id, new Map());
    this.snapshots.get(id)?.set(seq, p.record);
    return null;
  }

  /** @param {string} id */
  snapSequences(id) {
    return [...(this.snapshots.get(id)?.keys() ?? [])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /** @param {any} p */
  snapLatest(p) {
    const seqs = this.snapSequences(p.executionId);
    return seqs.length ? this.snapshots.get(p.executionId)?.get(seqs[seqs.length - 1]) : null;
  }

  /** @param {any} p */
  snapDelete(p) {
    const n = this.snapshots.get(p.executionId)?.size ?? 0;
    this.snapshots.delete(p.executionId);
    return n;
  }

  /** @param {any} p */
  snapPrune(p) {
    const through = checkSeq("throughSequence", p.throughSequence);
    const snaps = this.snapshots.get(p.executionId);
    let n = 0;
    for (const seq of [...(snaps?.keys() ?? [])]) {
      if (seq <= through) {
        snaps?.delete(seq);
        n++;
      }
    }
    return n;
  }

  /** @param {any} p */
  snapList(p) {
    return this.snapSequences(p.executionId).map(wire);
  }

  // ---- ArchiveStore ---------------------------------------------------------------

  /** @param {string} id @param {any} envelopes */
  checkArchiveBatch(id, envelopes) {
    checkId("execution id", id);
    if (!Array.isArray(envelopes)) throw invalid("envelopes must be an array");
    if (envelopes.length > APPEND_BATCH_EVENTS_MAX) {
      throw invalid(`more than ${APPEND_BATCH_EVENTS_MAX} envelopes in one call`);
    }
    /** @type {bigint | null} */
    let previous = null;
    envelopes.forEach((e, i) => {
      if (e?.executionId !== id) throw invalid(`envelope ${i} names another execution`);
      const seq = checkSeq("sequence", e.sequence);
      if (previous !== null && seq <= previous) {
        throw invalid(`envelope ${i}: sequences must be strictly ascending`);
      }
      previous = seq;
    });
  }

  /** @param {any} p */
  archive(p) {
    const id = p.executionId;
    this.checkArchiveBatch(id, p.envelopes);
    const stored = this.archives.get(id) ?? new Map();
    const fresh = [];
    for (const e of p.envelopes) {
      const old = stored.get(/** @type {bigint} */ (big(e.sequence)));
      if (old === undefined) fresh.push(e);
      else if (!equal(old, e)) {
        throw new StoreError("already-exists", `a different envelope is archived at sequence ${e.sequence}`);
      }
    }
    for (const e of fresh) stored.set(/** @type {bigint} */ (big(e.sequence)), e);
    this.archives.set(id, stored);
    return fresh.length;
  }

  /** @param {any} p */
  readArchived(p) {
    const stored = this.archives.get(p.executionId);
    if (!stored) return [];
    return [...stored.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map((k) => stored.get(k));
  }

  /** @param {any} p */
  archiveDelete(p) {
    const n = this.archives.get(p.executionId)?.size ?? 0;
    this.archives.delete(p.executionId);
    return n;
  }

  /** @param {any} p */
  replaceSegments(p) {
    this.checkArchiveBatch(p.executionId, p.envelopes);
    this.archives.set(
      p.executionId,
      new Map(p.envelopes.map((/** @type {any} */ e) => [big(e.sequence), e])),
    );
    return null;
  }

  // ---- BranchRegistry -------------------------------------------------------------

  /** @param {any} p */
  branchRegister(p) {
    const r = p.record;
    const id = checkId("execution id", r?.executionId);
    const parent = checkId("parent execution id", r.parentExecutionId);
    checkSeq("forkedAtSequence", r.forkedAtSequence);
    const chain = r.chain ?? [];
    if (!Array.isArray(chain)) throw invalid("chain must be an array");
    if (id === parent) throw invalid("an execution cannot be its own parent");
    if (chain.length > BRANCH_CHAIN_LEN_MAX) throw invalid(`chain is longer than ${BRANCH_CHAIN_LEN_MAX}`);
    for (const ancestor of chain) {
      checkId("chain entry", ancestor);
      if (ancestor === id) throw invalid("the execution appears in its own chain");
    }
    if (chain.length && chain[chain.length - 1] !== parent) {
      throw invalid("a non-empty chain must end with the parent");
    }
    if (this.branches.has(id)) throw new StoreError("already-exists", `${id} is already registered`);
    this.branches.set(id, r);
    return null;
  }

  /** @param {any} p */
  branchGet(p) {
    return this.branches.get(p.executionId) ?? null;
  }

  /** @param {any} p */
  branchChildren(p) {
    return [...this.branches.values()]
      .filter((r) => r.parentExecutionId === p.parentExecutionId)
      .sort((a, b) => byBytes(a.executionId, b.executionId));
  }

  // ---- ExecutionDispatcher ----------------------------------------------------------
  // A FIFO queue: `queuePosition` orders queued packages (null while leased). Every
  // time comes from the caller's `nowMs`: the dispatcher never reads a clock.

  /** @param {Dispatch} d */
  requeue(d) {
    Object.assign(d, {
      queuePosition: ++this.counters.queuePosition,
      leaseId: null,
      target: null,
      workerId: null,
      deadlineMs: null,
    });
  }

  /** Re-queues every lease whose deadline has passed; their dispatch ids, ascending.
   * @param {bigint} now */
  expire(now) {
    const expired = [...this.dispatches]
      .filter(([, d]) => d.leaseId !== null && /** @type {bigint} */ (d.deadlineMs) <= now)
      .sort(([a], [b]) => a - b);
    for (const [, d] of expired) this.requeue(d);
    return expired.map(([id]) => id);
  }

  /** The stored dispatch of `lease` if it is still its live lease. @param {any} lease */
  liveLease(lease) {
    const d = this.dispatches.get(lease?.dispatchId);
    return d && d.leaseId !== null && d.leaseId === lease.leaseId ? d : null;
  }

  /** @param {any} p */
  registerTarget(p) {
    const name = checkId("target", p.name);
    const fresh = !this.targetNames.has(name);
    this.targetNames.add(name);
    return fresh;
  }

  targets() {
    return [...this.targetNames].sort(byBytes);
  }

  /** @param {any} p */
  dispatch(p) {
    const pkg = p.package;
    const executionId = checkId("execution id", pkg?.executionId);
    checkId("flow id", pkg.flowId);
    const hint = pkg.resumeHint ?? null;
    const target = pkg.computeTarget ?? null;
    if (hint !== null && (typeof hint !== "string" || Buffer.byteLength(hint, "utf8") > ID_BYTES_MAX)) {
      throw invalid(`resume hint must be a string of at most ${ID_BYTES_MAX} bytes`);
    }
    if (target !== null) {
      checkId("compute target", target);
      if (!this.targetNames.has(target)) {
        throw new StoreError("not-found", `compute target ${target} is not registered`);
      }
    }
    if ([...this.dispatches.values()].some((d) => d.executionId === executionId)) {
      throw new StoreError("already-exists", `execution ${executionId} is already queued or leased`);
    }
    if (this.dispatches.size >= DISPATCH_QUEUE_LEN_MAX) {
      throw invalid(`the dispatcher holds ${DISPATCH_QUEUE_LEN_MAX} packages`);
    }
    const id = ++this.counters.dispatch;
    /** @type {Record<string, any>} */
    const stored = { executionId, flowId: pkg.flowId };
    if (hint !== null) stored.resumeHint = hint;
    if (target !== null) stored.computeTarget = target;
    this.dispatches.set(id, {
      executionId,
      package: stored,
      computeTarget: target,
      queuePosition: ++this.counters.queuePosition,
      leaseId: null,
      target: null,
      workerId: null,
      deadlineMs: null,
    });
    return id;
  }

  /** @param {any} p */
  claim(p) {
    const worker = checkId("worker id", p.workerId);
    const now = checkInt("nowMs", p.nowMs, I64_MIN, I64_MAX);
    if (!this.targetNames.has(p.target)) throw new StoreError("not-found", `target ${p.target} is not registered`);
    this.expire(now);
    let best = null;
    for (const [id, d] of this.dispatches) {
      if (d.queuePosition === null) continue;
      if (d.computeTarget !== null && d.computeTarget !== p.target) continue;
      if (!best || d.queuePosition < /** @type {number} */ (best[1].queuePosition)) best = [id, d];
    }
    if (!best) return null;
    const [dispatchId, d] = /** @type {[number, Dispatch]} */ (best);
    const deadline = now + LEASE_DURATION_MS > I64_MAX ? I64_MAX : now + LEASE_DURATION_MS;
    Object.assign(d, {
      queuePosition: null,
      leaseId: ++this.counters.lease,
      target: p.target,
      workerId: worker,
      deadlineMs: deadline,
    });
    return {
      leaseId: d.leaseId,
      dispatchId,
      package: d.package,
      target: p.target,
      workerId: worker,
      deadlineMs: wire(deadline),
    };
  }

  /** @param {any} p */
  renew(p) {
    const now = checkInt("nowMs", p.nowMs, I64_MIN, I64_MAX);
    const d = this.liveLease(p.lease);
    if (!d) throw new StoreError("lease-lost", `lease ${p.lease?.leaseId} is no longer live`);
    if (/** @type {bigint} */ (d.deadlineMs) <= now) {
      this.requeue(d); // the re-queue stands even though the answer is an error
      throw new StoreError("lease-lost", `lease ${p.lease.leaseId} expired`);
    }
    d.deadlineMs = now + LEASE_DURATION_MS > I64_MAX ? I64_MAX : now + LEASE_DURATION_MS;
    return { ...p.lease, deadlineMs: wire(d.deadlineMs) };
  }

  /** @param {any} p */
  complete(p) {
    if (!this.liveLease(p.lease)) {
      throw new StoreError("lease-lost", `lease ${p.lease?.leaseId} is no longer live`);
    }
    this.dispatches.delete(p.lease.dispatchId);
    return null;
  }

  /** @param {any} p */
  release(p) {
    const d = this.liveLease(p.lease);
    if (!d) throw new StoreError("lease-lost", `lease ${p.lease?.leaseId} is no longer live`);
    this.requeue(d);
    return null;
  }

  /** @param {any} p */
  expireLeases(p) {
    return this.expire(checkInt("nowMs", p.nowMs, I64_MIN, I64_MAX));
  }

  // ---- TimerStore -------------------------------------------------------------------

  /** @param {any} p */
  timerSchedule(p) {
    const t = p.timer;
    const id = checkId("execution id", t?.executionId);
    const key = checkId("timer key", t.key);
    const wakeAt = checkInt("wakeAtMs", t.wakeAtMs, I64_MIN, I64_MAX);
    const mine = this.timers.get(id) ?? new Map();
    const stored = mine.get(key);
    if (stored !== undefined) {
      // Idempotent: a replayed schedule cannot move a deadline.
      return { executionId: id, wakeAtMs: wire(stored), key };
    }
    mine.set(key, wakeAt);
    this.timers.set(id, mine);
    return { executionId: id, wakeAtMs: wire(wakeAt), key };
  }

  /** @param {any} p */
  timerDue(p) {
    const limit = Number(checkInt("due limit", p.limit, 1n, BigInt(TIMER_DUE_LIMIT_MAX)));
    const now = checkInt("nowMs", p.nowMs, I64_MIN, I64_MAX);
    const due = [];
    for (const [executionId, mine] of this.timers) {
      for (const [key, wakeAt] of mine) {
        if (wakeAt <= now) due.push({ executionId, key, wakeAt });
      }
    }
    due.sort(
      (a, b) =>
        (a.wakeAt < b.wakeAt ? -1 : a.wakeAt > b.wakeAt ? 1 : 0) ||
        byBytes(a.executionId, b.executionId) ||
        byBytes(a.key, b.key),
    );
    return due
      .slice(0, limit)
      .map((t) => ({ executionId: t.executionId, wakeAtMs: wire(t.wakeAt), key: t.key }));
  }

  /** @param {any} p */
  timerCancel(p) {
    return this.timers.get(p.executionId)?.delete(p.key) ?? false;
  }

  // ---- ContentStore ---------------------------------------------------------------
  // Addressed by the sha256 of the bytes. Bytes put without an owner are public; bytes
  // put only by owners are readable only by a get naming one of them.

  /** @param {Buffer} bytes @param {string | null} owner */
  publish(bytes, owner) {
    const ref = contentRef(bytes);
    const entry = this.content.get(ref.digest) ?? { bytes, public: false, owners: new Set() };
    if (owner === null) entry.public = true;
    else entry.owners.add(owner);
    this.content.set(ref.digest, entry);
    return ref;
  }

  /** @param {any} owner @returns {string | null} */
  checkOwner(owner) {
    return owner === null || owner === undefined ? null : checkId("owner", owner);
  }

  /** @param {any} p */
  contentPut(p) {
    const owner = this.checkOwner(p.owner);
    const size = decodedSize(p.data);
    if (size > CONTENT_BYTES_MAX) throw invalid(`content is ${size} bytes, the limit is ${CONTENT_BYTES_MAX}`);
    return this.publish(b64decode(p.data), owner);
  }

  /** @param {any} p */
  contentGet(p) {
    if (typeof p.digest !== "string" || !DIGEST.test(p.digest)) {
      throw invalid(`${stringify(p.digest)} is not sha256:<64 lowercase hex>`);
    }
    const owner = this.checkOwner(p.owner);
    const entry = this.content.get(p.digest);
    if (!entry || !(entry.public || (owner !== null && entry.owners.has(owner)))) return null;
    return entry.bytes.toString("base64");
  }

  /** All or nothing (ADR 0059): chunks collect privately until the stream ends well.
   * @param {any} p */
  contentPutStream(p) {
    const owner = this.checkOwner(p.owner);
    const parts = [];
    let read = 0;
    for (const chunk of p.chunks) {
      if (Object.prototype.hasOwnProperty.call(chunk, "error")) {
        return { aborted: { kind: "chunk-error", message: String(chunk.error), bytesRead: read } };
      }
      if (read + decodedSize(chunk.data) > CONTENT_BYTES_MAX) {
        return { aborted: { kind: "too-large", limitBytes: CONTENT_BYTES_MAX } };
      }
      const bytes = b64decode(chunk.data);
      parts.push(bytes);
      read += bytes.length;
    }
    return { stored: this.publish(Buffer.concat(parts), owner) };
  }

  contentSeals() {
    return false; // the bytes sit in memory as they were put
  }

  // ---- DurableStateStore ----------------------------------------------------------
  // Compare-and-set by version. A deleted key keeps its last version (live: false), so
  // a re-created key continues above it and an old version never matches again.

  /** @param {any} p */
  stateGet(p) {
    const row = this.state.get(checkId("key", p.key));
    return row && row.live ? { value: row.value, version: wire(row.version) } : null;
  }

  /** @param {any} p */
  statePut(p) {
    const key = checkId("key", p.key);
    checkDocument(p.value);
    const presented = p.expectedVersion === null || p.expectedVersion === undefined
      ? null
      : checkSeq("expectedVersion", p.expectedVersion);
    // 0 is "absent", as the conflict facts spell it (decision 0006).
    const expected = presented === 0n ? null : presented;
    const row = this.state.get(key);
    const current = row && row.live ? row.version : null;
    if (current !== expected) {
      throw new StoreError(
        "conflict",
        `expected version ${expected ?? 0}, the key is at ${current ?? 0} (0 = absent)`,
        { expectedNext: wire(expected ?? 0n), actualNext: wire(current ?? 0n) },
      );
    }
    const version = (row ? row.version : 0n) + 1n;
    this.state.set(key, { value: p.value, version, live: true });
    return wire(version);
  }

  /** @param {any} p */
  stateDelete(p) {
    const key = checkId("key", p.key);
    const expected = checkSeq("expectedVersion", p.expectedVersion);
    const row = this.state.get(key);
    if (!row || !row.live) throw new StoreError("not-found", `no state under ${key}`);
    if (row.version !== expected) {
      throw new StoreError("conflict", `expected version ${expected}, the key is at ${row.version}`, {
        expectedNext: wire(expected),
        actualNext: wire(row.version),
      });
    }
    row.live = false;
    row.value = null;
    return null;
  }

  // ---- ReadModelStore -------------------------------------------------------------
  // Cursors are random tokens handed out and remembered (bounded), so only a cursor this
  // store issued, for the collection it was issued for, is accepted; anything else is
  // invalid-argument, never a silent restart from the top.

  /** @param {any} p */
  rmUpsert(p) {
    const collection = checkId("collection", p.collection);
    const id = checkId("document id", p.id);
    checkDocument(p.doc);
    const docs = this.readModels.get(collection) ?? new Map();
    docs.set(id, p.doc);
    this.readModels.set(collection, docs);
    return null;
  }

  /** @param {any} p */
  rmGet(p) {
    const collection = checkId("collection", p.collection);
    const id = checkId("document id", p.id);
    const docs = this.readModels.get(collection);
    // Wrapped, because a stored document may itself be JSON null.
    return docs && docs.has(id) ? { doc: docs.get(id) } : null;
  }

  /** @param {any} p */
  rmQuery(p) {
    const collection = checkId("collection", p.collection);
    const limit = Number(checkInt("query limit", p.limit, 1n, BigInt(READ_MODEL_LIMIT_MAX)));
    const cursor = p.cursor ?? null;
    let after = null;
    if (cursor !== null) {
      const issued = typeof cursor === "string" ? this.cursors.get(cursor) : undefined;
      if (!issued) throw invalid("the cursor was not issued by this store (or was forgotten)");
      if (issued.collection !== collection) throw invalid("the cursor was issued for another collection");
      after = issued.lastId;
    }
    const ids = [...(this.readModels.get(collection)?.keys() ?? [])]
      .filter((id) => after === null || byBytes(id, after) > 0)
      .sort(byBytes);
    const docs = ids
      .slice(0, limit)
      .map((id) => ({ id, doc: this.readModels.get(collection)?.get(id) }));
    let nextCursor = null;
    if (ids.length > limit) {
      nextCursor = `rm${++this.counters.cursor}.${randomBytes(8).toString("hex")}`;
      this.cursors.set(nextCursor, { collection, lastId: docs[docs.length - 1].id });
      // A Map iterates in insertion order: the first key is the oldest cursor.
      if (this.cursors.size > ISSUED_CURSORS_MAX) {
        this.cursors.delete(/** @type {string} */ (this.cursors.keys().next().value));
      }
    }
    return { docs, nextCursor };
  }
}

/** Wire method names (per SPI prefix) to store methods. Unlisted methods answer
 * `unsupported` (storeNow: a single-process store has no shared clock, SPI-08). */
const P = MemoryStore.prototype;
const METHODS = {
  eventStore: {
    append: P.append,
    read: P.read,
    listExecutions: P.listExecutions,
    readRange: P.readRange,
    acquireFence: P.acquireFence,
    acquireFenceIf: P.acquireFenceIf,
    observe: P.observe,
    appendIfUnchanged: P.appendIfUnchanged,
    sealingCapability: P.sealingCapability,
    deleteThrough: P.deleteThrough,
    copyPrefix: P.copyPrefix,
    deleteExecution: P.deleteExecution,
    listExecutionsPage: P.listExecutionsPage,
  },
  snapshotStore: {
    save: P.snapSave,
    loadLatest: P.snapLatest,
    deleteExecution: P.snapDelete,
    loadLatestSealed: P.snapLatest, // seals nothing: the same as loadLatest
    pruneSnapshots: P.snapPrune,
    listSequences: P.snapList,
  },
  archiveStore: {
    archive: P.archive,
    readArchived: P.readArchived,
    deleteExecution: P.archiveDelete,
    replaceSegments: P.replaceSegments,
  },
  branchRegistry: { register: P.branchRegister, get: P.branchGet, children: P.branchChildren },
  dispatcher: {
    registerTarget: P.registerTarget,
    targets: P.targets,
    dispatch: P.dispatch,
    claim: P.claim,
    renew: P.renew,
    complete: P.complete,
    release: P.release,
    expireLeases: P.expireLeases,
  },
  timerStore: { schedule: P.timerSchedule, due: P.timerDue, cancel: P.timerCancel },
  contentStore: {
    put: P.contentPut,
    get: P.contentGet,
    putStream: P.contentPutStream,
    sealsContent: P.contentSeals,
  },
  durableStateStore: { get: P.stateGet, put: P.statePut, delete: P.stateDelete },
  readModelStore: { upsert: P.rmUpsert, get: P.rmGet, query: P.rmQuery },
};
