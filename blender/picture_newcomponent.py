"""The README's picture for "A new turret (or dock, or module) in ten minutes", made by Blender itself (PyPI's
bpy, no display): the extension installed, a missile launcher built as the README says (a `base` part, a
`hatch` part on it whose action `hatch_opening` turns it 90 degrees over 1 s, a point light on the hatch,
a spot light on the base, a weapon connection), exported with bpy.ops.export_scene.hangar_x4_component
when a template is given, shown at 0.5 s (the hatch half open) and rendered by Workbench
(PICTURE_ENGINE=CYCLES: Cycles on the CPU). Lights and empties are drawn by stand-in meshes.
usage: BPY_PYTHON blender/picture_newcomponent.py ZIP OUT.png [TEMPLATE_MACRO.xml EXTENSION_DIR]"""
import math
import os
import shutil
import sys

import bpy
from mathutils import Matrix, Vector

from picture_kit import arrow, camera, flat, label, render, start

out, template, ext_dir, scene = start(sys.argv)
scene.render.fps = 30

# Parts: mesh objects named after the part.
bpy.ops.mesh.primitive_cylinder_add(radius=4.0, depth=3.0, vertices=32)
base = bpy.context.active_object
base.name = "base"
bpy.ops.mesh.primitive_cube_add(size=1.0)
hatch = bpy.context.active_object
hatch.name = "hatch"
hatch.scale = (5.0, 5.0, 0.4)
bpy.ops.object.transform_apply(scale=True)
# Hinged at its back edge: the mesh in front of its origin.
hatch.data.transform(Matrix.Translation((0.0, -2.5, 0.2)))
hatch.location = (0.0, 2.5, 1.5)
hatch.parent = base
# The state: Blender's action, named as the game's state, two linear keys 1 s apart.
hatch.rotation_euler = (0.0, 0.0, 0.0)
hatch.keyframe_insert("rotation_euler", frame=1)
hatch.rotation_euler = (-math.pi / 2, 0.0, 0.0)
hatch.keyframe_insert("rotation_euler", frame=31)
hatch.animation_data.action.name = "hatch_opening"
animation = next(m for n, m in sys.modules.items() if n.endswith(".hangar.animation"))
for fc in animation.object_fcurves(hatch.animation_data.action, hatch):
    for k in fc.keyframe_points:
        k.interpolation = "LINEAR"
scene.frame_set(1)

# Lights: a point light on the hatch (its string properties the game's attributes), a spot on the base.
lamp = bpy.data.objects.new("lamp", bpy.data.lights.new("lamp", "POINT"))
lamp.data.color = (1.0, 0.35, 0.1)
lamp["range"] = 4.0
lamp["lighteffect"] = "1"
lamp.location = (0.0, -4.0, 0.6)
lamp.parent = hatch
beam = bpy.data.objects.new("beam", bpy.data.lights.new("beam", "SPOT"))
beam.data.color = (0.3, 0.6, 1.0)
beam.data.spot_size = math.radians(50)
beam.location = (3.2, -3.2, 0.0)
beam.rotation_euler = (math.radians(-80), 0.0, math.radians(-45))
beam.parent = base
for ob in (lamp, beam):
    scene.collection.objects.link(ob)
# A connection: Add > hangar > X4 hardpoint.
scene.cursor.location = (-4.5, 0.0, 0.0)
if "FINISHED" not in bpy.ops.hangar.x4_hardpoint_add(kind="weapon", size="large"):
    sys.exit("x4_hardpoint_add did not finish")
con = bpy.context.active_object
con.empty_display_size = 3.0
con.rotation_euler = (0.0, -math.pi / 2, 0.0)
con.parent = base
bpy.context.view_layer.update()

if template:
    shutil.rmtree(ext_dir, ignore_errors=True)
    done = bpy.ops.export_scene.hangar_x4_component(directory=ext_dir, template=template,
                                                    component_id="weapon_my_l_launcher_01",
                                                    component_name="My Launcher", lods=2)
    if "FINISHED" not in done:
        sys.exit("export_scene.hangar_x4_component did not finish")
    n = sum(len(f) for _, _, f in os.walk(ext_dir))
    print(f"exported {ext_dir}: {n} files")

# The picture at 0.5 s: the hatch half open.
scene.frame_set(16)
bpy.context.view_layer.update()
base.data.materials.append(flat("base", (0.42, 0.45, 0.5)))
hatch.data.materials.append(flat("hatch", (0.25, 0.38, 0.6)))
label_mat = flat("label", (0.9, 0.92, 0.95), emit=1.0)
arrow(con, flat("con", (0.9, 0.15, 0.1), emit=2.0))
for ob, rgb in ((lamp, lamp.data.color), (beam, beam.data.color)):
    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.45, location=ob.matrix_world.translation)
    bpy.context.active_object.data.materials.append(flat(ob.name + "_bulb", tuple(rgb), emit=3.0))
# The spot's cone, down its -Z.
bpy.ops.mesh.primitive_cone_add(radius1=1.6, radius2=0.0, depth=3.5, location=(0.0, 0.0, -1.75))
cone = bpy.context.active_object
cone.data.transform(cone.matrix_basis)
cone.matrix_basis.identity()
cone.parent = beam
cone.data.materials.append(flat("cone", (0.3, 0.6, 1.0), emit=0.6))

cam = camera((-24.0, -30.0, 19.0), (0.5, 0.0, 0.5), 40)
label(cam, label_mat, "hatch (mesh: a part)\naction hatch_opening: 90 degrees in 1 s\n(here at 0.5 s) = the state hatch_opening (.ani)",
      hatch.matrix_world @ Vector((2.0, -3.0, 0.4)), (3.5, 3.5), 0.75)
label(cam, label_mat, "lamp (point light on the hatch)\nrange 4, lighteffect 1: an <omni>",
      lamp.matrix_world.translation, (-4, 3), 0.75)
label(cam, label_mat, "beam (spot light on the base)\na <spot angle=50>", beam.matrix_world.translation, (3, -3), 0.75)
label(cam, label_mat, "base (mesh: a part)", base.matrix_world @ Vector((-1.0, -3.5, -1.2)), (-3, -3), 0.75)
label(cam, label_mat, f"{con.name}\ntags: {con['tags']}", con.matrix_world.translation, (-3, 1.5), 0.75)
render(out)
