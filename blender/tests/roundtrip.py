"""The Blender extension inside Blender (PyPI's bpy): installs the built zip, then for a file of each
kind in the corpus does File > Import and File > Export with no edit and checks that every file comes
back byte for byte (a component: its XML, every file of its data folder and its .ani); then moves and
turns one part of a component and checks that only offset lines of its XML change; and that an M3's
textures arrive decoded, packed and wired into its material.
Prints one line a case and 'N passed, M failed'; exits 1 on any failure.
usage: BPY_PYTHON roundtrip.py ZIP CORPUS OUTDIR"""
import filecmp, glob, math, os, sys

import bpy

import checks
from checks import ani_states, beyond_offset, changed_files, component_ani

zip_path, corpus, out = sys.argv[1:4]
bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default", enable_on_install=True)


def fresh():
    # An empty scene that keeps the installed extension (factory settings would drop it).
    bpy.ops.wm.read_homefile(use_empty=True)


def first(pattern):
    found = sorted(glob.glob(os.path.join(corpus, pattern)), key=os.path.getsize)
    return found[0] if found else None


def exported(tag, src):
    """`src` exported with File > Export into OUTDIR/tag/ (its path)."""
    dst = os.path.join(out, tag, os.path.basename(src))
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if "FINISHED" not in bpy.ops.export_scene.hangar(filepath=dst):
        raise RuntimeError("export did not finish")
    return dst


dropship = first("x4-components/*/*/assets/units/size_m/arg_dropship.xml")
cases = [
    ("xmf", first("x4/*-lod0.xmf")),
    ("m3", first("m3/*.m3")),
    ("xac", os.path.join(corpus, "emfx/vic2vl__Zulu_Infantry.xac")),
    ("component", dropship),
]
for name, src in cases:
    def untouched(name=name, src=src):
        fresh()
        if "FINISHED" not in bpy.ops.import_scene.hangar(filepath=src):
            raise RuntimeError("import did not finish")
        dst = exported(name, src)
        bad = changed_files(src, dst) if name == "component" else ([] if filecmp.cmp(src, dst, shallow=False) else [os.path.basename(src)])
        return f"not byte for byte: {', '.join(bad[:3])}" if bad else ""

    checks.case(name, untouched)


def moved():
    """A part moved and turned: only offset lines of the XML change, every data file stays as it was."""
    fresh()
    bpy.ops.import_scene.hangar(filepath=dropship)
    part = next(o for o in bpy.data.objects if o.parent is not None and o.type == "EMPTY" and "_" in o.name)
    part.location.z += 1.0
    part.rotation_mode = "XYZ"
    part.rotation_euler.z += math.radians(10)
    dst = exported("moved", dropship)
    bad = [f for f in changed_files(dropship, dst) if not f.endswith(".xml")]
    return f"data files changed: {', '.join(bad[:3])}" if bad else beyond_offset(dropship, dst)


