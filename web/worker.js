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
const progress = (text, fraction) => postMessage({ progress: text, fraction });

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
    return { listing: JSON.parse(ws.index()) };
  },
  show({ path, motions }) {
    progress(`converting ${path}`);
    const t = performance.now();
    const shown = ws.show(path, motions || []);
    const meta = JSON.parse(shown.meta);
    meta.ms = performance.now() - t;
    const bytes = shown.take_bytes();
    shown.free();
    return { meta, bytes, transfer: [bytes.buffer] };
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
