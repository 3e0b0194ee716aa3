"""hangar for Python: read, check, convert and write the models of X4 / X Rebirth (XMF, XAC/XSM/XPM,
.ani, component XML) and StarCraft II / Heroes (M3).

    import hangar
    hangar.info("ship.xmf")["vertices"]          # what `hangar info --json` prints
    scene = hangar.open("marine.m3")              # meshes as numpy arrays
    scene.meshes[0].positions.shape               # (N, 3) float32
    hangar.write(scene, "marine.glb")             # and back: .glb, .gltf, .xmf, .m3, .xac, .xml ...
    hangar.convert("ship.xml", "ship.glb")        # the CLI's convert
    hangar.new_ship("my_ship.glb", "extensions/ship_my_m_01", "ship_arg_m_frigate_01_a_macro",
                    "ship_my_m_01", ship_name="My Frigate", game="C:/Games/X4 Foundations")

Paths may name a file inside a game or mod folder's catalogs as ``GAME::path``. Every failure raises
:class:`hangar.Error` with the message the command line prints.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from os import PathLike, fspath
from typing import Any, Optional

import numpy as np

from . import _native
from ._native import Error

__all__ = [
    "Error", "info", "validate", "convert", "open", "write", "new_ship", "new_component", "digest", "models", "find", "component_of", "write_textures", "material_name",
    "is_multimat",
    "Scene", "Node", "Mesh", "Primitive", "MorphTarget", "Material", "Skin", "Animation", "Channel",
    "Light", "Camera",
]
__version__ = _native.__version__



def info(path: str | PathLike[str]) -> dict[str, Any]:
    """The numbers of a model file as ``hangar info --json`` prints them (format, vertices, triangles,
    bones, sequences, animations, details, warnings, file)."""
    return json.loads(_native.info(fspath(path)))


def validate(path: str | PathLike[str]) -> list[dict[str, Any]]:
    """What ``hangar validate --json`` finds in a file: one dict a finding (severity, offset, path,
    message). An empty list: nothing to report."""
    return json.loads(_native.validate(fspath(path)))


def convert(input: str | PathLike[str], output: str | PathLike[str], *, motions: list = [],
            quantize: bool = False, compress: bool = False, modl_version: Optional[int] = None,
            textures: str = "embed", original: str | PathLike[str] | None = None) -> list[str]:
    """``hangar convert INPUT OUTPUT``: the output's extension picks the type. ``motions``: animation
    files whose clips are added to a glTF output (.m3a, .xsm, .xpm); ``quantize``/``compress``: glTF
    encoding; ``modl_version``: the MODL version of an M3 output; ``textures``: embed, copy, link,
    none, or write (a game model from a glTF: its changed images written back as the game reads them);
    ``original``: for a glTF input, the game file it was made from (``--original``: what another
    tool's export lost is taken from it). Returns the warnings as text."""
    orig = fspath(original) if original is not None else None
    w = json.loads(_native.convert(fspath(input), fspath(output), [fspath(m) for m in motions],
                                   quantize, compress, modl_version, textures, orig))
    return [_warning_text(x) for x in w]


def _warning_text(w: dict) -> str:
    at = f" at byte {w['offset']}" if w.get("offset") is not None else ""
    path = f"{w['path']}: " if w.get("path") else ""
    return f"{path}{w.get('message', '')}{at}"


def _extras(text: str) -> dict:
    return json.loads(text) if text else {}


@dataclass
class Node:
    """A node of the scene tree. ``rotation`` is a quaternion x, y, z, w; the frame is glTF's (+Y up)."""
    name: str = ""
    parent: Optional[int] = None
    translation: tuple = (0.0, 0.0, 0.0)
    rotation: tuple = (0.0, 0.0, 0.0, 1.0)
    scale: tuple = (1.0, 1.0, 1.0)
    mesh: Optional[int] = None
    skin: Optional[int] = None
    light: Optional[int] = None
    camera: Optional[int] = None
    collision: bool = False
    extras: dict = field(default_factory=dict)
    #: ``extras`` as the JSON text it was read from (empty for a node made in code); not written back.
    extras_text: str = field(default="", repr=False, compare=False)


@dataclass
class Primitive:
    """Triangles (``indices``, uint32, a multiple of 3) over the mesh's vertices with one material."""
    indices: np.ndarray
    material: Optional[int] = None


@dataclass
class MorphTarget:
    name: str
    positions: np.ndarray
    normals: Optional[np.ndarray] = None


@dataclass
class Mesh:
    """One vertex set (numpy arrays, one row a vertex) and the primitives that draw it."""
    name: str = ""
    positions: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.float32))
    normals: Optional[np.ndarray] = None
    tangents: Optional[np.ndarray] = None
    uvs: list = field(default_factory=list)
    colors: list = field(default_factory=list)
    #: The role of each colour set that is shader data, not a tint (X4: "col", "multimat", "color_N";
    #: see docs/MATERIALS.md); empty when the sets are tints.
    color_names: list = field(default_factory=list)
    joints: Optional[np.ndarray] = None
    weights: Optional[np.ndarray] = None
    primitives: list = field(default_factory=list)
    morph_targets: list = field(default_factory=list)
    custom: list = field(default_factory=list)
    extras: dict = field(default_factory=dict)
    # With open(..., edges=True): each edge's two vertices (E, 2) uint32, and for each of
    # ``indices`` (whole triangles) the edge from its vertex to the next corner's (uint32).
    edges: Optional[np.ndarray] = None
    corner_edges: Optional[np.ndarray] = None

    @property
    def indices(self) -> np.ndarray:
        """All primitives' indices, one after the other."""
        if not self.primitives:
            return np.zeros(0, np.uint32)
        return np.concatenate([p.indices for p in self.primitives])