def key_moved():
    """A key moved in one part's action: only that state of the .ani changes, with the keys the user set."""
    fresh()
    bpy.ops.import_scene.hangar(filepath=dropship)
    ext = sys.modules[next(k for k in sys.modules if k.endswith(".hangar") and "user_default" in k)]
    act = next(a for a in bpy.data.actions if "hangar_node" in a and any(
        fc.data_path == "location" and len(fc.keyframe_points) >= 2 for fc in ext.animation.action_fcurves(a)))
    fc = next(fc for fc in ext.animation.action_fcurves(act) if fc.data_path == "location" and len(fc.keyframe_points) >= 2)
    k = fc.keyframe_points[len(fc.keyframe_points) // 2]
    k.co.y += 0.25
    fc.update()
    dst = exported("key", dropship)
    bad = [f for f in changed_files(dropship, dst) if not f.endswith(".ani")]
    a, b = ani_states(component_ani(dropship)), ani_states(component_ani(dst))
    differ = [k for k in a if a[k] != b.get(k)] + [k for k in b if k not in a]
    if bad:
        return f"other files changed: {', '.join(bad[:3])}"
    if len(differ) != 1 or differ[0][1].decode() != act["hangar_clip"]:
        return f"states changed: {differ[:3]}, expected only {act['hangar_clip']}"
    return ""


def ani_onto_component():
    """A component's .ani imported after the component lands on its parts: its states replace their
    actions (a key moved before is back), no new collection, and the component exports byte for byte."""
    fresh()
    bpy.ops.import_scene.hangar(filepath=dropship)
    ext = sys.modules[next(k for k in sys.modules if k.endswith(".hangar") and "user_default" in k)]

    def actions():
        return sorted((a["hangar_clip"], a["hangar_node"], tuple((fc.data_path, fc.array_index, len(fc.keyframe_points))
                                                                 for fc in ext.animation.action_fcurves(a)))
                      for a in bpy.data.actions if "hangar_node" in a)
    before, counts = actions(), (len(bpy.data.objects), len(bpy.data.collections))
    # A key moved first: the .ani's import must put the state back as the file has it.
    fc = next(fc for a in bpy.data.actions if "hangar_node" in a for fc in ext.animation.action_fcurves(a)
              if fc.data_path == "location" and len(fc.keyframe_points) >= 2)
    fc.keyframe_points[0].co.y += 0.25
    fc.update()
    if "FINISHED" not in bpy.ops.import_scene.hangar(filepath=component_ani(dropship)):
        return "the .ani import did not finish"
    if (len(bpy.data.objects), len(bpy.data.collections)) != counts:
        return f"objects, collections {(len(bpy.data.objects), len(bpy.data.collections))}, were {counts}"
    after = actions()
    if after != before or len(after) < 13:
        return f"{len(after)} actions after, {len(before)} before"
    bad = changed_files(dropship, exported("ani-onto", dropship))
    return f"not byte for byte: {', '.join(bad[:3])}" if bad else ""


def picker(game, typed):
    """In a fresh scene, what File > Import's model picker offers in `game` (a game folder, a .cat,
    an archive) for `typed`."""
    import types
    fresh()
    ext = sys.modules[next(k for k in sys.modules if k.endswith(".hangar") and "user_default" in k)]
    return ext.ui.search_models(types.SimpleNamespace(game=game), bpy.context, typed)


def from_catalogs():
    """A game folder with the dropship packed into its catalog (by the CLI, HANGAR_BIN): the picker
    offers it, File > Import > Game model from catalogs brings its 45 meshes, and File > Export
    writes the component back byte for byte."""
    import shutil
    import subprocess
    cli = os.environ.get("HANGAR_BIN")
    if not cli:
        return "HANGAR_BIN (the hangar command line) is not set"
    src_dir = os.path.join(out, "catsrc", "assets", "units", "size_m")
    game = os.path.join(out, "game")
    shutil.rmtree(os.path.join(out, "catsrc"), ignore_errors=True)
    shutil.rmtree(game, ignore_errors=True)
    os.makedirs(game)
    shutil.copytree(os.path.dirname(dropship), src_dir)
    subprocess.run([cli, "cat", "pack", os.path.join(out, "catsrc"), "-o", os.path.join(game, "01.cat")],
                   check=True, capture_output=True)
    offered = picker(game, "DROPSHIP.x")
    want = "assets/units/size_m/arg_dropship.xml"
    if offered != [want]:
        return f"the picker offers {offered[:5]}"
    return arrived_whole(bpy.ops.import_scene.hangar_game(game=game, path=want), "fromcat")


def by_name():
    """The catalog import's picker searched by the name a player reads: in the dropships mod,
    "Cerberus Dropship" offers the component its macro builds, named so, before any path; the
    import brings its 45 meshes and the export writes it back byte for byte."""
    mod = os.path.join(corpus, "x4-mods/xirsoi__dropships__dropships")
    offered = picker(mod, "Cerberus Dropship")
    want = ("assets/units/size_m/arg_dropship.xml", "Cerberus Dropship (component arg_dropship)")
    if offered[:1] != [want]:
        return f"the picker offers {offered[:5]}"
    # By path, as before: the name's entry is not offered twice.
    by_path = picker(mod, "arg_dropship.x")
    if by_path != ["assets/units/size_m/arg_dropship.xml"]:
        return f"by path the picker offers {by_path[:5]}"
    return arrived_whole(bpy.ops.import_scene.hangar_game(game=mod, path=want[0]), "byname")


def from_archive():
    """A StarCraft II map saved as one MPQ archive (a folder-form map packed by the CLI): the picker
    offers its model, File > Import > Game model from an archive brings its meshes with the texture
    the archive holds beside it."""
    import subprocess
    cli = os.environ.get("HANGAR_BIN")
    if not cli:
        return "HANGAR_BIN (the hangar command line) is not set"
    archive = os.path.join(out, "thing.SC2Map")
    subprocess.run([cli, "cat", "pack", os.path.join(corpus, "textures/vicboyv__thethingrevival.SC2Map"),
                    "-o", archive], check=True, capture_output=True)
    offered = picker(archive, "flamethrower")
    want = "flamethrowerbackpack.m3"
    if offered != [want]:
        return f"the picker offers {offered[:5]}"
    if "FINISHED" not in bpy.ops.import_scene.hangar_archive(game=archive, path=want):
        return "the import did not finish"
    meshes = len([m for m in bpy.data.meshes if len(m.polygons)])
    images = [i.name for i in bpy.data.images if i.size[0] > 0]
    if not meshes or not images:
        return f"{meshes} meshes, images {images}"
    return ""


def data_folder():
    """The dropship's _data folder picked in the file browser: its component arrives and exports
    back byte for byte."""
    fresh()
    folder = os.path.join(os.path.dirname(dropship), "arg_dropship_data") + os.sep
    return arrived_whole(bpy.ops.import_scene.hangar(filepath=folder, directory=folder), "datafolder")


def arrived_whole(result, tag):
    """After an import of the dropship (`result`, the operator's): its 45 meshes are in, and File >
    Export writes the component back byte for byte (into OUTDIR/tag/)."""
    if "FINISHED" not in result:
        return "the import did not finish"
    meshes = len([m for m in bpy.data.meshes if len(m.polygons)])
    if meshes != 45:
        return f"{meshes} meshes"
    bad = changed_files(dropship, exported(tag, dropship))
    return f"not byte for byte: {', '.join(bad[:3])}" if bad else ""


def textures():
    """Textures decoded by hangar arrive as packed images wired into the material as the game reads
    them (an M3 of a mod, its DDS files beside it in the mod's Assets/Textures): the diffuse into Base
    Color (its alpha the team-colour mask), the DXT5nm normal map, as tangent-space RGB, through a
    Normal Map node, the specular colour into Specular Tint; normal and occlusion as non-colour data."""
    fresh()
    src = first("textures/ArtemKez__testMod/Base.SC2Data/Assets/Models/*.m3")
    bpy.ops.import_scene.hangar(filepath=src)
    found = sorted((n.image.name, tuple(n.image.size), n.image.packed_file is not None, n.image.colorspace_settings.name)
                   for m in bpy.data.materials if m.use_nodes for n in m.node_tree.nodes
                   if n.type == "TEX_IMAGE" and n.image)
    names = ["Capillary Tower dif.dds", "Capillary Tower nrm.dds", "Capillary Tower ocl.dds", "Capillary Tower spc.dds"]
    if [f[:3] for f in found] != [(n, (512, 512), True) for n in names]:
        return f"images {found}"
    if found[1][3] != "Non-Color" or found[2][3] != "Non-Color" or found[0][3] == "Non-Color":
        return f"colour spaces {[f[3] for f in found]}"
    m = next(m for m in bpy.data.materials if m.use_nodes and any(n.type == "NORMAL_MAP" for n in m.node_tree.nodes))
    bsdf = next(n for n in m.node_tree.nodes if n.type == "BSDF_PRINCIPLED")
    nm = bsdf.inputs["Normal"].links[0].from_node
    tex = nm.inputs["Color"].links[0].from_node
    if nm.type != "NORMAL_MAP" or nm.space != "TANGENT" or tex.image.name != names[1]:
        return f"normal input from {nm.type} {getattr(tex, 'image', None)}"
    import numpy as np
    px = np.empty(512 * 512 * 4, np.float32)
    tex.image.pixels.foreach_get(px)
    n = px.reshape(-1, 4)[:, :3] * 2 - 1
    length = np.linalg.norm(n, axis=1)
    if abs(float(np.median(length)) - 1) > 0.02 or float(n[:, 2].min()) < 0:
        return f"normals: median length {np.median(length):.3f}, least z {n[:, 2].min():.3f}"
    if bsdf.inputs["Metallic"].default_value != 0:
        return "an M3 material is metal"
    tint = bsdf.inputs.get("Specular Tint")
    if tint is not None and tint.type == "RGBA" and not tint.links:
        return "the specular layer is not the Specular Tint"
    return ""


def retexture():
    """A square painted on an M3's BC1 diffuse comes back on File > Export as the game's BC1 .dds at
    the layer's path, beside the model: a full mip chain, the square where it was painted and the
    one-bit alpha (the team-colour mask) kept; nothing else is written."""
    import numpy as np
    fresh()
    src = first("textures/vicboyv__thethingrevival.SC2Map/*.m3")
    bpy.ops.import_scene.hangar(filepath=src)
    img = next(n.image for m in bpy.data.materials if m.use_nodes for n in m.node_tree.nodes
               if n.type == "TEX_IMAGE" and n.image and n.image.get("hangar_slot") == "base_color")
    w, h = img.size
    px = np.empty(w * h * 4, np.float32)
    img.pixels.foreach_get(px)
    px = px.reshape(h, w, 4)
    px[8:40, 8:40] = (1.0, 0.0, 1.0, 1.0)
    clear = int((px[..., 3] < 0.5).sum())
    img.pixels.foreach_set(px.ravel())
    img.update()
    dst = exported("retexture", src)
    root = os.path.dirname(dst)
    files = sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)
    dds = [f for f in files if f.lower().endswith("flamebptexture.dds")]
    if len(files) != 2 or len(dds) != 1 or not dds[0].lower().startswith(os.path.join("assets", "textures")):
        return f"wrote {files}"
    data = open(os.path.join(root, dds[0]), "rb").read()
    if data[84:88] != b"DXT1" or int.from_bytes(data[28:32], "little") != 9:
        return f"{data[84:88]} with {int.from_bytes(data[28:32], 'little')} mips"
    import hangar
    png = os.path.join(out, "retexture.png")
    hangar.convert(os.path.join(root, dds[0]), png)
    back = bpy.data.images.load(png)
    got = np.empty(w * h * 4, np.float32)
    back.pixels.foreach_get(got)
    got = got.reshape(h, w, 4)
    if np.abs(got[20, 20] - (1, 0, 1, 1)).max() > 0.05:
        return f"the square is {got[20, 20]}"
    if int((got[..., 3] < 0.5).sum()) != clear:
        return f"{int((got[..., 3] < 0.5).sum())} transparent pixels, {clear} painted"
    return ""


