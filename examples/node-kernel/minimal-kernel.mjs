#!/usr/bin/env node
// @ts-check
// A minimal Loom kernel in JavaScript behind the stdio kernel protocol. It claims the
// `fold`, `normalize` and `digest` vector kinds, and implements exactly the methods
// they need: fold (with `schemaVersion`, as an older minor folds), foldFrom (the runner
// checks fold(snapshot at k, tail) == fold(events) at every k), normalizeSnapshot and
// digest.
//
//   loom vectors run --kernel-cmd 'node examples/node-kernel/minimal-kernel.mjs'
//
// Everything else (ingress, emit, runtime) is not claimed, so those vectors are
// reported as skip-not-claimed, never as failures. Claim a kind only when every method
// it needs works: a claimed kind answered `unsupported` is an error.
//
// Options:
//   --bug no-seq   drop every decision's `seq` from the answers: a deliberately wrong
//                  kernel, whose FOLD-38 vectors must fail (it shows what a failure
//                  looks like, and proves the vectors catch it).
//   --resolutions LIST   claim the reference's resolutions of these open points in
//                  hello (comma-separated GAP ids, or `reference` for all): this fold
//                  follows every one, so it is then judged exactly where a vector rests
//                  on one (tests/node_kernel_mutants.rs runs its mutants so).

import { digest } from "./digest.mjs";
import {
  EVENT_SCHEMA_VERSION,
  MINOR_CURRENT,
  clone,
  emptyState,
  foldInto,
  minorOf,
  normalizeInPlace,
} from "./fold.mjs";
import { RawNumber } from "./json.mjs";
import { serveKernel } from "./kernel-protocol.mjs";

const STATUSES = ["pending", "running", "suspended", "completed", "failed", "cancelled", "continued"];
const STATE_KEYS = ["status", "frames", "variables", "sequence", "startedAt", "updatedAt"];

/** @param {any} v */
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof RawNumber);
/** @param {any} v */
const isUint = (v) => (typeof v === "number" && Number.isInteger(v) && v >= 0) || (typeof v === "bigint" && v >= 0n);
/** @param {any} v */
const isInt = (v) => (typeof v === "number" && Number.isInteger(v)) || typeof v === "bigint";

/** Checks the envelopes a request carries; an error names the first bad one. @param {any} events */
function envelopes(events) {
  if (!Array.isArray(events)) throw new Error("`events` must be an array of envelopes");
  events.forEach((e, i) => {
    if (!isObject(e)) throw new Error(`events[${i}]: not an object`);
    for (const f of ["id", "workflowId", "executionId", "eventType"]) {
      if (typeof e[f] !== "string") throw new Error(`events[${i}].${f}: expected a string`);
    }
    if (!isUint(e.sequence)) throw new Error(`events[${i}].sequence: expected a non-negative integer`);
    if (!isInt(e.timestamp)) throw new Error(`events[${i}].timestamp: expected an integer`);
    if (e.metadata !== undefined && e.metadata !== null && !isObject(e.metadata)) {
      throw new Error(`events[${i}].metadata: expected an object`);
    }
  });
  return events;
}

/** A snapshot's state, checked and upgraded to the current shape. @param {any} snapshot */
function normalized(snapshot) {
  if (!isObject(snapshot) || !isUint(snapshot.sequence)) {
    throw new Error("`snapshot` must be {schemaVersion, sequence, state}");
  }
  const writtenBy = minorOf(snapshot.schemaVersion);
  const state = clone(snapshot.state);
  if (!isObject(state)) throw new Error("snapshot state: not an object");
  const unknown = Object.keys(state).find((k) => !STATE_KEYS.includes(k));
  if (unknown !== undefined) throw new Error(`snapshot state: unknown field \`${unknown}\``);
  if (!STATUSES.includes(state.status)) throw new Error(`snapshot state: bad status ${state.status}`);
  if (!isObject(state.frames) || !isObject(state.variables)) {
    throw new Error("snapshot state: `frames` and `variables` must be objects");
  }
  for (const k of ["sequence", "startedAt", "updatedAt"]) if (state[k] === undefined) state[k] = null;
  return normalizeInPlace(state, writtenBy);
}

const args = process.argv.slice(2);
let bugNoSeq = false;
/** @type {string[] | undefined} */
let resolutions;
for (let i = 0; i < args.length; i += 2) {
  if (args[i] === "--bug" && args[i + 1] === "no-seq") bugNoSeq = true;
  else if (args[i] === "--resolutions" && args[i + 1] !== undefined) resolutions = args[i + 1].split(",");
  else {
    process.stderr.write(`usage: minimal-kernel.mjs [--bug no-seq] [--resolutions LIST]; got ${args.join(" ")}\n`);
    process.exit(2);
  }
}

/** The state as answered (the deliberate bug, when asked for, strikes here). @param {any} state */
function out(state) {
  if (bugNoSeq && isObject(state.variables._decisions)) {
    for (const entry of Object.values(state.variables._decisions)) delete entry.seq;
  }
  return { state };
}

await serveKernel({
  name: "loom-node-minimal-kernel",
  version: "0.1.0",
  kinds: ["fold", "normalize", "digest"],
  eventSchemaVersion: EVENT_SCHEMA_VERSION,
  resolutions,
  methods: {
    fold: (p) => {
      const minor = p.schemaVersion === undefined ? MINOR_CURRENT : minorOf(p.schemaVersion);
      return out(foldInto(emptyState(), envelopes(p.events), minor));
    },
    foldFrom: (p) => {
      const state = normalized(p.snapshot);
      const k = p.snapshot.sequence;
      const tail = envelopes(p.events).filter((e) => e.sequence > k);
      return out(foldInto(state, tail));
    },
    normalizeSnapshot: (p) => out(normalized(p.snapshot)),
    digest,
  },
});
