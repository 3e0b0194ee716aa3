"""hangar in Blender: File > Import / Export > "Game model (hangar)" for X4 / X Rebirth components (XML
with its _data folder and .ani), XMF, XAC and StarCraft II M3, on the hangar library (the `hangar` wheel).

Mesh data goes in and out with foreach_set / foreach_get on numpy arrays. What the game needs and Blender
does not show stays on the objects as custom properties (`hangar_extras`: the node's extras as JSON), with
the source path and a digest of each imported mesh: exported with no edit, the files come back byte for
byte (the library rewrites the original file); an edited mesh or a moved part is written from Blender.
"""
import json
import math
import os
import re
import time

import bpy
import numpy as np
from bpy.props import CollectionProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper
from mathutils import Matrix, Quaternion, Vector

from . import materials as materials_

NODE = "hangar_node"  # the node's index in the imported scene
EXTRAS = "hangar_extras"  # the node's extras (JSON)
SOURCE = "hangar_source"  # on the collection: the imported file
KIND = "hangar_kind"  # on the collection: component, xmf, m3, xac, ...
DIGEST = "hangar_digest"  # on a mesh: digest of the data as imported
FULL_NAME = "hangar_name"  # the node's name when Blender cut it (63 bytes)
MOTION_FILES = "hangar_motions"  # on the collection: the motions imported with the model (JSON list)

EXTS = ".xml;.xmf;.m3;.m3a;.xac;.xsm;.xpm;.ani;.bsg;.glb;.gltf"


def _hangar():
    import hangar  # the wheel shipped in the extension

    return hangar


# ---- frames: glTF (+Y up) <-> Blender (+Z up); exact (swaps and negations only) ----

def pts_to_blender(a):
    a = np.asarray(a, dtype=np.float32)
    out = np.empty_like(a)
    out[:, 0] = a[:, 0]
    out[:, 1] = -a[:, 2]
    out[:, 2] = a[:, 1]
    return out


def pts_from_blender(a):
    out = np.empty_like(a)
    out[:, 0] = a[:, 0]
    out[:, 1] = a[:, 2]
    out[:, 2] = -a[:, 1]
    return out


def trs_to_blender(t, r, s):
    x, y, z, w = r
    return (t[0], -t[2], t[1]), (w, x, -z, y), (s[0], s[2], s[1])


def trs_from_blender(loc, quat, scale):
    w, x, y, z = quat
    return [loc[0], loc[2], -loc[1]], [x, z, -y, w], [scale[0], scale[2], scale[1]]


# ---- digests: what a mesh holds in Blender, hashed the same way at import and export ----

def mesh_digest(co, vi, mat, uvs):
    """The library's fingerprint of the arrays (Adler-32 and length of each, side by side): any edit
    of the vertices, corners, material slots or UVs changes it."""
    return _hangar().digest(co, vi, mat, *uvs)


def blender_mesh_arrays(me):
    nv, nl, npoly = len(me.vertices), len(me.loops), len(me.polygons)
    co = np.empty(nv * 3, np.float32)
    # A mesh with no vertices (an actor's empty mesh) has no position or corner attribute.
    if nv:
        me.attributes["position"].data.foreach_get("vector", co)
    vi = np.empty(nl, np.int32)
    if nl:
        me.attributes[".corner_vert"].data.foreach_get("value", vi)
    mat = np.zeros(npoly, np.int32)
    if "material_index" in me.attributes:
        me.attributes["material_index"].data.foreach_get("value", mat)
    uvs = []
    for layer in me.uv_layers:
        uv = np.empty(nl * 2, np.float32)
        me.attributes[layer.name].data.foreach_get("vector", uv)
        uvs.append(uv)
    return co, vi, mat, uvs


# ---- import ----

def build_mesh(m, materials, name):
    """A Blender mesh from a hangar mesh: one face a triangle, one loop a corner. The arrays go in
    through the generic attribute API (`position`, `.corner_vert`, `material_index`, UVs), which copies
    a whole buffer at once; the older `vertices.foreach_set("co")` path sets one element at a time."""
    me = bpy.data.meshes.new(name)
    idx = [p.indices for p in m.primitives]
    tri = np.concatenate(idx).astype(np.int32, copy=False) if idx else np.zeros(0, np.int32)
    nv = len(m.positions)
    nt = len(tri) // 3
    tri = tri[: nt * 3]
    me.vertices.add(nv)
    me.loops.add(nt * 3)
    me.polygons.add(nt)
    co = pts_to_blender(m.positions).ravel()
    # An empty mesh (an actor may hold one) gets no position or corner attribute from Blender.
    if nv:
        me.attributes["position"].data.foreach_set("vector", co)
    if nt:
        me.attributes[".corner_vert"].data.foreach_set("value", tri)
    me.polygons.foreach_set("loop_start", np.arange(0, nt * 3, 3, dtype=np.int32))
    if m.edges is not None and len(m.edges) and len(m.corner_edges) == len(tri):
        # The library's edge table: Blender then skips computing its own in update().
        me.edges.add(len(m.edges))
        me.attributes[".edge_verts"].data.foreach_set("value", m.edges.view(np.int32).ravel())
        me.attributes[".corner_edge"].data.foreach_set("value", m.corner_edges.view(np.int32))
    # Material slots in the order the primitives name them.
    slots, mat = [], np.zeros(nt, np.int32)
    at = 0
    for p in m.primitives:
        n = len(p.indices) // 3
        if p.material is not None and p.material < len(materials):
            bm = materials[p.material]
            names = [s.name for s in slots]
            if bm.name not in names:
                slots.append(bm)
                names.append(bm.name)
            mat[at:at + n] = names.index(bm.name)
        at += n
    for s in slots:
        me.materials.append(s)
    if len(slots) > 1:
        me.attributes.new("material_index", "INT", "FACE").data.foreach_set("value", mat)
    uvs = []
    for k, uv in enumerate(m.uvs):
        # A FLOAT2 corner attribute is a UV map (Blender 4.2 on). glTF's V runs down, Blender's up:
        # flipped once a vertex, then spread to the corners.
        v = np.array(uv, np.float32).reshape(-1, 2)
        v[:, 1] = 1.0 - v[:, 1]
        u = np.take(v.view(np.uint64).ravel(), tri).view(np.float32)  # a (u, v) pair one 8-byte item
        me.attributes.new(f"UVMap{k}" if k else "UVMap", "FLOAT2", "CORNER").data.foreach_set("vector", u)
        uvs.append(u)
    for k, c in enumerate(m.colors):
        a = me.color_attributes.new(name=f"Color{k}", type="FLOAT_COLOR", domain="POINT")
        a.data.foreach_set("color", np.asarray(c, np.float32).ravel())
    me.update()
    if hasattr(me, "shade_smooth"):
        me.shade_smooth()
    else:
        me.polygons.foreach_set("use_smooth", np.ones(nt, bool))
    if m.normals is not None and nv:
        set_normals(me, pts_to_blender(m.normals))
    me[DIGEST] = mesh_digest(co, tri, mat, uvs)
    return me