def new_material():
    """A material made in Blender with a painted image, given to an X4 ship's hull: File > Export
    writes the image as a gzip'd BC3 DDS at assets/textures/<collection>/<material>_diffuse.gz below
    the mod's root, adds the material to the mod's library patch and names it so in the part's XMF."""
    import gzip
    fresh()
    src = first("textures/DeadAirRT__deadairfactionamarr/assets/units/size_m/*.xml")
    bpy.ops.import_scene.hangar(filepath=src)
    hull = max((o for o in bpy.context.scene.objects if o.type == "MESH" and o.visible_get()),
               key=lambda o: len(o.data.polygons))
    img = bpy.data.images.new("red paint", 64, 64)
    img.pixels.foreach_set([1.0, 0.0, 0.0, 1.0] * 64 * 64)
    mat = bpy.data.materials.new("Red Paint")
    mat.use_nodes = True
    tex = mat.node_tree.nodes.new("ShaderNodeTexImage")
    tex.image = img
    bsdf = next(n for n in mat.node_tree.nodes if n.type == "BSDF_PRINCIPLED")
    mat.node_tree.links.new(tex.outputs["Color"], bsdf.inputs["Base Color"])
    hull.data.materials.append(mat)
    hull.data.polygons.foreach_set("material_index", [len(hull.data.materials) - 1] * len(hull.data.polygons))
    hull.data.update()
    root = os.path.join(out, "new material")
    dst = os.path.join(root, "assets", "units", "size_m", os.path.basename(src))
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if "FINISHED" not in bpy.ops.export_scene.hangar(filepath=dst):
        return "export did not finish"
    tex_file = os.path.join(root, "assets", "textures", "ship_dam_m_coercer", "red_paint_diffuse.gz")
    if not os.path.isfile(tex_file):
        return f"no {tex_file}: {sorted(os.listdir(root))}"
    dds = gzip.decompress(open(tex_file, "rb").read())
    if dds[:4] != b"DDS " or dds[84:88] != b"DXT5" or int.from_bytes(dds[28:32], "little") != 7:
        return f"texture {dds[:4]} {dds[84:88]} {int.from_bytes(dds[28:32], 'little')} mips"
    lib = open(os.path.join(root, "libraries", "material_library.xml"), encoding="utf-8-sig").read()
    want = r"extensions\deadairfactionamarr\assets\textures\ship_dam_m_coercer\red_paint_diffuse"
    if '<collection name="ship_dam_m_coercer">' not in lib or want not in lib or "evemata" not in lib:
        return f"library: {lib[-600:]}"
    data = os.path.join(os.path.dirname(dst), "ship_dam_m_coercer_data")
    named = [f for f in os.listdir(data) if b"ship_dam_m_coercer.red_paint" in open(os.path.join(data, f), "rb").read()]
    return "" if len(named) == 1 else f"XMFs naming the material: {named}"


