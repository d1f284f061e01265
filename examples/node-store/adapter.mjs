#!/usr/bin/env node
// @ts-check
// A Loom store adapter in JavaScript: the in-memory store of memory-store.mjs served
// over the stdio store protocol (protocol.mjs). Node 20 or newer, no dependencies.
//
//   loom conform --store 'cmd:node examples/node-store/adapter.mjs'
//
// Options:
//   --lie   claim `storeNow` without implementing it: a deliberately broken adapter,
//           which the capability probe (spi_02_claims_match_behaviour) must catch.

import { MemoryStore } from "./memory-store.mjs";
import { serve } from "./protocol.mjs";

const args = process.argv.slice(2);
const unknown = args.filter((a) => a !== "--lie");
if (unknown.length > 0) {
  process.stderr.write(`unknown argument ${unknown[0]}; usage: adapter.mjs [--lie]\n`);
  process.exit(2);
}
const store = new MemoryStore({ lie: args.includes("--lie") });
await serve({
  hello: () => store.hello(),
  reset: () => store.reset(),
  methods: store.methods(),
});
