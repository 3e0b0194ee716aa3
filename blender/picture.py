"""The README's Blender pictures, made by Blender itself (PyPI's bpy, no display): the extension installed,
a model imported with File > Import > "Game model (hangar)", framed by a camera and rendered with Cycles on
the CPU.
usage: BPY_PYTHON blender/picture.py ZIP MODEL OUT.png [MODEL OUT.png ...]"""
import math
import sys

import bpy
from mathutils import Vector

zip_path, jobs = sys.argv[1], sys.argv[2:]
bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default", enable_on_install=True)

for model, out in zip(jobs[0::2], jobs[1::2]):
    bpy.ops.wm.read_homefile(use_empty=True)
    if "FINISHED" not in bpy.ops.import_scene.hangar(filepath=model):
        sys.exit(f"{model}: import failed")
    scene = bpy.context.scene
    shown = [o for o in scene.objects if o.type == "MESH" and o.visible_get()]
    corners = [o.matrix_world @ Vector(c) for o in shown for c in o.bound_box]
    lo = Vector([min(c[i] for c in corners) for i in range(3)])
    hi = Vector([max(c[i] for c in corners) for i in range(3)])
    centre, size = (lo + hi) / 2, max((hi - lo).length, 1e-3)

    cam = bpy.data.objects.new("camera", bpy.data.cameras.new("camera"))
    scene.collection.objects.link(cam)
    cam.data.lens = 50
    cam.location = centre + Vector((1.0, -1.3, 0.7)).normalized() * size * 1.6
    cam.rotation_euler = (centre - cam.location).to_track_quat("-Z", "Y").to_euler()
    scene.camera = cam
    sun = bpy.data.objects.new("sun", bpy.data.lights.new("sun", "SUN"))
    sun.data.energy = 4.0
    sun.rotation_euler = (math.radians(50), 0, math.radians(30))
    scene.collection.objects.link(sun)
    world = bpy.data.worlds.new("world")
    world.use_nodes = True
    world.node_tree.nodes["Background"].inputs["Color"].default_value = (0.55, 0.6, 0.68, 1.0)
    scene.world = world

    scene.render.engine = "CYCLES"
    scene.cycles.device = "CPU"
    scene.cycles.samples = 16
    scene.cycles.use_denoising = False
    scene.render.resolution_x, scene.render.resolution_y = 960, 540
    scene.render.image_settings.file_format = "PNG"
    scene.render.filepath = out
    bpy.ops.render.render(write_still=True)
    print(f"wrote {out} ({len(shown)} meshes shown)")
