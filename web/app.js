// The page: hands the chosen files to the worker (hangar's wasm), lists a folder's models, draws
// what the wasm hands back (a GLB, a PNG, a .bgf's presentation XML, a .bgp's Graphviz drawing) and
// fills the info, validate and download panels. No format is read here.
import { View3D } from './view3d.js';
import { drawBgf, drawDot } from './flat.js';
import { modTools } from './mods.js';

const $ = id => document.getElementById(id);
const body = document.body;
const view = $('view');
let view3d = null;
let worker = null;
let calls = new Map();
let nextCall = 1;
let opened = null;      // {label, files: [{path, file}]}
let current = null;     // {path, motions, meta}
let showing = 0;        // to drop a late answer when another file was picked meanwhile

function setState(s) { body.dataset.state = s; }

// The worker's steps ({name: time since 1970 in ms}) as marks of the page (web/bench.mjs reads them).
function marks(times) {
  for (const [k, t] of Object.entries(times || {})) if (t) performance.mark(`hangar:worker-${k}`, { startTime: t - performance.timeOrigin });
}

// hangar's wasm, fetched and compiled from the start (while the worker's scripts load), handed to
// each worker started; null when it could not be (the worker then fetches it itself).
const wasm = WebAssembly.compileStreaming(fetch(new URL('./pkg/hangar_wasm_bg.wasm', import.meta.url))).catch(() => null);

function startWorker() {
  worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  wasm.then(module => worker.postMessage({ module }));
  worker.onmessage = ({ data }) => {
    if (data.ready) { marks(data.marks); body.dataset.hangar = 'ready'; return; }
    if (data.progress !== undefined) {
      status(data.progress, true);
      if (data.fraction >= 0) $('progress').value = data.fraction; else $('progress').removeAttribute('value');
      return;
    }
    const c = calls.get(data.id);
    if (!c) return;
    calls.delete(data.id);
    if (data.ok) c.ok(data); else c.fail(Object.assign(new Error(data.error), { trap: data.trap }));
  };
  worker.onerror = e => {
    e.preventDefault();
    for (const c of calls.values()) c.fail(new Error(e.message || 'the worker stopped'));
    calls.clear();
  };
}

// Runs an operation in the worker; after a crash of the wasm the worker is started again and the
// opened files handed to it again, so the tab stays usable.
async function call(op, args = {}) {
  try {
    return await new Promise((ok, fail) => {
      const id = nextCall++;
      calls.set(id, { ok, fail });
      // The call's own id and op last, so no argument can take their place.
      worker.postMessage({ ...args, id, op });
    });
  } catch (e) {
    if (e.trap) {
      worker.terminate();
      startWorker();
      if (opened) await call('open', opened).catch(() => {});
      throw new Error(`hangar stopped on this file (${e.message}); it was restarted`);
    }
    throw e;
  }
}

function status(text, busy) {
  $('status').textContent = text || '';
  $('progress').hidden = !busy;
}

function fail(e) {
  $('error').textContent = String(e.message || e);
  setState('error');
  status('');
}

const MOTIONS = ['xsm', 'xpm', 'm3a'];
const ext = p => (p.match(/\.([^./]+)$/)?.[1] || '').toLowerCase();

// A StarCraft II map or mod saved as one MPQ archive: opened as the folder it holds.
const ARCHIVES = ['sc2map', 'sc2mod', 'sc2components'];

// Opens a set of files ({path, file}); a folder when `folder` is its name.
async function openFiles(list, folder) {
  if (!list.length) return;
  if (!folder && list.length === 1 && ARCHIVES.includes(ext(list[0].path))) folder = list[0].path;
  performance.mark('hangar:open');
  setState('working');
  $('error').textContent = '';
  // `folder`: the user picks a file next (the worker goes on warming up meanwhile).
  opened = { label: folder || 'files', files: list, folder: !!folder };
  const t0 = performance.now();
  let listing;
  try {
    ({ listing } = await call('open', opened));
  } catch (e) { fail(e); return; }
  performance.mark('hangar:listed');
  const models = listing.paths ? listing.paths.split('\n') : [];
  status(`${models.length} models in ${listing.files} files (${Math.round(performance.now() - t0)} ms, hangar ${Math.round(listing.total)} ms: view ${Math.round(listing.ms.view)}, files ${Math.round(listing.ms.files)}, models ${Math.round(listing.ms.models)})`);
  if (listing.warnings.length) $('error').textContent = listing.warnings.join('\n');
  $('listing').dataset.files = listing.files;   // all files opened, models or not (web/test.mjs)
  if (folder) {
    listFiles(models);
    setState('listed');
    if (listing.modKind) await showMod(folder);
    else await mods.conflicts(folder);
    return;
  }
  mods.opened(list);
  // Files: the first that is not a motion is the model; motions chosen with it apply to it.
  const paths = list.map(f => f.path);
  const model = paths.find(p => ['glb', 'gltf'].includes(ext(p))) || paths.find(p => !MOTIONS.includes(ext(p))) || paths[0];
  const motions = paths.filter(p => p !== model && MOTIONS.includes(ext(p)));
  listFiles(models.length > 1 ? models : []);
  await show(model, motions);
}