def empty_mesh():
    """An actor holding a mesh with no vertices (real XAC files do) imports, both meshes made (one
    empty), and exports back byte for byte. Built in code: the file is not ours."""
    import numpy as np
    import hangar
    fresh()
    tri = hangar.Mesh(name="body", positions=np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32),
                      normals=np.array([[0, 0, 1]] * 3, np.float32),
                      primitives=[hangar.Primitive(indices=np.array([0, 1, 2], np.uint32))])
    empty = hangar.Mesh(name="nothing")
    sc = hangar.Scene(name="actor", meshes=[tri, empty],
                      nodes=[hangar.Node(name="body", mesh=0), hangar.Node(name="nothing", mesh=1)])
    src = os.path.join(out, "empty mesh", "actor.xac")
    os.makedirs(os.path.dirname(src), exist_ok=True)
    hangar.write(sc, src)
    if "FINISHED" not in bpy.ops.import_scene.hangar(filepath=src):
        return "import did not finish"
    sizes = sorted(len(o.data.vertices) for o in bpy.context.scene.objects if o.type == "MESH")
    if sizes != [0, 3]:
        return f"meshes of {sizes} vertices"
    dst = exported("empty mesh back", src)
    return "" if filecmp.cmp(src, dst, shallow=False) else "not byte for byte"


