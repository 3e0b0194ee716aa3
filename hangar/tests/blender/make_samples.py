"""Builds three small models in Blender and writes them with Blender's own glTF exporter, as
the test fixtures beside this script (see README.md here):

  static/crate.gltf + crate.bin + crate_diffuse.png   a textured box and an empty `Ref_Center`
  skinned.glb                                          a bent tube on a three-bone armature, two actions
  spinning.glb                                         a box whose object transform is animated

Run from the repository root (Blender 3.4, headless):

  blender -b --factory-startup -P hangar/tests/blender/make_samples.py

Everything is made here from primitives; no file from a game is involved.
"""
import math
import os

import bpy

HERE = os.path.dirname(os.path.abspath(__file__))


def reset():
    bpy.ops.wm.read_factory_settings(use_empty=True)


def export(path, fmt, **extra):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    bpy.ops.export_scene.gltf(
        filepath=path,
        export_format=fmt,
        export_yup=True,
        export_apply=True,
        **extra,
    )


def checker_png(path, size=16):
    """A small two-colour checker image saved as PNG."""
    img = bpy.data.images.new("crate_diffuse", width=size, height=size)
    px = []
    for y in range(size):
        for x in range(size):
            on = ((x // 4) + (y // 4)) % 2 == 0
            px += [0.8, 0.5, 0.2, 1.0] if on else [0.3, 0.2, 0.1, 1.0]
    img.pixels = px
    img.filepath_raw = path
    img.file_format = "PNG"
    img.save()
    return img


def static_model():
    reset()
    folder = os.path.join(HERE, "static")
    os.makedirs(folder, exist_ok=True)
    bpy.ops.mesh.primitive_cube_add(size=2.0, location=(0.0, 0.0, 1.0))
    box = bpy.context.active_object
    box.name = "Crate"
    mat = bpy.data.materials.new("CrateMaterial")
    mat.use_nodes = True
    bsdf = mat.node_tree.nodes["Principled BSDF"]
    tex = mat.node_tree.nodes.new("ShaderNodeTexImage")
    tex.image = checker_png(os.path.join(folder, "crate_diffuse.png"))
    mat.node_tree.links.new(tex.outputs["Color"], bsdf.inputs["Base Color"])
    box.data.materials.append(mat)
    bpy.ops.object.empty_add(type="PLAIN_AXES", location=(0.0, 0.0, 1.0))
    bpy.context.active_object.name = "Ref_Center"
    export(os.path.join(folder, "crate.gltf"), "GLTF_SEPARATE", export_image_format="AUTO")


def key_bone(arm, action_name, frames):
    """An action rotating the armature's bones; frames = [(frame, {bone: angle about X})]."""
    action = bpy.data.actions.new(action_name)
    arm.animation_data_create()
    arm.animation_data.action = action
    for frame, angles in frames:
        for bone, angle in angles.items():
            pb = arm.pose.bones[bone]
            pb.rotation_mode = "QUATERNION"
            pb.rotation_quaternion = (math.cos(angle / 2), math.sin(angle / 2), 0.0, 0.0)
            pb.keyframe_insert("rotation_quaternion", frame=frame)
    # Each action on an NLA track of its own: the exporter writes one animation a track.
    track = arm.animation_data.nla_tracks.new()
    track.name = action_name
    track.strips.new(action_name, int(frames[0][0]), action)
    arm.animation_data.action = None


def tube_mesh(sides=8, rings=7, height=3.0, radius=0.3):
    """An open tube along +Z made of `rings` rings of `sides` vertices (quads between them)."""
    verts = [
        (radius * math.cos(2 * math.pi * k / sides), radius * math.sin(2 * math.pi * k / sides),
         height * r / (rings - 1))
        for r in range(rings)
        for k in range(sides)
    ]
    faces = [
        (r * sides + k, r * sides + (k + 1) % sides, (r + 1) * sides + (k + 1) % sides, (r + 1) * sides + k)
        for r in range(rings - 1)
        for k in range(sides)
    ]
    mesh = bpy.data.meshes.new("Tube")
    mesh.from_pydata(verts, [], faces)
    mesh.update()
    return mesh


def skinned_model():
    reset()
    bpy.ops.object.armature_add(enter_editmode=True, location=(0.0, 0.0, 0.0))
    arm = bpy.context.active_object
    arm.name = "Rig"
    edit = arm.data.edit_bones
    root = edit[0]
    root.name = "Root"
    root.head, root.tail = (0.0, 0.0, 0.0), (0.0, 0.0, 1.0)
    mid = edit.new("Middle")
    mid.head, mid.tail, mid.parent = (0.0, 0.0, 1.0), (0.0, 0.0, 2.0), root
    tip = edit.new("Tip")
    tip.head, tip.tail, tip.parent = (0.0, 0.0, 2.0), (0.0, 0.0, 3.0), mid
    bpy.ops.object.mode_set(mode="OBJECT")
    tube = bpy.data.objects.new("Tube", tube_mesh())
    bpy.context.collection.objects.link(tube)
    tube.select_set(True)
    arm.select_set(True)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.parent_set(type="ARMATURE_AUTO")
    key_bone(arm, "Stand", [(1, {"Middle": 0.0}), (24, {"Middle": 0.1}), (48, {"Middle": 0.0})])
    key_bone(
        arm,
        "Walk",
        [(1, {"Middle": -0.4, "Tip": 0.3}), (12, {"Middle": 0.4, "Tip": -0.3}), (24, {"Middle": -0.4, "Tip": 0.3})],
    )
    export(os.path.join(HERE, "skinned.glb"), "GLB", export_animations=True, export_nla_strips=True)


def node_animated_model():
    reset()
    bpy.ops.mesh.primitive_cube_add(size=1.0)
    box = bpy.context.active_object
    box.name = "Spinner"
    box.animation_data_create()
    box.animation_data.action = bpy.data.actions.new("Spin")
    for frame, z, angle in [(1, 0.0, 0.0), (20, 1.0, math.pi), (40, 0.0, 2 * math.pi)]:
        box.location = (0.0, 0.0, z)
        box.rotation_euler = (0.0, 0.0, angle)
        box.keyframe_insert("location", frame=frame)
        box.keyframe_insert("rotation_euler", frame=frame)
    export(os.path.join(HERE, "spinning.glb"), "GLB", export_animations=True)


static_model()
skinned_model()
node_animated_model()