@dataclass
class Material:
    """A material: its textures by what their channels mean (game paths), its ``look`` (factors and
    alpha: base_color, metallic, roughness, emissive, alpha "OPAQUE" / {"MASK": cutoff} / "BLEND",
    double_sided, team_colour) and ``images``, the (slot, picture key) pairs it is drawn with (slots:
    base_color, normal, metallic_roughness, occlusion, emissive, specular; ``Scene.pictures`` holds
    each key's PNG: normal maps already tangent-space RGB, metal and smoothness packed as glTF's)."""
    name: str = ""
    base_color: Optional[str] = None
    normal: Optional[str] = None
    emissive: Optional[str] = None
    occlusion: Optional[str] = None
    specular: Optional[str] = None
    metal: Optional[str] = None
    smooth: Optional[str] = None
    look: dict = field(default_factory=dict)
    images: list = field(default_factory=list)
    extras: dict = field(default_factory=dict)


@dataclass
class Skin:
    """Joints (node indices) and their inverse bind matrices, (N, 16) column-major."""
    name: str = ""
    joints: list = field(default_factory=list)
    inverse_bind: np.ndarray = field(default_factory=lambda: np.zeros((0, 16), np.float32))


@dataclass
class Channel:
    """Keys of one property (translation, rotation, scale, weights) of one node: ``times`` in seconds,
    ``values`` one row a key; interpolation LINEAR or STEP."""
    node: int
    property: str
    times: np.ndarray
    values: np.ndarray
    interpolation: str = "LINEAR"


@dataclass
class Animation:
    name: str = ""
    channels: list = field(default_factory=list)
    extras: dict = field(default_factory=dict)


@dataclass
class Light:
    name: str = ""
    kind: str = "point"
    color: tuple = (1.0, 1.0, 1.0)
    intensity: float = 1.0
    range: Optional[float] = None
    inner: Optional[float] = None
    outer: Optional[float] = None


@dataclass
class Camera:
    name: str = ""
    yfov: float = 0.8
    znear: float = 0.1
    zfar: Optional[float] = None