def set_normals(me, n):
    """The game's normals as custom normals: a free-normal attribute where Blender has them (5.0), else
    the split normals API."""
    a = me.attributes.new("custom_normal", "FLOAT_VECTOR", "POINT")
    a.data.foreach_set("vector", n.ravel())
    if getattr(me, "has_custom_normals", False):
        return
    me.attributes.remove(me.attributes["custom_normal"])
    try:
        me.normals_split_custom_set_from_vertices(n)
    except (TypeError, ValueError, RuntimeError):
        pass


def add_shape_keys(ob, m):
    """The mesh's morph targets as shape keys of `ob` (a basis, then a key a target)."""
    ob.shape_key_add(name="Basis", from_mix=False)
    base = np.asarray(m.positions, np.float32)
    for k, t in enumerate(m.morph_targets):
        key = ob.shape_key_add(name=t.name or f"target{k}", from_mix=False)
        key.data.foreach_set("co", pts_to_blender(base + np.asarray(t.positions, np.float32)).ravel())


def node_matrix_blender(n):
    t, q, s = trs_to_blender(n.translation, n.rotation, n.scale)
    return Matrix.LocRotScale(Vector(t), Quaternion(q), Vector(s))


def add_armature(scene, coll, objs, skin_index, parent_obj):
    """An armature for a skin: a bone a joint, placed at the joint's rest (world) transform."""
    skin = scene.skins[skin_index]
    world = {}

    def wm(i):
        if i in world:
            return world[i]
        n = scene.nodes[i]
        m = node_matrix_blender(n)
        if n.parent is not None:
            m = wm(n.parent) @ m
        world[i] = m
        return m

    arm = bpy.data.armatures.new(skin.name or "skeleton")
    ob = bpy.data.objects.new(skin.name or "skeleton", arm)
    coll.objects.link(ob)
    if parent_obj is not None:
        ob.parent = parent_obj
    bpy.context.view_layer.objects.active = ob
    bpy.ops.object.mode_set(mode="EDIT")
    joints = set(skin.joints)
    eb = {}
    scales = {}  # each joint's world scale, which its bone leaves out
    for j in skin.joints:
        n = scene.nodes[j]
        b = arm.edit_bones.new(n.name or f"bone{j}")
        loc, rot, scales[j] = wm(j).decompose()
        b.head, b.tail = (0, 0, 0), (0, 0.05, 0)
        # The bone's rest is the joint's rest (no scale): pose keys are then the node's keys
        # relative to its rest transform.
        b.matrix = Matrix.LocRotScale(loc, rot, None)
        eb[j] = b
    for j in skin.joints:
        p = scene.nodes[j].parent
        if p in joints:
            eb[j].parent = eb[p]
    names = {j: eb[j].name for j in skin.joints}
    bpy.ops.object.mode_set(mode="OBJECT")
    return ob, names, scales


def add_weights(ob, m, skin, bone_names, scene):
    if m.joints is None or m.weights is None:
        return
    j = np.asarray(m.joints)
    w = np.asarray(m.weights, np.float32)
    groups = {}
    for k, node in enumerate(skin.joints):
        groups[k] = ob.vertex_groups.new(name=bone_names.get(node, f"bone{node}"))
    # One call per (joint, weight) pair, not per vertex.
    for c in range(4):
        jc, wc = j[:, c], w[:, c]
        keep = wc > 0
        if not keep.any():
            continue
        pairs = np.stack([jc[keep].astype(np.int64), wc[keep].view(np.int32).astype(np.int64)], 1)
        verts = np.nonzero(keep)[0]
        order = np.lexsort((pairs[:, 1], pairs[:, 0]))
        pairs, verts, ws = pairs[order], verts[order], wc[keep][order]
        cut = np.nonzero(np.any(np.diff(pairs, axis=0) != 0, axis=1))[0] + 1
        for a, b in zip(np.r_[0, cut], np.r_[cut, len(verts)]):
            g = groups.get(int(pairs[a, 0]))
            if g is not None:
                g.add(verts[a:b].tolist(), float(ws[a]), "ADD")


MOTIONS = (".xsm", ".xpm", ".m3a")


def component_of_ani(path):
    """The imported component (its collection) whose data folder's .ani `path` is: its XML in the
    same folder names this file as its .ani."""
    where, name = os.path.split(os.path.abspath(path))
    for c in bpy.data.collections:
        if c.get(KIND) != "component" or "::" in c.get(SOURCE, "::"):
            continue
        if os.path.dirname(c[SOURCE]) != where:
            continue
        root = next((o for o in c.all_objects if o.get(NODE) == 0 and EXTRAS in o), None)
        ani = (json.loads(root[EXTRAS]).get("x4component") or {}).get("ani") if root else None
        if ani and ani.get("file", "").lower() == name.lower():
            return c
    return None


