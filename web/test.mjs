// The page in headless Chromium (playwright-core), as a user would use it: a file of each family
// through #open, a component folder through #open-folder and a click on it in #files. Each must
// reach data-state=shown with the command line's numbers in [data-stat] (vertices, triangles, and
// the nodes and animations of the GLB the CLI writes), paint #view, and log no console error.
// Then the texture pickers (a DDS's mip levels, a cube map's faces: sizes and colours) and the
// download buttons (which, and the bytes: an .xmf rewritten as it was, the CLI's GLB, a component
// folder's .zip unpacked as the folder, file for file). Then an X4 multimat part's pixels against the
// layers its vertices name, and a StarCraft II mod dropped as one MPQ archive.
// Screenshots go to target/web-test/. Prints one line a case, then 'N passed, M failed'.
// usage: node web/test.mjs URL HANGAR_BINARY CORPUS
import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, mkdtempSync, writeFileSync } from 'node:fs';
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
// HANGAR_WEB_ONLY=REGEX runs only the cases whose names match.
const only = process.env.HANGAR_WEB_ONLY ? new RegExp(process.env.HANGAR_WEB_ONLY) : null;
for (const c of cases) c.expect = expected(c.files || [c.model]);

// The share of #view's pixels that differ from the background (its top-left pixel); the
// screenshot is kept as `name`.png.
async function painted(page, name) {
  const png = PNG.sync.read(await page.locator('#view').screenshot({ path: `${shots}/${name}.png` }));
  const bg = [0, 1, 2].map(i => png.data[i]);
  let n = 0;
  for (let i = 0; i < png.data.length; i += 4) {
    if (Math.abs(png.data[i] - bg[0]) + Math.abs(png.data[i + 1] - bg[1]) + Math.abs(png.data[i + 2] - bg[2]) > 24) n++;
  }
  return n / (png.width * png.height);
}

const args = '--no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking --disable-component-update --disable-sync'.split(' ');
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true, args });
let passed = 0, failed = 0;
for (const c of cases) {
  if (only && !only.test(c.name)) continue;
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
      if (c.name === 'component-folder') {
        // The folder as a tree: the data folder's parts under its open branch, named by file.
        const tree = await page.evaluate(() => {
          const li = document.querySelector('#files [data-path="arg_dropship_data/anim_main-lod0.xmf"]');
          const s = li?.closest('details[open]')?.querySelector('summary');
          return s && [s.textContent, +s.dataset.count, li.textContent];
        });
        const xmfs = readdirSync(join(dropship, 'arg_dropship_data')).filter(f => f.endsWith('.xmf')).length;
        if (JSON.stringify(tree) !== JSON.stringify(['arg_dropship_data/', xmfs, 'anim_main-lod0.xmf'])) bad.push(`tree ${JSON.stringify(tree)}, expected the ${xmfs} parts under arg_dropship_data/`);
      }
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
    if (await painted(page, c.name) <= 0.02) bad.push('nothing drawn in #view');
  } catch (e) {
    bad.push(String(e.message || e).split('\n')[0]);
  }
  if (errors.length) bad.push('console: ' + errors[0].slice(0, 120));
  const secs = ((Date.now() - t0) / 1000).toFixed(2);
  console.log(`${bad.length ? 'fail' : 'ok'}\t${c.name}\t${secs} s\t${bad.join('; ')}`);
  bad.length ? failed++ : passed++;
  await page.close();
}
// Texture pickers and download buttons: what the page offers and what it hands over.
const capillary = join(corpus, 'textures/ArtemKez__testMod/Base.SC2Data/Assets/Textures/Capillary Tower dif.dds');
const xmf = cases[0].files[0];

// A cube map of 8x8 faces with 2 mip levels, 32-bit BGRA, one colour a face (red, green, blue,
// yellow, magenta, cyan): the surface picker must show each face's colour.
function cubeDds() {
  const colours = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 0], [255, 0, 255], [0, 255, 255]];
  const h = Buffer.alloc(128);
  h.write('DDS ', 0);
  [124, 0x21007, 8, 8, 32, 0, 2].forEach((v, i) => h.writeUInt32LE(v, 4 + 4 * i));
  [32, 0x41, 0, 32, 0xff0000, 0xff00, 0xff, 0xff000000].forEach((v, i) => h.writeUInt32LE(v >>> 0, 76 + 4 * i));
  h.writeUInt32LE(0x401008, 108);
  h.writeUInt32LE(0xfe00, 112);
  const faces = colours.map(([r, g, b]) => Buffer.from(Array(64 + 16).fill([b, g, r, 255]).flat()));
  return Buffer.concat([h, ...faces]);
}
const cube = join(tmp, 'cube.dds');
writeFileSync(cube, cubeDds());

// Waits for the state after an action; the top-left pixel of the picture and its size.
async function picked(page, act) {
  await page.evaluate(() => { document.body.dataset.state = 'working'; });
  await act();
  await page.waitForFunction(() => ['shown', 'error'].includes(document.body.dataset.state), null, { timeout: 60000 });
  return page.evaluate(async () => {
    const img = document.querySelector('#view img');
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.naturalWidth; c.height = img.naturalHeight;
    const g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    return { state: document.body.dataset.state, error: document.getElementById('error').textContent,
      size: document.getElementById('texture-size').textContent, pixel: [...g.getImageData(0, 0, 1, 1).data.slice(0, 3)],
      mips: document.getElementById('mip').options.length, surfaces: document.getElementById('surface').options.length };
  });
}

// Opens `files`, waits for the download buttons; their labels.
async function buttons(page, files) {
  await page.setInputFiles('#open', files);
  await page.waitForSelector('#downloads[data-ready="yes"]', { timeout: 120000 });
  return page.$$eval('#downloads button', bs => bs.map(b => b.textContent));
}