@dataclass
class Scene:
    """hangar's neutral scene (glTF's conventions) with numpy arrays; ``warnings`` are the reader's."""
    name: str = ""
    nodes: list = field(default_factory=list)
    meshes: list = field(default_factory=list)
    materials: list = field(default_factory=list)
    skins: list = field(default_factory=list)
    animations: list = field(default_factory=list)
    lights: list = field(default_factory=list)
    cameras: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    source: Optional[str] = None
    #: PNG bytes of the materials' textures by the path they name (``open(..., textures=True)``).
    pictures: dict = field(default_factory=dict)

    def _to_native(self) -> dict:
        f32 = lambda a: None if a is None else np.ascontiguousarray(a, dtype=np.float32)
        return {
            "name": self.name,
            "nodes": [dict(name=n.name, parent=n.parent, translation=tuple(map(float, n.translation)),
                           rotation=tuple(map(float, n.rotation)), scale=tuple(map(float, n.scale)),
                           mesh=n.mesh, skin=n.skin, light=n.light, camera=n.camera,
                           collision=bool(n.collision), extras=json.dumps(n.extras))
                      for n in self.nodes],
            "meshes": [dict(name=m.name, positions=f32(m.positions), normals=f32(m.normals),
                            tangents=f32(m.tangents), uvs=[f32(u) for u in m.uvs],
                            colors=[f32(c) for c in m.colors], color_names=[str(n) for n in m.color_names],
                            joints=None if m.joints is None else np.ascontiguousarray(m.joints, dtype=np.uint16),
                            weights=f32(m.weights), custom=[(n, f32(v)) for n, v in m.custom],
                            primitives=[dict(indices=np.ascontiguousarray(p.indices, dtype=np.uint32),
                                             material=p.material) for p in m.primitives],
                            morph_targets=[dict(name=t.name, positions=f32(t.positions), normals=f32(t.normals))
                                           for t in m.morph_targets],
                            extras=json.dumps(m.extras))
                       for m in self.meshes],
            "materials": [dict(name=m.name, base_color=m.base_color, normal=m.normal, emissive=m.emissive,
                               occlusion=m.occlusion, specular=m.specular, metal=m.metal, smooth=m.smooth,
                               look=json.dumps(m.look) if m.look else None,
                               extras=json.dumps(m.extras)) for m in self.materials],
            "skins": [dict(name=s.name, joints=[int(j) for j in s.joints], inverse_bind=f32(s.inverse_bind))
                      for s in self.skins],
            "animations": [dict(name=a.name, extras=json.dumps(a.extras),
                                channels=[dict(node=int(c.node), property=c.property, interpolation=c.interpolation,
                                               times=f32(c.times), values=f32(c.values)) for c in a.channels])
                           for a in self.animations],
            "lights": [vars(l) for l in self.lights],
            "cameras": [vars(c) for c in self.cameras],
        }


def _scene(d: dict, warnings: list, source: str) -> Scene:
    return Scene(
        name=d["name"],
        nodes=[Node(**{**n, "extras": _extras(n["extras"]), "extras_text": n["extras"]}) for n in d["nodes"]],
        meshes=[Mesh(**{**m, "extras": _extras(m["extras"]),
                        "primitives": [Primitive(**p) for p in m["primitives"]],
                        "morph_targets": [MorphTarget(**t) for t in m["morph_targets"]]}) for m in d["meshes"]],
        materials=[Material(**{**m, "extras": _extras(m["extras"]), "look": json.loads(m["look"]),
                               "images": [tuple(i) for i in m["images"]]}) for m in d["materials"]],
        skins=[Skin(**s) for s in d["skins"]],
        animations=[Animation(name=a["name"], extras=_extras(a["extras"]),
                              channels=[Channel(**c) for c in a["channels"]]) for a in d["animations"]],
        lights=[Light(**l) for l in d["lights"]],
        cameras=[Camera(**c) for c in d["cameras"]],
        warnings=[_warning_text(w) for w in warnings],
        source=source,
        pictures=d.get("pictures", {}),
    )


def open(path: str | PathLike[str], *, motions: list = [], textures: bool = False, edges: bool = False) -> Scene:
    """The neutral scene of a model file (XMF, M3, XAC, component XML, glTF, ...): nodes, meshes with
    numpy arrays (positions float32 (N, 3), normals, tangents (N, 4), uvs and colors lists, indices
    uint32 per primitive, joints uint16 (N, 4), weights float32 (N, 4)), materials, skins, animations.
    ``motions``: animation files whose clips are added (an M3's .m3a, an XAC actor's .xsm / .xpm).
    ``textures``: find the materials' textures as a conversion does (beside the model, an X4 game's
    material library) and decode them as glTF reads them: each material's ``images`` pairs a slot
    (base_color, normal, metallic_roughness, occlusion, emissive, specular) with a picture key, and
    ``Scene.pictures`` holds each key's PNG bytes (normal maps in tangent-space RGB, X4's metal and
    smoothness packed; a key is the texture's game path, two joined by ``|`` for a packed one).
    ``edges``: each mesh's ``edges`` and ``corner_edges`` too (an editor's edge table, as Blender keeps
    one), computed in the library side by side."""
    d, w = _native.open(fspath(path), [fspath(m) for m in motions], textures, edges)
    return _scene(d, json.loads(w), fspath(path))


def models(game: str | PathLike[str]) -> list[str]:
    """The files hangar opens in a game or mod folder (its loose files, its catalogs and its
    extensions' in the game's order) or in one ``.cat``: models, motions, UI files and textures, as
    ``GAME::path`` names them (``hangar.open(f"{game}::{path}")``), sorted. Only the catalogs'
    indexes are read."""
    return _native.models(fspath(game))