// A game lists hundreds of thousands of files: a folder shows up to LIMIT of its own at a time.
const LIMIT = 5000;
let listed = [];
const checked = new Map();   // path -> ok, from 'check all' and from each file shown

function listFiles(models) {
  listed = models;
  // Names to search exist where X4 macros do: a game folder or an extension.
  const x4 = models.some(p => /(^|\/)assets\//i.test(p)) || opened?.files.some(f => /(^|\/)(index\/macros|libraries\/wares|content)\.xml$/i.test(f.path));
  $('find').hidden = !(opened?.folder && x4);
  $('find').value = '';
  $('found').hidden = true;
  $('filter').hidden = models.length < 20;
  $('filter').value = '';
  $('check-all').hidden = !models.length;
  renderList();
}

// The models as a folder tree. A listing of up to LIMIT models is drawn whole and open; a bigger one
// (a game's catalogs) draws its folders closed and fills a folder when it is opened.
function renderList() {
  const q = $('filter').value.toLowerCase();
  const match = q ? listed.filter(p => p.toLowerCase().includes(q)) : listed;
  $('listing').textContent = listed.length ? `${listed.length} models${q ? `, ${match.length} match` : ''}` : '';
  $('files').replaceChildren(branch(match, '', match.length <= LIMIT));
}

// The folders and files right under `prefix` among `paths` (all of which start with it).
function branch(paths, prefix, open) {
  const dirs = new Map();
  const files = [];
  for (const p of paths) {
    const i = p.indexOf('/', prefix.length);
    if (i < 0) { files.push(p); continue; }
    const d = p.slice(prefix.length, i);
    let under = dirs.get(d);
    if (!under) dirs.set(d, under = []);
    under.push(p);
  }
  const frag = document.createDocumentFragment();
  for (const d of [...dirs.keys()].sort()) {
    const under = dirs.get(d);
    const li = document.createElement('li');
    li.className = 'dir';
    const box = document.createElement('details');
    const summary = document.createElement('summary');
    summary.textContent = `${d}/`;
    summary.dataset.count = under.length;
    summary.title = `${prefix}${d}/: ${under.length} models`;
    const ul = document.createElement('ul');
    box.append(summary, ul);
    const fill = () => { if (!ul.firstChild) ul.append(branch(under, `${prefix}${d}/`, open)); };
    if (open) { fill(); box.open = true; } else box.addEventListener('toggle', fill, { once: true });
    li.append(box);
    frag.append(li);
  }
  for (const p of files.slice(0, LIMIT)) {
    const li = document.createElement('li');
    li.dataset.path = p;
    li.textContent = p.slice(prefix.length);
    li.title = p;
    if (checked.has(p)) li.classList.add(checked.get(p) ? 'good' : 'bad');
    frag.append(li);
  }
  if (files.length > LIMIT) {
    const li = document.createElement('li');
    li.className = 'more';
    li.textContent = `${files.length - LIMIT} more here: filter to narrow`;
    frag.append(li);
  }
  return frag;
}

$('files').addEventListener('click', e => {
  const li = e.target.closest('li[data-path]');
  if (!li) return;
  for (const c of $('files').querySelectorAll('.current')) c.classList.remove('current');
  li.classList.add('current');
  show(li.dataset.path, []);
});

$('filter').addEventListener('input', renderList);

// The game view searched by the names a player reads (`hangar find`): a component found opens as
// the model; a macro or ware is listed with its file.
let finding = 0;
async function findNames() {
  const query = $('find').value.trim();
  const mine = ++finding;
  const list = $('found');
  if (query.length < 2) { list.hidden = true; return; }
  let found;
  try {
    ({ found } = await call('find', { query }));
  } catch (e) { if (mine === finding) { list.hidden = true; $('error').textContent = String(e.message || e); } return; }
  status('');
  if (mine !== finding) return;   // typed on meanwhile
  list.replaceChildren(...found.slice(0, 200).map(f => {
    const li = document.createElement('li');
    const name = document.createElement('b');
    name.textContent = f.name || f.id;
    li.append(name, ` ${f.kind} ${f.id}`);
    li.title = `${f.kind} ${f.id}: ${f.file}${f.extension ? ` (extension ${f.extension})` : ''}`;
    li.dataset.kind = f.kind;
    if (f.kind === 'component') li.dataset.path = f.file;
    return li;
  }));
  if (!found.length) {
    const li = document.createElement('li');
    li.className = 'none';
    li.textContent = `nothing is named "${query}"`;
    list.append(li);
  }
  list.dataset.query = query;   // what the list answers (web/test.mjs waits for it)
  list.hidden = false;
}
let findTimer = 0;
$('find').addEventListener('input', () => { clearTimeout(findTimer); findTimer = setTimeout(findNames, 250); });
$('find').addEventListener('keydown', e => { if (e.key === 'Enter') { clearTimeout(findTimer); findNames(); } });
$('found').addEventListener('click', e => {
  const li = e.target.closest('li[data-path]');
  if (li) show(li.dataset.path, []);
});

// Validates every listed model in turn: the whole game checked in one place.
$('check-all').onclick = async () => {
  const q = $('filter').value.toLowerCase();
  const todo = q ? listed.filter(p => p.toLowerCase().includes(q)) : listed;
  let bad = 0;
  for (let i = 0; i < todo.length; i++) {
    status(`validating ${i + 1}/${todo.length}: ${todo[i]}`, true);
    $('progress').max = todo.length; $('progress').value = i;
    let ok = false;
    try { ok = (await call('validate', { path: todo[i] })).result.ok; } catch { ok = false; }
    if (!ok) bad++;
    mark(todo[i], ok);
  }
  $('progress').removeAttribute('value');
  status(`${todo.length} checked, ${bad} with errors`);
};

function mark(path, ok) {
  checked.set(path, ok);
  const li = document.querySelector(`#files li[data-path="${CSS.escape(path)}"]`);
  li?.classList.remove('good', 'bad');
  li?.classList.add(ok ? 'good' : 'bad');
}

function stat(name, value) {
  const el = document.querySelector(`[data-stat="${name}"]`);
  if (el) el.textContent = value ?? '';
}

async function show(path, motions) {
  const mine = ++showing;
  performance.mark('hangar:show');
  setState('working');
  $('error').textContent = '';
  status(`opening ${path}`, true);
  const t0 = performance.now();
  let r;
  try {
    const answer = call('show', { path, motions });
    // While the worker converts. Without WebGL, drawing a model says so; a picture needs none.
    try { view3dOf().precompile(); } catch { /* see above */ }
    r = await answer;
  } catch (e) { if (mine === showing) fail(e); return; }
  if (mine !== showing) return;
  performance.mark('hangar:converted');
  const { meta, bytes } = r;
  marks(meta.marks);
  current = { path, motions, meta };
  window.hangarShownMs = meta.ms;   // hangar's time in the worker (web/bench.mjs reads it)
  $('title').textContent = path.split('/').pop() + (motions.length ? ` + ${motions.map(m => m.split('/').pop()).join(', ')}` : '');
  const info = meta.info || {};
  stat('format', info.format || meta.format);
  stat('vertices', info.vertices);
  stat('triangles', info.triangles);
  stat('nodes', meta.kind === 'glb' ? meta.nodes : '');
  stat('animations', meta.kind === 'glb' ? meta.animations : '');
  $('info-json').textContent = JSON.stringify(meta.kind === 'image' ? meta : info, null, 1);
  $('controls').hidden = true;
  $('texture-controls').hidden = true;
  $('source-box').hidden = true;
  try {
    if (meta.kind === 'glb') await drawGlb(bytes, meta);
    else if (meta.kind === 'image') drawImage(bytes, meta);
    else if (meta.kind === 'bgf') drawText(bytes, 'presentation XML', drawBgf);
    else if (meta.kind === 'bgp') drawText(bytes, 'Graphviz drawing', drawDot);
  } catch (e) { fail(e); return; }
  const secs = (performance.now() - t0) / 1000;
  status(`${path}: ${secs.toFixed(2)} s (hangar ${Math.round(meta.ms)} ms)`);
  performance.mark('hangar:shown');
  setState('shown');
  // Asked once the first frame is on screen: the worker's checking and trying of outputs take a
  // core, which the browser needs meanwhile to draw and present that frame (without a GPU).
  $('validate').textContent = 'checking...';
  $('downloads').replaceChildren();
  await presented();
  if (mine !== showing) return;
  validate(path, mine);     // asked first: the worker answers in order
  downloads(meta, mine);
}

// Resolves once the frame being drawn now has been presented: the second animation frame from
// now starts after the first was committed.
const presented = () => new Promise(ok => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(ok))));

