// hangar's wasm runs here, off the page's thread. The files the page hands over are read in slices
// with FileReaderSync (Blob.slice), when the wasm asks: a game's .dat is never read whole.
import init, { Workspace } from './pkg/hangar_wasm.js';

const files = [];
let ws = null;
const reader = new FileReaderSync();

// Called by the wasm (hangar-wasm's `read_at`).
globalThis.hangarReadAt = (id, offset, len) => {
  const f = id >= WARM ? warmFiles[id - WARM] : files[id];
  if (!f) throw new Error(`no file ${id}`);
  return new Uint8Array(reader.readAsArrayBuffer(f.slice(offset, offset + len)));
};

// Warm-up: the browser first runs the wasm through its quick baseline compiler and optimizes a
// function once it has run a while. Until the page's first request, the shipped sample and the M3
// hangar writes from it are converted over and over (about 300 ms), so the readers and writers are
// optimized before the user's first file; a request stops it at once. Its files have their own ids.
const WARM = 1 << 30;
const warmFiles = [];
let warming = true;
// One turn of the event loop without setTimeout's 4 ms floor.
const turn = new MessageChannel();
const yieldOnce = { then(r) { turn.port1.onmessage = () => r(); turn.port2.postMessage(0); } };
async function warmUp() {
  const t = performance.now();
  const xmf = new Uint8Array(await (await fetch(new URL('./samples/wedge-lod0.xmf', import.meta.url))).arrayBuffer());
  const w = new Workspace('warm-up');
  const add = (name, bytes) => {
    warmFiles.push(new Blob([bytes]));
    w.add_file(name, WARM + warmFiles.length - 1, bytes.length);
  };
  add('wedge-lod0.xmf', xmf);
  w.index().free();
  add('wedge.m3', w.convert('wedge-lod0.xmf', [], 'wedge.m3', false, false));
  w.index().free();
  // Written from the M3, an XMF's buffers are zlib streams: reading it warms the inflater too.
  add('wedge-z.xmf', w.convert('wedge.m3', [], 'wedge-z.xmf', false, false));
  w.index().free();
  let rounds = 0;
  while (warming && performance.now() - t < 300) {
    for (const name of ['wedge-lod0.xmf', 'wedge.m3', 'wedge-z.xmf']) w.show(name, []).free();
    rounds++;
    await yieldOnce;   // a request waiting is served first
  }
  w.free();
  warmFiles.length = 0;
  console.info(`hangar warm-up: ${rounds} rounds in ${Math.round(performance.now() - t)} ms`);
}
const ready = init();
// The page says hangar is ready once it is warm (the bench starts its clock then, as a user
// would choose); a file chosen earlier is served at once.
ready.then(warmUp).catch(() => {}).finally(() => postMessage({ ready: true }));
const progress = (text, fraction) => postMessage({ progress: text, fraction });

// What `Workspace.show` or `show_level` hands back, for the page (timed).
function shown(make) {
  const t = performance.now();
  const s = make();
  const meta = JSON.parse(s.meta);
  meta.ms = performance.now() - t;
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
    listing.total = performance.now() - t;
    return { listing };
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
  writable({ path, motions }) {
    return { result: JSON.parse(ws.writable(path, motions || [])) };
  },
  validate({ path }) {
    return { result: JSON.parse(ws.validate(path)) };
  },
  convert({ path, motions, output, quantize, compress }) {
    progress(`writing ${output}`);
    const bytes = ws.convert(path, motions || [], output, !!quantize, !!compress);
    return { bytes, transfer: [bytes.buffer] };
  },
};

onmessage = async ({ data }) => {
  const { id, op } = data;
  warming = false;
  try {
    await ready;
    const r = ops[op](data);
    const transfer = r.transfer || [];
    delete r.transfer;
    postMessage({ id, ok: true, ...r }, transfer);
  } catch (e) {
    // A Rust panic is a trap ("unreachable"): the page starts a new worker after one.
    const trap = e instanceof WebAssembly.RuntimeError;
    postMessage({ id, ok: false, error: String(e && e.message ? e.message : e), trap });
  }
};
