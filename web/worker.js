// hangar's wasm runs here, off the page's thread. The files the page hands over are read in slices
// with FileReaderSync (Blob.slice), when the wasm asks: a game's .dat is never read whole.
import init, { Workspace, ShipForm, reserve_heap } from './pkg/hangar_wasm.js';

const files = [];
let ws = null;
// A new ship's template folder (a game or an extension), kept across files opened: its files'
// ids start at GAME.
const GAME = 2 ** 30;
const gameFiles = [];
let game = null;
const reader = new FileReaderSync();

// Files read ahead of a request, by id (see `readAhead`).
const ahead = new Map();

// Called by the wasm (hangar-wasm's `read_at`).
globalThis.hangarReadAt = (id, offset, len) => {
  const got = ahead.get(id);
  if (got) return got.slice(offset, offset + len);
  const f = id >= GAME ? gameFiles[id - GAME] : files[id];
  if (!f) throw new Error(`no file ${id}`);
  return new Uint8Array(reader.readAsArrayBuffer(f.slice(offset, offset + len)));
};

// The files showing `path` reads (a component's XML, data folder and .ani, as hangar says),
// read together: one FileReaderSync read costs about a millisecond, and a ship has dozens.
async function readAhead(path) {
  const ids = ws.reads(path);
  if (ids.length < 2) return;
  const bytes = await Promise.all([...ids].map(id => files[id].arrayBuffer()));
  ids.forEach((id, i) => ahead.set(id, new Uint8Array(bytes[i])));
}

// Warm-up: the browser first runs the wasm through its quick baseline compiler and optimizes a
// function once it has run a while. Before the user's first model, the heap is grown to what a
// ship takes, and the shipped sample, a made-up 96 x 96 grid and what hangar writes from them (an
// M3, an XMF with zlib buffers, a component) are shown over and over (about 400 ms of work), so the
// readers and writers are optimized before the user's first file. It runs a step at a time and
// only while no request waits (a folder opened is listed at once, and warming goes on while the
// user picks a file in it); any other request stops it.
let warming = true;
// Requests waiting or being served.
let pending = 0;
// One turn of the event loop without setTimeout's 4 ms floor.
const turn = new MessageChannel();
const yieldOnce = { then(r) { turn.port1.onmessage = () => r(); turn.port2.postMessage(0); } };
async function warmUp() {
  const t = performance.now();
  let spent = 0;
  // Runs `f` once no request waits; false when warming was stopped.
  const step = async f => {
    await yieldOnce;
    while (pending) { await queue; await yieldOnce; }
    if (!warming) return false;
    const s = performance.now();
    f();
    spent += performance.now() - s;
    return true;
  };
  const xmf = new Uint8Array(await (await fetch(new URL('./samples/wedge-lod0.xmf', import.meta.url))).arrayBuffer());
  const w = new Workspace('warm-up');
  w.add_bytes('wedge-lod0.xmf', xmf);
  const made = [['wedge-lod0.xmf', 'wedge.m3'], ['wedge.m3', 'wedge-z.xmf'], ['grid.xmf', 'ship/grid.xml']];
  const steps = [
    () => reserve_heap(64),   // a ship's conversion takes tens of MiB: grown and touched now, not then
    () => w.add_warm_up_model('grid.xmf', 96),
    ...made.map(([from, to]) => () => { w.index().free(); w.add_converted(from, to); }),
    () => w.index().free(),
  ];
  let rounds = 0;
  let going = true;
  for (const f of steps) if (!(going = await step(f))) break;
  // One model a step: a request waits for one show at most.
  const models = ['wedge-lod0.xmf', 'wedge.m3', 'wedge-z.xmf', 'ship/grid.xml'];
  for (let i = 0; going && spent < 400; i = (i + 1) % models.length) {
    going = await step(() => w.show(models[i], []).free());
    if (i === models.length - 1) rounds++;
  }
  w.free();
  console.info(`hangar warm-up: ${rounds} rounds, ${Math.round(spent)} ms of work in ${Math.round(performance.now() - t)} ms`);
}
// When this worker started and its wasm was ready, on the page's clock (web/bench.mjs).
const at = () => performance.now() + performance.timeOrigin;
const started = at();
let instantiated = 0;
// The page compiles the wasm while this worker's scripts load and hands the module over (null
// when it could not: then it is fetched here).
let compiled;
const fromPage = new Promise(ok => { compiled = ok; });
const ready = fromPage.then(module => init(module ? { module_or_path: module } : undefined)).then(() => { instantiated = at(); });
// The page says hangar is ready once it is warm (the bench starts its clock then, as a user
// would choose); a file chosen earlier is served at once.
ready.then(warmUp).catch(() => {}).finally(() => postMessage({ ready: true, marks: { worker: started, wasm: instantiated, warm: at() } }));
const progress = (text, fraction) => postMessage({ progress: text, fraction });
// Called by the wasm as a new ship's parts are written.
globalThis.hangarProgress = (done, total) => progress(`writing parts: ${done}/${total}`, total ? done / total : -1);

