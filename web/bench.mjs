// Times the page in headless Chromium (playwright-core) and compares its conversions with the CLI:
// - a folder with a catalog of N entries (an empty .dat: the index is what is read), chosen -> listed;
// - each model, chosen -> first frame; a model is files (`a.m3,b.m3a`, through #open) or a folder and
//   a file in it (`DIR::NAME`, through #open-folder and a click on it in #files);
// - the conversion to GLB of each model in the page (hangar's time in the worker for `show`, which
//   opens the files and writes the GLB it draws; a second time in the same page, once the wasm is
//   compiled to its optimized tier) against `HANGAR convert MODEL out.glb` (median of 3 runs).
// The clock starts when the page says hangar is ready (body[data-hangar=ready]), as a user chooses
// files after the page has loaded.
// - then each model's first frame as ../shared/acceptance/run web times it (the clock starts right
//   after the page's load event, while the wasm still compiles and warms up), ROUNDS times (5) on
//   a quiet machine and as many with a busy loop on every core, alternating with the page of git
//   revision BASELINE (its page files over this build's wasm and three.js; main when unset, none
//   when empty); the median of each and the page's steps in its median run (performance marks
//   hangar:*: the worker's steps on the page's clock).
// usage: node web/bench.mjs URL HANGAR N [MODEL...]   (serve target/web at URL first)
import { chromium } from 'playwright-core';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, statSync, cpSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir, availableParallelism } from 'node:os';
import { join, basename, extname, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const [url, hangar, n = '300000', ...models] = process.argv.slice(2);
const args = (process.env.CHROMIUM_ARGS || '--no-sandbox --disable-gpu').split(' ');
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true, args });
const tmp = mkdtempSync(join(tmpdir(), 'hangar-web-bench-'));

async function page() {
  const p = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  p.on('pageerror', e => console.error(String(e)));
  await p.goto(url, { waitUntil: 'load' });
  await p.waitForFunction(() => document.body.dataset.hangar === 'ready', null, { timeout: 60000 });
  return p;
}

// Runs `act` and waits for body[data-state] to become `state`; seconds, and the page's status.
async function timed(p, act, state) {
  await p.evaluate(() => { document.body.dataset.state = 'working'; });
  const t0 = Date.now();
  await act();
  await p.waitForFunction(s => [s, 'error'].includes(document.body.dataset.state), state, { timeout: 300000 });
  const secs = (Date.now() - t0) / 1000;
  const [got, status, error] = await p.evaluate(() => [document.body.dataset.state, document.getElementById('status').textContent, document.getElementById('error').textContent]);
  if (got !== state) throw new Error(`${got}: ${error}`);
  return { secs, status };
}

// Chooses model `m` as lib/web_check.mjs does.
async function pick(p, m) {
  if (m.includes('::')) {
    const [dir, name] = m.split('::');
    await p.setInputFiles('#open-folder', dir);
    const sel = `#files [data-path="${name}"]`;
    await p.waitForSelector(sel, { timeout: 120000 });
    await p.click(sel);
  } else {
    await p.setInputFiles('#open', m.split(','));
  }
}

// Chooses `m` again in a page that has shown something.
const choose = (p, m) => async () => {
  // Emptied first: choosing the same files again fires no change event otherwise.
  await p.evaluate(() => { for (const id of ['open', 'open-folder']) document.getElementById(id).value = ''; });
  await p.evaluate(() => document.getElementById('files').replaceChildren());
  await pick(p, m);
};

// A catalog of n entries.
const dir = join(tmp, 'catalog');
const lines = [];
for (let i = 0; i < +n; i++) lines.push(`assets/units/size_${i % 7}/ship_${i >> 6}_data/part_${i}-lod0.xmf 0 1700000000 00000000000000000000000000000000`);
execFileSync('mkdir', ['-p', dir]);
writeFileSync(join(dir, '01.cat'), lines.join('\n') + '\n');
writeFileSync(join(dir, '01.dat'), '');
{
  const p = await page();
  const r = await timed(p, () => p.setInputFiles('#open-folder', dir), 'listed');
  console.log(`catalog of ${n} entries listed\t${r.secs.toFixed(2)} s\t${r.status}`);
  await p.close();
}