// A mod folder checked whole (`hangar validate DIR`): its files as a tree, each with its findings
// and the references it makes, each a link to what it names (hangar's report page, shown as is).
async function showMod(folder) {
  const mine = ++showing;
  setState('working');
  status(`checking ${folder}`, true);
  let r;
  try {
    r = await call('checkMod');
  } catch (e) { if (mine === showing) fail(e); return; }
  if (mine !== showing) return;
  const { meta, bytes } = r;
  current = null;
  leave3d();
  $('controls').hidden = true;
  $('texture-controls').hidden = true;
  $('source-box').hidden = true;
  $('downloads').replaceChildren();
  $('title').textContent = `${folder} (${meta.kind} mod)`;
  for (const k of ['format', 'vertices', 'triangles', 'nodes', 'animations']) stat(k, '');
  stat('format', `${meta.kind} mod`);
  $('info-json').textContent = JSON.stringify(meta.findings, null, 1);
  const box = $('validate');
  box.replaceChildren();
  const head = document.createElement('div');
  head.className = meta.errors ? 'error' : 'ok';
  head.textContent = `${meta.errors ? 'FAILED' : 'ok'}: ${meta.files} files, ${meta.references} references followed, ${meta.errors} errors, ${meta.warnings} warnings`;
  head.dataset.errors = meta.errors;
  head.dataset.warnings = meta.warnings;
  box.append(head);
  // No script runs in it (sandbox); same origin, so its links move within it.
  const frame = document.createElement('iframe');
  frame.id = 'mod-report';
  frame.sandbox = 'allow-same-origin';
  frame.title = `hangar check of ${folder}`;
  const loaded = new Promise(ok => { frame.onload = ok; });
  frame.srcdoc = new TextDecoder().decode(bytes);
  view.replaceChildren(frame);
  await loaded;
  status(`${folder}: checked as a mod (hangar ${Math.round(meta.ms)} ms)`);
  setState('mod');
}

