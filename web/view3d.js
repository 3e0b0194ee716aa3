// Draws a GLB that hangar made: orbit camera framed on the model, lights of the file, skeleton,
// animation clips, LOD and collision meshes, and labelled markers for hardpoints and attachment
// points (nodes hangar marks in their extras). Knows glTF, not the games' formats.
import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';
import { MeshoptDecoder } from 'three/addons/libs/meshopt_decoder.module.js';

export const BACKGROUND = 0x2b3440;
// The player colour shown where a team-coloured diffuse's alpha is 0 until one is picked (the
// Blender add-on's default, linear (0, 0.26, 1)).
export const TEAM = '#008cff';

// The texture slots of three.js's materials that glTF's fill: a material with any of them is
// drawn with its own (lit) material, since the quick one would drop them.
const MAPS = ['map', 'normalMap', 'aoMap', 'emissiveMap', 'metalnessMap', 'roughnessMap', 'specularColorMap', 'specularIntensityMap'];

// Shading by the angle between the surface and the view direction (a light at the camera).
function headlight(shader) {
  shader.vertexShader = 'varying float vShade;\n' + shader.vertexShader.replace('#include <project_vertex>', `#include <project_vertex>
    vShade = dot(normal, normal) > 0.0 ? 0.35 + 0.65 * abs(normalize(normalMatrix * normal).z) : 1.0;`);
  shader.fragmentShader = 'varying float vShade;\n' + shader.fragmentShader.replace('#include <opaque_fragment>', `outgoingLight *= vShade;
    #include <opaque_fragment>`);
}

// The quick material: colour and vertex colours shaded by the headlight (see `setPbr`).
function quick(params) {
  const q = new THREE.MeshBasicMaterial(params);
  q.onBeforeCompile = headlight;
  q.customProgramCacheKey = () => 'headlight';
  return q;
}

// What the quick material reads of a mesh's vertices: a geometry of only these (the same arrays)
// leaves the others (UVs, tangents, second colours) out of the first frame's upload, and all
// quick meshes share a few vertex layouts, which the view compiles before a model comes.
const QUICK = ['position', 'normal', 'skinIndex', 'skinWeight'];
// The markers' material, one for all (never disposed).
const MARKER = new THREE.MeshBasicMaterial({ color: 0xffd866 });
// A marker's dot: a sphere of its own in the one marker material.
const markerDot = () => new THREE.Mesh(new THREE.SphereGeometry(1, 8, 6), MARKER);
function quickGeometry(full, colours) {
  const g = new THREE.BufferGeometry();
  g.setIndex(full.index);
  for (const k of colours ? [...QUICK, 'color'] : QUICK) if (full.attributes[k]) g.setAttribute(k, full.attributes[k]);
  g.morphAttributes = full.morphAttributes;
  g.morphTargetsRelative = full.morphTargetsRelative;
  for (const { start, count, materialIndex } of full.groups) g.addGroup(start, count, materialIndex);
  g.setDrawRange(full.drawRange.start, full.drawRange.count);
  g.boundingBox = full.boundingBox;
  g.boundingSphere = full.boundingSphere;
  return g;
}

// X4's multimat shader (docs/MATERIALS.md): the vertex's `_X4_MULTIMAT` set holds smoothness (red),
// metalness (green), the layer of the material's texture array (blue, the byte itself) and dirt
// (alpha). The array is the base game's (no file in reach has it), so each layer is drawn in a hue of
// its own, as the Blender add-on does (blender/colors.py `layer_hue`: golden-ratio steps, HSV
// saturation 0.6, value 0.8, linear), mixed towards dirt by alpha. Lit (the file's materials), the
// vertex's smoothness and metalness are the surface's; in the quick material metalness darkens it
// and smoothness adds a highlight at the headlight.
export const LAYER_STEP = 0.618034;
export const DIRT = [0.12, 0.1, 0.08];
function multimatShader(shader, quickOne) {
  shader.vertexShader = 'attribute vec4 multimat;\nvarying vec4 vMultimat;\n' + shader.vertexShader.replace('#include <begin_vertex>', `#include <begin_vertex>
    vMultimat = multimat;`);
  let f = 'varying vec4 vMultimat;\n' + shader.fragmentShader.replace('#include <color_fragment>', `#include <color_fragment>
    float mmLayer = floor(vMultimat.b * 255.0 + 0.5);
    vec3 mmHsv = vec3(fract(mmLayer * ${LAYER_STEP}), 0.6, 0.8);
    vec3 mmHue = mmHsv.z * mix(vec3(1.0), clamp(abs(fract(mmHsv.x + vec3(1.0, 2.0 / 3.0, 1.0 / 3.0)) * 6.0 - 3.0) - 1.0, 0.0, 1.0), mmHsv.y);
    diffuseColor.rgb = mix(mmHue, vec3(${DIRT.join(', ')}), vMultimat.a);`)
    .replace('#include <roughnessmap_fragment>', `#include <roughnessmap_fragment>
    roughnessFactor = 1.0 - vMultimat.r;`)
    .replace('#include <metalnessmap_fragment>', `#include <metalnessmap_fragment>
    metalnessFactor = vMultimat.g;`);
  if (quickOne) f = f.replace('outgoingLight *= vShade;', `outgoingLight *= vShade * (1.0 - 0.5 * vMultimat.g);
    outgoingLight += 0.25 * vMultimat.r * pow(vShade, 24.0);`);
  shader.fragmentShader = f;
}