const median = xs => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const m of models) {
  const name = basename(m.includes('::') ? m.split('::')[1] : m.split(',')[0]);
  const p = await page();
  const first = await timed(p, choose(p, m), 'shown');
  const ms1 = await p.evaluate(() => window.hangarShownMs);
  // Chosen again: opened afresh (a new workspace), with the wasm's code now optimized.
  const again = await timed(p, choose(p, m), 'shown');
  const ms2 = await p.evaluate(() => window.hangarShownMs);
  await p.close();
  // The CLI on the same files: the model, its motions, out.glb.
  const files = m.includes('::') ? [m.replace('::', '/')] : m.split(',');
  const cli = [files[0], ...files.slice(1).flatMap(f => ['--motion', f]), join(tmp, 'out.glb')];
  const runs = [0, 1, 2].map(() => { const t = process.hrtime.bigint(); execFileSync(hangar, ['convert', ...cli], { stdio: 'ignore' }); return Number(process.hrtime.bigint() - t) / 1e6; });
  const native = median(runs);
  const glb = statSync(join(tmp, 'out.glb')).size;
  console.log(`${name}: first frame\t${first.secs.toFixed(2)} s\t${first.status}`);
  console.log(`${name}: to GLB in the page ${Math.round(ms1)} ms (again ${Math.round(ms2)} ms), ${basename(hangar)} convert ${Math.round(native)} ms (${glb} bytes): ratio ${(ms1 / native).toFixed(2)} (again ${(ms2 / native).toFixed(2)})`);
}

// The baseline page: target/web with the page files of git revision `rev`, served here.
function baselinePage(rev) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const dir = join(tmp, 'baseline');
  const served = fileURLToPath(new URL('../target/web', import.meta.url));
  cpSync(served, dir, { recursive: true });
  for (const f of ['index.html', 'style.css', 'app.js', 'worker.js', 'view3d.js', 'flat.js']) {
    writeFileSync(join(dir, f), execFileSync('git', ['-C', root, 'show', `${rev}:web/${f}`]));
  }
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm', '.json': 'application/json' };
  const server = createServer((req, res) => {
    const path = join(dir, decodeURIComponent(new URL(req.url, 'http://x').pathname));
    try {
      const body = readFileSync(path.endsWith('/') ? join(path, 'index.html') : path);
      res.writeHead(200, { 'content-type': types[extname(path)] || (path.endsWith('/') ? 'text/html' : 'application/octet-stream') });
      res.end(body);
    } catch { res.writeHead(404); res.end(); }
  });
  return new Promise(ok => server.listen(0, '127.0.0.1', () => ok({ url: `http://127.0.0.1:${server.address().port}/`, server })));
}

// A model chosen right after the page's load event, as the acceptance check does: seconds to
// data-state=shown and the page's steps (ms from the choice).
async function fromLoad(url, m) {
  const p = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await p.goto(url, { waitUntil: 'load' });
  const t0 = Date.now();
  await pick(p, m);   // nothing asked of the page in between
  await p.waitForFunction(() => ['shown', 'error'].includes(document.body.dataset.state), null, { timeout: 300000 });
  const secs = (Date.now() - t0) / 1000;
  // The marks on the page's clock; its origin on the machine's, which t0 is on.
  const [origin, marks] = await p.evaluate(() => [performance.timeOrigin, performance.getEntriesByType('mark').filter(e => e.name.startsWith('hangar:')).map(e => [e.name.slice(7), e.startTime])]);
  await p.close();
  return { secs, marks: marks.map(([k, t]) => [k, Math.round(t + origin - t0)]).sort((a, b) => a[1] - b[1]) };
}

// A busy loop on every core while `f` runs.
async function loaded(f) {
  const busy = Array.from({ length: availableParallelism() }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  try { return await f(); } finally { for (const b of busy) b.kill(); }
}

const rounds = +(process.env.ROUNDS || 5);
const rev = process.env.BASELINE ?? 'main';
const base = rev ? await baselinePage(rev) : null;
const pages = [['this page', url], ...(base ? [[`${rev}'s page`, base.url]] : [])];
for (const m of models) {
  const name = basename(m.includes('::') ? m.split('::')[1] : m.split(',')[0]);
  for (const [load, run] of [['quiet', f => f()], ['under load', loaded]]) {
    const runs = pages.map(() => []);
    await run(async () => {
      for (let r = 0; r < rounds; r++) for (const [i, [, u]] of pages.entries()) runs[i].push(await fromLoad(u, m));
    });
    const line = runs.map((rs, i) => {
      const sorted = [...rs].sort((a, b) => a.secs - b.secs);
      return `${pages[i][0]} ${sorted[rounds >> 1].secs.toFixed(2)} s (${sorted[0].secs.toFixed(2)}-${sorted[rounds - 1].secs.toFixed(2)})`;
    });
    console.log(`${name}: first frame from load, ${load}, median of ${rounds}: ${line.join(', ')}`);
    const median = [...runs[0]].sort((a, b) => a.secs - b.secs)[rounds >> 1];
    console.log(`\tsteps of this page's median run (ms from the choice): ${median.marks.map(([k, t]) => `${k} ${t}`).join(', ')}`);
  }
}
base?.server.close();
await browser.close();
