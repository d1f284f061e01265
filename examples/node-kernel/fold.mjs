// @ts-check
// The Loom fold, `state = fold(events)`, in JavaScript: EVENT_SCHEMA 1.26.0, and the
// behaviour of every older minor from 1.15.0 (`foldAs`), for the fold vectors.
//
// Each handler is a pure step (state, event) -> state that reads only its envelope and
// the prior state: no clock, no randomness, no environment. An envelope whose kind is
// unknown, whose payload is unusable, or which is gated off (a Wave 2 kind without
// `metadata.kernel: true`) leaves the state unchanged, `sequence` and `updatedAt`
// included; the one exception is the `_flowEmits` count, which counts a
// `metadata.flowEmit` stamp on any envelope.
//
// Values come from json.mjs, which keeps numbers as written: an integer literal is a
// number (or a BigInt past 2^53), anything with a fraction or exponent is a RawNumber.
// So "attempt": 2.0 is not an integer here, exactly as in the reference kernel.

import { RawNumber } from "./json.mjs";

export const EVENT_SCHEMA_VERSION = "1.26.0";
/** The oldest and newest minors this fold reproduces. */
export const MINOR_OLDEST = 15;
export const MINOR_CURRENT = 26;

const INDOUBT_GATE = "__loom_indoubt__";
const DIVERGED_GATE = "__loom_diverged__";
const PROTO_KEY = "__proto__";
const QUARANTINED_ENTRIES_MAX = 1024;
const RESOURCE_CUSTOM_KEYS_MAX = 64;
const RESOURCE_DIMENSIONS = ["tokens", "costUsd", "ms", "memBytes", "wallMs", "netBytes"];
const U64_MAX = 2n ** 64n - 1n;
const I64_MIN = -(2n ** 63n);

/** Every kernel kind, with the minor that introduced it (0 = before 1.15). */
const KIND_SINCE = new Map([
  ["APPROVAL_GRANTED", 0], ["DECISION_RECORDED", 0], ["EFFECT_DENIED", 0],
  ["EFFECT_INDOUBT", 0], ["EGRESS_DENIED", 0], ["EVENTS_REHOMED", 22],
  ["EXECUTION_CANCELLED", 0], ["EXECUTION_COMPLETED", 0], ["EXECUTION_CONTINUED", 23],
  ["EXECUTION_FAILED", 0], ["EXECUTION_MIGRATED", 0], ["EXECUTION_RECOVERED", 0],
  ["EXECUTION_RESUMED", 0], ["EXECUTION_STARTED", 0], ["EXECUTION_SUSPENDED", 0],
  ["INBOX_QUARANTINED", 25], ["INBOX_RELEASED", 25], ["MESSAGE_CONSUMED", 23],
  ["OUTCOME_RECORDED", 0], ["PARALLEL_COMPLETED", 0], ["QUOTA_EXCEEDED", 0],
  ["RESOURCE_METERED", 0], ["SAFETY_BLOCKED", 0], ["STEP_CANCELLED", 0],
  ["STEP_COMPLETED", 0], ["STEP_FAILED", 0], ["STEP_RETRYING", 0], ["STEP_STARTED", 0],
  ["TIMER_FIRED", 0],
]);

// ---- JSON value helpers ------------------------------------------------------------

/** @param {any} v */
const isObject = (v) =>
  v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof RawNumber);

/** A non-negative integer (u64), or null. @param {any} v */
function asU64(v) {
  if (typeof v === "number") return Number.isInteger(v) && v >= 0 ? v : null;
  if (typeof v === "bigint") return v >= 0n && v <= U64_MAX ? v : null;
  return null;
}

/** An integer in i64 or u64 range. @param {any} v */
const isInteger = (v) =>
  (typeof v === "number" && Number.isInteger(v)) ||
  (typeof v === "bigint" && v >= I64_MIN && v <= U64_MAX);

/** Any JSON number as a double, or null. @param {any} v */
function asF64(v) {
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  if (v instanceof RawNumber) return Number(v.text);
  return null;
}

