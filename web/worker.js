// hangar's wasm runs here, off the page's thread. The files the page hands over are read in slices
// with FileReaderSync (Blob.slice), when the wasm asks: a game's .dat is never read whole.
import init, { Workspace } from './pkg/hangar_wasm.js';

const files = [];
let ws = null;
const reader = new FileReaderSync();

// Called by the wasm (hangar-wasm's `read_at`).
globalThis.hangarReadAt = (id, offset, len) => {
  const f = files[id];
  if (!f) throw new Error(`no file ${id}`);
  return new Uint8Array(reader.readAsArrayBuffer(f.slice(offset, offset + len)));
};

const ready = init();
// The page shows when hangar is ready (the bench starts its clock then, as a user would choose).
ready.then(() => postMessage({ ready: true }));
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