def edges():
    """The edge table the library hands over is the one Blender computes itself: after the dropship's
    import every mesh is valid as it is (validate() corrects nothing) and has as many edges as Blender
    finds when it rebuilds them."""
    fresh()
    bpy.ops.import_scene.hangar(filepath=dropship)
    meshes = [m for m in bpy.data.meshes if len(m.polygons)]
    total = sum(len(m.edges) for m in meshes)
    for m in meshes:
        n = len(m.edges)
        if m.validate(verbose=False):
            return f"{m.name}: validate() had to correct the mesh"
        copy = m.copy()
        copy.update(calc_edges=True)
        if (n, len(copy.edges)) != (len(m.edges), n):
            return f"{m.name}: {n} edges, Blender finds {len(copy.edges)}"
        bpy.data.meshes.remove(copy)
    if len(meshes) != 45 or total < 200_000:
        return f"{len(meshes)} meshes with {total} edges, expected the dropship's 45"
    return ""


def mesh_edited(src):
    """A skinned mesh of an M3 or actor scaled in Blender and exported in the file's format: it comes
    back scaled, with its bones, skin weights, clips and materials as the file has them."""
    import hangar
    import numpy as np
    fresh()
    bpy.ops.import_scene.hangar(filepath=src)
    ob = next(o for o in bpy.data.objects if o.type == "MESH" and len(o.data.vertices) > 100 and o.vertex_groups)
    co = np.empty(len(ob.data.vertices) * 3, np.float32)
    ob.data.vertices.foreach_get("co", co)
    ob.data.vertices.foreach_set("co", co * 2)
    ob.data.update()
    dst = exported("edited", src)
    a, b = hangar.open(src), hangar.open(dst)
    # Nodes by name: an actor's writer lays its LOD nodes out its own way.
    i = ob["hangar_node"]
    j = next((k for k, n in enumerate(b.nodes) if n.name == a.nodes[i].name and n.mesh is not None), None)
    if j is None:
        return f"no mesh node {a.nodes[i].name} in the export"
    was, now = a.meshes[a.nodes[i].mesh], b.meshes[b.nodes[j].mesh]
    same = [(len(x.meshes), len(x.skins), len(x.skins[0].joints), len(x.animations), len(x.materials)) for x in (a, b)]
    if same[0] != same[1]:
        return f"meshes, skins, joints, clips, materials {same[1]}, the file has {same[0]}"
    # Each written vertex paired with the nearest unpaired scaled one (a writer may reorder vertices
    # and renumber bones): same place, same (bone name, weight in 255ths).
    tol = 1e-3 * (1 + float(np.abs(was.positions).max()) * 2)
    target = was.positions * 2
    cells = {}
    for k, p in enumerate(target):
        cells.setdefault(tuple(np.floor(p / tol).astype(int)), []).append(k)
    taken = set()
    pairs = []
    for k, p in enumerate(now.positions):
        c = np.floor(p / tol).astype(int)
        near = [q for d in np.ndindex(3, 3, 3) for q in cells.get(tuple(c + np.array(d) - 1), []) if q not in taken]
        best = min(near, key=lambda q: float(np.abs(target[q] - p).max()), default=None)
        if best is None or np.abs(target[best] - p).max() > tol:
            return f"the mesh did not come back scaled (vertex {k} at {p.tolist()})"
        taken.add(best)
        pairs.append((best, k))

    def influence(sc, m, node, v):
        names = [sc.nodes[x].name for x in sc.skins[sc.nodes[node].skin].joints]
        return sorted((names[x], round(w * 255)) for x, w in zip(m.joints[v], m.weights[v]) if w > 0)
    if any(influence(a, was, i, q) != influence(b, now, j, k) for q, k in pairs):
        return "the skin weights changed"
    if sorted(len(m.positions) for m in a.meshes if m is not was) != sorted(len(m.positions) for m in b.meshes if m is not now):
        return "another mesh changed"
    return ""


