#!/usr/bin/env node
// Times mdx-m3-viewer's M3 parser alone (no viewer) over the given files, in one node process.
// Usage: node mdx_parse.js DIR_WITH_NODE_MODULES FILE...   Prints the parse loop's seconds.
'use strict';
const fs = require('fs');
const path = require('path');
const [, , root, ...files] = process.argv;
const Model = require(path.join(path.resolve(root),
  'node_modules/mdx-m3-viewer/dist/cjs/parsers/m3/model.js')).default;
const t0 = process.hrtime.bigint();
let failed = 0;
for (const f of files) {
  const b = fs.readFileSync(f);
  try {
    new Model().load(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  } catch (e) {
    failed += 1;
  }
}
console.log(Number(process.hrtime.bigint() - t0) / 1e9);
if (failed) console.error(`${failed} of ${files.length} files failed to parse`);