// The 3D view, made once.
function view3dOf() {
  if (!view3d) {
    view3d = new View3D(view);
    view3d.onTime = (t, d) => { $('time').max = d; $('time').value = t; $('clock').textContent = `${t.toFixed(2)} / ${d.toFixed(2)} s`; };
    view3d.setTeam($('team').value);
    window.hangarView = view3d;   // web/test.mjs reads back what the view uploaded
  }
  return view3d;
}

async function drawGlb(bytes, meta) {
  const r = await view3dOf().show(bytes, { markers: $('markers').checked, pbr: $('pbr').checked, teamColour: meta.teamColour, multimat: meta.multimat });
  $('controls').hidden = false;
  $('team-box').hidden = !view3d.teamUsed;
  $('skeleton').checked = false;
  $('skeleton').disabled = !r.hasBones;
  $('lods').checked = false;
  $('collision').checked = false;
  const clip = $('clip');
  clip.replaceChildren(new Option('no animation', ''));
  r.clips.forEach((c, i) => clip.append(new Option(`${c.name} (${c.duration.toFixed(2)} s)`, i)));
  clip.disabled = !r.clips.length;
  $('play').disabled = !r.clips.length;
}

function leave3d() {
  if (view3d) view3d.detach();
}

function drawImage(bytes, meta) {
  leave3d();
  const img = document.createElement('img');
  const old = view.querySelector('img')?.src;
  img.src = URL.createObjectURL(new Blob([bytes], { type: 'image/png' }));
  img.alt = current.path;
  current.png = bytes;   // the PNG download hands over what the pickers show
  view.replaceChildren(img);
  if (old) URL.revokeObjectURL(old);
  $('texture-controls').hidden = false;
  $('texture-size').textContent = `${meta.width} x ${meta.height}`;
  // The pickers offer what hangar says the file holds (a damaged header may say millions).
  const pick = (el, count, at) => {
    el.replaceChildren(...Array.from({ length: Math.min(count, 4096) }, (_, i) => new Option(String(i), i)));
    el.value = at;
    el.disabled = count < 2;
  };
  pick($('mip'), meta.mips, meta.mip);
  pick($('surface'), meta.surfaces, meta.surface);
}