def ani_onto_component(context, coll, path):
    """An .ani's states as actions on the parts (by name) of the component it belongs to, imported
    before: the actions it had for those states are replaced."""
    hangar = _hangar()
    scene = hangar.open(path)
    parts = {}
    for o in coll.all_objects:
        if NODE in o:
            parts.setdefault(o.get(FULL_NAME, o.name).lower(), o)
    objs = [parts.get(n.name.lower()) for n in scene.nodes]
    states = {a.name for a in scene.animations}
    nodes = {o[NODE] for o in parts.values()}
    for act in list(bpy.data.actions):
        if act.get("hangar_clip") in states and act.get("hangar_node") in nodes:
            bpy.data.actions.remove(act)
    fps = context.scene.render.fps / context.scene.render.fps_base
    import_animations(scene, objs, {}, fps)
    missing = sorted({scene.nodes[c.node].name for a in scene.animations for c in a.channels if objs[c.node] is None})
    warnings = list(scene.warnings)
    if missing:
        warnings.append(f"{os.path.basename(path)}: no part named {', '.join(missing[:5])} in {coll.name}")
    return coll, warnings


def import_file(context, path, motions=()):
    hangar = _hangar()
    if os.path.isdir(path):
        # A component's _data folder picked: its XML, which the export writes back.
        path = hangar.component_of(path.rstrip("/\\")) or path
    if path.lower().endswith(".ani"):
        coll = component_of_ani(path)
        if coll is not None:
            return ani_onto_component(context, coll, path)
    scene = hangar.open(path, motions=list(motions), textures=True, edges=True)
    stem = os.path.splitext(os.path.basename(path))[0]
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    component = ext == "xml"
    coll = bpy.data.collections.new(scene.name or stem)
    coll[SOURCE] = os.path.abspath(path) if "::" not in path else path
    coll[KIND] = "component" if component else ext
    coll[MOTION_FILES] = json.dumps([os.path.abspath(m) for m in motions])
    context.scene.collection.children.link(coll)
    hidden = {}

    def side(name):
        if name not in hidden:
            c = bpy.data.collections.new(f"{coll.name} {name}")
            coll.children.link(c)
            c.hide_viewport = True
            c.hide_render = True
            hidden[name] = c
        return hidden[name]

    materials = []
    images = {}
    for mt in scene.materials:
        bm = bpy.data.materials.new(mt.name or "material")
        if mt.extras:
            bm[EXTRAS] = json.dumps(mt.extras)
        materials_.build(hangar, bm, mt, scene.pictures, images)
        materials.append(bm)
    meshes = {}
    wrecks = set()
    objs = [None] * len(scene.nodes)
    aims = []  # (node, light or camera data) shown by a child of the node's object
    # The joints of skins a mesh uses become bones of an armature, not objects.
    skinned = {n.skin for n in scene.nodes if n.skin is not None and n.mesh is not None and n.skin < len(scene.skins)}
    joints = {j for k in skinned for j in scene.skins[k].joints}
    arm_for_skin = {}
    # Blender's progress indicator (the cursor's counter): one step a node.
    wm = context.window_manager
    wm.progress_begin(0, max(1, len(scene.nodes)))
    for i, n in enumerate(scene.nodes):
        if i % 16 == 0:
            wm.progress_update(i)
        if i in joints and n.mesh is None:
            continue  # a bone: made by its armature
        data = None
        if n.mesh is not None:
            if n.mesh not in meshes:
                meshes[n.mesh] = build_mesh(scene.meshes[n.mesh], materials, scene.meshes[n.mesh].name or n.name)
            data = meshes[n.mesh]
        elif n.light is not None and n.light < len(scene.lights):
            L = scene.lights[n.light]
            data = bpy.data.lights.new(L.name or n.name, "SPOT" if L.kind == "spot" else "SUN" if L.kind == "directional" else "POINT")
            data.color = L.color
            if L.kind == "spot" and L.outer and math.isfinite(L.outer):
                data.spot_size = 2 * L.outer
            if L.kind != "point":
                aims.append((i, data))
                data = None
        elif n.camera is not None and n.camera < len(scene.cameras):
            C = scene.cameras[n.camera]
            cam = bpy.data.cameras.new(C.name or n.name)
            cam.sensor_fit = "VERTICAL"
            for prop, value in (("angle_y", C.yfov), ("clip_start", C.znear), ("clip_end", C.zfar or 1000.0)):
                if value is not None and math.isfinite(value) and value > 0:  # a file's garbage is left out
                    setattr(cam, prop, value)
            aims.append((i, cam))
        ob = bpy.data.objects.new(n.name, data)
        if ob.name != n.name or len(n.name.encode()) > 63:
            ob[FULL_NAME] = n.name
        if data is None:
            ob.empty_display_size = 0.25
        ob[NODE] = i
        if n.extras:
            ob[EXTRAS] = n.extras_text or json.dumps(n.extras)
        x4 = n.extras.get("x4") or {}
        target = coll
        if x4.get("wreck") or n.parent in wrecks:
            target = side("wrecks")  # the part as shown once destroyed
            wrecks.add(i)
        elif n.collision or x4.get("collision"):
            target = side("collision")
            ob.display_type = "WIRE"
        elif isinstance(x4.get("lod"), int) and x4["lod"] > 0:
            target = side("LODs")
        target.objects.link(ob)
        t, q, s = trs_to_blender(n.translation, n.rotation, n.scale)
        ob.location, ob.rotation_mode = t, "QUATERNION"
        ob.rotation_quaternion, ob.scale = q, s
        objs[i] = ob
    # A spot or sun light and a camera look down their node's -Z, which is +Y in Blender's frame
    # under the node: their object is a child of the node's, turned a quarter about X (the node's
    # own object keeps the node's place for the way back).
    for i, data in aims:
        if objs[i] is not None:
            aim = bpy.data.objects.new(data.name, data)
            aim.parent = objs[i]
            aim.rotation_euler = (math.pi / 2, 0.0, 0.0)
            objs[i].users_collection[0].objects.link(aim)
    for i, n in enumerate(scene.nodes):
        if objs[i] is not None and n.parent is not None:
            p = n.parent
            while p is not None and objs[p] is None:
                p = scene.nodes[p].parent
            if p is not None:
                objs[i].parent = objs[p]
    # Morph targets: shape keys on the first object of each mesh (a key the target's offsets).
    shaped = set()
    for i, n in enumerate(scene.nodes):
        if objs[i] is None or n.mesh is None or n.mesh in shaped or not scene.meshes[n.mesh].morph_targets:
            continue
        shaped.add(n.mesh)
        add_shape_keys(objs[i], scene.meshes[n.mesh])
    # Skins: an armature each, meshes bound to it.
    for i, n in enumerate(scene.nodes):
        if n.skin is None or objs[i] is None or n.mesh is None:
            continue
        if n.skin not in arm_for_skin:
            root_parent = None
            arm_for_skin[n.skin] = add_armature(scene, coll, objs, n.skin, root_parent)
        arm, names, _ = arm_for_skin[n.skin]
        ob = objs[i]
        add_weights(ob, scene.meshes[n.mesh], scene.skins[n.skin], names, scene)
        mod = ob.modifiers.new("Armature", "ARMATURE")
        mod.object = arm
    bones = {}
    for skin_index, (arm, names, scales) in arm_for_skin.items():
        for j, name in names.items():
            bones[j] = (arm, name, scales[j])
            arm.pose.bones[name].rotation_mode = "QUATERNION"
    # A node under a bone (an M3's attachment points and cameras) hangs from the bone, which
    # moves it with its clips; Blender hangs a child at the bone's tail, which the parent
    # inverse takes back to the joint, with the joint's scale the bone leaves out.
    for i, n in enumerate(scene.nodes):
        if objs[i] is not None and n.parent in bones and objs[n.parent] is None:
            arm, name, scale = bones[n.parent]
            ob = objs[i]
            ob.parent = arm
            ob.parent_type = "BONE"
            ob.parent_bone = name
            ob.matrix_parent_inverse = (Matrix.Translation((0.0, -arm.data.bones[name].length, 0.0))
                                        @ Matrix.Diagonal((*scale, 1.0)))
    warnings = list(scene.warnings)
    try:
        import_animations(scene, objs, bones, context.scene.render.fps / context.scene.render.fps_base)
    except Exception as e:  # the model is in; its clips are not worth losing it for
        warnings.append(f"animations left out: {e}")
    # After an import, what was imported is selected and its collection active: File > Export
    # right after writes it back.
    for o in context.view_layer.objects:
        o.select_set(False)
    for o in coll.objects:
        o.select_set(True)
    lc = find_layer_collection(context.view_layer.layer_collection, coll)
    if lc is not None:
        context.view_layer.active_layer_collection = lc
    return coll, warnings