def shape_keys():
    """An actor's morph targets arrive as shape keys, and an XPM chosen with it as an action on them:
    an actor of one quad with two targets and a motion of their weights, written by hangar."""
    import hangar
    import numpy as np
    d = os.path.join(out, "morph")
    os.makedirs(d, exist_ok=True)
    quad = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], np.float32)
    mesh = hangar.Mesh(name="face", positions=quad, normals=np.tile(np.float32([[0, 0, 1]]), (4, 1)),
                       primitives=[hangar.Primitive(indices=np.uint32([0, 1, 2, 2, 1, 3]))],
                       morph_targets=[hangar.MorphTarget(name="smile", positions=np.tile(np.float32([[0, 0, 0.5]]), (4, 1))),
                                      hangar.MorphTarget(name="blink", positions=np.tile(np.float32([[0, 0.25, 0]]), (4, 1)))])
    sc = hangar.Scene(name="actor", nodes=[hangar.Node(name="face", mesh=0)], meshes=[mesh])
    hangar.write(sc, os.path.join(d, "face.xac"))
    sc.animations = [hangar.Animation(name="talk", channels=[hangar.Channel(
        node=0, property="weights", interpolation="LINEAR", times=np.float32([0, 1]), values=np.float32([[0, 0], [1, 0.5]]))])]
    hangar.write(sc, os.path.join(d, "talk.xpm"))
    fresh()
    bpy.ops.import_scene.hangar(filepath=os.path.join(d, "face.xac"), directory=d,
                                files=[{"name": "face.xac"}, {"name": "talk.xpm"}])
    ob = next((o for o in bpy.data.objects if o.type == "MESH"), None)
    keys = ob.data.shape_keys if ob is not None else None
    if keys is None:
        return "no shape keys"
    names = [k.name for k in keys.key_blocks]
    if names != ["Basis", "smile", "blink"]:
        return f"shape keys {names}"
    # glTF's +Z (toward the viewer) is Blender's -Y.
    moved = [tuple(round(c, 4) for c in keys.key_blocks["smile"].data[k].co - keys.key_blocks["Basis"].data[k].co) for k in range(4)]
    if set(moved) != {(0.0, -0.5, 0.0)}:
        return f"smile moves the vertices by {set(moved)}"
    act = keys.animation_data.action if keys.animation_data else None
    if act is None:
        return "no action on the shape keys"
    fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
    ext = sys.modules[next(k for k in sys.modules if k.endswith(".hangar") and "user_default" in k)]
    curves = {fc.data_path: [tuple(round(x, 4) for x in p.co) for p in fc.keyframe_points] for fc in ext.animation.action_fcurves(act)}
    want = {'key_blocks["smile"].value': [(0.0, 0.0), (round(fps, 4), 1.0)],
            'key_blocks["blink"].value': [(0.0, 0.0), (round(fps, 4), 0.5)]}
    if curves != want:
        return f"curves {curves}"
    return ""