// Clicks the download button `label`; the bytes handed over.
async function take(page, label) {
  const [d] = await Promise.all([page.waitForEvent('download', { timeout: 120000 }), page.click(`#downloads button:text-is("${label}")`)]);
  return readFileSync(await d.path());
}

// A mod folder opened: checked whole, as `hangar validate DIR --json` does, and shown as hangar's
// report (a tree of the files with their findings, references linked to the files they name).
function modCheck(dir) {
  return async page => {
    const bad = [];
    let cli;
    try { cli = execFileSync(hangar, ['validate', dir, '--json'], { encoding: 'utf8' }); } catch (e) { cli = e.stdout; }
    const findings = JSON.parse(cli);
    const want = ['error', 'warning'].map(s => findings.filter(f => f.severity === s).length);
    await page.setInputFiles('#open-folder', dir);
    await page.waitForFunction(() => ['mod', 'error'].includes(document.body.dataset.state), null, { timeout: 120000 });
    const got = await page.evaluate(() => {
      const head = document.querySelector('#validate [data-errors]');
      const doc = document.getElementById('mod-report')?.contentDocument;
      if (!head || !doc) return { error: document.getElementById('error').textContent };
      const links = [...doc.querySelectorAll('a[href^="#f"]')];
      return {
        head: [+head.dataset.errors, +head.dataset.warnings],
        report: ['error', 'warning'].map(s => doc.querySelectorAll(`li.${s}`).length),
        files: doc.querySelectorAll('div.file').length,
        links: links.length,
        dangling: links.filter(a => !doc.getElementById(a.getAttribute('href').slice(1))).length,
      };
    });
    if (got.error !== undefined) return [`not shown: ${got.error}`];
    if (String(got.head) !== String(want)) bad.push(`page says ${got.head} errors, warnings; the CLI ${want}`);
    if (String(got.report) !== String(want)) bad.push(`report lists ${got.report} errors, warnings; the CLI ${want}`);
    if (got.dangling) bad.push(`${got.dangling} of ${got.links} links name no file of the report`);
    console.log(`\tmod ${dir.split('/').pop()}: ${want[0]} errors, ${want[1]} warnings as the CLI; ${got.files} files, ${got.links} links`);
    return bad;
  };
}
// A textured M3 drawn lit with its own material: what the page uploaded to the GPU read back
// (the normal map decoded to tangent space, not SC2's DXT5nm layout), and the team colour picker
// recolouring the part the diffuse's alpha leaves to the player.
const testMod = join(corpus, 'textures/ArtemKez__testMod');
// Opens `folder`, shows `pick` in it; each drawn mesh's material: its type, which maps it has and
// the mean RGBA of its normal map as the GPU holds it (read back from the texture the page uploaded).
async function drawn(page, folder, pick) {
  await page.setInputFiles('#open-folder', folder);
  const sel = `#files [data-path="${pick}"]`;
  await page.waitForSelector(sel, { timeout: 60000 });
  await page.click(sel);
  await page.waitForFunction(() => ['shown', 'error'].includes(document.body.dataset.state), null, { timeout: 120000 });
  if (await page.evaluate(() => document.body.dataset.state) !== 'shown') return { error: await page.textContent('#error') };
  return page.evaluate(() => {
    const v = window.hangarView, gl = v.renderer.getContext();
    const mean = tex => {
      const t = v.renderer.properties.get(tex).__webglTexture;
      if (!t) return null;
      const { width: w, height: h } = tex.image;
      const fb = gl.createFramebuffer();
      gl.bindFramebuffer(gl.FRAMEBUFFER, fb);
      gl.framebufferTexture2D(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.TEXTURE_2D, t, 0);
      const px = new Uint8Array(w * h * 4);
      gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, px);
      gl.bindFramebuffer(gl.FRAMEBUFFER, null);
      gl.deleteFramebuffer(fb);
      const sum = [0, 0, 0, 0];
      for (let i = 0; i < px.length; i++) sum[i & 3] += px[i];
      return sum.map(x => Math.round(x / (w * h)));
    };
    const meshes = [];
    v.model.traverse(o => {
      if (!o.isMesh || o.userData.marker || !o.visible) return;
      const m = o.material;
      meshes.push({ type: m.type, normal: m.normalMap && mean(m.normalMap), specular: !!m.specularColorMap, ao: !!m.aoMap,
        metal: !!m.metalnessMap, emissive: !!m.emissiveMap });
    });
    return { meshes: meshes.filter(m => m.normal), team: v.teamUsed };
  });
}
// Tangent space: x and y about 0 (128), z near 1 (255); SC2's DXT5nm would be (255, y, 0, x).
const tangentSpace = n => n && Math.abs(n[0] - 128) <= 24 && Math.abs(n[1] - 128) <= 24 && n[2] >= 200;

async function texturedM3(page) {
  const bad = [];
  const got = await drawn(page, testMod, 'Base.SC2Data/Assets/Models/Capillary Tower.m3');
  if (got.error !== undefined) return [`error: ${got.error}`];
  const m = got.meshes[0];
  if (!m) return ['no mesh drawn with a normal map'];
  if (m.type !== 'MeshPhysicalMaterial') bad.push(`drawn with ${m.type}, not its own lit material`);
  if (!m.specular || !m.ao) bad.push(`specular map ${m.specular}, occlusion map ${m.ao}`);
  const n = m.normal;
  if (!tangentSpace(n)) bad.push(`uploaded normal map mean ${n}`);
  if (!got.team || await page.isHidden('#team')) bad.push('no team colour picker');
  // The picker: red, then green; the pixels that change are the team's, and they follow.
  const shot = async colour => {
    await page.fill('#team', colour);
    await page.waitForTimeout(300);
    return PNG.sync.read(await page.locator('#view').screenshot({ path: `${shots}/textured-m3-team-${colour.slice(1)}.png` }));
  };
  await page.waitForTimeout(1200);   // the view redraws at full resolution a second after the first frame
  const red = await shot('#ff0000'), green = await shot('#00ff00');
  let changed = 0, redder = 0;
  for (let i = 0; i < red.data.length; i += 4) {
    const d = [0, 1, 2].map(k => red.data[i + k] - green.data[i + k]);
    if (Math.abs(d[0]) + Math.abs(d[1]) + Math.abs(d[2]) > 30) { changed++; if (d[0] > 0 && d[1] < 0) redder++; }
  }
  const pixels = red.width * red.height;
  console.log(`\ttextured-m3: normal map uploaded as mean ${n}; team colour changes ${changed} of ${pixels} pixels, ${redder} redder under red`);
  if (changed < pixels / 1000 || redder < changed * 0.85) bad.push(`team colour changed ${changed} pixels, ${redder} of them redder under red`);
  return bad;
}

