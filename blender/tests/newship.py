"""A new X4 ship from Blender primitives (PyPI's bpy): installs the built zip, makes a hull (a 20 m cube) and a
tower part on it, adds five hardpoints with bpy.ops.hangar.x4_hardpoint_add (two weapons, an engine, a shield,
a turret on the tower pointing up), exports with bpy.ops.export_scene.hangar_x4_ship and checks the
extension written: its files, each hardpoint a connection with its tags where the empty stands and turned
as its arrow points, both parts with a 12-triangle lod0 and a collision mesh; and that a bad id and a
folder in use are refused with nothing written.
Prints one line a case and 'N passed, M failed'; exits 1 on any failure.
usage: BPY_PYTHON newship.py ZIP CORPUS OUTDIR"""
import glob, math, os, shutil, sys
import xml.etree.ElementTree as ET

import bpy
from mathutils import Quaternion, Vector

import checks

zip_path, corpus, out = sys.argv[1:4]
bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default", enable_on_install=True)
import hangar  # the wheel the extension brought

template = next(iter(sorted(glob.glob(os.path.join(
    corpus, "x4-mods/xirsoi__dropships__dropships/assets/units/size_m/macros/ship_*_macro.xml")))), None)
SHIP = "ship_test_m_01"


def ship():
    """The scene: hull, tower (its child), five hardpoints. Returns {name: (tags, Blender world location)}."""
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.mesh.primitive_cube_add(size=20.0, location=(0, 0, 0))
    hull = bpy.context.active_object
    hull.name = "hull"
    bpy.ops.mesh.primitive_cube_add(size=4.0, location=(0, 3, 12))
    tower = bpy.context.active_object
    tower.name = "tower"
    tower.parent = hull
    placed = {}
    for kind, loc, parent in [("weapon", (6, -12, -2), hull), ("weapon", (-6, -12, -2), hull),
                              ("engine", (0, 11, 0), hull), ("shield", (0, 0, -11), hull),
                              ("turret", (0, 0, 2), tower)]:
        if "FINISHED" not in bpy.ops.hangar.x4_hardpoint_add(kind=kind, size="medium"):
            raise RuntimeError("x4_hardpoint_add did not finish")
        e = bpy.context.active_object
        e.parent = parent
        e.location = loc
        if kind == "turret":
            e.rotation_euler = (0, 0, 0)  # its arrow up, Blender's +Z: the game's +Y
        placed[e.name] = e
    bpy.context.view_layer.update()
    return {n: (e["tags"], e.matrix_world.translation.copy()) for n, e in placed.items()}


def export(folder, **kw):
    return bpy.ops.export_scene.hangar_x4_ship(directory=folder, template=template, ship_id=kw.pop("ship_id", SHIP),
                                               ship_name="Test Ship", lods=2, **kw)


def connections(comp):
    """name -> (tags, parent, X4 position, quaternion (w, x, y, z)) of each connection of the component XML."""
    found = {}
    for c in ET.parse(comp).getroot().iter("connection"):
        pos, q = c.find("offset/position"), c.find("offset/quaternion")
        p = Vector([float(pos.get(k, 0)) for k in "xyz"]) if pos is not None else Vector((0, 0, 0))
        r = Quaternion([float(q.get(k, d)) for k, d in (("qw", 1), ("qx", 0), ("qy", 0), ("qz", 0))]) \
            if q is not None else Quaternion()
        parts = [x.get("name") for x in c.findall("parts/part")]
        found[parts[0] if parts else c.get("name")] = (c.get("tags", "").split(), c.get("parent"), p, r)
    return found


def world(cons, name):
    """A connection's place in the ship (X4 axes): its offset through its parents' part connections."""
    tags, parent, p, r = cons[name]
    if not parent or parent not in cons:
        return p, r
    pp, pr = world(cons, parent)
    return pp + pr @ p, pr @ r