def camera():
    """An M3 portrait's camera, which hangs from a bone: in Blender it stands where the file puts it
    and looks where the file aims it (glTF's -Z of its node), the rest pose shown; and so does every
    attachment point (each node shown as an object, within 1 mm)."""
    import hangar
    from mathutils import Matrix, Quaternion, Vector
    fresh()
    src = os.path.join(corpus, "m3/ArtemKez_testMod__Devourer_CollectionSkin_Webby_Portrait.m3")
    bpy.ops.import_scene.hangar(filepath=src)
    for a in bpy.data.armatures:
        a.pose_position = "REST"
    bpy.context.view_layer.update()
    sc = hangar.open(src)
    to_blender = Matrix(((1, 0, 0, 0), (0, 0, -1, 0), (0, 1, 0, 0), (0, 0, 0, 1)))

    def world(i):
        n = sc.nodes[i]
        x, y, z, w = n.rotation
        m = Matrix.LocRotScale(Vector(n.translation), Quaternion((w, x, y, z)), Vector(n.scale))
        return world(n.parent) @ m if n.parent is not None else m
    i = next(k for k, n in enumerate(sc.nodes) if n.camera is not None)
    want = to_blender @ world(i)
    cam = next((o for o in bpy.data.objects if o.type == "CAMERA"), None)
    if cam is None:
        return "no camera"
    look = (cam.matrix_world.to_3x3() @ Vector((0, 0, -1))).normalized()
    if (cam.matrix_world.translation - want.translation).length > 1e-3 or \
            (look - (want.to_3x3() @ Vector((0, 0, -1))).normalized()).length > 1e-3:
        return f"camera at {tuple(cam.matrix_world.translation)} looking {tuple(look)}"
    if abs(cam.data.angle_y - sc.cameras[sc.nodes[i].camera].yfov) > 1e-5:
        return f"field of view {cam.data.angle_y}"
    placed = 0
    for o in bpy.data.objects:
        k = o.get("hangar_node")
        if k is None:
            continue
        placed += 1
        if (o.matrix_world.translation - (to_blender @ world(k)).translation).length > 1e-3:
            return f"{o.name} at {tuple(o.matrix_world.translation)}, the file has {tuple((to_blender @ world(k)).translation)}"
    return "" if placed >= 3 else f"{placed} objects placed"