// An X4 ship from its mod folder: normal, metal-roughness (metal and smooth maps) and glow maps drawn.
async function texturedX4(page) {
  const got = await drawn(page, join(corpus, 'textures/DeadAirRT__deadairfactionamarr'), 'assets/units/size_m/ship_dam_m_coercer.xml');
  if (got.error !== undefined) return [`error: ${got.error}`];
  const m = got.meshes[0];
  if (!m) return ['no mesh drawn with a normal map'];
  console.log(`\ttextured-x4: ${m.type}, normal map uploaded as mean ${m.normal}, metal-roughness ${m.metal}, emissive ${m.emissive}`);
  const bad = [];
  if (m.type !== 'MeshStandardMaterial' || !m.metal || !m.emissive) bad.push(`drawn with ${JSON.stringify(m)}`);
  if (!tangentSpace(m.normal)) bad.push(`uploaded normal map mean ${m.normal}`);
  if (got.team) bad.push('a team colour on an X4 ship');
  return bad;
}

const mods = join(corpus, 'x4-mods');
const modChecks = readdirSync(mods).filter(d => statSync(join(mods, d)).isDirectory()).sort()
  .map(d => [`mod-check ${d}`, modCheck(join(mods, d))]);

const checks = [
  ['textured-m3', texturedM3],
  ['textured-x4', texturedX4],
  ...modChecks,
  ['dds-mip-picker', async page => {
    const bad = [];
    const a = await picked(page, () => page.setInputFiles('#open', capillary));
    if (a.size !== '512 x 512' || a.mips !== 10 || a.surfaces !== 1) bad.push(`first: ${JSON.stringify(a)}`);
    const b = await picked(page, () => page.selectOption('#mip', '1'));
    if (b.size !== '256 x 256') bad.push(`mip 1: ${b.size} ${b.error}`);
    const c = await picked(page, () => page.selectOption('#mip', '9'));
    if (c.size !== '1 x 1') bad.push(`mip 9: ${c.size} ${c.error}`);
    return bad;
  }],
  ['cube-surface-picker', async page => {
    const bad = [];
    const a = await picked(page, () => page.setInputFiles('#open', cube));
    if (a.size !== '8 x 8' || a.mips !== 2 || a.surfaces !== 6 || String(a.pixel) !== '255,0,0') bad.push(`face 0: ${JSON.stringify(a)}`);
    const b = await picked(page, () => page.selectOption('#surface', '1'));
    if (String(b.pixel) !== '0,255,0') bad.push(`face 1: ${JSON.stringify(b)}`);
    const c = await picked(page, () => page.selectOption('#surface', '5'));
    if (String(c.pixel) !== '0,255,255') bad.push(`face 5: ${JSON.stringify(c)}`);
    const d = await picked(page, () => page.selectOption('#mip', '1'));
    if (d.size !== '4 x 4' || String(d.pixel) !== '0,255,255') bad.push(`face 5 mip 1: ${JSON.stringify(d)}`);
    return bad;
  }],
  ['xmf-downloads', async page => {
    const bad = [];
    const got = await buttons(page, xmf);
    const want = ['GLB', 'GLB --quantize', 'GLB --quantize --compress', 'glTF', 'OBJ', 'dump .json', 'component .zip', '.xmf'];
    if (String(got) !== String(want)) bad.push(`buttons ${got}`);
    // The .xmf is the file rewritten byte for byte; the GLB is the CLI's, byte for byte.
    if (!(await take(page, '.xmf')).equals(readFileSync(xmf))) bad.push('.xmf differs from the file');
    const glb = await take(page, 'GLB');
    execFileSync(hangar, ['convert', xmf, join(tmp, 'cli.glb')], { stdio: 'ignore' });
    if (!glb.equals(readFileSync(join(tmp, 'cli.glb')))) bad.push(`GLB ${glb.length} bytes, the CLI's ${statSync(join(tmp, 'cli.glb')).size}`);
    const q = await take(page, 'GLB --quantize');
    if (q.toString('latin1', 0, 4) !== 'glTF' || q.readUInt32LE(8) !== q.length || q.length >= glb.length) bad.push(`quantized ${q.length} bytes, plain ${glb.length}`);
    return bad;
  }],
  ['xac-downloads', async page => {
    const got = await buttons(page, cases[2].files[0]);
    const want = ['GLB', 'GLB --quantize', 'GLB --quantize --compress', 'glTF', 'OBJ', 'dump .json', 'component .zip', '.xac'];
    return String(got) === String(want) ? [] : [`buttons ${got}`];
  }],
  ['component-zip', async page => {
    // The component shown from its folder downloads as one .zip: its XML, every file of its data
    // folder and its .ani, each the folder's bytes.
    const bad = [];
    await page.setInputFiles('#open-folder', dropship);
    await page.click('#files [data-path="arg_dropship.xml"]');
    await page.waitForSelector('#downloads[data-ready="yes"]', { timeout: 120000 });
    const [d] = await Promise.all([page.waitForEvent('download', { timeout: 120000 }), page.click('#downloads button:text-is("component .zip")')]);
    if (d.suggestedFilename() !== 'arg_dropship.zip') bad.push(`named ${d.suggestedFilename()}`);
    const out = join(tmp, 'zip');
    execFileSync('unzip', ['-q', '-o', await d.path(), '-d', out]);
    const walk = (dir, pre = '') => readdirSync(dir, { withFileTypes: true }).flatMap(e => e.isDirectory() ? walk(join(dir, e.name), pre + e.name + '/') : [pre + e.name]).sort();
    const want = walk(dropship), got = walk(out);
    if (String(got) !== String(want)) bad.push(`${got.length} files, the folder ${want.length}`);
    const differ = want.filter(f => got.includes(f) && !readFileSync(join(out, f)).equals(readFileSync(join(dropship, f))));
    if (differ.length) bad.push(`${differ.length} differ, as ${differ[0]}`);
    return bad;
  }],
  ['dds-downloads', async page => {
    const bad = [];
    const got = await buttons(page, capillary);
    // No DDS: its BC7 encoder is C++, in the native build only.
    if (String(got) !== 'PNG') bad.push(`buttons ${got}`);
    const png = await take(page, 'PNG');
    if (png.readUInt32BE(16) !== 512 || png.readUInt32BE(20) !== 512) bad.push(`PNG ${png.readUInt32BE(16)}x${png.readUInt32BE(20)}`);
    // The PNG download follows the mip picker: level 1 is 256 pixels wide.
    const lvl = await picked(page, () => page.selectOption('#mip', '1'));
    if (lvl.size !== '256 x 256') bad.push(`mip 1 shown as ${lvl.size}`);
    const small = await take(page, 'PNG');
    if (small.readUInt32BE(16) !== 256 || small.readUInt32BE(20) !== 256) bad.push(`PNG of mip 1 ${small.readUInt32BE(16)}x${small.readUInt32BE(20)}`);
    return bad;
  }],
];
// X4's multimat material drawn as the game reads its vertices (issue 52): at points of the canvas,
// the triangle a ray from the camera hits there is looked up; where it is a multimat mesh's and its
// three vertices name one layer (blue byte of `_X4_MULTIMAT`), the pixel must have that layer's hue
// (blender/colors.py's, mixed towards dirt by the vertices' alpha as the ray's point weighs them).
// A mesh of another material that carries colour sets must show its material colour untinted.
const multimatXmf = join(corpus, 'x4/xirsoi__part_cockpit-lod0.xmf');
const LAYER_STEP = 0.618034, DIRT = [0.12, 0.1, 0.08];
// HSV to RGB (Blender's CombineColor HSV) and an RGB colour's hue and saturation.
const hsv = (h, s, v) => [1, 2 / 3, 1 / 3].map(o => v * (1 - s + s * Math.min(Math.max(Math.abs(((h + o) % 1) * 6 - 3) - 1, 0), 1)));
function hueOf([r, g, b]) {
  const max = Math.max(r, g, b), d = max - Math.min(r, g, b);
  if (d <= 0) return { hue: 0, sat: 0 };
  const h = max === r ? (g - b) / d : max === g ? 2 + (b - r) / d : 4 + (r - g) / d;
  return { hue: ((h / 6) % 1 + 1) % 1, sat: d / max };
}
const hueGap = (a, b) => Math.min(Math.abs(a - b), 1 - Math.abs(a - b));
// A sample of a multimat triangle whose vertices name one layer, bright enough for its hue to tell.
const oneLayer = s => s.layers && s.layers.every(l => l === s.layers[0]) && Math.max(...s.rgb) >= 0.02;
// Whether the sample is drawn in its layer's hue (mixed towards dirt as its vertices weigh it).
const inLayerHue = s => hueGap(hueOf(s.rgb).hue, hueOf(hsv((s.layers[0] * LAYER_STEP) % 1, 0.6, 0.8).map((c, k) => c + (DIRT[k] - c) * s.dirt)).hue) <= 0.03;