def find_layer_collection(lc, coll):
    if lc.collection == coll:
        return lc
    for c in lc.children:
        r = find_layer_collection(c, coll)
        if r is not None:
            return r
    return None


# ---- animations: one action per clip and animated object, keys set with foreach_set ----

INTERP = {"STEP": 0, "LINEAR": 1}  # the enum indices of Keyframe.interpolation (CONSTANT, LINEAR)


def qmul(a, b):
    """Quaternion products, w x y z rows."""
    aw, ax, ay, az = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bw, bx, by, bz = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return np.stack([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw], -1)


def qrot(q, v):
    """Vectors v turned by the unit quaternion q (w x y z)."""
    u = q[..., 1:]
    t = 2.0 * np.cross(u, v)
    return v + q[..., :1] * t + np.cross(u, t)


def values_to_blender(prop, v):
    """glTF-frame key values (x y z / x y z w) to Blender's frame (x y z / w x y z)."""
    v = np.asarray(v, np.float64).reshape(len(v), -1)
    if prop == "translation":
        return np.stack([v[:, 0], -v[:, 2], v[:, 1]], -1)
    if prop == "rotation":
        return np.stack([v[:, 3], v[:, 0], -v[:, 2], v[:, 1]], -1)
    return np.stack([v[:, 0], v[:, 2], v[:, 1]], -1)


def new_fcurve(action, target, data_path, index, group, id_type="OBJECT"):
    """An F-curve of `action` for `target` (an object, or shape keys with `id_type` KEY): through the
    action's slot for it (Blender 4.4 on, the only way in 5.0), else the action's own list (4.2)."""
    if hasattr(action, "slots") and hasattr(action, "layers"):
        slots = [x for x in action.slots if x.name_display == target.name]
        slot = slots[0] if slots else action.slots.new(id_type=id_type, name=target.name)
        if not action.layers:
            action.layers.new("Layer").strips.new(type="KEYFRAME")
        bag = action.layers[0].strips[0].channelbag(slot, ensure=True)
        return bag.fcurves.new(data_path, index=index, group_name=group), slot
    return action.fcurves.new(data_path, index=index, action_group=group), None


def add_keys(fc, frames, values, interpolation):
    n = len(frames)
    fc.keyframe_points.add(n)
    co = np.empty(n * 2, np.float32)
    co[0::2], co[1::2] = frames, values
    fc.keyframe_points.foreach_set("co", co)
    fc.keyframe_points.foreach_set("interpolation", np.full(n, INTERP.get(interpolation, 1), np.int32))
    fc.update()