// A quick material of a multimat one: the headlight, then the multimat shader; its geometry
// carries the set.
function multimatQuick(q, quickGeo, full) {
  quickGeo.setAttribute('multimat', full.attributes.multimat);
  if (q.userData.multimat) return;
  q.userData.multimat = true;
  q.onBeforeCompile = shader => { headlight(shader); multimatShader(shader, true); };
  q.customProgramCacheKey = () => 'headlight-multimat';
}

export class View3D {
  constructor(host) {
    this.host = host;
    // No multisampling: without a GPU (SwiftShader) it doubles the time of a frame.
    this.renderer = new THREE.WebGLRenderer({ antialias: false, preserveDrawingBuffer: true });
    this.ratio = Math.min(devicePixelRatio, 2);
    this.renderer.setPixelRatio(this.ratio);
    this.renderer.setClearColor(BACKGROUND);
    this.camera = new THREE.PerspectiveCamera(45, 1, 0.01, 1000);
    this.controls = new OrbitControls(this.camera, this.renderer.domElement);
    // Frames are drawn when something changed, not continuously: without a GPU one frame of a
    // ship takes a large part of a second, and a page that draws all the time answers nothing.
    this.controls.addEventListener('change', () => this.invalidate());
    this.scene = new THREE.Scene();
    this.scene.add(new THREE.HemisphereLight(0xffffff, 0x445566, 2.2));
    const sun = new THREE.DirectionalLight(0xffffff, 2.0);
    sun.position.set(3, 5, 4);
    this.scene.add(sun);
    this.last = performance.now();
    this.mixer = null;
    this.action = null;
    this.playing = false;
    this.labels = [];
    // One uniform shared by every team-coloured material: picking a colour recompiles nothing.
    this.team = { value: new THREE.Color(TEAM) };
    this.onTime = () => {};
    this.resize = new ResizeObserver(() => this.fit());
  }

  // Draws a triangle with the quick material in each of its common vertex layouts (with and
  // without vertex colours as glTF's normalized bytes, one- and two-sided) and a marker on the
  // canvas: without a GPU a first frame otherwise spends tens of milliseconds compiling these
  // programs and SwiftShader's pipelines for them. The page calls it once a file is chosen, while
  // hangar converts it. The materials are kept: three.js drops a program with the last material
  // using it.
  precompile() {
    if (this.precompiled) return;
    // In the view's scene: its lights are part of a program's key.
    const warm = this.precompiled = new THREE.Group();
    const position = new THREE.Float32BufferAttribute([0, 0, 0, 1, 0, 0, 0, 1, 0], 3);
    const normal = new THREE.Float32BufferAttribute([0, 0, 1, 0, 0, 1, 0, 0, 1], 3);
    const color = new THREE.BufferAttribute(new Uint8Array(12).fill(255), 4, true);
    const index = new THREE.Uint16BufferAttribute([0, 1, 2], 1);   // glTF's indices, as 16 bits mostly
    for (const vertexColors of [false, true]) {
      for (const side of [THREE.FrontSide, THREE.DoubleSide]) {
        const g = new THREE.BufferGeometry().setIndex(index).setAttribute('position', position).setAttribute('normal', normal);
        if (vertexColors) g.setAttribute('color', color);
        warm.add(new THREE.Mesh(g, quick({ vertexColors, side })));
      }
    }
    warm.add(markerDot());
    const camera = new THREE.PerspectiveCamera();
    camera.position.z = 5;
    this.firstFrameSize();   // the canvas's buffers made now, as the first frame has them
    this.scene.add(warm);
    this.renderer.render(this.scene, camera);
    this.scene.remove(warm);
    // Sent to the GPU now, not waited for: SwiftShader compiles what a draw needs only when it
    // runs it, and a flush alone left these draws queued until the first frame (its SwiftShader
    // time 135-167 ms; 39-89 ms mostly with the fence; waiting for them here held the page's
    // thread up to 290 ms past the conversion on a busy machine).
    const gl = this.renderer.getContext();
    gl.deleteSync(gl.fenceSync(gl.SYNC_GPU_COMMANDS_COMPLETE, 0));   // a fence makes ANGLE submit
    gl.flush();
  }