// A mip level or surface picked: hangar decodes that one.
async function showLevel() {
  if (!current || current.meta.kind !== 'image') return;
  const mine = ++showing;
  setState('working');
  const [mip, surface] = [+$('mip').value, +$('surface').value];
  try {
    const { meta, bytes } = await call('level', { path: current.path, mip, surface });
    if (mine !== showing) return;
    current.meta = meta;
    drawImage(bytes, meta);
    status(`${current.path}: mip ${mip} of surface ${surface}, ${meta.width} x ${meta.height} (hangar ${Math.round(meta.ms)} ms)`);
    setState('shown');
  } catch (e) { if (mine === showing) fail(e); }
}
$('mip').onchange = showLevel;
$('surface').onchange = showLevel;

function drawText(bytes, title, draw) {
  leave3d();
  const text = new TextDecoder().decode(bytes);
  view.replaceChildren(draw(text));
  $('source-title').textContent = title;
  $('source').textContent = text;
  $('source-box').hidden = false;
}

async function validate(path, mine) {
  const box = $('validate');
  box.textContent = 'checking...';
  try {
    const { result } = await call('validate', { path });
    if (mine !== showing) return;
    box.replaceChildren();
    const head = document.createElement('div');
    head.className = result.ok ? 'ok' : 'error';
    head.textContent = result.ok ? 'ok' : 'FAILED';
    box.append(head);
    for (const f of result.findings) {
      const d = document.createElement('div');
      d.className = f.severity;
      d.textContent = `${f.severity}${f.path ? ' ' + f.path : ''}${f.offset != null ? ' @' + f.offset : ''}: ${f.message}`;
      box.append(d);
    }
    mark(path, result.ok);
  } catch (e) { box.textContent = String(e.message || e); }
}

// The download buttons: for a model the GLB forms at once (it was drawn from one), then what
// hangar says it writes from this file (each output tried in the worker).
const LABELS = { gltf: 'glTF', obj: 'OBJ', json: 'dump .json', png: 'PNG', dds: 'DDS (BC7)', xml: 'component .zip' };
async function downloads(meta, mine) {
  const box = $('downloads');
  box.replaceChildren();
  box.dataset.ready = '';
  const stemOf = current.path.split('/').pop().replace(/\.[^.]*$/, '');
  const add = (label, output, opts = {}) => {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = label;
    b.dataset.output = output.split('.').pop() + (opts.compress ? '-compress' : opts.quantize ? '-quantize' : '');
    b.onclick = () => download(output, opts);
    box.append(b);
  };
  if (meta.kind === 'glb') {
    add('GLB', `${stemOf}.glb`);
    add('GLB --quantize', `${stemOf}.glb`, { quantize: true });
    add('GLB --quantize --compress', `${stemOf}.glb`, { quantize: true, compress: true });
  }
  let writable = [];
  try {
    ({ result: writable } = await call('writable', { path: current.path, motions: current.motions }));
  } catch { /* what fails to open has nothing to write */ }
  if (mine !== showing) return;
  for (const e of writable) if (e !== 'glb') add(LABELS[e] || `.${e}`, `${stemOf}.${e}`);
  box.dataset.ready = 'yes';
}

async function download(output, { quantize, compress } = {}) {
  status(`writing ${output}`, true);
  try {
    let bytes;
    if (output.endsWith('.png') && current.png) {
      // The mip level and surface the pickers show, as hangar decoded it for the view.
      const [mip, surface] = [+$('mip').value || 0, +$('surface').value || 0];
      if (mip || surface) output = output.replace(/\.png$/, `-mip${mip}-surface${surface}.png`);
      bytes = current.png;
    } else {
      ({ bytes, name: output } = await call('convert', { path: current.path, motions: current.motions, output, quantize, compress }));
    }
    const a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([bytes]));
    a.download = output;
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
    status(`${output}: ${bytes.length} bytes`);
  } catch (e) { status(''); $('error').textContent = String(e.message || e); }
}