def shape_key_action(clip, c, frames, ob):
    """A morph weights channel as an action on the object's shape keys (one F-curve a target, on
    `key_blocks["NAME"].value`), played by them. Returns the actions made (0 or 1)."""
    keys = getattr(getattr(ob, "data", None), "shape_keys", None)
    if keys is None:
        return 0
    blocks = keys.key_blocks[1:]  # after the basis, in the targets' order
    v = np.asarray(c.values, np.float32).reshape(len(frames), -1)
    act = bpy.data.actions.new(f"{clip} {ob.name} shapes")
    act.use_fake_user = True
    act["hangar_clip"] = clip
    slot = None
    for k, block in enumerate(blocks[: v.shape[1]]):
        fc, slot = new_fcurve(act, keys, f'key_blocks["{block.name}"].value', 0, ob.name, "KEY")
        add_keys(fc, frames, v[:, k], c.interpolation)
    ad = keys.animation_data or keys.animation_data_create()
    if ad.action is None:
        ad.action = act
        if slot is not None and hasattr(ad, "action_slot"):
            ad.action_slot = slot
    return 1


def import_animations(scene, objs, bones, fps):
    """Actions for the scene's clips: object channels on the part objects, joint channels on the pose
    bones (relative to the joint's rest). Returns the number of actions made."""
    made = 0
    rest = {}
    for i, n in enumerate(scene.nodes):
        t, q, _ = trs_to_blender(n.translation, n.rotation, n.scale)
        rest[i] = (np.array(t, np.float64), np.array(q, np.float64))
    first = {}
    for a in scene.animations:
        actions = {}
        for c in a.channels:
            if len(c.times) == 0:
                continue
            frames = np.asarray(c.times, np.float64) * fps
            if c.property == "weights":
                made += shape_key_action(a.name, c, frames, objs[c.node] if c.node < len(objs) else None)
                continue
            v = values_to_blender(c.property, c.values)
            if len(v) != len(frames):
                continue  # cubic splines carry tangents: not read here
            if c.node in bones:
                arm, bone, _ = bones[c.node]
                target, base = arm, f'pose.bones["{bone}"].'
                t_r, q_r = rest[c.node]
                q_inv = q_r * np.array([1.0, -1.0, -1.0, -1.0])
                if c.property == "translation":
                    v = qrot(np.broadcast_to(q_inv, (len(v), 4)), v - t_r)
                elif c.property == "rotation":
                    v = qmul(np.broadcast_to(q_inv, (len(v), 4)), v)
                group = bone
            elif objs[c.node] is not None:
                target, base, group = objs[c.node], "", objs[c.node].name
            else:
                continue
            key = target.name
            if key not in actions:
                act = bpy.data.actions.new(f"{a.name}" if target.type == "ARMATURE" else f"{a.name} {target.name}")
                act.use_fake_user = True
                act["hangar_clip"] = a.name
                if target.type != "ARMATURE":
                    act["hangar_node"] = target.get(NODE, c.node)  # exported back as this node's channels
                actions[key] = (act, target)
                made += 1
            act = actions[key][0]
            path = base + {"translation": "location", "rotation": "rotation_quaternion", "scale": "scale"}[c.property]
            slot = None
            for k in range(v.shape[1]):
                fc, slot = new_fcurve(act, target, path, k, group)
                add_keys(fc, frames, v[:, k], c.interpolation)
            if target.name not in first:
                first[target.name] = (target, act, slot)
    # A skeleton plays its first clip; a component's parts keep their rest (their offsets) on
    # show, the clips wait as actions (a part playing a clip would be exported where the clip has it).
    for target, act, slot in first.values():
        if target.type != "ARMATURE":
            continue
        ad = target.animation_data or target.animation_data_create()
        ad.action = act
        if slot is not None and hasattr(ad, "action_slot"):
            ad.action_slot = slot
    return made


# ---- export ----

def all_objects(coll):
    seen = []
    for o in coll.all_objects:
        seen.append(o)
    return seen


def source_collection(context):
    lc = context.view_layer.active_layer_collection
    c = lc.collection if lc else None
    if c is not None and SOURCE in c:
        return c
    ob = context.active_object
    for c in bpy.data.collections:
        if SOURCE in c and (ob is None or ob.name in c.all_objects):
            return c
    return None


def mesh_changed(me):
    co, vi, mat, uvs = blender_mesh_arrays(me)
    return me.get(DIGEST) != mesh_digest(co, vi, mat, uvs)


def mesh_from_blender(hangar, ob, materials, mat_index):
    me = ob.data
    me.calc_loop_triangles()
    nt = len(me.loop_triangles)
    tv = np.empty(nt * 3, np.int32)
    me.loop_triangles.foreach_get("vertices", tv)
    tl = np.empty(nt * 3, np.int32)
    me.loop_triangles.foreach_get("loops", tl)
    tm = np.empty(nt, np.int32)
    me.loop_triangles.foreach_get("material_index", tm)
    nv = len(me.vertices)
    co = np.empty(nv * 3, np.float32)
    me.vertices.foreach_get("co", co)
    nrm = np.empty(nv * 3, np.float32)
    me.vertices.foreach_get("normal", nrm)
    uvs = []
    for layer in me.uv_layers:
        luv = np.empty(len(me.loops) * 2, np.float32)
        me.attributes[layer.name].data.foreach_get("vector", luv)
        luv = luv.reshape(-1, 2)
        per_v = np.zeros((nv, 2), np.float32)
        per_v[tv] = luv[tl]
        per_v[:, 1] = 1.0 - per_v[:, 1]
        uvs.append(per_v)
    prims = []
    for slot in np.unique(tm):
        sel = tv.reshape(-1, 3)[tm == slot].ravel().astype(np.uint32)
        name = me.materials[slot].name if slot < len(me.materials) and me.materials[slot] else None
        mi = None
        if name is not None:
            if name not in mat_index:
                mat_index[name] = len(materials)
                bm = bpy.data.materials.get(name)
                extras = json.loads(bm[EXTRAS]) if bm is not None and EXTRAS in bm else {}
                materials.append(hangar.Material(name=name.split(".0")[0] if extras else name, extras=extras))
            mi = mat_index[name]
        prims.append(hangar.Primitive(indices=sel, material=mi))
    return hangar.Mesh(name=me.name, positions=pts_from_blender(co.reshape(-1, 3)),
                       normals=pts_from_blender(nrm.reshape(-1, 3)), uvs=uvs, primitives=prims)