// What the view drew at every `step`-th pixel (linear RGB) with what the ray there hits.
async function sampled(page, step) {
  return page.evaluate(async step => {
    const THREE = await import(new URL('three/build/three.module.js', location.href).href);
    const v = window.hangarView;
    v.frame();
    const gl = v.renderer.getContext();
    const W = gl.drawingBufferWidth, H = gl.drawingBufferHeight;
    const px = new Uint8Array(W * H * 4);
    gl.readPixels(0, 0, W, H, gl.RGBA, gl.UNSIGNED_BYTE, px);
    const meshes = [];
    v.model.traverseVisible(o => { if (o.isMesh && !o.userData.marker) meshes.push(o); });
    const lin = c => { c /= 255; return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
    const ray = new THREE.Raycaster(), out = [];
    for (let y = step / 2; y < H; y += step) {
      for (let x = step / 2; x < W; x += step) {
        // readPixels' rows run bottom up, as the view's y does.
        ray.setFromCamera(new THREE.Vector2((x + 0.5) / W * 2 - 1, (y + 0.5) / H * 2 - 1), v.camera);
        const hit = ray.intersectObjects(meshes, false)[0];
        if (!hit) continue;
        const o = hit.object, i = (y * W + x) * 4, m = o.material;
        const rgb = [0, 1, 2].map(k => lin(px[i + k]));
        const corners = [hit.face.a, hit.face.b, hit.face.c], w = hit.barycoord.toArray();
        const set = o.geometry.attributes.multimat;
        if (m.userData.multimat && set) {
          const layers = corners.map(k => Math.round(set.getZ(k) * 255));
          const dirt = corners.reduce((a, k, j) => a + w[j] * set.getW(k), 0);
          out.push({ layers, dirt, rgb });
        } else if (Object.keys((o.userData.full || o.geometry).attributes).some(k => k.startsWith('_x4_'))) {
          out.push({ plain: m.name, colour: m.color.toArray(), tinted: !!m.vertexColors || !!o.geometry.attributes.color, rgb });
        }
      }
    }
    return { samples: out, multimatMeshes: v.multimatUsed };
  }, step);
}

async function multimatDrawn(page) {
  const bad = [];
  await page.setInputFiles('#open', multimatXmf);
  await page.waitForFunction(() => ['shown', 'error'].includes(document.body.dataset.state), null, { timeout: 120000 });
  if (await page.evaluate(() => document.body.dataset.state) !== 'shown') return [`error: ${await page.textContent('#error')}`];
  await page.waitForTimeout(1300);   // the view redraws at full resolution a second after the first frame
  await page.locator('#view').screenshot({ path: `${shots}/multimat.png` });
  const { samples, multimatMeshes } = await sampled(page, 12);
  const perLayer = new Map();
  let layered = 0, matched = 0;
  for (const s of samples.filter(oneLayer)) {
    layered++;
    if (inLayerHue(s)) { matched++; perLayer.set(s.layers[0], (perLayer.get(s.layers[0]) || 0) + 1); }
  }
  const shown = [...perLayer].filter(([, n]) => n >= 5).map(([l]) => l).sort((a, b) => a - b);
  // Untinted: the pixel is the material colour times the light (one ratio for the three channels).
  const plain = samples.filter(s => s.plain !== undefined);
  const tinted = plain.filter(s => {
    if (s.tinted) return true;
    if (Math.min(...s.colour) < 0.05 || Math.max(...s.rgb) < 0.02) return false;
    const r = s.rgb.map((c, k) => c / s.colour[k]);
    return Math.max(...r) > Math.min(...r) * 1.15 + 0.01;
  });
  console.log(`\tmultimat: ${multimatMeshes} multimat meshes; ${matched} of ${layered} samples in their vertices' layer hue, layers ${shown.join(', ')} (${[...perLayer].map(([l, n]) => `${l}: ${n}`).join(', ')}); ${plain.length - tinted.length} of ${plain.length} samples of other parts with colour sets untinted`);
  if (!multimatMeshes) bad.push('no multimat mesh');
  if (layered < 40 || matched < layered * 0.9) bad.push(`${matched} of ${layered} samples in their layer's hue`);
  if (shown.length < 2) bad.push(`layers shown ${shown}`);
  if (plain.length < 20) bad.push(`${plain.length} samples of non-multimat parts with colour sets`);
  if (tinted.length) bad.push(`${tinted.length} of ${plain.length} samples of non-multimat parts tinted, as ${JSON.stringify(tinted[0])}`);
  // Lit with the file's own materials (the vertex's smoothness and metalness the surface's): the
  // shader compiles (three.js logs an error otherwise) and draws in the layers' hues where lit.
  await page.check('#pbr');
  await page.waitForTimeout(500);
  const lit = (await sampled(page, 12)).samples.filter(oneLayer);
  const litMatched = lit.filter(inLayerHue).length;
  console.log(`\tmultimat lit: ${litMatched} of ${lit.length} samples in their layer's hue`);
  if (await painted(page, 'multimat-lit') <= 0.02) bad.push('lit: nothing drawn');
  if (lit.length < 40 || litMatched < lit.length * 0.8) bad.push(`lit: ${litMatched} of ${lit.length} samples in their layer's hue`);
  return bad;
}

// A StarCraft II mod dropped as one MPQ archive (issue 51): listed as a catalog is, read by the
// worker through Blob.slice (counted inside the worker: never the file whole), its files and models
// as `hangar cat list --json` has them; a model shown, and its GLB download the CLI's bytes.
const sc2mod = join(corpus, 'sc2-archives/TeamKoprulu__SCEvo_Deploy/payload/Mods/SC Evolution Complete/SCEvo_CampaignMods/SCEvo_ImprovedCampaignAI.SC2Mod');
async function mpqArchive(page) {
  const bad = [];
  const size = statSync(sc2mod).size;
  const cli = JSON.parse(execFileSync(hangar, ['cat', 'list', '--json', sc2mod], { encoding: 'utf8' })).map(e => e.path.replaceAll('\\', '/'));
  const m3s = cli.filter(p => p.toLowerCase().endsWith('.m3'));
  // Every read of a Blob the worker makes: FileReaderSync (a slice) or Blob.arrayBuffer (whole).
  const worker = page.workers()[0] || await page.waitForEvent('worker', { timeout: 60000 });
  await worker.evaluate(() => {
    const reads = globalThis.hangarTestReads = [];
    const sync = FileReaderSync.prototype.readAsArrayBuffer, whole = Blob.prototype.arrayBuffer;
    FileReaderSync.prototype.readAsArrayBuffer = function (b) { reads.push(['slice', b.size]); return sync.call(this, b); };
    Blob.prototype.arrayBuffer = function () { reads.push(['whole', this.size]); return whole.call(this); };
  });
  await page.setInputFiles('#open', sc2mod);
  await page.waitForFunction(() => ['listed', 'mod', 'error'].includes(document.body.dataset.state), null, { timeout: 120000 });
  const list = await page.evaluate(() => ({ state: document.body.dataset.state, files: +document.getElementById('listing').dataset.files,
    paths: [...document.querySelectorAll('#files [data-path]')].map(li => li.dataset.path), error: document.getElementById('error').textContent }));
  if (list.state === 'error') return [`error: ${list.error}`];
  // The page's view: the archive's files but its tables ((listfile), (attributes)), and the
  // archive itself.
  const { files } = list, inside = cli.filter(p => !/^\(.*\)$/.test(p));
  if (files !== inside.length + 1) bad.push(`page lists ${files} files, the CLI ${inside.length} in the archive (${cli.length} with its tables) and the archive`);
  const lower = new Set(cli.map(p => p.toLowerCase()));
  const strays = list.paths.filter(p => !lower.has(p.toLowerCase()));
  const pageM3 = list.paths.filter(p => p.toLowerCase().endsWith('.m3'));
  if (strays.length) bad.push(`${strays.length} listed models not in the archive, as ${strays[0]}`);
  if (pageM3.length !== m3s.length) bad.push(`${pageM3.length} .m3 listed, the archive has ${m3s.length}`);
  // One model: its first frame, then its GLB as the CLI converts it from the archive.
  const model = pageM3.sort()[0];
  await page.evaluate(() => { document.body.dataset.state = 'working'; });
  await page.click(`#files [data-path="${model}"]`);
  await page.waitForFunction(() => ['shown', 'error'].includes(document.body.dataset.state), null, { timeout: 120000 });
  if (await page.evaluate(() => document.body.dataset.state) !== 'shown') return [...bad, `${model}: ${await page.textContent('#error')}`];
  const share = await painted(page, 'mpq-archive');
  if (share <= 0.02) bad.push(`${model}: nothing drawn in #view`);
  await page.waitForSelector('#downloads[data-ready="yes"]', { timeout: 120000 });
  const glb = await take(page, 'GLB');
  const out = join(tmp, 'mpq.glb');
  execFileSync(hangar, ['convert', `${sc2mod}::${model}`, out], { stdio: 'ignore' });
  if (!glb.equals(readFileSync(out))) bad.push(`GLB of ${model} ${glb.length} bytes, the CLI's ${statSync(out).size}`);
  const reads = await worker.evaluate(() => globalThis.hangarTestReads);
  const archive = reads.filter(([, n]) => n === size);
  const slices = reads.filter(([k]) => k === 'slice');
  const bytes = reads.reduce((a, [, n]) => a + n, 0);
  console.log(`\tmpq-archive: ${files - 1} files, ${list.paths.length} models (${pageM3.length} .m3) as the CLI's ${inside.length}; ${model} drawn (${(share * 100).toFixed(1)}% of #view), GLB ${glb.length} bytes = the CLI's; the worker read ${slices.length} slices, ${bytes} bytes of the ${size}-byte archive, largest ${Math.max(0, ...reads.map(r => r[1]))}`);
  if (archive.length) bad.push(`the archive was read whole ${archive.length} times (${archive[0][0]})`);
  if (slices.length < 2) bad.push(`${slices.length} slice reads`);
  if (bytes >= size / 2) bad.push(`${bytes} bytes read of the ${size}-byte archive to list it and show one model`);
  return bad;
}
checks.push(['multimat-drawn', multimatDrawn], ['mpq-archive', mpqArchive]);

// The mod tools. A new ship: a scene (a corpus ship converted by the CLI, stripped to what a
// modder builds: parts as meshes named after them with their collision meshes as `<part>-collision`
// children, the others `nocollision`; placed connections as empties carrying their attributes) and
// a template give the extension `hangar new ship` writes, file for file and byte for byte, as one
// ID.zip. LOD count 0 and collision meshes given: the page's wasm has no meshoptimizer (C++), so a
// LOD or a collision mesh it would make differs from the CLI's (see README, "In the browser").
const dropMod = join(mods, 'xirsoi__dropships__dropships');
const shipTemplate = 'ship_tel_m_dropship_01_a_macro';
function sceneGlb() {
  const full = join(tmp, 'tel.glb'), out = join(tmp, 'scene.glb');
  execFileSync(hangar, ['convert', join(dropMod, 'assets/units/size_m/tel_dropship.xml'), full], { stdio: 'ignore' });
  const b = readFileSync(full);
  const jlen = b.readUInt32LE(12);
  const g = JSON.parse(b.subarray(20, 20 + jlen).toString('utf8'));
  const bin = b.subarray(20 + jlen);
  const x4 = n => n.extras?.x4 || {};
  const nodes = [];
  const kept = new Map();
  const keep = (i, parent) => {
    const n = g.nodes[i];
    const k = x4(n);
    const kids = n.children || [];
    let mine = parent;
    const at = { translation: n.translation, rotation: n.rotation };
    if (k.part) {
      const lod0 = kids.map(c => g.nodes[c]).find(c => x4(c).lod === 0 && c.mesh !== undefined);
      const coll = kids.map(c => g.nodes[c]).find(c => x4(c).collision && c.mesh !== undefined);
      mine = nodes.length;
      nodes.push({ name: k.part, ...at, mesh: lod0?.mesh, extras: coll ? {} : { tags: 'nocollision' }, children: [] });
      if (coll) {
        nodes[mine].children.push(nodes.length);
        nodes.push({ name: `${k.part}-collision`, translation: coll.translation, rotation: coll.rotation, mesh: coll.mesh });
      }
    } else if (k.connection && k.attributes?.tags && (n.translation || n.rotation)) {
      const attrs = Object.fromEntries(Object.entries(k.attributes).filter(([a]) => a !== 'name' && a !== 'parent'));
      mine = nodes.length;
      nodes.push({ name: k.connection, ...at, extras: attrs, children: [] });
    }
    if (mine !== parent && parent !== null) nodes[parent].children.push(mine);
    if (mine !== parent && parent === null) kept.set(mine, true);
    for (const c of kids) keep(c, mine);
  };
  for (const r of g.scenes[g.scene || 0].nodes) for (const c of g.nodes[r].children || []) keep(c, null);
  for (const n of nodes) { for (const k of Object.keys(n)) if (n[k] === undefined || (Array.isArray(n[k]) && !n[k].length && k === 'children')) delete n[k]; }
  const out2 = { ...g, nodes, scenes: [{ name: 'ship', nodes: [...kept.keys()] }], scene: 0 };
  delete out2.animations; delete out2.skins;
  let json = Buffer.from(JSON.stringify(out2), 'utf8');
  json = Buffer.concat([json, Buffer.alloc((4 - json.length % 4) % 4, 0x20)]);
  const head = Buffer.alloc(20);
  head.write('glTF', 0); head.writeUInt32LE(2, 4); head.writeUInt32LE(20 + json.length + bin.length, 8);
  head.writeUInt32LE(json.length, 12); head.write('JSON', 16);
  writeFileSync(out, Buffer.concat([head, json, bin]));
  return { path: out, parts: nodes.filter(n => n.mesh !== undefined && !n.name.endsWith('-collision')).length };
}
const walkFiles = (dir, pre = '') => readdirSync(dir, { withFileTypes: true }).flatMap(e => e.isDirectory() ? walkFiles(join(dir, e.name), pre + e.name + '/') : [pre + e.name]).sort();

// Fills the new-ship form and builds; the zip unpacked (or the message shown).
async function buildShip(page, { template, id, name, lods }) {
  await page.waitForSelector('#new-ship:not([hidden])', { timeout: 60000 });
  if (template !== undefined) await page.fill('#ship-template', template);
  await page.fill('#ship-id', id);
  await page.fill('#ship-name', name || '');
  await page.fill('#ship-lods', String(lods));
  await page.evaluate(() => { document.getElementById('ship-result').dataset.state = ''; });
  const download = page.waitForEvent('download', { timeout: 180000 }).catch(() => null);
  await page.click('#ship-build');
  await page.waitForFunction(() => ['done', 'error'].includes(document.getElementById('ship-result').dataset.state), null, { timeout: 180000 });
  const state = await page.evaluate(() => document.getElementById('ship-result').dataset.state);
  if (state !== 'done') return { error: await page.textContent('#ship-result') };
  const d = await download;
  const dir = mkdtempSync(join(tmp, 'ship-'));
  execFileSync('unzip', ['-q', '-o', await d.path(), '-d', dir]);
  return { name: d.suggestedFilename(), dir: join(dir, id) };
}

// The CLI on the same inputs; the files that differ (or are missing on either side).
function sameAsCli(got, cliArgs, id) {
  const out = join(mkdtempSync(join(tmp, 'cli-')), id);
  execFileSync(hangar, ['new', 'ship', ...cliArgs, '--id', id, '--out', out], { stdio: 'ignore' });
  const want = walkFiles(out), have = walkFiles(got.dir);
  const bad = [];
  if (String(want) !== String(have)) bad.push(`zip holds ${have.length} files, the CLI wrote ${want.length}: ${want.filter(f => !have.includes(f)).concat(have.filter(f => !want.includes(f))).slice(0, 3)}`);
  const differ = want.filter(f => have.includes(f) && !readFileSync(join(out, f)).equals(readFileSync(join(got.dir, f))));
  if (differ.length) bad.push(`${differ.length} of ${want.length} files differ, as ${differ[0]}`);
  return { bad, files: want.length };
}

let scene;
checks.push(
  ['new-ship-macro-file', async page => {
    // The scene and a macro file dropped together (the macro alone: no ware or component found
    // around it, as for the CLI given that file alone).
    scene = scene || sceneGlb();
    const alone = mkdtempSync(join(tmp, 'macro-'));
    const macroFile = join(alone, `${shipTemplate}.xml`);
    writeFileSync(macroFile, readFileSync(join(dropMod, `assets/units/size_m/macros/${shipTemplate}.xml`)));
    await page.setInputFiles('#open', [scene.path, macroFile]);
    const got = await buildShip(page, { id: 'ship_web_a', name: 'Web A', lods: 0 });
    if (got.error) return [`error: ${got.error}`];
    const bad = [];
    if (got.name !== 'ship_web_a.zip') bad.push(`named ${got.name}`);
    const r = sameAsCli(got, [scene.path, '--template', macroFile, '--name', 'Web A', '--lods', '0'], 'ship_web_a');
    console.log(`\tnew-ship-macro-file: ${r.files} files as the CLI writes them, ${scene.parts} parts`);
    return bad.concat(r.bad);
  }],
  ['new-ship-template-folder', async page => {
    // The scene, then the dropships mod as the template folder, its macro chosen by name; a bad
    // id and a template that is no ship macro are said on the page, and the tab builds after them.
    scene = scene || sceneGlb();
    await page.setInputFiles('#open', scene.path);
    await page.waitForSelector('#new-ship:not([hidden])', { timeout: 60000 });
    await page.setInputFiles('#ship-game', dropMod);
    await page.waitForFunction(() => +document.getElementById('ship-game-name').dataset.files > 0, null, { timeout: 60000 });
    const bad = [];
    const e1 = await buildShip(page, { template: shipTemplate, id: 'bad id', lods: 0 });
    if (!/not an id/.test(e1.error || '')) bad.push(`bad id: ${JSON.stringify(e1)}`);
    const e2 = await buildShip(page, { template: 'content.xml', id: 'ship_web_c', lods: 0 });
    if (!/macro/.test(e2.error || '')) bad.push(`content.xml as the template: ${JSON.stringify(e2)}`);
    const got = await buildShip(page, { template: shipTemplate, id: 'ship_web_b', name: 'Web B', lods: 0 });
    if (got.error) return bad.concat([`error: ${got.error}`]);
    const r = sameAsCli(got, [scene.path, '--template', shipTemplate, '--game', dropMod, '--name', 'Web B', '--lods', '0'], 'ship_web_b');
    const content = readFileSync(join(got.dir, 'content.xml'), 'utf8');
    // The mod's content.xml has no id; its index paths name it (extensions\dropships\...).
    if (!content.includes('<dependency id="dropships"/>')) bad.push('content.xml has no dependency on the template mod');
    console.log(`\tnew-ship-template-folder: ${r.files} files as the CLI writes them; errors said: ${e1.error} | ${e2.error}`);
    return bad.concat(r.bad);
  }],
  ['find-by-name', async page => {
    // The game view searched by in-game name: the rows `hangar find --json` gives for the same
    // folder, and the component found opens as the model.
    const bad = [];
    const cli = JSON.parse(execFileSync(hangar, ['find', 'Cerberus', '--game', dropMod, '--json', '--no-cache'], { encoding: 'utf8' }));
    await page.setInputFiles('#open-folder', dropMod);
    await page.waitForFunction(() => ['mod', 'listed', 'error'].includes(document.body.dataset.state), null, { timeout: 120000 });
    if (await page.isHidden('#find')) return ['no search box for the mod folder'];
    const rows = async query => {
      await page.fill('#find', query);
      await page.press('#find', 'Enter');
      await page.waitForFunction(q => !document.getElementById('found').hidden && document.getElementById('found').dataset.query === q, query, { timeout: 60000 });
      return page.$$eval('#found li', ls => ls.map(l => [l.dataset.kind, l.textContent, l.dataset.path || '']));
    };
    const got = await rows('Cerberus');
    const want = cli.map(f => [f.kind, `${f.name || f.id} ${f.kind} ${f.id}`, f.kind === 'component' ? f.file : '']);
    if (JSON.stringify(got) !== JSON.stringify(want)) bad.push(`page lists ${JSON.stringify(got)}, the CLI ${JSON.stringify(want)}`);
    if (!cli.some(f => f.kind === 'component' && f.name === 'Cerberus Dropship')) bad.push('the CLI names no component Cerberus Dropship');
    await page.click('#found li[data-kind="component"]');
    await page.waitForFunction(() => ['shown', 'error'].includes(document.body.dataset.state), null, { timeout: 120000 });
    const shown = await page.evaluate(() => ({ state: document.body.dataset.state, title: document.getElementById('title').textContent,
      vertices: document.querySelector('[data-stat="vertices"]').textContent, error: document.getElementById('error').textContent }));
    if (shown.state !== 'shown' || shown.title !== 'arg_dropship.xml') bad.push(`clicked: ${shown.state} ${shown.title} ${shown.error}`);
    if (!(parseInt(shown.vertices.replace(/\D/g, '')) > 0)) bad.push(`no vertices drawn (${shown.vertices})`);
    const none = await rows('zzqx no such name');
    if (none.length !== 1 || !none[0][1].startsWith('nothing is named')) bad.push(`nonsense lists ${JSON.stringify(none)}`);
    console.log(`\tfind-by-name: Cerberus gives ${got.length} rows as the CLI (${got.map(r => r[0]).join(', ')}); the component drawn with ${shown.vertices} vertices`);
    return bad;
  }],
  ['conflicts', async page => {
    // Two copies of a corpus mod under other names and a third mod, in one folder: the list the
    // CLI's `conflicts --json` gives for the three folders.
    const bad = [];
    const root = join(mkdtempSync(join(tmp, 'mods-')), 'installed');
    mkdirSync(root);
    for (const [from, to] of [[dropMod, 'dropships_a'], [dropMod, 'dropships_b'], [join(mods, 'UniTrader__ut_add_unavailable_modules'), 'modules']]) {
      execFileSync('cp', ['-r', from, join(root, to)]);
    }
    let cli;
    const dirs = ['dropships_a', 'dropships_b', 'modules'].map(d => join(root, d));
    try { cli = execFileSync(hangar, ['conflicts', ...dirs, '--json'], { encoding: 'utf8' }); } catch (e) { cli = e.stdout; }
    const want = JSON.parse(cli);
    await page.setInputFiles('#open-folder', root);
    await page.waitForFunction(() => ['conflicts', 'error', 'mod'].includes(document.body.dataset.state), null, { timeout: 120000 }).catch(() => {});
    const got = await page.evaluate(() => ({ state: document.body.dataset.state, r: window.hangarConflicts, rows: document.querySelectorAll('#conflicts tbody tr').length, error: document.getElementById('error').textContent }));
    if (got.state !== 'conflicts') return [`state ${got.state}: ${got.error}`];
    const same = list => JSON.stringify(list.map(c => [c.kind, c.name, c.mods, c.files, c.message]));
    if (same(got.r.conflicts) !== same(want)) bad.push(`page lists ${got.r.conflicts.length} conflicts, the CLI ${want.length}; first page ${JSON.stringify(got.r.conflicts[0])?.slice(0, 160)}, CLI ${JSON.stringify(want[0])?.slice(0, 160)}`);
    if (got.rows !== want.length) bad.push(`${got.rows} rows shown`);
    if (!want.length) bad.push('the CLI found no conflict');
    const kinds = {};
    for (const c of want) kinds[c.kind] = (kinds[c.kind] || 0) + 1;
    console.log(`\tconflicts: ${want.length} as the CLI (${Object.entries(kinds).map(([k, n]) => `${n} ${k}`).join(', ')}), mods in load order ${got.r.mods}`);
    return bad;
  }],
);
for (const [name, check] of checks) {
  if (only && !only.test(name)) continue;
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  const errors = [];
  page.on('console', m => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', e => errors.push(String(e)));
  if (process.env.HANGAR_WEB_DEBUG) page.on('console', m => console.log(`\t[${m.type()}] ${m.text().slice(0, 300)}`));
  const t0 = Date.now();
  let bad;
  try {
    await page.goto(url, { waitUntil: 'load', timeout: 60000 });
    bad = await check(page);
  } catch (e) { bad = [String(e.message || e).split('\n')[0]]; }
  if (errors.length) bad.push('console: ' + errors[0].slice(0, 120));
  console.log(`${bad.length ? 'fail' : 'ok'}\t${name}\t${((Date.now() - t0) / 1000).toFixed(2)} s\t${bad.join('; ')}`);
  bad.length ? failed++ : passed++;
  await page.close();
}
await browser.close();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