/** Sets `key` as data even when it is "__proto__". @param {any} obj @param {string} key @param {any} value */
function put(obj, key, value) {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** @param {any} obj @param {string} key */
const has = (obj, key) => Object.prototype.hasOwnProperty.call(obj, key);

/** An own property: a key like "constructor" must not find Object.prototype's.
 * @param {any} obj @param {string} key */
const get = (obj, key) => (has(obj, key) ? obj[key] : undefined);

/** A deep copy (numbers, BigInts and RawNumbers are immutable and shared). @param {any} v @returns {any} */
export function clone(v) {
  if (Array.isArray(v)) return v.map(clone);
  if (isObject(v)) {
    const out = {};
    for (const k of Object.keys(v)) put(out, k, clone(v[k]));
    return out;
  }
  return v;
}

/** Drops every "__proto__" key at every depth; returns how many. @param {any} v @returns {number} */
function scrubProto(v) {
  if (Array.isArray(v)) return v.reduce((n, x) => n + scrubProto(x), 0);
  if (!isObject(v)) return 0;
  let n = 0;
  if (has(v, PROTO_KEY)) {
    delete v[PROTO_KEY];
    n = 1;
  }
  for (const k of Object.keys(v)) n += scrubProto(v[k]);
  return n;
}

/** A usable map key: a non-empty string that is not "__proto__". @param {any} m @param {string} field */
function keyField(m, field) {
  const s = m[field];
  return typeof s === "string" && s !== "" && s !== PROTO_KEY ? s : null;
}

// ---- state ---------------------------------------------------------------------------

/** The empty state every fold starts from. */
export function emptyState() {
  return { status: "pending", frames: {}, variables: {}, sequence: null, startedAt: null, updatedAt: null };
}

/** @param {any} vars @param {string} key */
function objectVar(vars, key) {
  if (!isObject(vars[key])) vars[key] = {};
  return vars[key];
}

/** @param {any} vars @param {string} key */
function arrayVar(vars, key) {
  if (!Array.isArray(vars[key])) vars[key] = [];
  return vars[key];
}

/** @param {any} state */
function endPark(state) {
  delete state.variables._suspendedOn;
  delete state.variables._failedWhileParked;
}

/** @param {any} state */
function parkedGate(state) {
  const park = state.variables._suspendedOn;
  return isObject(park) && typeof park.on === "string" ? park.on : null;
}

/** @param {string} status @param {any} attempt */
const newFrame = (status, attempt) => ({ status, attempt });

const ACTED = "acted";
const INERT = "inert";

// ---- handlers --------------------------------------------------------------------------
// Each returns ACTED (bookkeeping moves) or INERT (the envelope does nothing).

/** @param {any} carry */
function validCarry(carry) {
  if (!isObject(carry) || Object.keys(carry).some((k) => k !== "resources" && k !== "inbox")) return null;
  const nonneg = (/** @type {any} */ x) => {
    const f = asF64(x);
    return f !== null && Number.isFinite(f) && f >= 0;
  };
  let resources;
  if (has(carry, "resources")) {
    const r = carry.resources;
    if (!isObject(r)) return null;
    for (const k of Object.keys(r)) {
      if (k === "custom") {
        if (!isObject(r.custom) || Object.keys(r.custom).length > RESOURCE_CUSTOM_KEYS_MAX) return null;
        if (!Object.values(r.custom).every(nonneg)) return null;
      } else if (!RESOURCE_DIMENSIONS.includes(k) || !nonneg(r[k])) return null;
    }
    resources = r;
  }
  let inbox;
  if (has(carry, "inbox")) {
    const i = carry.inbox;
    if (!isObject(i)) return null;
    for (const e of Object.values(i)) {
      if (!isObject(e) || asU64(e.consumed) === null) return null;
      if (Object.keys(e).some((k) => k !== "consumed" && k !== "lastMessageId")) return null;
      if (has(e, "lastMessageId") && typeof e.lastMessageId !== "string") return null;
    }
    inbox = i;
  }
  return { resources, inbox };
}

/** Whether a carried `_quarantined` has the folded shape. @param {any} q */
function validQuarantine(q) {
  if (!isObject(q)) return false;
  let total = 0;
  for (const topic of Object.keys(q)) {
    if (topic === PROTO_KEY || !Array.isArray(q[topic])) return false;
    total += q[topic].length;
    for (const [i, e] of q[topic].entries()) {
      if (!isObject(e) || typeof e.messageId !== "string" || asU64(e.seq) === null) return false;
      if (has(e, "released") && i !== 0) return false;
    }
  }
  return total <= QUARANTINED_ENTRIES_MAX;
}

/** @type {Record<string, (s: any, p: any, e: {v: number, kernel: boolean, sequence: any, timestamp: any, meta: any}) => string>} */
const HANDLERS = {
  EXECUTION_STARTED(state, m, { v, timestamp, meta }) {
    if (!isObject(m)) return INERT;
    const vars = state.variables;
    state.status = "running";
    state.startedAt = timestamp;
    vars._input = has(m, "input") ? m.input : null;
    if (typeof m.flowHash === "string") vars._flowHash = m.flowHash;
    if (v >= 23) {
      for (const [field, key] of [["principal", "_principal"], ["parent", "_parent"], ["chain", "_chain"], ["codeHash", "_codeHash"]]) {
        if (has(m, field) && m[field] !== null) vars[key] = m[field];
      }
      // GAP-19: fork metadata fills lineage the payload does not state.
      if (isObject(meta)) {
        if (!has(vars, "_chain") && Array.isArray(meta.forkChain)) {
          const chain = clone(meta.forkChain);
          scrubProto(chain);
          vars._chain = chain;
        }
        if (!has(vars, "_parent") && typeof meta.forkedBy === "string") vars._parent = meta.forkedBy;
      }
      if (has(m, "carry")) {
        const carry = validCarry(m.carry);
        if (carry?.resources !== undefined) vars._resources = carry.resources;
        if (carry?.inbox !== undefined) vars._inbox = carry.inbox;
      }
    }
    if (v >= 25) {
      const carried = isObject(m.continuedFrom) && isObject(m.continuedFrom.carried) ? m.continuedFrom.carried : null;
      if (carried && has(carried, "quarantined") && validQuarantine(carried.quarantined)) {
        vars._quarantined = carried.quarantined;
      }
    }
    return ACTED;
  },

  EXECUTION_SUSPENDED(state, m, { v }) {
    if (!isObject(m) || typeof m.on !== "string" || m.on === "") return INERT;
    /** @type {Record<string, any>} */
    const park = { on: m.on };
    if (isInteger(m.wakeAt)) park.wakeAt = m.wakeAt;
    if (isObject(m.condition)) park.condition = m.condition;
    state.status = "suspended";
    delete state.variables._failedWhileParked;
    state.variables._suspendedOn = park;
    if (v >= 23) {
      if (Array.isArray(m.waits)) state.variables._waits = m.waits;
      else delete state.variables._waits;
    }
    return ACTED;
  },

  EXECUTION_RESUMED(state, p, { v, kernel }) {
    // FOLD-28: a kernel-stamped, wait-addressed resume answers a wait, not a gate.
    const waitId = isObject(p) && v >= 23 && kernel && typeof p.waitId === "string" && p.waitId !== PROTO_KEY
      ? p.waitId
      : null;
    if (waitId !== null) {
      put(objectVar(state.variables, "_waitAnswers"), waitId, has(p, "answer") ? p.answer : null);
    } else if (v >= 16) {
      let passthrough = true;
      if (p === null && v >= 20) {
        // GAP-34: a null answers a gate only at an ordinary park with no parked failure.
        const gate = parkedGate(state);
        passthrough = state.status === "suspended" && gate !== INDOUBT_GATE &&
          !(v >= 23 && gate === DIVERGED_GATE) && !has(state.variables, "_failedWhileParked");
      }
      if (passthrough) arrayVar(state.variables, "_resumePayloads").push(p);
    }
    state.status = "running";
    endPark(state);
    return ACTED;
  },

  EXECUTION_COMPLETED: (state, p) => ended(state, "completed", p, "output", "_output"),
  EXECUTION_FAILED: (state, p) => ended(state, "failed", p, "error", "_error"),
  EXECUTION_CANCELLED: (state, p) => ended(state, "cancelled", p, null, null),

  EXECUTION_CONTINUED(state, p, e) {
    if (!gated(e, 23)) return INERT;
    if (!isObject(p) || typeof p.continuedTo !== "string" || p.continuedTo === "") return INERT;
    state.status = "continued";
    state.variables._continuedTo = p.continuedTo;
    endPark(state);
    return ACTED;
  },

  EXECUTION_MIGRATED(state, p, { v }) {
    const m = p === null ? {} : p;
    if (!isObject(m)) return INERT;
    if (has(m, "migratedInput")) state.variables._input = m.migratedInput;
    if (v >= 23 && typeof m.toCodeHash === "string") state.variables._codeHash = m.toCodeHash;
    return ACTED;
  },

  STEP_STARTED(state, m) {
    if (!isObject(m)) return INERT;
    const stepId = keyField(m, "stepId");
    if (stepId === null) return INERT;
    const prior = get(state.frames, stepId)?.attempt ?? 0;
    /** @type {Record<string, any>} */
    const frame = newFrame("running", asU64(m.attempt) ?? (typeof prior === "bigint" ? prior + 1n : prior + 1));
    if (typeof m.toolId === "string") frame.toolId = m.toolId;
    if (typeof m.kind === "string") frame.kind = m.kind;
    frame.input = has(m, "input") ? m.input : null;
    state.frames[stepId] = frame;
    return ACTED;
  },

  STEP_RETRYING: (state, m) => restatus(state, m, "retrying"),
  EFFECT_INDOUBT: (state, m) => restatus(state, m, "indoubt"),
  STEP_COMPLETED: (state, m, e) => settled(state, m, "completed", e.v),
  STEP_FAILED: (state, m, e) => settled(state, m, "failed", e.v),
  STEP_CANCELLED: (state, m, e) => settled(state, m, "cancelled", e.v),

  DECISION_RECORDED(state, m, { v, kernel, sequence }) {
    if (!isObject(m)) return INERT;
    const id = keyField(m, "id");
    if (id === null || !has(m, "choice")) return INERT;
    /** @type {Record<string, any>} */
    const entry = { choice: m.choice };
    if (v >= 18) for (const f of ["context", "policy"]) if (has(m, f)) entry[f] = m[f];
    if (v >= 23 && kernel && has(m, "innerSteps")) entry.innerSteps = m.innerSteps;
    const decisions = objectVar(state.variables, "_decisions");
    if (v >= 24) {
      // FOLD-38: the FIRST envelope's sequence; a repeat keeps it, and a legacy entry
      // without one never gains one (SNAP-07).
      const prev = get(decisions, id);
      const seq = prev === undefined ? sequence : isObject(prev) && has(prev, "seq") ? prev.seq : undefined;
      if (seq !== undefined) entry.seq = seq;
    }
    decisions[id] = entry;
    return ACTED;
  },

  RESOURCE_METERED(state, m, { v }) {
    if (!isObject(m)) return INERT;
    const measured = RESOURCE_DIMENSIONS.map((d) => [d, has(m, d) ? asF64(m[d]) : null]).filter(([, x]) => x !== null);
    const custom = v >= 23 && isObject(m.custom)
      ? Object.keys(m.custom).filter((k) => k !== PROTO_KEY).map((k) => [k, asF64(m.custom[k])]).filter(([, x]) => x !== null)
      : [];
    if (measured.length === 0 && custom.length === 0) return INERT;
    const acc = objectVar(state.variables, "_resources");
    for (const [d, x] of measured) addNumber(acc, /** @type {string} */ (d), /** @type {number} */ (x));
    if (custom.length > 0) {
      if (!has(acc, "custom")) acc.custom = {};
      const c = acc.custom;
      if (isObject(c)) {
        for (const [k, x] of custom) {
          if (has(c, k) || Object.keys(c).length < RESOURCE_CUSTOM_KEYS_MAX) {
            addNumber(c, /** @type {string} */ (k), /** @type {number} */ (x));
          }
        }
      }
    }
    return ACTED;
  },

  EVENTS_REHOMED(state, m, { v, sequence }) {
    if (v < 22 || !isObject(m)) return INERT;
    put(m, "seq", sequence);
    arrayVar(state.variables, "_lifecycle").push(m);
    return ACTED;
  },

  PARALLEL_COMPLETED(state, m, { v, kernel }) {
    // Before 1.23 (and unstamped since) the kind has no payload handler.
    if (v < 23 || !kernel || !isObject(m)) return INERT;
    const scope = keyField(m, "scopeId");
    if (scope === null) return INERT;
    delete m.scopeId;
    objectVar(state.variables, "_scopes")[scope] = m;
    return ACTED;
  },

  MESSAGE_CONSUMED(state, m, e) {
    if (!gated(e, 23) || !isObject(m)) return INERT;
    const topic = keyField(m, "topic");
    const messageId = keyField(m, "messageId");
    if (topic === null || messageId === null) return INERT;
    const inbox = objectVar(state.variables, "_inbox");
    const cursor = get(inbox, topic);
    const consumed = (isObject(cursor) ? asU64(cursor.consumed) : null) ?? 0;
    inbox[topic] = { consumed: typeof consumed === "bigint" ? consumed + 1n : consumed + 1, lastMessageId: messageId };
    if (typeof m.waitId === "string" && m.waitId !== PROTO_KEY) {
      put(objectVar(state.variables, "_waitAnswers"), m.waitId, has(m, "message") ? m.message : null);
    }
    // FOLD-44 (1.25.0): drop the delivered released entry, only when quarantine state exists.
    if (e.v >= 25 && has(state.variables, "_quarantined")) {
      const q = objectVar(state.variables, "_quarantined");
      const queue = get(q, topic);
      if (Array.isArray(queue) && queue.length > 0) {
        const head = queue[0];
        if (isObject(head) && head.messageId === messageId && isObject(head.released) && head.released.deliver === true) {
          queue.shift();
          if (queue.length === 0) delete q[topic];
        }
      }
    }
    return ACTED;
  },

  INBOX_QUARANTINED(state, m, e) {
    if (!gated(e, 25) || !isObject(m)) return INERT;
    const topic = keyField(m, "topic");
    const messageId = keyField(m, "messageId");
    if (topic === null || messageId === null) return INERT;
    const held = state.variables._quarantined;
    const total = isObject(held)
      ? Object.values(held).reduce((n, queue) => n + (Array.isArray(queue) ? queue.length : 0), 0)
      : 0;
    if (total >= QUARANTINED_ENTRIES_MAX) return INERT; // GAP-17: at the cap
    const q = objectVar(state.variables, "_quarantined");
    if (!has(q, topic)) q[topic] = [];
    const queue = get(q, topic);
    if (Array.isArray(queue)) {
      if (queue.some((x) => isObject(x) && x.messageId === messageId)) return INERT;
      queue.push({ messageId, seq: e.sequence });
    }
    return ACTED;
  },

  INBOX_RELEASED(state, m, e) {
    if (!gated(e, 25) || !isObject(m)) return INERT;
    const topic = keyField(m, "topic");
    if (topic === null) return INERT;
    const operator = has(m, "operator") && m.operator !== null;
    const auto = has(m, "auto") && m.auto !== null && m.auto !== false;
    const deliver = m.deliver === true;
    // FOLD-42: exactly one of operator / auto; auto only with deliver (GAP-17).
    if (operator === auto || (auto && !deliver)) return INERT;
    // Look before touching: a release with nothing to release leaves the state as it
    // was, `_quarantined` included (GAP-12).
    const held = state.variables._quarantined;
    const queue = isObject(held) ? get(held, topic) : undefined;
    if (!Array.isArray(queue) || !isObject(queue[0]) || has(queue[0], "released")) return INERT;
    const q = objectVar(state.variables, "_quarantined");
    const head = queue[0];
    if (typeof m.messageId === "string" && head.messageId !== m.messageId) return INERT;
    if (deliver) {
      head.released = { by: operator ? "operator" : "auto", deliver: true };
    } else {
      // An operator release without delivery discards the hold.
      queue.shift();
      if (queue.length === 0) delete q[topic];
    }
    return ACTED;
  },
};

/** A kind introduced at `since` that folds only from kernel-stamped envelopes.
 * @param {{v: number, kernel: boolean}} e @param {number} since */
const gated = (e, since) => e.v >= since && e.kernel;

/** @param {any} state @param {string} status @param {any} p @param {string | null} field @param {string | null} key */
function ended(state, status, p, field, key) {
  if (field !== null && key !== null && isObject(p) && has(p, field)) state.variables[key] = p[field];
  state.status = status;
  endPark(state);
  return ACTED;
}

/** @param {any} state @param {any} m @param {string} status */
function restatus(state, m, status) {
  if (!isObject(m)) return INERT;
  const stepId = keyField(m, "stepId");
  if (stepId === null) return INERT;
  const frame = get(state.frames, stepId) ?? (state.frames[stepId] = newFrame(status, 1));
  frame.status = status;
  const attempt = asU64(m.attempt);
  if (attempt !== null) frame.attempt = attempt;
  return ACTED;
}

/** @param {any} state @param {any} m @param {string} status @param {number} v */
function settled(state, m, status, v) {
  if (!isObject(m)) return INERT;
  const stepId = keyField(m, "stepId");
  if (stepId === null) return INERT;
  const frame = get(state.frames, stepId) ?? (state.frames[stepId] = newFrame(status, 1));
  frame.status = status;
  for (const f of ["output", "error", "errorChannel", "errorPayload"]) delete frame[f];
  if (status === "completed") frame.output = has(m, "output") ? m.output : null;
  if (status === "failed") {
    frame.error = has(m, "error") ? m.error : null;
    if (v >= 17 && typeof m.channel === "string") {
      frame.errorChannel = m.channel;
      frame.errorPayload = has(m, "payload") ? m.payload : null;
    }
  }
  if (v >= 26) delete frame.input;
  if (status === "failed") {
    if (v >= 21) {
      // FOLD-09/FOLD-10: never fails the execution; a parked failure is remembered.
      if (state.status === "suspended") state.variables._failedWhileParked = true;
    } else if (state.status === "running" || state.status === "suspended") {
      state.status = "failed"; // before 1.21.0 a step failure failed a live execution
    }
  }
  return ACTED;
}

/** Sums into a number; whole results stay integers, as a JS kernel writes them.
 * @param {any} map @param {string} key @param {number} x */
function addNumber(map, key, x) {
  const sum = (asF64(get(map, key)) ?? 0) + x;
  put(map, key, Number.isFinite(sum) ? sum : null);
}

// ---- the fold ---------------------------------------------------------------------------

/**
 * Folds `events` onto `state` (modified in place and returned) as EVENT_SCHEMA 1.<minor>.
 * @param {any} state
 * @param {any[]} events envelopes, in log order
 * @param {number} [minor]
 */
export function foldInto(state, events, minor = MINOR_CURRENT) {
  for (const event of events) {
    const meta = isObject(event.metadata) ? event.metadata : null;
    const kernel = meta !== null && meta.kernel === true;
    const e = { v: minor, kernel, sequence: event.sequence, timestamp: event.timestamp, meta };
    // FOLD-19: a stamp counts on ANY envelope, known kind or not.
    let acted = false;
    if (minor >= 19 && meta !== null && typeof meta.flowEmit === "string" && meta.flowEmit !== PROTO_KEY) {
      const counts = objectVar(state.variables, "_flowEmits");
      const n = asU64(get(counts, meta.flowEmit)) ?? 0;
      put(counts, meta.flowEmit, typeof n === "bigint" ? n + 1n : n + 1);
      acted = true;
    }
    const handler = KIND_SINCE.has(event.eventType) ? HANDLERS[event.eventType] : undefined;
    if (handler) {
      const payload = clone(event.payload);
      scrubProto(payload);
      if (handler(state, payload, e) === ACTED) acted = true;
    }
    if (acted) {
      state.sequence = event.sequence;
      state.updatedAt = event.timestamp;
    }
  }
  return state;
}

/**
 * The minor of an EVENT_SCHEMA version this fold reproduces ("1.20.0" gives 20).
 * @param {string} text
 * @returns {number}
 */
export function minorOf(text) {
  const m = /^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:[-+].*)?$/.exec(String(text));
  if (!m) throw new Error(`\`${text}\` is not a MAJOR.MINOR.PATCH version`);
  const [major, minor] = [Number(m[1]), Number(m[2])];
  if (major !== 1) throw new Error(`schema ${text}: only EVENT_SCHEMA major 1 exists`);
  if (minor < MINOR_OLDEST || minor > MINOR_CURRENT) {
    throw new Error(`schema ${text}: this fold reproduces 1.${MINOR_OLDEST}.0 through ${EVENT_SCHEMA_VERSION}`);
  }
  return minor;
}

/**
 * Upgrades a snapshot's state to the current shape (in place): before 1.21.0 a
 * `failed` status without `_error` was a caught step failure; before 1.26.0 settled
 * frames kept their `input`.
 * @param {any} state
 * @param {number} writtenBy the minor of the fold that wrote the snapshot
 */
export function normalizeInPlace(state, writtenBy) {
  if (writtenBy < 21 && state.status === "failed" && !has(state.variables, "_error")) {
    if (has(state.variables, "_suspendedOn")) {
      state.status = "suspended";
      state.variables._failedWhileParked = true;
    } else {
      state.status = "running";
    }
  }
  if (writtenBy < 26) {
    for (const frame of Object.values(state.frames)) {
      if (["completed", "failed", "cancelled"].includes(frame.status)) delete frame.input;
    }
  }
  return state;
}
