// Loads every .m3 under the folders given with the M3 parser of the npm package mdx-m3-viewer and
// compares what it sees with the expectation hangar's tests wrote beside each file (`NAME.m3.json`:
// vertices, triangles, bones, sequences and sequence names, as hangar's own reader counts them).
// Exits 1 on a parse error, a mismatch, an .m3 without its expectation, or no file at all.
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(join(dirname(fileURLToPath(import.meta.url)), 'package.json'));
const Model = require('mdx-m3-viewer/dist/cjs/parsers/m3/model.js').default;

function walk(dir, out) {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (/\.m3$/i.test(name)) out.push(p);
  }
  return out;
}

const entries = (ref) => ref.get() || [];
const text = (ref) => {
  const s = ref.get();
  return typeof s === 'string' ? s.replace(/\0+$/, '') : '';
};

// What the viewer's parser reads: the MODL entry, its vertex bytes, every division's regions. The
// vertex size follows the flags: 28 bytes, 4 a UV set (0x20000..0x100000 each), 4 for colours
// (0x200). The viewer's renderer has a shorter rule ((7 + UV sets) * 4, the highest set bit taken
// as the count) that miscounts game models with colours or three UV sets too; it is not used here.
function seen(bytes) {
  const parser = new Model();
  parser.load(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const m = parser.model;
  if (!m) throw new Error('no MODL entry');
  let uvSets = 0;
  for (const bit of [0x20000, 0x40000, 0x80000, 0x100000]) if (m.vertexFlags & bit) uvSets++;
  const colour = m.vertexFlags & 0x200 ? 4 : 0;
  const vbytes = entries(m.vertices).length;
  let regionVertices = 0;
  let triangles = 0;
  for (const div of entries(m.divisions)) {
    for (const r of entries(div.regions)) {
      regionVertices += r.verticesCount;
      triangles += r.triangleIndicesCount / 3;
    }
  }
  return {
    modl_version: m.version,
    vertices: vbytes / ((7 + uvSets) * 4 + colour),
    region_vertices: regionVertices,
    triangles,
    bones: entries(m.bones).length,
    sequences: entries(m.sequences).length,
    sequence_names: entries(m.sequences).map((s) => text(s.name)),
    attachment_points: entries(m.attachmentPoints).length,
    cameras: entries(m.cameras).length,
    lights: entries(m.ligts).length, // sic: the parser names the field `ligts`
  };
}

const files = process.argv.slice(2).flatMap((d) => walk(d, [])).sort();
let failed = 0;
const totals = { vertices: 0, triangles: 0, bones: 0, sequences: 0 };
for (const f of files) {
  const expPath = `${f}.json`;
  if (!existsSync(expPath)) {
    failed++;
    console.log(`FAIL ${f}: no expectation ${expPath}`);
    continue;
  }
  const want = JSON.parse(readFileSync(expPath, 'utf8'));
  let got;
  try {
    got = seen(readFileSync(f));
  } catch (e) {
    failed++;
    console.log(`FAIL ${f}: mdx-m3-viewer cannot parse it: ${String(e && e.message ? e.message : e).split('\n')[0]}`);
    continue;
  }
  const diffs = [];
  const check = (key, g, w) => {
    if (w !== undefined && JSON.stringify(g) !== JSON.stringify(w)) {
      diffs.push(`${key}: mdx-m3-viewer ${JSON.stringify(g)}, hangar ${JSON.stringify(w)}`);
    }
  };
  check('vertices', got.vertices, want.vertices);
  check('region vertices', got.region_vertices, want.vertices);
  for (const k of ['triangles', 'bones', 'sequences', 'sequence_names', 'attachment_points', 'cameras', 'lights']) {
    check(k, got[k], want[k]);
  }
  check('MODL version', got.modl_version, want.modl_version);
  if (diffs.length > 0) {
    failed++;
    console.log(`FAIL ${f}:\n  ${diffs.join('\n  ')}`);
  } else {
    for (const k of Object.keys(totals)) totals[k] += got[k];
    if (process.env.M3_CHECK_VERBOSE) {
      console.log(`ok ${f}: ${got.vertices} vertices, ${got.triangles} triangles, ${got.bones} bones, ${got.sequences} sequences`);
    }
  }
}
console.log(
  `mdx-m3-viewer: ${files.length} M3 files, ${failed} failed; agreed on ${totals.vertices} vertices, ` +
    `${totals.triangles} triangles, ${totals.bones} bones, ${totals.sequences} sequences`,
);
if (files.length === 0) {
  console.log('mdx-m3-viewer: no M3 files were written by the tests');
  process.exit(1);
}
process.exit(failed > 0 ? 1 : 0);