// What `Workspace.show` or `show_level` hands back, for the page.
function shown(make) {
  const s = make();
  const meta = JSON.parse(s.meta);
  const bytes = s.take_bytes();
  s.free();
  return { meta, bytes, transfer: [bytes.buffer] };
}

const ops = {
  // {files: [{path, file}], label} -> the listing
  open({ files: list, label }) {
    files.length = 0;
    if (ws) ws.free();
    ws = new Workspace(label);
    for (const { path, file } of list) {
      files.push(file);
      ws.add_file(path, files.length - 1, file.size);
    }
    progress('reading catalog indexes');
    const t = performance.now();
    const listed = ws.index();
    const listing = JSON.parse(listed.meta);
    // The paths one a line, as one string: a game's 300,000 cross to the page as one copy.
    listing.paths = listed.take_paths();
    listed.free();
    listing.modKind = ws.mod_kind() ?? null;
    listing.total = performance.now() - t;
    return { listing };
  },
  // `hangar find QUERY --json` over the opened folder: the names gathered at the first search.
  find({ query }) {
    progress('reading the names the game shows');
    return { found: JSON.parse(ws.find(query, null)) };
  },
  show({ path, motions }) {
    progress(`converting ${path}`);
    return shown(() => ws.show(path, motions || []));
  },
  // One mip level of one surface of the picture at `path`.
  level({ path, mip, surface }) {
    progress(`decoding mip ${mip} of surface ${surface}`);
    return shown(() => ws.show_level(path, mip, surface));
  },
  // The opened folder checked whole as a mod: the findings and the report page.
  checkMod() {
    progress('checking the mod');
    return shown(() => ws.check_mod());
  },
  writable({ path, motions }) {
    return { result: JSON.parse(ws.writable(path, motions || [])) };
  },
  validate({ path }) {
    return { result: JSON.parse(ws.validate(path)) };
  },
  // A new ship's template folder: its files, by their paths inside it.
  addGame({ files: list, label }) {
    gameFiles.length = 0;
    if (game) game.free();
    game = new Workspace(label);
    for (const { path, file } of list) {
      gameFiles.push(file);
      game.add_file(path, GAME + gameFiles.length - 1, file.size);
    }
    return {};
  },
  // The new ship's extension as a zip (`hangar new ship`), with what was made in `meta`.
  newShip({ scene, template, shipId, name, description, lods }) {
    progress('building the extension', -1);
    const form = new ShipForm(scene, template, shipId, name || '', description || '', lods);
    const none = game ? null : new Workspace('none');
    try {
      return shown(() => ws.new_component(form, game || none));
    } finally {
      form.free();
      if (none) none.free();
    }
  },
  // The conflicts among the opened folder's extensions (`hangar conflicts DIR... --json`).
  conflicts() {
    progress('finding conflicts');
    return { result: JSON.parse(ws.conflicts()) };
  },
  // The download's name and bytes (a .zip for an output that is several files).
  convert({ path, motions, output, quantize, compress }) {
    progress(`writing ${output}`);
    const d = ws.convert(path, motions || [], output, !!quantize, !!compress);
    const name = d.name;
    const bytes = d.take_bytes();
    d.free();
    return { name, bytes, transfer: [bytes.buffer] };
  },
};

// Requests are served one after another: one waiting for its files read ahead holds the others
// (an `open` must not swap the files under it).
let queue = Promise.resolve();
onmessage = ({ data }) => {
  if ('module' in data) { compiled(data.module); return; }
  if (!(data.op === 'open' && data.folder)) warming = false;
  pending++;
  queue = queue.then(() => serve(data)).finally(() => pending--);
};

async function serve(data) {
  const { id, op } = data;
  try {
    await ready;
    const t = performance.now();
    if (op === 'show') await readAhead(data.path);
    const read = performance.now();
    const r = ops[op](data);
    // hangar's time for what is shown, the files' reading included.
    if (r.meta) {
      r.meta.ms = performance.now() - t;
      // The steps on the page's clock (web/bench.mjs): request served, files read, done.
      r.meta.marks = { served: t + performance.timeOrigin, read: read + performance.timeOrigin, done: at() };
    }
    const transfer = r.transfer || [];
    delete r.transfer;
    postMessage({ id, ok: true, ...r }, transfer);
  } catch (e) {
    // A Rust panic is a trap ("unreachable"): the page starts a new worker after one.
    const trap = e instanceof WebAssembly.RuntimeError;
    postMessage({ id, ok: false, error: String(e && e.message ? e.message : e), trap });
  } finally {
    ahead.clear();
  }
}
