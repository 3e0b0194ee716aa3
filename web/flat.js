// Flat pictures of what hangar hands over as text: a .bgf's presentation XML (hangar's readable
// form) drawn as its elements' boxes, and a .bgp's Graphviz drawing as its state graph.
const NS = 'http://www.w3.org/2000/svg';
const el = (name, attrs = {}, text) => {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
};
const COLORS = ['#4f86c6', '#6cc070', '#d6a94a', '#c66f9f', '#58b5b0', '#a17fd6', '#d9785b'];

// Each element of the presentation as a box: those with a position where it is on the canvas
// (position.x/y, size from scale.x/y), all of them as the nested tree beside it.
export function drawBgf(text) {
  const doc = new DOMParser().parseFromString(text, 'application/xml');
  const rows = [];
  const walk = (node, depth) => {
    for (const e of node.children) {
      if (e.tagName !== 'element') continue;
      const attrs = {};
      for (const a of e.querySelectorAll(':scope > attributes > attribute')) attrs[a.getAttribute('name')] = a.getAttribute('value');
      rows.push({ name: e.getAttribute('name') || `#${e.getAttribute('index')}`, type: e.getAttribute('type') || '', depth, attrs });
      const kids = e.querySelector(':scope > elements');
      if (kids) walk(kids, depth + 1);
    }
  };
  const top = doc.querySelector('presentation > elements');
  if (top) walk(top, 0);
  const W = 1000, rowH = 22, treeW = 420;
  const H = Math.max(400, rows.length * rowH + 20);
  const svg = el('svg', { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'xMidYMin meet' });
  rows.forEach((r, i) => {
    const x = 10 + r.depth * 18, y = 10 + i * rowH, c = COLORS[i % COLORS.length];
    svg.append(el('rect', { x, y, width: treeW - x, height: rowH - 4, rx: 3, fill: c, 'fill-opacity': 0.55, stroke: c }));
    svg.append(el('text', { x: x + 6, y: y + 13, 'font-size': 12, fill: '#fff' }, `${r.name}  (${r.type})`));
  });
  // The canvas: positioned elements at their place, scaled to fit.
  const placed = rows.filter(r => r.attrs['position.x'] !== undefined || r.attrs['position.y'] !== undefined);
  const cx = treeW + 30, cw = W - cx - 10, ch = H - 20;
  svg.append(el('rect', { x: cx, y: 10, width: cw, height: ch, fill: '#1d232b', stroke: '#4a5563' }));
  if (placed.length) {
    const box = placed.map(r => {
      const x = +r.attrs['position.x'] || 0, y = +r.attrs['position.y'] || 0;
      const w = Math.abs(+(r.attrs['scale.x'] ?? 1)) || 1, h = Math.abs(+(r.attrs['scale.y'] ?? 1)) || 1;
      return { r, x, y, w, h };
    });
    const minX = Math.min(...box.map(b => b.x - b.w / 2)), maxX = Math.max(...box.map(b => b.x + b.w / 2));
    const minY = Math.min(...box.map(b => b.y - b.h / 2)), maxY = Math.max(...box.map(b => b.y + b.h / 2));
    const s = Math.min(cw / (maxX - minX || 1), ch / (maxY - minY || 1)) * 0.9;
    box.forEach((b, i) => {
      const c = COLORS[i % COLORS.length];
      const x = cx + cw / 2 + (b.x - (minX + maxX) / 2) * s - b.w * s / 2;
      const y = 10 + ch / 2 - (b.y - (minY + maxY) / 2) * s - b.h * s / 2;
      svg.append(el('rect', { x, y, width: Math.max(b.w * s, 4), height: Math.max(b.h * s, 4), fill: c, 'fill-opacity': 0.35, stroke: c }));
      svg.append(el('text', { x: x + 3, y: y + 12, 'font-size': 11, fill: '#fff' }, b.r.name));
    });
  } else {
    svg.append(el('text', { x: cx + 10, y: 34, 'font-size': 13, fill: '#8d99a6' }, 'no element has a position'));
  }
  return svg;
}

// The states and transitions of a Graphviz drawing (`a -> b`), states on a circle.
export function drawDot(text) {
  const names = new Map(), edges = [];
  const id = s => s.replace(/^"|"$/g, '');
  const label = new Map();
  for (const line of text.split('\n')) {
    const e = line.match(/^\s*("[^"]*"|\w+)\s*->\s*("[^"]*"|\w+)(.*)$/);
    if (e) { edges.push([id(e[1]), id(e[2]), (e[3].match(/label="([^"]*)"/) || [])[1] || '']); names.set(id(e[1]), 1); names.set(id(e[2]), 1); continue; }
    const n = line.match(/^\s*("[^"]*"|\w+)\s*\[(.*)\]/);
    if (n && !['node', 'edge', 'graph'].includes(id(n[1]))) { names.set(id(n[1]), 1); label.set(id(n[1]), (n[2].match(/label="([^"]*)"/) || [])[1]); }
  }
  const list = [...names.keys()];
  const W = 1000, H = 700, R = Math.min(W, H) / 2 - 80;
  const pos = new Map(list.map((n, i) => [n, [W / 2 + R * Math.cos(2 * Math.PI * i / Math.max(list.length, 1)), H / 2 + R * Math.sin(2 * Math.PI * i / Math.max(list.length, 1))]]));
  const svg = el('svg', { viewBox: `0 0 ${W} ${H}` });
  for (const [a, b] of edges) {
    const [x1, y1] = pos.get(a), [x2, y2] = pos.get(b);
    svg.append(el('line', { x1, y1, x2, y2, stroke: '#8d99a6', 'stroke-width': 1.5 }));
  }
  list.forEach((n, i) => {
    const [x, y] = pos.get(n), c = COLORS[i % COLORS.length];
    svg.append(el('circle', { cx: x, cy: y, r: 26, fill: c, 'fill-opacity': 0.7 }));
    svg.append(el('text', { x, y: y + 4, 'font-size': 11, fill: '#fff', 'text-anchor': 'middle' }, (label.get(n) || n).replace(/\\n/g, ' ').slice(0, 24)));
  });
  return svg;
}