def multimat():
    """X4's multimat colour set arrives as Egosoft's four grey attributes, comes back from them (a layer
    painted in Blender is the file's blue byte), and a multimat part renders in the layer its vertices
    name (Cycles: two quads naming layers 3 and 9 show those layers' hues)."""
    import colorsys
    import hangar
    import numpy as np
    src = os.path.join(corpus, "x4/X4Reemergence-Project__detail_xl_door_l-lod0.xmf")
    fresh()
    bpy.ops.import_scene.hangar(filepath=src)
    ob = next(o for o in bpy.data.objects if o.type == "MESH")
    me = ob.data
    names = sorted(a.name for a in me.color_attributes)
    if names != ["col", "dirt", "multimatid", "multimatmetal", "multimatsmooth"]:
        return f"colour attributes {names}"
    n = len(me.vertices)
    ids = np.empty(n * 4, np.float32)
    me.color_attributes["multimatid"].data.foreach_get("color", ids)
    if sorted(set(np.round(ids[0::4] * 255).astype(int).tolist())) != [4, 5]:
        return f"layers {sorted(set(np.round(ids[0::4] * 255).astype(int).tolist()))}, the file has 4 and 5"
    ids[0::4] = ids[1::4] = ids[2::4] = 7 / 255
    me.color_attributes["multimatid"].data.foreach_set("color", ids)
    me.update()
    dst = exported("multimat", src)
    was, now = hangar.open(src).meshes[0], hangar.open(dst).meshes[0]
    k = was.color_names.index("multimat")
    if now.color_names != was.color_names:
        return f"roles {now.color_names}, the file has {was.color_names}"
    got = np.round(np.asarray(now.colors[k]) * 255).astype(int)
    want = np.round(np.asarray(was.colors[k]) * 255).astype(int)
    want[:, 2] = 7
    if len(got) != len(want) or not np.array_equal(np.sort(got, axis=0), np.sort(want, axis=0)):
        return "the painted layer did not come back as the blue byte 7"
    # The pixel test: the imported multimat material on two quads naming layers 3 and 9.
    mat = next(m for m in bpy.data.materials if hangar.is_multimat(m.name))
    sc = bpy.context.scene
    for o in list(sc.objects):
        bpy.data.objects.remove(o)
    for x, layer in ((-1.0, 3), (1.0, 9)):
        q = bpy.data.meshes.new(f"layer{layer}")
        q.from_pydata([(x - 0.9, -0.9, 0), (x + 0.9, -0.9, 0), (x + 0.9, 0.9, 0), (x - 0.9, 0.9, 0)], [], [(0, 1, 2, 3)])
        for name, v in (("multimatsmooth", 0.0), ("multimatmetal", 0.0), ("multimatid", layer / 255), ("dirt", 0.0)):
            a = q.color_attributes.new(name=name, type="FLOAT_COLOR", domain="POINT")
            a.data.foreach_set("color", [v, v, v, 1.0] * 4)
        q.materials.append(mat)
        sc.collection.objects.link(bpy.data.objects.new(q.name, q))
    cam = bpy.data.objects.new("cam", bpy.data.cameras.new("cam"))
    cam.data.type = "ORTHO"
    cam.data.ortho_scale = 4.0
    cam.location = (0, 0, 5)
    sc.collection.objects.link(cam)
    sc.camera = cam
    world = bpy.data.worlds.new("white")
    world.use_nodes = True
    world.node_tree.nodes["Background"].inputs["Color"].default_value = (1, 1, 1, 1)
    sc.world = world
    sc.render.engine = "CYCLES"
    sc.cycles.samples = 16
    sc.cycles.device = "CPU"
    sc.view_settings.view_transform = "Standard"
    sc.render.resolution_x, sc.render.resolution_y, sc.render.resolution_percentage = 64, 32, 100
    sc.render.image_settings.file_format = "PNG"
    sc.render.filepath = os.path.join(out, "multimat.png")
    bpy.ops.render.render(write_still=True)
    img = bpy.data.images.load(sc.render.filepath)
    px = np.empty(64 * 32 * 4, np.float32)
    img.pixels.foreach_get(px)
    px = px.reshape(32, 64, 4)
    # The PNG's bytes back to linear light, where the material made the layer's hue (golden-ratio
    # steps, colors.layer_hue); light and a white specular scale and lift the colour, keeping its hue.
    lin = np.where(px <= 0.04045, px / 12.92, ((px + 0.055) / 1.055) ** 2.4)
    for col, layer in ((16, 3), (48, 9)):
        h, s, _ = colorsys.rgb_to_hsv(*lin[16, col, :3])
        want_h = (layer * 0.618034) % 1.0
        if s < 0.2 or min(abs(h - want_h), 1 - abs(h - want_h)) > 0.06:
            return f"layer {layer} renders hue {h:.3f} saturation {s:.2f}, its hue is {want_h:.3f}"
    return ""


checks.case("camera", camera)
checks.case("shape keys", shape_keys)
checks.case("m3 mesh edited", lambda: mesh_edited(os.path.join(corpus, "m3/ArtemKez_testMod__Devourer_CollectionSkin_Webby.m3")))
checks.case("xac mesh edited", lambda: mesh_edited(os.path.join(corpus, "emfx/vic2vl__Zulu_Infantry.xac")))
checks.case("edges", edges)
checks.case("ani onto its component", ani_onto_component)
checks.case("from catalogs", from_catalogs)
checks.case("from an archive", from_archive)
checks.case("picked by in-game name", by_name)
checks.case("data folder picked", data_folder)
checks.case("moved part", moved)
checks.case("key moved", key_moved)
checks.case("textures", textures)
checks.case("retexture", retexture)
checks.case("new material", new_material)
checks.case("empty mesh", empty_mesh)
checks.case("multimat", multimat)
checks.finish()