def built():
    placed = ship()
    folder = os.path.join(out, "built", "test_ship")
    shutil.rmtree(os.path.dirname(folder), ignore_errors=True)
    if "FINISHED" not in export(folder):
        return "export did not finish"
    want = ["content.xml", "index/components.xml", "index/macros.xml", "libraries/wares.xml", "t/0001-l044.xml",
            f"assets/units/size_m/{SHIP}.xml", f"assets/units/size_m/macros/{SHIP}_macro.xml"]
    missing = [f for f in want if not os.path.isfile(os.path.join(folder, f))]
    if missing:
        return f"missing {missing}"
    comp = os.path.join(folder, want[5])
    cons = connections(comp)
    for name, (tags, at) in placed.items():
        if name not in cons:
            return f"no connection {name}"
        if cons[name][0] != tags.split():
            return f"{name}: tags {cons[name][0]}, the empty has {tags!r}"
        p, r = world(cons, name)
        x4 = Vector((-at.x, at.z, -at.y))  # Blender -> glTF (x, z, -y) -> X4 (x mirrored)
        if (p - x4).length > 1e-3:
            return f"{name} at {tuple(p)}, the empty stands at {tuple(x4)}"
        # Where the game mounts it: forward (X4 +Z) for the arrows left as made, up (+Y) for the turret.
        mount = r @ Vector((0, 0, 1))
        aim = Vector((0, 1, 0)) if name.startswith("con_turret") else Vector((0, 0, 1))
        if (mount - aim).length > 1e-3:
            return f"{name} mounts along {tuple(mount)}, its arrow points {tuple(aim)}"
    if cons["tower"][1] != "hull" or cons["con_turret_01"][1] != "tower":
        return f"tower's parent {cons['tower'][1]!r}, the turret's {cons['con_turret_01'][1]!r}"
    data = os.path.join(folder, "assets/units/size_m", f"{SHIP}_data")
    for part in ("hull", "tower"):
        lod0 = hangar.info(os.path.join(data, f"{part}-lod0.xmf"))
        col = hangar.info(os.path.join(data, f"{part}-collision.xmf"))
        if lod0["triangles"] != 12 or not col["details"].get("collision"):
            return f"{part}: lod0 {lod0['triangles']} triangles, collision {col['details'].get('collision')}"
    return ""


def painted():
    """The hull painted with a material made in Blender (an 8 x 8 red image into its Base Color): the
    extension carries it as ship_test_m_01.red_paint, in a material library patch and a red texture."""
    ship()
    hull = bpy.data.objects["hull"]
    mat = bpy.data.materials.new("Red Paint")
    mat.use_nodes = True
    img = bpy.data.images.new("red", 8, 8)
    img.pixels.foreach_set([1.0, 0.0, 0.0, 1.0] * 64)
    tex = mat.node_tree.nodes.new("ShaderNodeTexImage")
    tex.image = img
    bsdf = mat.node_tree.nodes["Principled BSDF"]
    mat.node_tree.links.new(tex.outputs["Color"], bsdf.inputs["Base Color"])
    hull.data.materials.append(mat)
    folder = os.path.join(out, "painted", "test_ship")
    shutil.rmtree(os.path.dirname(folder), ignore_errors=True)
    if "FINISHED" not in export(folder):
        return "export did not finish"
    lib = os.path.join(folder, "libraries/material_library.xml")
    tex_file = os.path.join(folder, f"assets/textures/{SHIP}/red_paint_diffuse.gz")
    if not os.path.isfile(lib) or not os.path.isfile(tex_file):
        return f"no library patch or texture: {sorted(os.listdir(folder))}"
    m = [e for e in ET.parse(lib).getroot().iter("material") if e.get("name") == "red_paint"]
    if len(m) != 1 or m[0].find("properties/property").get("value") != \
            f"extensions\\test_ship\\assets\\textures\\{SHIP}\\red_paint_diffuse":
        return f"library: {open(lib).read()}"
    lod0 = hangar.open(os.path.join(folder, f"assets/units/size_m/{SHIP}_data/hull-lod0.xmf"))
    names = [x.name for x in lod0.materials]
    if names != [f"{SHIP}.red_paint"]:
        return f"hull-lod0 materials {names}"
    return ""


def refused():
    """A bad id and a folder in use: an error report, nothing written."""
    ship()
    folder = os.path.join(out, "refused", "test_ship")
    shutil.rmtree(os.path.dirname(folder), ignore_errors=True)
    try:
        export(folder, ship_id="bad id!")
        return "a bad id was taken"
    except RuntimeError as e:
        if "id" not in str(e) or os.path.exists(folder):
            return f"bad id: {e}"
    os.makedirs(folder)
    open(os.path.join(folder, "mine.txt"), "w").write("x")
    try:
        export(folder)
        return "a folder in use was written into"
    except RuntimeError as e:
        if "not empty" not in str(e) or os.listdir(folder) != ["mine.txt"]:
            return f"folder in use: {e}; {os.listdir(folder)}"
    return ""


if template is None:
    print("skipped: no dropships mod in the corpus")
    sys.exit(0)
checks.case("new ship", built)
checks.case("new ship painted", painted)
checks.case("new ship refused", refused)
checks.finish()
