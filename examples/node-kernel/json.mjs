// @ts-check
// Lossless JSON for a store adapter.
//
// JSON.parse turns every number into a double, so an event payload holding
// 18446744073709551615 or 1.0 comes back as 18446744073709552000 or 1. A store must
// give back exactly what it was given, so this parser keeps numbers faithful:
//
//   - an integer literal that fits a double exactly stays a JS number;
//   - any other integer literal becomes a BigInt;
//   - a literal with a fraction or an exponent (or -0) becomes a RawNumber, kept as
//     written.
//
// `stringify` writes all three back as they came. Everything else is ordinary JSON.

/** A JSON number kept exactly as it was written (a fraction or an exponent). */
export class RawNumber {
  /** @param {string} text */
  constructor(text) {
    this.text = text;
  }
  /** The nearest double, for arithmetic. */
  valueOf() {
    return Number(this.text);
  }
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const WS = /[ \t\n\r]*/y;
/** JSON nests at most this deep here; deeper input is refused, not a stack overflow. */
export const DEPTH_MAX = 512;

/**
 * Parses one JSON text.
 * @param {string} text
 * @returns {any}
 */
export function parse(text) {
  let at = 0;
  const fail = (/** @type {string} */ why) => {
    throw new SyntaxError(`${why} at offset ${at}`);
  };
  const ws = () => {
    WS.lastIndex = at;
    WS.test(text);
    at = WS.lastIndex;
  };
  /** @param {number} depth @returns {any} */
  const value = (depth) => {
    if (depth > DEPTH_MAX) fail(`nested deeper than ${DEPTH_MAX}`);
    ws();
    const c = text[at];
    if (c === "{") {
      at++;
      /** @type {Record<string, any>} */
      const obj = {};
      ws();
      if (text[at] === "}") {
        at++;
        return obj;
      }
      for (;;) {
        ws();
        if (text[at] !== '"') fail("expected a key");
        const key = string();
        ws();
        if (text[at++] !== ":") fail("expected ':'");
        // defineProperty, so a key named __proto__ is data, not a prototype change.
        Object.defineProperty(obj, key, {
          value: value(depth + 1),
          enumerable: true,
          writable: true,
          configurable: true,
        });
        ws();
        const sep = text[at++];
        if (sep === "}") return obj;
        if (sep !== ",") fail("expected ',' or '}'");
      }
    }
    if (c === "[") {
      at++;
      const arr = [];
      ws();
      if (text[at] === "]") {
        at++;
        return arr;
      }
      for (;;) {
        arr.push(value(depth + 1));
        ws();
        const sep = text[at++];
        if (sep === "]") return arr;
        if (sep !== ",") fail("expected ',' or ']'");
      }
    }
    if (c === '"') return string();
    if (text.startsWith("true", at)) return (at += 4), true;
    if (text.startsWith("false", at)) return (at += 5), false;
    if (text.startsWith("null", at)) return (at += 4), null;
    NUMBER.lastIndex = at;
    const m = NUMBER.exec(text);
    if (!m) fail("unexpected character");
    const literal = /** @type {RegExpExecArray} */ (m)[0];
    at += literal.length;
    if (/[.eE]/.test(literal) || literal === "-0") return new RawNumber(literal);
    const n = Number(literal);
    return Number.isSafeInteger(n) ? n : BigInt(literal);
  };
  // Strings are cut at their closing quote and decoded by JSON.parse, which checks
  // escapes and control characters (and is fast on an 8 MiB base64 blob).
  const string = () => {
    const start = at;
    let from = at + 1;
    for (;;) {
      const quote = text.indexOf('"', from);
      if (quote < 0) fail("unterminated string");
      let backslashes = 0;
      while (text.charCodeAt(quote - 1 - backslashes) === 92) backslashes++;
      from = quote + 1;
      if (backslashes % 2 === 0) break;
    }
    at = from;
    try {
      return JSON.parse(text.slice(start, at));
    } catch {
      at = start;
      return fail("bad string");
    }
  };
  const v = value(0);
  ws();
  if (at !== text.length) fail("trailing characters");
  return v;
}

/**
 * Writes a value parsed by `parse` (or built from numbers, BigInts, strings, booleans,
 * null, arrays and plain objects) as compact JSON.
 * @param {any} v
 * @returns {string}
 */
export function stringify(v) {
  if (v === null || v === undefined) return "null";
  if (typeof v === "bigint") return v.toString();
  if (v instanceof RawNumber) return v.text;
  if (typeof v === "number") return Number.isFinite(v) ? String(v) : "null";
  if (typeof v === "string" || typeof v === "boolean") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(stringify).join(",")}]`;
  if (Buffer.isBuffer(v)) throw new TypeError("encode bytes as base64 first");
  return `{${Object.keys(v)
    .filter((k) => v[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${stringify(v[k])}`)
    .join(",")}}`;
}

/**
 * Whether two parsed values are the same JSON value (object key order ignored;
 * numbers compared as written, which is what a retry of the same request sends).
 * @param {any} a
 * @param {any} b
 * @returns {boolean}
 */
export function equal(a, b) {
  if (a instanceof RawNumber || b instanceof RawNumber) {
    return a instanceof RawNumber && b instanceof RawNumber && a.text === b.text;
  }
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") {
    return a === b;
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => equal(x, b[i]));
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && equal(a[k], b[k]));
}