def object_trs(ob):
    if ob.rotation_mode == "QUATERNION":
        loc, q, s = ob.location, ob.rotation_quaternion, ob.scale
    else:
        loc, q, s = ob.matrix_basis.decompose()
    return trs_from_blender(tuple(loc), tuple(q), tuple(s))


def action_fcurves(action):
    """Every F-curve of an action: its slots' channel bags (Blender 4.4 on), else its own list."""
    if hasattr(action, "layers") and action.layers:
        return [fc for layer in action.layers for strip in layer.strips for bag in strip.channelbags
                for fc in bag.fcurves]
    return list(getattr(action, "fcurves", []))


def keys_of(fc):
    n = len(fc.keyframe_points)
    co = np.empty(n * 2, np.float32)
    fc.keyframe_points.foreach_get("co", co)
    interp = np.empty(n, np.int32)
    fc.keyframe_points.foreach_get("interpolation", interp)
    return co[0::2], co[1::2], interp


def animations_from_blender(hangar, node_at, fps):
    """The clips of the actions hangar made for parts (`hangar_clip`, `hangar_node`), with the keys the
    user has (a key a keyframe, not a key a frame), in glTF's frame."""
    clips = {}
    for act in bpy.data.actions:
        node = node_at.get(act.get("hangar_node", -1))
        if "hangar_clip" not in act or node is None:
            continue
        by_path = {}
        for fc in action_fcurves(act):
            by_path.setdefault(fc.data_path, {})[fc.array_index] = fc
        for path, prop, width, rest in (("location", "translation", 3, (0.0, 0.0, 0.0)),
                                         ("rotation_quaternion", "rotation", 4, (1.0, 0.0, 0.0, 0.0)),
                                         ("scale", "scale", 3, (1.0, 1.0, 1.0))):
            fcs = by_path.get(path)
            if not fcs:
                continue
            keys = {i: keys_of(fc) for i, fc in fcs.items()}
            frames = np.unique(np.concatenate([k[0] for k in keys.values()]))
            v = np.empty((len(frames), width), np.float64)
            step = True
            for i in range(width):
                if i not in keys:
                    v[:, i] = rest[i]
                    continue
                f, val, interp = keys[i]
                step = step and bool(np.all(interp == 0))
                v[:, i] = val if len(f) == len(frames) and np.array_equal(f, frames) else [fcs[i].evaluate(x) for x in frames]
            if prop == "translation":
                v = np.stack([v[:, 0], v[:, 2], -v[:, 1]], -1)
            elif prop == "rotation":
                v = np.stack([v[:, 1], v[:, 3], -v[:, 2], v[:, 0]], -1)
            else:
                v = np.stack([v[:, 0], v[:, 2], v[:, 1]], -1)
            clips.setdefault(act["hangar_clip"], []).append(hangar.Channel(
                node=node, property=prop, times=(frames / fps).astype(np.float32),
                values=v.astype(np.float32), interpolation="STEP" if step else "LINEAR"))
    return [hangar.Animation(name=name, channels=chans) for name, chans in clips.items()]


def scene_from_collection(hangar, coll):
    """The neutral scene of an imported component: nodes from the objects (their stored index order),
    meshes only where Blender's data differs from what was imported (the others are written back as
    their files)."""
    obs = [o for o in all_objects(coll) if NODE in o]
    obs.sort(key=lambda o: o[NODE])
    new = [o for o in all_objects(coll) if NODE not in o and o.type == "MESH" and o.parent in obs]
    order = obs + new
    where = {o.name: k for k, o in enumerate(order)}
    sc = hangar.Scene(name=coll.name)
    mesh_of = {}
    mat_index = {}
    changed = 0
    for o in order:
        t, r, s = object_trs(o)
        extras = json.loads(o[EXTRAS]) if EXTRAS in o else {}
        node = hangar.Node(name=o.get(FULL_NAME, o.name), translation=t, rotation=r, scale=s,
                           parent=where.get(o.parent.name) if o.parent else None, extras=extras,
                           collision=bool((extras.get("x4") or {}).get("collision")))
        if o.type == "MESH" and o.data is not None:
            me = o.data
            if me.name not in mesh_of:
                diff = NODE not in o or mesh_changed(me)
                changed += diff
                if diff:
                    mesh_of[me.name] = len(sc.meshes)
                    sc.meshes.append(mesh_from_blender(hangar, o, sc.materials, mat_index))
                else:
                    mesh_of[me.name] = None
            node.mesh = mesh_of[me.name]
        sc.nodes.append(node)
    scene = bpy.context.scene
    node_at = {o[NODE]: k for k, o in enumerate(order) if NODE in o}
    sc.animations = animations_from_blender(hangar, node_at, scene.render.fps / scene.render.fps_base)
    return sc, changed


def without_suffix(name):
    """A name without the `.001` Blender adds to a duplicate."""
    return re.sub(r"\.\d{3}$", "", name)