def find(query: str, game=".", *, kind: Optional[str] = None, lang: int = 44) -> list[dict[str, Any]]:
    """The macros, components and wares of a game folder (with its catalogs and extensions), an
    extension folder or a folder of catalogs whose id or in-game name matches ``query``
    (case-insensitive, words in any order), best first, as ``hangar find --json`` lists them: dicts
    with ``kind``, ``id``, ``name`` (as the game shows it in language ``lang``: 44 English, 49
    German...), ``file`` and ``extension`` (None for the game). ``game`` may be a list of folders,
    stacked in that order; ``kind`` one of macro, component, ware, text.

    >>> hangar.find("Cerberus Dropship", game="extensions/dropships")[0]["id"]
    'arg_dropship_macro'"""
    games = [fspath(g) for g in game] if isinstance(game, (list, tuple)) else [fspath(game)]
    return json.loads(_native.find(query, games, kind, lang))


def component_of(folder: str | PathLike[str]) -> Optional[str]:
    """The component XML a ``_data`` folder belongs to (``ship_data/`` gives ``ship.xml`` beside it,
    in any case), as :func:`open` finds it when given the folder; None when there is none."""
    found = _native.component_of(fspath(folder))
    return None if found is None else fspath(found)


def digest(*arrays) -> str:
    """A fingerprint of numpy arrays (any dtype and shape, read as their bytes in C order): each one's
    Adler-32 and byte length, ``xxxxxxxx:len`` joined by ``/`` (``zlib.adler32`` values), computed in the
    library. Any change of a value or a length changes it."""
    return _native.digest([np.ascontiguousarray(a).ravel().view(np.uint8) for a in arrays])


def write(scene: Scene, output: str | PathLike[str], *, original: str | PathLike[str] | None = None,
          patch: bool = False) -> list[str]:
    """Writes ``scene`` as ``output``; the extension picks the type (.xml a component with its data
    folder and .ani, .glb, .gltf, .xmf, .m3, .m3a, .xac, .xsm, .xpm). ``original``: the file the scene
    was read from: a component's data files the scene leaves out are carried from there byte for
    byte; an M3, XAC or XMF written in its own format is its very bytes while the scene still shows
    what it shows, and an actor rebuilt keeps its LODs. ``patch``: a component .xml is written as an
    X4 ``<diff>`` patch against ``original`` (for a mod; its XMFs and .ani as files). All files are
    written or none. Returns the warnings as text."""
    orig = fspath(original) if original is not None else None
    w = json.loads(_native.write(scene._to_native(), fspath(output), orig, patch))
    return [_warning_text(x) for x in w]


def write_textures(source: str | PathLike[str], output: str | PathLike[str], edits: list) -> list[tuple[str | None, str]]:
    """Writes textures changed outside the game back as the game reads them: each at the path its
    material names, below the folder the model from ``source`` is exported into as ``output`` (SC2 a
    .dds, X4 a gzip'd .gz where the original is one), in the original's compression with a full mip
    chain; a normal map in the game's layout, a metallic-roughness image as its metal and smooth maps.
    ``edits``: (material name, slot, picture key, pixels) with pixels a uint8 (height, width, 4) RGBA
    array, rows top to bottom; slots and keys as ``Material.images`` gives them. Images whose pixels
    are the original's are not written; a path outside the folder is refused, naming the material.
    A key of ``""`` is a new material's image: for X4 it goes to
    ``assets/textures/<collection>/<material>_<map>.gz`` and the material into the mod's
    ``libraries/material_library.xml`` (name the material with ``material_name`` first).
    Returns (file, what) for each file written, then (None, warning) for each image not written."""
    return [(fspath(f) if f is not None else None, w)
            for f, w in _native.write_textures(fspath(source), fspath(output), _native_edits(edits))]


def _native_edits(edits):
    """(material, slot, key, pixels (height, width, 4)) as the native side takes them."""
    native = []
    for material, slot, key, px in edits:
        px = np.ascontiguousarray(px, dtype=np.uint8)
        if px.ndim != 3 or px.shape[2] != 4:
            raise Error(f"material {material!r}: pixels must be (height, width, 4), not {px.shape}")
        native.append((material, slot, key, px.shape[1], px.shape[0], px.reshape(-1)))
    return native


def material_name(output: str | PathLike[str], name: str) -> str:
    """The name a material new in Blender takes in a model written as ``output``: X4 finds
    materials by ``collection.material``, so a name without a collection gets the model's; other
    names and games keep theirs."""
    return _native.material_name(fspath(output), name)