// Controls of the 3D view.
$('skeleton').onchange = e => view3d?.setSkeleton(e.target.checked);
$('lods').onchange = e => view3d?.setKinds({ lod: e.target.checked });
$('collision').onchange = e => view3d?.setKinds({ collision: e.target.checked });
$('markers').onchange = e => view3d?.setMarkers(e.target.checked);
$('pbr').onchange = e => view3d?.setPbr(e.target.checked);
$('team').oninput = e => view3d?.setTeam(e.target.value);
$('clip').onchange = e => { view3d?.playClip(e.target.value === '' ? -1 : +e.target.value); $('play').textContent = 'pause'; };
$('play').onclick = () => {
  if (!view3d) return;
  if (!view3d.action) { $('clip').selectedIndex = Math.min(1, $('clip').options.length - 1); $('clip').onchange({ target: $('clip') }); return; }
  view3d.setPlaying(!view3d.playing);
  $('play').textContent = view3d.playing ? 'pause' : 'play';
};
$('time').oninput = e => { if (view3d) { view3d.setPlaying(false); $('play').textContent = 'play'; view3d.setTime(+e.target.value); } };

// Opening: the two inputs and drag and drop.
$('open').onchange = e => openFiles([...e.target.files].map(f => ({ path: f.name, file: f })));
$('open-folder').onchange = e => {
  const files = [...e.target.files];
  if (!files.length) return;
  const top = files[0].webkitRelativePath.split('/')[0];
  openFiles(files.map(f => ({ path: f.webkitRelativePath.split('/').slice(1).join('/') || f.name, file: f })), top);
};

// A dropped folder is walked with the entries API; its paths are relative to it.
async function walk(entry, prefix, out) {
  if (entry.isFile) {
    out.push({ path: prefix + entry.name, file: await new Promise((ok, no) => entry.file(ok, no)) });
  } else if (entry.isDirectory) {
    const reader = entry.createReader();
    for (;;) {
      const batch = await new Promise((ok, no) => reader.readEntries(ok, no));
      if (!batch.length) break;
      for (const e of batch) await walk(e, prefix + entry.name + '/', out);
    }
  }
}

addEventListener('dragover', e => { e.preventDefault(); body.classList.add('dragging'); });
addEventListener('dragleave', () => body.classList.remove('dragging'));
addEventListener('drop', async e => {
  e.preventDefault();
  body.classList.remove('dragging');
  const entries = [...e.dataTransfer.items].map(i => i.webkitGetAsEntry?.()).filter(Boolean);
  const dirs = entries.filter(en => en.isDirectory);
  if (dirs.length && entries.length > 1) {
    // A scene with a folder: the folder is the new ship's template; else several mod folders.
    const files = [];
    for (const en of entries) if (en.isFile) files.push(await new Promise((ok, no) => en.file(ok, no)));
    const out = [];
    for (const d of dirs) await walk(d, '', out);
    if (files.some(f => ['glb', 'gltf'].includes(ext(f.name)))) {
      await openFiles(files.map(f => ({ path: f.name, file: f })));
      await mods.setGame(dirs[0].name, out.filter(f => f.path.startsWith(dirs[0].name + '/')).map(f => ({ ...f, path: f.path.slice(dirs[0].name.length + 1) })));
    } else {
      for (const f of files) out.push({ path: f.name, file: f });
      openFiles(out, `${dirs.length} folders`);
    }
  } else if (entries.length === 1 && entries[0].isDirectory) {
    const out = [];
    const dir = entries[0];
    await walk(dir, '', out);
    openFiles(out.map(f => ({ ...f, path: f.path.split('/').slice(1).join('/') })), dir.name);
  } else {
    openFiles([...e.dataTransfer.files].map(f => ({ path: f.name, file: f })));
  }
});

startWorker();
const mods = modTools({ $, call, status, fail, setState, leave3d, view });
// The 3D view and its WebGL context made while the user picks a file (20-35 ms without a GPU,
// not spent after the file is chosen).
(window.requestIdleCallback || setTimeout)(view3dOf);
