"""The README's picture for "A new ship in ten minutes", made by Blender itself (PyPI's bpy, no display): the
extension installed, a ship built as the README says (the hull `part_main` and a `tower` part on it as mesh
objects, hardpoints added with bpy.ops.hangar.x4_hardpoint_add and parented to the part they sit on, an
untagged `con_weapon` empty, a hand-made `part_main-collision` child), exported with
bpy.ops.export_scene.hangar_x4_ship when a template is given, and rendered by Workbench (PICTURE_ENGINE=CYCLES:
Cycles on the CPU).
Empties are not drawn by a render engine: each hardpoint's arrow is drawn by a stand-in mesh made for the
picture only (after the export), along the arrow the viewport shows, with the empty's name and tags beside it.
usage: BPY_PYTHON blender/picture_newship.py ZIP OUT.png [TEMPLATE_MACRO.xml EXTENSION_DIR]"""
import math
import os
import shutil
import sys

import bpy
from mathutils import Vector

from picture_kit import arrow, camera, flat, label, render, start

out, template, ext_dir, scene = start(sys.argv)

# Parts: mesh objects named after the part.
bpy.ops.mesh.primitive_cube_add(size=1.0)
hull = bpy.context.active_object
hull.name = "part_main"
hull.scale = (10.0, 30.0, 5.0)
bpy.ops.object.transform_apply(scale=True)
bevel = hull.modifiers.new("bevel", "BEVEL")
bevel.width, bevel.segments = 1.2, 3
bpy.ops.mesh.primitive_cylinder_add(radius=2.5, depth=4.0, location=(0.0, 6.0, 4.5))
tower = bpy.context.active_object
tower.name = "tower"
tower.parent = hull
# A collision mesh given by hand: a child named <part>-collision (hidden in the picture).
bpy.ops.mesh.primitive_cube_add(size=1.0)
coll = bpy.context.active_object
coll.name = "part_main-collision"
coll.scale = (10.5, 30.5, 5.5)
coll.parent = hull
coll.hide_render = True

# Hardpoints: Add > hangar > X4 hardpoint at the 3D cursor, parented to the part they sit on; each with
# where its label goes in the picture (camera right, camera up).
points = [("weapon", (-5.0, -13.0, 0.0), hull, (7, -6)), ("shield", (-5.0, 5.0, 0.0), hull, (-4, -8)),
          ("engine", (2.5, 15.5, 0.0), hull, (-7, 4)), ("engine", (-2.5, 15.5, 0.0), hull, (-9, -3)),
          ("turret", (0.0, 0.0, 2.0), tower, (-8, 5))]
label_at = {}
for kind, loc, parent, where in points:
    scene.cursor.location = parent.matrix_world @ Vector(loc)
    if "FINISHED" not in bpy.ops.hangar.x4_hardpoint_add(kind=kind, size="medium"):
        sys.exit(f"x4_hardpoint_add({kind}) did not finish")
    e = bpy.context.active_object
    e.empty_display_size = 5.0
    # The arrow along the direction the game mounts it: forward (-Y) as added; engines out of the back,
    # the shield out of the side, the turret up.
    e.rotation_euler = {"engine": (-math.pi / 2, 0.0, 0.0), "shield": (0.0, -math.pi / 2, 0.0),
                        "turret": (0.0, 0.0, 0.0)}.get(kind, e.rotation_euler)
    bpy.context.view_layer.update()
    world = e.matrix_world.copy()
    e.parent = parent
    e.matrix_world = world
    label_at[e.name] = where
# An untagged empty named con_weapon*: a weapon slot of the ship's size.
plain = bpy.data.objects.new("con_weapon_nose", None)
plain.empty_display_type = "SINGLE_ARROW"
plain.empty_display_size = 5.0
plain.rotation_euler = (math.pi / 2, 0.0, 0.0)
plain.location = (-1.5, -15.5, 0.0)
plain.parent = hull
scene.collection.objects.link(plain)
label_at[plain.name] = (7, 4)
bpy.context.view_layer.update()

if template:
    shutil.rmtree(ext_dir, ignore_errors=True)
    done = bpy.ops.export_scene.hangar_x4_ship(directory=ext_dir, template=template, ship_id="ship_my_m_frigate_01",
                                               ship_name="My Frigate", lods=2)
    if "FINISHED" not in done:
        sys.exit("export_scene.hangar_x4_ship did not finish")
    n = sum(len(f) for _, _, f in os.walk(ext_dir))
    print(f"exported {ext_dir}: {n} files")


# The picture: each arrow drawn by a stand-in mesh, each hardpoint labelled.
hull.data.materials.append(flat("hull", (0.42, 0.45, 0.5)))
tower.data.materials.append(flat("tower", (0.25, 0.38, 0.6)))
COLOURS = {"weapon": (0.9, 0.15, 0.1), "engine": (1.0, 0.55, 0.05), "shield": (0.1, 0.75, 0.9),
           "turret": (0.95, 0.85, 0.1)}
label_mat = flat("label", (0.9, 0.92, 0.95), emit=1.0)


cam = camera((-62.0, -14.0, 40.0), (0.0, -5.0, -2.0), 33)


for e in [o for o in scene.objects if o.type == "EMPTY"]:
    kind = next((k for k in COLOURS if e.name.startswith(f"con_{k}")), "weapon")
    arrow(e, flat(e.name, COLOURS[kind], emit=2.0))
    tags = e.get("tags")
    text = f"{e.name}\ntags: {tags}" if tags else f"{e.name}\n(no tags: weapon medium standard)"
    label(cam, label_mat, text, e.matrix_world.translation, label_at[e.name], 1.25)
label(cam, label_mat, "part_main (mesh: a part)", hull.matrix_world @ Vector((-2.0, -6.0, 2.5)), (4, 9), 1.5)
label(cam, label_mat, "tower (mesh: a part, child of part_main)", tower.matrix_world @ Vector((0.0, 2.0, 1.5)), (4, 7), 1.5)

render(out)