def is_multimat(name: str) -> bool:
    """Whether the X4 material ``name`` is a multimat one: its texture array's layer, smoothness,
    metalness and dirt come from the mesh's ``multimat`` colour set (docs/MATERIALS.md)."""
    return _native.is_multimat(name)


def new_ship(scene_or_path, directory: str | PathLike[str], template: str, ship_id: str,
             ship_name: Optional[str] = None, description: Optional[str] = None, lods: int = 2,
             game: str | PathLike[str] | None = None, pack: bool = False, force: bool = False,
             progress=None, textures: bool = True, images: Optional[list] = None,
             warnings: Optional[list] = None) -> list[str]:
    """``hangar new ship``: a ship built as meshes and empties becomes an X4 extension the game loads
    as it is, written whole under ``directory`` (its folder name is the extension's id).

    ``scene_or_path``: a :class:`Scene` (what :func:`open` gives, or one built in code or by the
    Blender extension; glTF's frame) or the path of a glTF/GLB. The authoring convention: a node
    with a mesh is a part named after the node (children ``<part>-lod1..3`` / ``<part>-collision``
    give those meshes); a node without a mesh whose ``extras`` hold ``tags`` is a connection (its
    other string extras its attributes); the hierarchy gives parents and offsets.
    ``template``: a ship macro file, or a macro name found through ``game`` (a game folder, an
    extension folder). ``ship_id``: the component's name (the macro is ``<id>_macro``).
    ``lods``: LODs made below lod0 where the scene gives none (0 to 3). ``pack``: all but
    content.xml in ext_01.cat/.dat. ``force``: write into a ``directory`` that is not empty.
    ``progress(done, total)``: called as parts are made; an exception it raises is raised
    again once the work ends, and nothing is written. ``textures``: a material the game's library
    lacks (a name without ``collection.``) becomes ``<id>.<name>``, an entry of a
    libraries/material_library.xml patch, and its ``images`` (as :func:`write_textures` takes them,
    by the scene's material names; a glTF path's own images when none are given) gzip'd DDS textures.
    ``warnings``: a list the library's warnings are appended to, as text (a connection taken from
    the template, an animated node that is no part...).
    Returns the paths written; raises :class:`Error`."""
    return _new(scene_or_path, directory, template, ship_id, ship_name, description, lods, game, pack,
                force, progress, textures, images, True, warnings)


def new_component(scene_or_path, directory: str | PathLike[str], template: str, id: str,
                  name: Optional[str] = None, description: Optional[str] = None, lods: int = 2,
                  game: str | PathLike[str] | None = None, pack: bool = False, force: bool = False,
                  progress=None, textures: bool = True, images: Optional[list] = None,
                  warnings: Optional[list] = None) -> list[str]:
    """``hangar new component``: new content of any kind (a turret, weapon, missile launcher,
    bullet, effect, dock area, docking bay, station module, engine, ship) from a scene and a
    template macro of its class, written whole under ``directory`` as :func:`new_ship` writes a
    ship, in the folder the game keeps that class in (where the template lies).

    What moves and shines comes along: each of the scene's animations (a Blender action named
    after its state: ``gun_firing``, ``dockingbay_opening``, ``loop``...) becomes that state of the
    component's ``.ani`` for the parts it moves; each light (a node with ``light``) a light of the
    part it hangs from (colour, range, intensity; its string extras the game's attributes, ``light``
    = ``omni``, ``spotlight``, ``arealight`` or ``box``); a ``restrictions`` extra a connection's
    ``<restrictions>``. Every connection the template's macro fills (cockpit, storage, docks) is
    written, where the scene places it or else where the template's component has it (named in a
    warning: ``warnings`` as :func:`new_ship` takes it).
    Returns the paths written; raises :class:`Error`."""
    return _new(scene_or_path, directory, template, id, name, description, lods, game, pack, force,
                progress, textures, images, False, warnings)


def _new(scene_or_path, directory, template, id, name, description, lods, game, pack, force,
         progress, textures, images, ship_only, warnings):
    if isinstance(scene_or_path, Scene):
        native, path = scene_or_path._to_native(), None
    else:
        native, path = None, fspath(scene_or_path)
    written, found = _native.new_ship(native, path, fspath(directory), template, id, name,
                                          description, lods, None if game is None else fspath(game),
                                          pack, force, progress, textures,
                                          _native_edits(images) if images else None, ship_only)
    if warnings is not None:
        warnings.extend(_warning_text(w) for w in json.loads(found))
    return [fspath(p) for p in written]