  // The first frame is drawn at half resolution (a frame's time goes with its pixels where there
  // is no GPU), the full one once the page has been idle a moment.
  firstFrameSize() {
    this.renderer.setPixelRatio(this.ratio / 2);
    this.w = 0;
    this.fit(false);
  }

  attach() {
    if (this.renderer.domElement.parentNode !== this.host) this.host.replaceChildren(this.renderer.domElement);
    this.resize.observe(this.host);
    this.fit(false);
  }

  detach() {
    this.resize.disconnect();
    this.clear();
  }

  fit(draw = true) {
    const w = this.host.clientWidth || 1, h = this.host.clientHeight || 1;
    if (w === this.w && h === this.h) return;
    this.w = w; this.h = h;
    this.renderer.setSize(w, h, false);
    this.camera.aspect = w / h;
    this.camera.updateProjectionMatrix();
    if (draw) this.invalidate();
  }

  // Draws a frame at the next animation frame; frames go on while a clip plays.
  invalidate() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      if (!this.model) return;
      this.frame();
      if (this.playing && this.action) this.invalidate();
    });
  }

  clear() {
    if (this.model) {
      this.scene.remove(this.model);
      this.model.traverse(o => {
        for (const g of new Set([o.geometry, o.userData.full, o.userData.quick])) g?.dispose();
        for (const m of new Set([].concat(o.material || [], o.userData.pbr || []))) {
          if (m === MARKER) continue;
          for (const v of Object.values(m)) v?.isTexture && v.dispose();
          m.dispose();
        }
      });
    }
    if (this.skeleton) { this.scene.remove(this.skeleton); this.skeleton = null; }
    for (const l of this.labels) l.el.remove();
    this.labels = [];
    this.model = null; this.mixer = null; this.action = null; this.clips = [];
  }

  // Parses the GLB and shows it; resolves when the first frame is drawn.
  // `teamColour`: the glTF's indexes of the materials whose diffuse alpha is StarCraft II's
  // team-colour mask (hangar says which).
  // `multimat`: the glTF's indexes of the materials X4 draws with its multimat shader.
  async show(bytes, { markers = true, pbr = false, teamColour = [], multimat = [] } = {}) {
    const loader = new GLTFLoader().setMeshoptDecoder(MeshoptDecoder);
    // The worker's bytes are a buffer of their own: copied only when they are a view into more.
    const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
    const buffer = whole ? bytes.buffer : bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    const gltf = await new Promise((ok, fail) =>
      loader.parse(buffer, '', ok, e => fail(e instanceof Error ? e : new Error(String(e)))));
    performance.mark('hangar:parsed');
    this.clear();
    this.model = gltf.scene;
    this.clips = gltf.animations;
    this.scene.add(this.model);
    this.markers = [];
    this.model.traverse(o => {
      const x4 = o.userData.x4 || {}, own = o.userData.hangar || {}, m3 = o.userData.m3 || {};
      if (x4.collision) o.userData.kind = 'collision';
      else if (x4.wreck || (x4.lod ?? own.lod ?? 0) > 0) o.userData.kind = 'lod'; // a wreck: shown with the LODs
      const marker = (x4.connection && !x4.part) || m3.attachmentPoint !== undefined;
      if (marker && !o.isMesh) this.addMarker(o);
    });
    this.addBoxes();
    this.teamColoured(gltf.parser.associations, new Set(teamColour));
    this.multimatted(gltf.parser.associations, new Set(multimat));
    this.setPbr(pbr);
    this.setKinds({ lod: false, collision: false });
    this.skeleton = null;
    if (this.clips.length) this.mixer = new THREE.AnimationMixer(this.model);
    this.frameModel();
    this.attach();
    this.setMarkers(markers);
    this.firstFrameSize();
    this.pending = true;  // the frame below is the one the changes above asked for
    performance.mark('hangar:prepared');
    this.frame();
    performance.mark('hangar:drawn');
    requestAnimationFrame(() => { this.pending = false; });
    clearTimeout(this.sharpen);
    this.sharpen = setTimeout(() => { this.renderer.setPixelRatio(this.ratio); this.w = 0; this.fit(); }, 1000);
    await new Promise(r => requestAnimationFrame(() => r()));
    return { clips: this.clips.map(c => ({ name: c.name, duration: c.duration })), hasBones: this.hasBones() };
  }

  // The materials of `team` (glTF indexes) show the team colour where their base colour
  // texture's alpha is 0, mixed by that alpha (as the game and the Blender add-on do).
  teamColoured(associations, team) {
    this.teamUsed = false;
    if (!team.size) return;
    const uniform = this.team;
    this.model.traverse(o => {
      if (!o.isMesh) return;
      for (const m of [].concat(o.material)) {
        if (!m.map || !team.has(associations.get(m)?.materials)) continue;
        this.teamUsed = true;
        m.onBeforeCompile = shader => {
          shader.uniforms.teamColour = uniform;
          shader.fragmentShader = 'uniform vec3 teamColour;\n' + shader.fragmentShader.replace('#include <map_fragment>', `
            vec4 sampledDiffuseColor = texture2D( map, vMapUv );
            diffuseColor.rgb *= mix( teamColour, sampledDiffuseColor.rgb, sampledDiffuseColor.a );`);
        };
        m.customProgramCacheKey = () => 'team-colour';
      }
    });
  }

  // The meshes of the materials of `multimat` (glTF indexes) that carry the multimat set are drawn
  // as the game's multimat shader reads it (see `multimatShader`); `multimatUsed` counts them.
  multimatted(associations, multimat) {
    this.multimatUsed = 0;
    if (!multimat.size) return;
    this.model.traverse(o => {
      const set = o.geometry?.attributes._x4_multimat;
      if (!o.isMesh || !set || Array.isArray(o.material) || !multimat.has(associations.get(o.material)?.materials)) return;
      o.geometry.setAttribute('multimat', set);
      const m = o.material;
      m.userData.multimat = true;
      m.onBeforeCompile = shader => multimatShader(shader, false);
      m.customProgramCacheKey = () => 'multimat';
      this.multimatUsed++;
    });
  }

  // The team colour picked (a CSS colour, sRGB).
  setTeam(css) {
    this.team.value.set(css);
    this.invalidate();
  }

  // A scene graph without meshes (an Anark .bsg) shows each node's bounding box from its extras.
  addBoxes() {
    let meshes = 0;
    this.model.traverse(o => { if (o.isMesh) meshes++; });
    if (meshes) return;
    const nodes = [];
    this.model.traverse(o => { if (o.userData.boundingBoxMin && o.userData.boundingBoxMax) nodes.push(o); });
    nodes.forEach((o, i) => {
      const [a, b] = [o.userData.boundingBoxMin, o.userData.boundingBoxMax].map(v => new THREE.Vector3(...v));
      const size = b.clone().sub(a), center = a.clone().add(b).multiplyScalar(0.5);
      const geo = new THREE.BoxGeometry(Math.max(size.x, 1e-3), Math.max(size.y, 1e-3), Math.max(size.z, 1e-3));
      const color = new THREE.Color().setHSL((i * 0.13) % 1, 0.6, 0.55);
      const box = new THREE.Mesh(geo, new THREE.MeshLambertMaterial({ color, transparent: true, opacity: 0.35, depthWrite: false }));
      box.add(new THREE.LineSegments(new THREE.EdgesGeometry(geo), new THREE.LineBasicMaterial({ color })));
      box.position.copy(center);
      o.add(box);
      this.addMarker(o);
    });
  }

  hasBones() {
    let b = false;
    this.model?.traverse(o => { if (o.isBone || o.isSkinnedMesh) b = true; });
    return b;
  }

  addMarker(o) {
    const dot = markerDot();
    dot.userData.marker = true;
    o.add(dot);
    this.markers.push(dot);
    const el = document.createElement('div');
    el.className = 'label';
    el.textContent = o.name;
    this.labels.push({ el, obj: o });
  }

  setMarkers(on) {
    for (const m of this.markers || []) m.visible = on;
    for (const l of this.labels) (on ? this.host.append(l.el) : l.el.remove());
    this.invalidate();
  }

  // The file's own (PBR) materials, or for a material without textures a quick copy: colour and
  // vertex colours shaded by the angle to the camera. In a browser without a GPU (SwiftShader) a
  // lit shader takes seconds to compile for a ship, this one a tenth of a second. A textured
  // material keeps its own: its normal, specular, occlusion and emissive maps are the game's look.
  setPbr(on) {
    const fast = new Map();
    let lit = false;
    this.model?.traverse(o => {
      if (!o.isMesh || o.userData.marker) return;
      o.userData.pbr ??= o.material;
      o.userData.full ??= o.geometry;
      const m = o.userData.pbr;
      if (on || Array.isArray(m) || MAPS.some(k => m[k])) { o.material = m; o.geometry = o.userData.full; lit = true; return; }
      if (!fast.has(m)) {
        fast.set(m, quick({
          name: m.name, color: m.color, vertexColors: m.vertexColors, transparent: m.transparent,
          opacity: m.opacity, side: m.side, alphaTest: m.alphaTest,
        }));
      }
      o.material = fast.get(m);
      o.userData.quick ??= quickGeometry(o.userData.full, m.vertexColors);
      if (m.userData.multimat) multimatQuick(o.material, o.userData.quick, o.userData.full);
      o.geometry = o.userData.quick;
    });
    // The file's lights (a ship has dozens) light only its own materials: with none of those
    // drawn they are left out, so the quick programs are the ones `precompile` made.
    this.model?.traverse(o => { if (o.isLight) o.visible = lit; });
    this.invalidate();
  }

  // Visible kinds of meshes: LODs other than the first, collision meshes.
  setKinds(kinds) {
    this.kinds = { ...this.kinds, ...kinds };
    this.model?.traverse(o => { if (o.userData.kind) o.visible = !!this.kinds[o.userData.kind]; });
    this.invalidate();
  }

  setSkeleton(on) {
    if (on && !this.skeleton && this.model) {
      this.skeleton = new THREE.SkeletonHelper(this.model);
      this.scene.add(this.skeleton);
    }
    if (this.skeleton) this.skeleton.visible = on;
    this.invalidate();
  }

  frameModel() {
    const box = new THREE.Box3();
    this.model.updateMatrixWorld(true);
    this.model.traverse(o => { if ((o.isMesh || o.isSkinnedMesh) && o.visible && !o.userData.marker) box.expandByObject(o); });
    if (box.isEmpty()) box.setFromObject(this.model);
    if (box.isEmpty()) box.set(new THREE.Vector3(-1, -1, -1), new THREE.Vector3(1, 1, 1));
    const size = box.getSize(new THREE.Vector3()), center = box.getCenter(new THREE.Vector3());
    const radius = Math.max(size.length() / 2, 1e-3);
    const dist = radius / Math.sin((this.camera.fov * Math.PI) / 360) * 0.8;
    this.camera.near = dist / 1000; this.camera.far = dist * 100;
    this.camera.position.copy(center).add(new THREE.Vector3(0.6, 0.45, 1).normalize().multiplyScalar(dist));
    this.camera.updateProjectionMatrix();
    this.controls.target.copy(center);
    this.controls.update();
    for (const m of this.markers) m.scale.setScalar(radius / 150 / Math.max(m.parent.getWorldScale(new THREE.Vector3()).x, 1e-6));
  }

  playClip(index) {
    if (!this.mixer) return;
    this.mixer.stopAllAction();
    this.action = index >= 0 ? this.mixer.clipAction(this.clips[index]) : null;
    if (this.action) { this.action.play(); this.playing = true; }
    this.last = performance.now();
    this.invalidate();
  }

  setPlaying(on) {
    this.playing = on;
    this.last = performance.now();
    this.invalidate();
  }

  setTime(t) {
    if (!this.action) return;
    this.action.time = t;
    this.mixer.update(0);
    this.invalidate();
  }

  frame() {
    const now = performance.now(), dt = (now - this.last) / 1000;
    this.last = now;
    if (this.mixer && this.action && this.playing) { this.mixer.update(dt); this.onTime(this.action.time, this.action.getClip().duration); }
    this.renderer.render(this.scene, this.camera);
    if (this.labels.length) {
      const w = this.host.clientWidth, h = this.host.clientHeight, v = new THREE.Vector3();
      for (const { el, obj } of this.labels) {
        obj.getWorldPosition(v).project(this.camera);
        const on = v.z < 1 && Math.abs(v.x) < 1 && Math.abs(v.y) < 1;
        el.style.display = on ? '' : 'none';
        if (on) { el.style.left = `${(v.x + 1) / 2 * w}px`; el.style.top = `${(1 - v.y) / 2 * h}px`; }
      }
    }
  }
}
