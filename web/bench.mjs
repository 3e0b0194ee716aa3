// Times the page in headless Chromium (playwright-core): a folder with a catalog of N entries
// listed, and each model given, from files chosen to first frame.
// usage: node web/bench.mjs URL [N] [MODEL...]   (serve target/web at URL first)
import { chromium } from 'playwright-core';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [url, n = '300000', ...models] = process.argv.slice(2);
const args = (process.env.CHROMIUM_ARGS || '--no-sandbox --disable-gpu').split(' ');
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true, args });

async function timed(what, act, state) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on('pageerror', e => console.error(String(e)));
  await page.goto(url, { waitUntil: 'load' });
  const t0 = Date.now();
  await act(page);
  await page.waitForFunction(s => [s, 'error'].includes(document.body.dataset.state), state, { timeout: 120000 });
  const secs = (Date.now() - t0) / 1000;
  const got = await page.evaluate(() => [document.body.dataset.state, document.getElementById('status').textContent, document.getElementById('error').textContent]);
  console.log(`${what}\t${secs.toFixed(2)} s\t${got.join(' | ')}`);
  await page.close();
}

// A catalog of n entries (empty files, so its .dat is empty): the index is what is read.
const dir = mkdtempSync(join(tmpdir(), 'hangar-web-cat-'));
const lines = [];
for (let i = 0; i < +n; i++) lines.push(`assets/units/size_${i % 7}/ship_${i >> 6}_data/part_${i}-lod0.xmf 0 1700000000 00000000000000000000000000000000`);
writeFileSync(join(dir, '01.cat'), lines.join('\n') + '\n');
writeFileSync(join(dir, '01.dat'), '');
await timed(`catalog of ${n} entries listed`, p => p.setInputFiles('#open-folder', dir), 'listed');
for (const m of models) await timed(`${m}: first frame`, p => p.setInputFiles('#open', m.split(',')), 'shown');
await browser.close();
