// The page in headless Chromium (playwright-core), as a user would use it: a file of each family
// through #open, a component folder through #open-folder and a click on it in #files. Each must
// reach data-state=shown with the command line's numbers in [data-stat] (vertices, triangles, and
// the nodes and animations of the GLB the CLI writes), paint #view, and log no console error.
// Screenshots go to target/web-test/. Prints one line a case, then 'N passed, M failed'.
// usage: node web/test.mjs URL HANGAR_BINARY CORPUS
import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, mkdtempSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { tmpdir } from 'node:os';
import { PNG } from 'pngjs';

const [url, hangar, corpus] = process.argv.slice(2);
const shots = 'target/web-test';
mkdirSync(shots, { recursive: true });
const tmp = mkdtempSync(join(tmpdir(), 'hangar-web-test-'));

// What the command line says of `files` (the first the model, the others its motions).
function expected(files) {
  const info = JSON.parse(execFileSync(hangar, ['info', '--json', files[0]], { encoding: 'utf8' }));
  const e = { vertices: info.vertices, triangles: info.triangles };
  const glb = join(tmp, 'x.glb');
  try {
    execFileSync(hangar, ['convert', files[0], ...files.slice(1).flatMap(m => ['--motion', m]), glb], { stdio: 'ignore' });
    const b = readFileSync(glb);
    const json = JSON.parse(b.subarray(20, 20 + b.readUInt32LE(12)).toString('utf8'));
    e.nodes = (json.nodes || []).length;
    e.animations = (json.animations || []).length;
  } catch { /* a picture: no GLB */ }
  return e;
}

const within = (dir, test) => readdirSync(dir).filter(test).sort().map(f => join(dir, f));
const biggest = files => files.sort((a, b) => statSync(b).size - statSync(a).size)[0];
const dropship = join(corpus, 'x4-components/xirsoi__dropships/dropships/assets/units/size_m');
const cases = [
  { name: 'xmf', files: [within(join(corpus, 'x4'), f => f.endsWith('-lod0.xmf'))[0]] },
  { name: 'm3-largest', files: [biggest(within(join(corpus, 'm3'), f => f.endsWith('.m3')))] },
  { name: 'xac-xsm', files: [join(corpus, 'emfx/vic2vl__Zulu_Infantry.xac'), join(corpus, 'emfx/vic2vl__Zulu_Idle.xsm')] },
  { name: 'component-folder', folder: dropship, pick: 'arg_dropship.xml', model: join(dropship, 'arg_dropship.xml') },
];
for (const c of cases) c.expect = expected(c.files || [c.model]);

const args = '--no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking --disable-component-update --disable-sync'.split(' ');
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true, args });
let passed = 0, failed = 0;
for (const c of cases) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors = [];
  page.on('console', m => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', e => errors.push(String(e)));
  const bad = [];
  const t0 = Date.now();
  try {
    await page.goto(url, { waitUntil: 'load', timeout: 60000 });
    if (c.files) await page.setInputFiles('#open', c.files);
    else {
      await page.setInputFiles('#open-folder', c.folder);
      const sel = `#files [data-path="${c.pick}"]`;
      await page.waitForSelector(sel, { timeout: 60000 });
      await page.click(sel);
    }
    await page.waitForFunction(() => ['shown', 'error'].includes(document.body.dataset.state), null, { timeout: 120000 });
    const state = await page.evaluate(() => document.body.dataset.state);
    if (state !== 'shown') bad.push('error: ' + await page.textContent('#error'));
    await page.waitForTimeout(300);
    const stats = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('[data-stat]')].map(e => [e.dataset.stat, e.textContent.trim()])));
    for (const [k, v] of Object.entries(c.expect)) {
      if (String(v) !== String(stats[k]).replace(/[^0-9]/g, '')) bad.push(`${k} ${stats[k]} != ${v}`);
    }
    const png = PNG.sync.read(await page.locator('#view').screenshot({ path: `${shots}/${c.name}.png` }));
    const bg = [0, 1, 2].map(i => png.data[i]);
    let painted = 0;
    for (let i = 0; i < png.data.length; i += 4) {
      if (Math.abs(png.data[i] - bg[0]) + Math.abs(png.data[i + 1] - bg[1]) + Math.abs(png.data[i + 2] - bg[2]) > 24) painted++;
    }
    if (painted / (png.width * png.height) <= 0.02) bad.push('nothing drawn in #view');
  } catch (e) {
    bad.push(String(e.message || e).split('\n')[0]);
  }
  if (errors.length) bad.push('console: ' + errors[0].slice(0, 120));
  const secs = ((Date.now() - t0) / 1000).toFixed(2);
  console.log(`${bad.length ? 'fail' : 'ok'}\t${c.name}\t${secs} s\t${bad.join('; ')}`);
  bad.length ? failed++ : passed++;
  await page.close();
}
await browser.close();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
