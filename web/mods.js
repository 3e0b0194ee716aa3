// The page's mod tools (hangar's wasm does the work, in the worker):
// - a new ship: a dropped .glb/.gltf scene and a template (a ship macro file dropped with it, or a
//   game or extension folder whose macro is named) become the X4 extension `hangar new ship`
//   writes, downloaded as ID.zip;
// - conflicts: several dropped extension folders (in one folder, or dropped together) listed as
//   `hangar conflicts DIR... --json` lists them.
// No format is read here.

const SCENES = ['glb', 'gltf'];
const extOf = p => (p.match(/\.([^./]+)$/)?.[1] || '').toLowerCase();

// `page`: what app.js shares ({ $, call, status, setState, leave3d, view }).
export function modTools(page) {
  const { $, call, status } = page;
  let gameName = '';

  // The files opened: the form is offered when a scene is among them.
  function opened(list) {
    const scenes = list.map(f => f.path).filter(p => SCENES.includes(extOf(p)));
    $('new-ship').hidden = !scenes.length;
    if (!scenes.length) return;
    $('ship-scene').replaceChildren(...scenes.map(p => new Option(p, p)));
    const xml = list.map(f => f.path).filter(p => extOf(p) === 'xml');
    if (!gameName && xml.length && !$('ship-template').value) $('ship-template').value = xml[0];
    hints(xml);
  }

  // What the template field offers: the XML files dropped with the scene, a game folder's macro files.
  function hints(paths) {
    $('ship-templates').replaceChildren(...paths.slice(0, 2000).map(p => new Option(p)));
  }

  // A game or extension folder for the template (its macro named by name or path inside it).
  async function setGame(name, list) {
    gameName = name;
    $('ship-template').value = '';
    await call('addGame', { label: name, files: list });
    // Said once the worker holds the folder (a template typed before would have been cleared).
    $('ship-game-name').textContent = `${name} (${list.length} files)`;
    $('ship-game-name').dataset.files = list.length;
    hints(list.map(f => f.path).filter(p => /_macro\.xml$/i.test(p)));
  }

  async function build(e) {
    e.preventDefault();
    const out = $('ship-result');
    out.replaceChildren();
    out.className = '';
    out.dataset.state = 'working';
    status('building the ship', true);
    try {
      const { meta, bytes } = await call('newShip', {
        scene: $('ship-scene').value,
        template: $('ship-template').value,
        // not `id`: that is the call's own (app.js `call`), which an `id` here would replace
        shipId: $('ship-id').value,
        name: $('ship-name').value,
        description: $('ship-description').value,
        lods: +$('ship-lods').value || 0,
      });
      const a = document.createElement('a');
      a.href = URL.createObjectURL(new Blob([bytes], { type: 'application/zip' }));
      a.download = meta.name;
      a.textContent = meta.name;
      a.id = 'ship-zip';
      out.className = 'ok';
      out.append(a, ` ${bytes.length} bytes: ${meta.files.length} files, ${meta.parts} parts, ${meta.connections} connections, ${meta.lodsMade} LODs and ${meta.collisionsMade} collision meshes made`);
      for (const w of meta.warnings) {
        const d = document.createElement('div');
        d.className = 'warning';
        d.textContent = w;
        out.append(d);
      }
      out.dataset.state = 'done';
      status(`${meta.name}: ${bytes.length} bytes`);
      a.click();
    } catch (err) {
      out.className = 'error';
      out.textContent = String(err.message || err);
      out.dataset.state = 'error';
      status('');
    }
  }

  // A folder holding several extensions: their conflicts shown. False when it holds fewer than two.
  async function conflicts(label) {
    let r;
    try {
      ({ result: r } = await call('conflicts'));
    } catch (e) { page.fail(e); return true; }
    if (r.mods.length < 2) return false;
    page.leave3d();
    const table = document.createElement('table');
    table.id = 'conflicts';
    const head = table.createTHead().insertRow();
    for (const h of ['kind', 'name', 'mods (load order)', 'files', 'message']) head.append(Object.assign(document.createElement('th'), { textContent: h }));
    const body = table.createTBody();
    for (const c of r.conflicts) {
      const row = body.insertRow();
      row.dataset.kind = c.kind;
      row.dataset.name = c.name;
      for (const v of [c.kind, c.name, c.mods.join('\n'), c.files.join('\n'), c.message]) row.insertCell().textContent = v;
    }
    const box = document.createElement('div');
    box.className = 'conflicts';
    box.append(table);
    page.view.replaceChildren(box);
    window.hangarConflicts = r;   // web/test.mjs compares it with the CLI's --json
    $('title').textContent = `${label}: ${r.mods.length} extensions`;
    const v = $('validate');
    v.replaceChildren();
    const line = document.createElement('div');
    line.className = r.conflicts.length ? 'error' : 'ok';
    line.dataset.conflicts = r.conflicts.length;
    line.textContent = `${r.conflicts.length} conflicts among ${r.mods.join(', ')}`;
    v.append(line);
    status(`${label}: ${r.mods.length} extensions, ${r.conflicts.length} conflicts`);
    page.setState('conflicts');
    return true;
  }

  $('ship-form').addEventListener('submit', build);
  $('ship-game').onchange = e => {
    const files = [...e.target.files];
    if (!files.length) return;
    const top = files[0].webkitRelativePath.split('/')[0];
    setGame(top, files.map(f => ({ path: f.webkitRelativePath.split('/').slice(1).join('/') || f.name, file: f })));
  };

  return { opened, setGame, conflicts };
}
