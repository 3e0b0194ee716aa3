"""A new X4 ship from primitives inside Blender (PyPI's bpy): installs the built zip, makes a hull (a 20 m
cube) with a tower part on it, adds five hardpoints with bpy.ops.hangar.x4_hardpoint_add and exports with
bpy.ops.export_scene.hangar_x4_ship, the corpus's dropships macro as the template. Checks that every
hardpoint is a connection with its kind and size where the empty stands (Blender (x, y, z) is the game's
(-x, z, -y)), that both parts have a 12-triangle lod0 and a collision mesh, and the extension's files.
Prints one line a case and 'N passed, M failed'; exits 1 on any failure.
usage: BPY_PYTHON newship.py ZIP CORPUS OUTDIR"""
import os
import sys
import xml.etree.ElementTree as ET

import bpy

zip_path, corpus, out = sys.argv[1:4]
bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default", enable_on_install=True)
bpy.ops.wm.read_homefile(use_empty=True)
template = os.path.join(corpus, "x4-mods/xirsoi__dropships__dropships/assets/units/size_m/macros/arg_dropship_macro.xml")
results = []


def case(name, ok, why=""):
    results.append(ok)
    print(f"{'ok' if ok else 'fail'}\t{name}\t{why}", flush=True)


bpy.ops.mesh.primitive_cube_add(size=20.0, location=(0, 0, 0))
hull = bpy.context.active_object
hull.name = "hull"
bpy.ops.mesh.primitive_cube_add(size=4.0, location=(0, 3, 12))
tower = bpy.context.active_object
tower.name = "tower"
tower.parent = hull
wanted = [("weapon", "medium", (6, 12, -2), hull), ("weapon", "medium", (-6, 12, -2), hull),
          ("engine", "medium", (0, -11, 0), hull), ("shield", "medium", (0, 0, 11), hull),
          ("turret", "medium", (0, 0, 2.5), tower)]
for kind, size, loc, parent in wanted:
    assert "FINISHED" in bpy.ops.hangar.x4_hardpoint_add(kind=kind, size=size)
    e = bpy.context.active_object
    e.parent = parent
    e.location = loc
case("hardpoints added", all("tags" in o for o in bpy.data.objects if o.type == "EMPTY"))
ext = os.path.join(out, "extensions", "newship_blender")
res = bpy.ops.export_scene.hangar_x4_ship(directory=ext, template=template, ship_id="ship_test_m_01",
                                          ship_name="Test Ship", lods=2)
case("exported", "FINISHED" in res, str(res))
units = os.path.join(ext, "assets/units/size_m")
comp = ET.parse(os.path.join(units, "ship_test_m_01.xml")).getroot().find("component")
conns = {c.get("name"): c for c in comp.iter("connection")}
for kind, size, loc, parent in wanted:
    hits = [c for c in conns.values() if kind in c.get("tags", "").split() and size in c.get("tags", "").split()
            and c.get("parent", "") == (parent.name if parent is not hull else "hull")]
    pos = [c.find("offset/position") for c in hits]
    want = (-loc[0], loc[2], -loc[1])
    near = [p for p in pos if p is not None and all(abs(float(p.get(k)) - w) < 1e-3 for k, w in zip("xyz", want))]
    case(f"{kind} at {loc}", bool(near), f"{len(hits)} connections of that kind")
for part in ("hull", "tower"):
    files = [f"{part}-lod0.xmf", f"{part}-collision.xmf"]
    case(f"part {part}", all(os.path.isfile(os.path.join(units, "ship_test_m_01_data", f)) for f in files))
case("extension files", all(os.path.isfile(os.path.join(ext, f)) for f in
                            ("content.xml", "index/macros.xml", "index/components.xml", "libraries/wares.xml",
                             "t/0001-l044.xml")))
print(f"{sum(results)} passed, {len(results) - sum(results)} failed", flush=True)
sys.exit(0 if all(results) else 1)
