// @ts-check
// Canonical JSON (RFC 8785) and the Loom digests: fnv1a64, the flow-emit identity and
// flow hashes. RFC 8785 was written around JavaScript's own JSON.stringify and
// Number#toString, so in JavaScript it is short: sort keys by UTF-16 code units at
// every depth, write numbers as doubles, no whitespace.

import { createHash } from "node:crypto";
import { RawNumber } from "./json.mjs";

/**
 * The canonical JSON of a value (numbers as IEEE doubles: an integer above 2^53 is
 * rounded, as in every JavaScript kernel).
 * @param {any} v
 * @returns {string}
 */
export function canonical(v) {
  if (v === null) return "null";
  if (typeof v === "boolean") return v ? "true" : "false";
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number" || typeof v === "bigint" || v instanceof RawNumber) {
    const x = typeof v === "number" ? v : Number(typeof v === "bigint" ? v : v.text);
    if (!Number.isFinite(x)) throw new Error(`${x} is not a JSON number`);
    return JSON.stringify(x); // ES Number#toString; -0 becomes 0
  }
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  const keys = Object.keys(v).sort(); // default sort: UTF-16 code units
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(",")}}`;
}

const FNV_OFFSET_BASIS = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;

/**
 * 64-bit FNV-1a over the UTF-8 bytes of `text`, as 16 lowercase hex digits.
 * @param {string} text
 */
export function fnv1a64Hex(text) {
  let hash = FNV_OFFSET_BASIS;
  for (const byte of Buffer.from(text, "utf8")) {
    hash = BigInt.asUintN(64, (hash ^ BigInt(byte)) * FNV_PRIME);
  }
  return hash.toString(16).padStart(16, "0");
}

/**
 * The text an emit digest hashes: `<segment>|<canonical JSON of [eventType, payload]>`.
 * @param {number | bigint} segment @param {string} eventType @param {any} payload
 */
export const emitDigestInput = (segment, eventType, payload) =>
  `${segment}|${canonical([eventType, payload])}`;

/**
 * Answers the protocol's `digest` method.
 * @param {any} p `{op: "canonical", value}` | `{op: "fnv1a64", text}` |
 *   `{op: "emit", segment, eventType, payload}` | `{op: "flowHash", algorithm, value}`
 */
export function digest(p) {
  const need = (/** @type {string} */ name) => {
    if (!Object.prototype.hasOwnProperty.call(p, name)) throw new Error(`digest op \`${p.op}\` needs \`${name}\``);
  };
  switch (p.op) {
    case "canonical":
      need("value");
      return { canonical: canonical(p.value) };
    case "fnv1a64":
      need("text");
      return { fnv1a64: fnv1a64Hex(p.text) };
    case "emit": {
      need("segment");
      need("eventType");
      need("payload");
      const input = emitDigestInput(p.segment, p.eventType, p.payload);
      return { digest: fnv1a64Hex(input), input };
    }
    case "flowHash": {
      need("value");
      const text = canonical(p.value);
      if (p.algorithm === "sha256") {
        return { flowHash: `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}` };
      }
      if (p.algorithm === "fnv1a") return { flowHash: `fnv1a:${fnv1a64Hex(text)}` };
      throw new Error("flowHash needs `algorithm`: sha256 or fnv1a");
    }
    default:
      throw new Error(`unknown digest op \`${p.op}\` (canonical, fnv1a64, emit, flowHash)`);
  }
}