def weights_from_groups(ob, skin, nodes):
    """Joints and weights (four a vertex, the strongest, summing to 1) from the object's vertex groups,
    named after the skin's bones: for a mesh whose vertices were added or removed."""
    joint_of = {}
    for k, j in enumerate(skin.joints):
        joint_of.setdefault(nodes[j].name[:63], k)
    group_joint = {}
    for g in ob.vertex_groups:
        k = joint_of.get(g.name, joint_of.get(without_suffix(g.name)))
        if k is not None:
            group_joint[g.index] = k
    nv = len(ob.data.vertices)
    joints = np.zeros((nv, 4), np.uint16)
    weights = np.zeros((nv, 4), np.float32)
    for v in ob.data.vertices:
        ws = sorted(((e.weight, group_joint[e.group]) for e in v.groups
                     if e.group in group_joint and e.weight > 0), reverse=True)[:4]
        total = sum(w for w, _ in ws)
        for c, (w, k) in enumerate(ws):
            joints[v.index, c] = k
            weights[v.index, c] = w / total
    return joints, weights


def patched_original(hangar, coll):
    """The imported file's own scene with what Blender changed put in: the place of each object made
    for one of its nodes, and each mesh whose data differ from what was imported (its colours and skin
    weights kept when its vertex count is, else the weights taken from the vertex groups). Bones,
    skins, animations and all Blender does not show come from the file. Returns it and how many
    nodes and meshes changed."""
    motions = json.loads(coll.get(MOTION_FILES, "[]"))
    sc = hangar.open(coll[SOURCE], motions=motions)
    material_at = {}
    for k, m in enumerate(sc.materials):
        material_at.setdefault(m.name, k)
    changed = 0
    for o in all_objects(coll):
        i = o.get(NODE)
        if i is None or i >= len(sc.nodes):
            continue
        n = sc.nodes[i]
        t, r, s = object_trs(o)
        placed = np.array([*t, *r, *s], np.float32)
        # As stored (float32; a NaN a file carries is no edit).
        if not np.array_equal(placed, np.array([*n.translation, *n.rotation, *n.scale], np.float32), equal_nan=True):
            n.translation, n.rotation, n.scale = tuple(t), tuple(r), tuple(s)
            changed += 1
        if o.type != "MESH" or n.mesh is None or n.mesh >= len(sc.meshes) or not mesh_changed(o.data):
            continue
        changed += 1
        old = sc.meshes[n.mesh]
        # The slots' materials are the file's by name; a material new in Blender is added.
        known = {}
        for bm in o.data.materials:
            k = None if bm is None else material_at.get(bm.name, material_at.get(without_suffix(bm.name)))
            if k is not None:
                known[bm.name] = k
        new = mesh_from_blender(hangar, o, sc.materials, known)
        new.name, new.extras = old.name, old.extras
        if len(new.positions) == len(old.positions):
            new.colors, new.custom, new.morph_targets = old.colors, old.custom, old.morph_targets
            new.joints, new.weights = old.joints, old.weights
        elif n.skin is not None and n.skin < len(sc.skins):
            new.joints, new.weights = weights_from_groups(o, sc.skins[n.skin], sc.nodes)
        sc.meshes[n.mesh] = new
    return sc, changed


def export_file(context, path):
    """The active imported model written as `path`, and the images painted in Blender written back
    beside it as the game reads them. Returns the warnings and what was written."""
    hangar = _hangar()
    warnings = export_model(hangar, context, path)
    coll = source_collection(context)
    used = {m for o in all_objects(coll) if o.type == "MESH" for m in o.data.materials if m is not None}
    return list(warnings) + materials_.write_textures(hangar, coll[SOURCE], path, sorted(used, key=lambda m: m.name))


def export_model(hangar, context, path):
    coll = source_collection(context)
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    if coll is None:
        raise hangar.Error("nothing imported by hangar is active: import a model first, or make its collection active")
    src = coll[SOURCE]
    if ext == "xml":
        if coll.get(KIND) != "component":
            raise hangar.Error(f"{coll.name} is not a component: export it as .{coll.get(KIND)}")
        sc, _ = scene_from_collection(hangar, coll)
        return hangar.write(sc, path, original=src)
    sc, changed = patched_original(hangar, coll)
    if not changed:
        # Nothing edited: the library converts the original (byte for byte into its own format).
        gltf = ext in ("glb", "gltf")  # a glTF takes the motions' clips along, a game file is itself
        return hangar.convert(src, path, motions=json.loads(coll.get(MOTION_FILES, "[]")) if gltf else [])
    # Over the original: an actor rebuilt keeps its LOD chunks, which Blender does not show.
    return hangar.write(sc, path, original=src)


class IMPORT_SCENE_OT_hangar(bpy.types.Operator, ImportHelper):
    """Import an X4 component, XMF, XAC or StarCraft II M3 model with hangar"""
    bl_idname = "import_scene.hangar"
    bl_label = "Import game model (hangar)"
    bl_options = {"REGISTER", "UNDO"}
    filename_ext = ""
    filter_glob: StringProperty(default="*" + ";*".join(EXTS.split(";")), options={"HIDDEN"})
    files: CollectionProperty(type=bpy.types.OperatorFileListElement, options={"HIDDEN", "SKIP_SAVE"})
    directory: StringProperty(subtype="DIR_PATH", options={"HIDDEN", "SKIP_SAVE"})

    def execute(self, context):
        # Several files chosen: an actor or M3 with its motions (.xsm, .xpm, .m3a) as its clips.
        chosen = [os.path.join(self.directory, f.name) for f in self.files if f.name] if self.directory else []
        model = self.filepath
        motions = [f for f in chosen if f.lower().endswith(MOTIONS)]
        models = [f for f in chosen if not f.lower().endswith(MOTIONS)]
        if models:
            model = models[0]
        return run_import(self, context, model, [m for m in motions if m != model])


