// @ts-check
// The stdio kernel protocol (docs/protocols/kernel.md) as a module: plug in the
// functions your kernel has, and `serveKernel` does the framing.
//
//   import { serveKernel } from "./kernel-protocol.mjs";
//   await serveKernel({
//     name: "my-kernel", version: "0.3.0",
//     kinds: ["fold", "digest"],                  // the vector kinds you claim
//     methods: { fold, foldFrom, digest },        // wire method name -> function(params)
//   });
//
// One JSON request per line on stdin, one answer per line on stdout, in order. A
// method you do not provide answers `unsupported` (a kind you do not claim is never
// called). A function that throws answers a typed `bad-request` error with the
// message; throw a KernelError to choose `internal` instead. stdout carries protocol
// lines only: log to stderr, which the harness quotes when something goes wrong.
//
// Requests are parsed by json.mjs, so numbers arrive as written: integers as numbers
// (BigInts past 2^53), fractions and exponents as RawNumber.

import { createInterface } from "node:readline";
import { parse, stringify } from "./json.mjs";

/** The kernel protocol version this module speaks. */
export const PROTOCOL_VERSION = 1;

/** A typed error answer: `bad-request` (the params) or `internal` (the kernel). */
export class KernelError extends Error {
  /** @param {"bad-request" | "internal"} kind @param {string} message */
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

/**
 * @typedef {object} Kernel
 * @property {string} name
 * @property {string} version
 * @property {string[]} kinds  vector kinds claimed: fold, normalize, digest, ingress, emit, runtime
 * @property {string} [eventSchemaVersion]  the EVENT_SCHEMA version the kernel folds
 * @property {string[]} [resolutions]  the reference's resolutions of open points the
 *   kernel follows (GAP ids, or "reference" for all of them); absent claims none
 * @property {Record<string, (params: any) => any>} methods  by wire name: fold, foldFrom,
 *   normalizeSnapshot, digest, ingress, validateEmit, runScenario
 */

/** @param {Kernel} kernel */
function hello(kernel) {
  return {
    name: kernel.name,
    version: kernel.version,
    protocolVersion: PROTOCOL_VERSION,
    kinds: kernel.kinds,
    methods: ["hello", ...Object.keys(kernel.methods)],
    ...(kernel.eventSchemaVersion ? { eventSchemaVersion: kernel.eventSchemaVersion } : {}),
    ...(kernel.resolutions ? { resolutions: kernel.resolutions } : {}),
  };
}

/**
 * Answers one request line (exported for tests; `serveKernel` calls it per line).
 * @param {Kernel} kernel
 * @param {string} line
 * @returns {string} the answer line, without its newline
 */
export function answer(kernel, line) {
  /** @type {any} */
  let request;
  try {
    request = parse(line);
  } catch (e) {
    return stringify({ id: null, error: { kind: "bad-request", message: `not JSON: ${/** @type {Error} */ (e).message}` } });
  }
  const id = request?.id ?? null;
  const method = request?.method;
  try {
    if (method === "hello") return stringify({ id, result: hello(kernel) });
    const fn = typeof method === "string" && Object.prototype.hasOwnProperty.call(kernel.methods, method)
      ? kernel.methods[method]
      : undefined;
    if (!fn) return stringify({ id, unsupported: { message: `unknown method \`${method}\`` } });
    return stringify({ id, result: fn(request.params ?? {}) });
  } catch (e) {
    const err = /** @type {Error} */ (e);
    const kind = e instanceof KernelError ? e.kind : "bad-request";
    return stringify({ id, error: { kind, message: err?.message ?? String(e) } });
  }
}

/**
 * Serves `kernel` on stdin/stdout until stdin closes.
 * @param {Kernel} kernel
 * @returns {Promise<void>}
 */
export function serveKernel(kernel) {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on("line", (line) => {
    if (line.trim() !== "") process.stdout.write(`${answer(kernel, line)}\n`);
  });
  return new Promise((resolve) => lines.on("close", resolve));
}
