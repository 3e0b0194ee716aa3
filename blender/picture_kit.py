"""What the README's new-content pictures share (picture_newship.py, picture_newcomponent.py): flat
materials Workbench draws, a stand-in arrow for an empty (a render shows no empties), labels facing the
camera with a line to what they name, and the render (Workbench, or PICTURE_ENGINE=CYCLES on the CPU)
written as a small PNG. Not part of the add-on: scripts run by PyPI's bpy import it from blender/."""
import math
import os

import bpy
import bmesh  # noqa: E402 (after bpy, which brings it)
import numpy
from mathutils import Matrix, Vector


def start(argv):
    """The scripts' arguments (ZIP OUT.png [TEMPLATE_MACRO.xml EXTENSION_DIR]) once the extension in ZIP
    is installed and an empty scene is open: (out, template, ext_dir, scene)."""
    zip_path, out = argv[1], argv[2]
    template, ext_dir = (argv[3], argv[4]) if len(argv) > 4 else (None, None)
    bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default", enable_on_install=True)
    bpy.ops.wm.read_homefile(use_empty=True)
    return out, template, ext_dir, bpy.context.scene


def flat(name, rgb, emit=0.0):
    m = bpy.data.materials.new(name)
    m.use_nodes = True
    bsdf = m.node_tree.nodes["Principled BSDF"]
    bsdf.inputs["Base Color"].default_value = (*rgb, 1.0)
    bsdf.inputs["Roughness"].default_value = 0.5
    m.diffuse_color = (*rgb, 1.0)  # what Workbench draws
    if emit:
        bsdf.inputs["Emission Color"].default_value = (*rgb, 1.0)
        bsdf.inputs["Emission Strength"].default_value = emit
    return m


def arrow(e, mat):
    """A mesh along the empty's +Z (the arrow the viewport draws), as long as the arrow."""
    size = e.empty_display_size
    bm = bmesh.new()
    bmesh.ops.create_cone(bm, cap_ends=True, segments=16, radius1=0.18, radius2=0.18, depth=size * 0.75,
                          matrix=Matrix.Translation((0, 0, size * 0.375)))
    bmesh.ops.create_cone(bm, cap_ends=True, segments=16, radius1=0.6, radius2=0.0, depth=size * 0.25,
                          matrix=Matrix.Translation((0, 0, size * 0.875)))
    me = bpy.data.meshes.new(e.name + "_arrow")
    bm.to_mesh(me)
    bm.free()
    me.materials.append(mat)
    ob = bpy.data.objects.new(me.name, me)
    ob.matrix_world = e.matrix_world.normalized()
    bpy.context.scene.collection.objects.link(ob)


def camera(location, target, lens):
    """The scene's camera at `location` looking at `target`; returns it."""
    scene = bpy.context.scene
    cam = bpy.data.objects.new("camera", bpy.data.cameras.new("camera"))
    scene.collection.objects.link(cam)
    cam.data.lens = lens
    cam.location = Vector(location)
    cam.rotation_euler = (Vector(target) - cam.location).to_track_quat("-Z", "Y").to_euler()
    scene.camera = cam
    bpy.context.view_layer.update()
    return cam


def label(cam, mat, text, anchor, where, size):
    """`text` facing the camera at `where` (camera right, up) from `anchor`, a thin line back to it."""
    right = cam.matrix_world.to_3x3() @ Vector((1.0, 0.0, 0.0))
    up = cam.matrix_world.to_3x3() @ Vector((0.0, 1.0, 0.0))
    at = anchor + right * where[0] + up * where[1]
    bpy.ops.object.text_add(location=at)
    t = bpy.context.active_object
    t.data.body = text
    t.data.size = size
    t.data.align_x = "LEFT" if where[0] >= 0 else "RIGHT"
    t.data.align_y = "CENTER"
    t.data.materials.append(mat)
    t.rotation_euler = cam.rotation_euler
    d = at - anchor
    bpy.ops.mesh.primitive_cylinder_add(radius=0.06, depth=d.length * 0.95, location=anchor + d / 2)
    line = bpy.context.active_object
    line.rotation_euler = d.to_track_quat("Z", "Y").to_euler()
    line.data.materials.append(mat)


def render(out, size=(880, 495)):
    """A sun, a dark world, the render written to `out` with fewer shades (32 a channel: a diagram)."""
    scene = bpy.context.scene
    sun = bpy.data.objects.new("sun", bpy.data.lights.new("sun", "SUN"))
    sun.data.energy = 3.5
    sun.rotation_euler = (math.radians(40), math.radians(10), math.radians(35))
    scene.collection.objects.link(sun)
    world_bg = bpy.data.worlds.new("world")
    world_bg.use_nodes = True
    world_bg.node_tree.nodes["Background"].inputs["Color"].default_value = (0.05, 0.06, 0.08, 1.0)
    world_bg.color = (0.05, 0.06, 0.08)
    scene.world = world_bg
    scene.render.engine = os.environ.get("PICTURE_ENGINE", "BLENDER_WORKBENCH")
    scene.display.shading.light = "STUDIO"
    scene.display.shading.color_type = "MATERIAL"
    scene.cycles.device = "CPU"
    scene.cycles.samples = 24
    scene.cycles.use_denoising = True
    scene.render.resolution_x, scene.render.resolution_y = size
    scene.render.image_settings.file_format = "PNG"
    scene.render.image_settings.color_mode = "RGB"
    scene.view_settings.view_transform = "Standard"
    scene.render.image_settings.compression = 100
    scene.render.dither_intensity = 0.0
    scene.render.filepath = out
    bpy.ops.render.render(write_still=True)
    img = bpy.data.images.load(out)
    px = numpy.empty(len(img.pixels), dtype=numpy.float32)
    img.pixels.foreach_get(px)
    img.pixels.foreach_set(numpy.round(px * 31.0) / 31.0)
    img.save_render(out, scene=scene)
    print(f"wrote {out} ({os.path.getsize(out)} bytes)")
