"""File > Import: a hangar scene (`hangar.open`) made into Blender data: meshes through the generic
attribute API (whole numpy buffers), materials (materials.py), armatures and weights, shape keys, lights,
cameras, the parts' places; an .ani dropped on an imported component becomes its parts' actions."""
import gc
import json
import math
import os

import bpy
import numpy as np
from mathutils import Matrix, Quaternion, Vector

from . import colors
from . import materials as materials_
from .animation import import_animations
from .common import (DIGEST, EXTRAS, FULL_NAME, KIND, MATERIAL, MOTION_FILES, NODE, SOURCE, hangar_lib, mesh_digest,
                     pts_to_blender, trs_to_blender)


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
    color_values = colors.add_color_sets(me, m)
    me.update()
    if hasattr(me, "shade_smooth"):
        me.shade_smooth()
    else:
        me.polygons.foreach_set("use_smooth", np.ones(nt, bool))
    if m.normals is not None and nv:
        set_normals(me, pts_to_blender(m.normals))
    me[DIGEST] = mesh_digest(co, tri, mat, uvs + colors.digest_arrays(me, color_values))
    return me


def set_normals(me, n):
    """The game's normals as custom normals: a free-normal attribute where Blender has them (5.0), else
    the split normals API."""
    a = me.attributes.new("custom_normal", "FLOAT_VECTOR", "POINT")
    a.data.foreach_set("vector", n.ravel())
    if getattr(me, "has_custom_normals", False):
        return
    me.attributes.remove(me.attributes["custom_normal"])
    # Blender 4.2 reads this argument an element at a time: lists of Python floats go faster than
    # numpy's rows of float32 scalars, once the cyclic GC is kept from walking every object while
    # the lists are made (the dropship's import: 0.143 s of CPU against 0.157 s from numpy).
    gc_on = gc.isenabled()
    gc.disable()
    try:
        me.normals_split_custom_set_from_vertices(n.tolist())
    except (TypeError, ValueError, RuntimeError):
        pass
    finally:
        if gc_on:
            gc.enable()


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
    hangar = hangar_lib()
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
    hangar = hangar_lib()
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
        bm[MATERIAL] = 1
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
