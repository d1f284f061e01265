// @ts-check
// The stdio store protocol (docs/protocols/store.md), as a module a store plugs into.
//
// One JSON request per line on stdin, one JSON answer per line on stdout, in order:
//
//   {"id": 7, "method": "eventStore.append", "params": {...}}
//   {"id": 7, "result": {...}}   or   {"id": 7, "error": {"kind": "conflict", ...}}
//
// stdout carries protocol lines only; log to stderr (the harness quotes its last lines
// when something goes wrong). Requests come one at a time: the harness never sends the
// next before it has read the answer.

import { createInterface } from "node:readline";
import { parse, stringify } from "./json.mjs";

/** The protocol version this module speaks. */
export const PROTOCOL_VERSION = "1.1";

/** The stable error kinds; the harness refuses any other. */
export const ERROR_KINDS = Object.freeze([
  "conflict",
  "fenced",
  "fence-conflict",
  "anchor-changed",
  "not-found",
  "already-exists",
  "lease-lost",
  "unsupported",
  "invalid-argument",
  "backend",
]);

/** An SPI error: `kind` is one of ERROR_KINDS; `facts` become extra keys of the answer. */
export class StoreError extends Error {
  /**
   * @param {string} kind
   * @param {string} message
   * @param {Record<string, any>} [facts]
   */
  constructor(kind, message, facts = {}) {
    super(message);
    if (!ERROR_KINDS.includes(kind)) throw new Error(`unknown error kind ${kind}`);
    this.kind = kind;
    this.facts = facts;
  }

  toJSON() {
    return { kind: this.kind, message: this.message, ...this.facts };
  }
}

/** @param {string} message */
export const invalid = (message) => new StoreError("invalid-argument", message);

/**
 * @typedef {object} Store
 * @property {() => object} hello  the claims: name, version, protocolVersion, spis
 * @property {(namespace: string) => void} reset  drop all state (before every case)
 * @property {Record<string, (params: any) => any>} methods  by wire name, e.g. "eventStore.append"
 */

/**
 * Answers one request line. Exported for tests; `serve` calls it per line.
 * @param {Store} store
 * @param {string} line
 * @returns {string} the answer line, without its newline
 */
export function answer(store, line) {
  /** @type {any} */
  let id = null;
  try {
    const request = parse(line);
    id = request?.id ?? null;
    const method = request?.method;
    const params = request?.params ?? {};
    let result;
    if (method === "hello") {
      result = store.hello();
    } else if (method === "reset") {
      store.reset(params.namespace);
      result = null;
    } else {
      const fn = typeof method === "string" ? store.methods[method] : undefined;
      if (!fn || !Object.prototype.hasOwnProperty.call(store.methods, method)) {
        const name = typeof method === "string" ? method.split(".").pop() : "";
        throw new StoreError("unsupported", `method ${method} is not implemented`, {
          method: name,
        });
      }
      result = fn(params);
    }
    return stringify({ id, result: result === undefined ? null : result });
  } catch (e) {
    if (e instanceof StoreError) return stringify({ id, error: e.toJSON() });
    if (e instanceof SyntaxError || e instanceof TypeError || e instanceof RangeError) {
      // Malformed params (a missing field, a wrong type): the caller's mistake.
      return stringify({ id, error: { kind: "invalid-argument", message: `bad request: ${e.message}` } });
    }
    process.stderr.write(`${/** @type {Error} */ (e)?.stack ?? e}\n`);
    return stringify({ id, error: { kind: "backend", message: String(e) } });
  }
}

/**
 * Serves `store` on stdin/stdout until stdin closes.
 * @param {Store} store
 * @returns {Promise<void>} resolves when stdin is closed
 */
export function serve(store) {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on("line", (line) => {
    if (line.trim() === "") return;
    process.stdout.write(`${answer(store, line)}\n`);
  });
  return new Promise((resolve) => lines.on("close", resolve));
}