def run_import(op, context, model, motions):
    """Imports `model` for the operator `op`, hangar's warnings and errors in Blender's reports."""
    t = time.perf_counter()
    try:
        coll, warnings = import_file(context, model, motions)
    except Exception as e:  # hangar.Error and Blender's own
        op.report({"ERROR"}, str(e))
        return {"CANCELLED"}
    finally:
        context.window_manager.progress_end()
    for w in warnings[:20]:
        op.report({"WARNING"}, w)
    op.report({"INFO"}, f"imported {coll.name} in {time.perf_counter() - t:.2f} s")
    return {"FINISHED"}


_models = {}  # game folder -> what hangar shows in it (its catalogs' indexes read once a session)


def game_models(game):
    game = os.path.abspath(bpy.path.abspath(game)) if game else ""
    if game not in _models:
        _models[game] = _hangar().models(game) if os.path.isdir(game) or game.lower().endswith(".cat") else []
    return _models[game]


def search_models(self, context, edit_text):
    """The picker: up to 300 of the game's models whose path holds what was typed."""
    try:
        found = game_models(self.game)
    except Exception:  # not a game folder (yet): nothing to offer
        return []
    q = edit_text.lower()
    return [m for m in found if q in m.lower() and not m.lower().endswith(MOTIONS)][:300]


class IMPORT_SCENE_OT_hangar_game(bpy.types.Operator):
    """Import a model straight from a game or mod folder's catalogs with hangar (only the catalogs'
    indexes are read, then the model's entries)"""
    bl_idname = "import_scene.hangar_game"
    bl_label = "Import game model from catalogs (hangar)"
    bl_options = {"REGISTER", "UNDO"}
    game: StringProperty(name="Game folder", subtype="DIR_PATH",
                         description="The game or mod folder with its .cat/.dat catalogs (or one .cat file)")
    path: StringProperty(name="Model", search=search_models,
                         description="The model's path in the game: type part of it to pick from the catalogs")

    def invoke(self, context, event):
        return context.window_manager.invoke_props_dialog(self, width=700)

    def execute(self, context):
        if not self.game or not self.path:
            self.report({"ERROR"}, "name the game folder and pick a model in it")
            return {"CANCELLED"}
        return run_import(self, context, f"{os.path.abspath(bpy.path.abspath(self.game))}::{self.path}", [])


class EXPORT_SCENE_OT_hangar(bpy.types.Operator, ExportHelper):
    """Export the imported model (the active collection) as a game file; the extension picks the type"""
    bl_idname = "export_scene.hangar"
    bl_label = "Export game model (hangar)"
    filename_ext = ".xml"
    check_extension = None  # the type comes from the name given
    filter_glob: StringProperty(default="*" + ";*".join(EXTS.split(";")), options={"HIDDEN"})

    def invoke(self, context, event):
        coll = source_collection(context)
        if coll is not None and not self.filepath:
            src = coll[SOURCE].split("::")[-1]
            self.filepath = os.path.join(os.path.dirname(bpy.data.filepath) or os.path.expanduser("~"),
                                         os.path.basename(src))
        return ExportHelper.invoke(self, context, event)

    def execute(self, context):
        try:
            warnings = export_file(context, self.filepath)
        except Exception as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        for w in warnings[:20]:
            self.report({"WARNING"}, w)
        self.report({"INFO"}, f"wrote {self.filepath}")
        return {"FINISHED"}


class VIEW3D_PT_hangar(bpy.types.Panel):
    """What the game needs of the active object that Blender does not show"""
    bl_label = "hangar"
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "hangar"

    def draw(self, context):
        ob = context.active_object
        col = self.layout.column()
        coll = source_collection(context)
        if coll is not None:
            col.label(text=f"{coll.get(KIND, '')}: {os.path.basename(coll[SOURCE])}")
            col.prop(context.scene, materials_.TEAM)
        if ob is None:
            return
        if FULL_NAME in ob:
            col.label(text=f"name: {ob[FULL_NAME]}")
        extras = json.loads(ob[EXTRAS]) if EXTRAS in ob else {}
        for k, v in extras.items():
            if isinstance(v, dict):
                for kk, vv in v.items():
                    if kk in ("xml", "bytes", "source"):
                        continue
                    col.label(text=f"{k}.{kk}: {vv if not isinstance(vv, (dict, list)) else json.dumps(vv)[:60]}")
            else:
                col.label(text=f"{k}: {v}")
        if ob.type == "MESH" and DIGEST in ob.data:
            col.label(text="mesh: edited" if mesh_changed(ob.data) else "mesh: as imported")


def menu_import(self, context):
    self.layout.operator(IMPORT_SCENE_OT_hangar.bl_idname, text="Game model (hangar)")
    self.layout.operator(IMPORT_SCENE_OT_hangar_game.bl_idname, text="Game model from catalogs (hangar)")


def menu_export(self, context):
    self.layout.operator(EXPORT_SCENE_OT_hangar.bl_idname, text="Game model (hangar)")


CLASSES = (IMPORT_SCENE_OT_hangar, IMPORT_SCENE_OT_hangar_game, EXPORT_SCENE_OT_hangar, VIEW3D_PT_hangar)


def register():
    materials_.register()
    for c in CLASSES:
        bpy.utils.register_class(c)
    bpy.types.TOPBAR_MT_file_import.append(menu_import)
    bpy.types.TOPBAR_MT_file_export.append(menu_export)


def unregister():
    bpy.types.TOPBAR_MT_file_export.remove(menu_export)
    bpy.types.TOPBAR_MT_file_import.remove(menu_import)
    for c in reversed(CLASSES):
        bpy.utils.unregister_class(c)
    materials_.unregister()
