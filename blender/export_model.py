"""File > Export: the imported file's own scene with what changed in Blender put in (an edited mesh, a
moved part, edited clips), written by the library over the original; untouched, the original converted
byte for byte. Changed images go back as the game reads them (materials.py)."""
import json
import os

import bpy
import numpy as np

from . import colors
from . import materials as materials_
from .animation import animations_from_blender
from .common import (EXTRAS, FULL_NAME, KIND, MATERIAL, MOTION_FILES, NODE, SOURCE, all_objects, hangar_lib, mesh_changed,
                     pts_from_blender, source_collection, trs_from_blender, without_suffix)


def mesh_from_blender(hangar, ob, materials, mat_index, output):
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
                # A material made in Blender is named as the game finds it (X4: collection.material).
                made_here = bm is not None and MATERIAL not in bm and EXTRAS not in bm
                final = hangar.material_name(output, name) if made_here else name.split(".0")[0] if extras else name
                materials.append(hangar.Material(name=final, extras=extras))
            mi = mat_index[name]
        prims.append(hangar.Primitive(indices=sel, material=mi))
    # Colour attributes named by role (col, multimatsmooth..dirt, ...) are the mesh's colour sets.
    roles = colors.roles_in(me)
    sets = colors.color_sets(me, roles) or []
    return hangar.Mesh(name=me.name, positions=pts_from_blender(co.reshape(-1, 3)),
                       normals=pts_from_blender(nrm.reshape(-1, 3)), uvs=uvs, primitives=prims,
                       colors=sets, color_names=roles if sets else [])


def object_trs(ob):
    if ob.rotation_mode == "QUATERNION":
        loc, q, s = ob.location, ob.rotation_quaternion, ob.scale
    else:
        loc, q, s = ob.matrix_basis.decompose()
    return trs_from_blender(tuple(loc), tuple(q), tuple(s))


def scene_from_collection(hangar, coll, output):
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
                    sc.meshes.append(mesh_from_blender(hangar, o, sc.materials, mat_index, output))
                else:
                    mesh_of[me.name] = None
            node.mesh = mesh_of[me.name]
        sc.nodes.append(node)
    scene = bpy.context.scene
    node_at = {o[NODE]: k for k, o in enumerate(order) if NODE in o}
    sc.animations = animations_from_blender(hangar, node_at, scene.render.fps / scene.render.fps_base)
    return sc, changed


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


def patched_original(hangar, coll, output):
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
        new = mesh_from_blender(hangar, o, sc.materials, known, output)
        new.name, new.extras = old.name, old.extras
        # The file's colour sets as painted in Blender (the attributes the import made), else as they were.
        names = list(old.color_names) + [""] * (len(old.colors) - len(old.color_names))
        painted = colors.color_sets(o.data, [r or f"Color{k}" for k, r in enumerate(names[:len(old.colors)])]) \
            if len(old.colors) else None
        if painted is not None:
            new.colors, new.color_names = painted, old.color_names
        if len(new.positions) == len(old.positions):
            if painted is None:
                new.colors, new.color_names = old.colors, old.color_names
            new.custom, new.morph_targets = old.custom, old.morph_targets
            new.joints, new.weights = old.joints, old.weights
        elif n.skin is not None and n.skin < len(sc.skins):
            new.joints, new.weights = weights_from_groups(o, sc.skins[n.skin], sc.nodes)
        sc.meshes[n.mesh] = new
    return sc, changed


def into_mod(path):
    """True when `path` lies in an X4 extension (a folder with a content.xml above it)."""
    d = os.path.dirname(os.path.abspath(path))
    while True:
        if os.path.isdir(d) and any(f.lower() == "content.xml" for f in os.listdir(d)):
            return True
        up = os.path.dirname(d)
        if up == d:
            return False
        d = up


def as_patch(coll, path, wanted):
    """Whether a component's .xml is written as a <diff> patch: asked for, the component came from
    the game's catalogs (`GAME::path`), and the file goes into an extension."""
    return bool(wanted) and "::" in coll[SOURCE] and into_mod(path)


def export_file(context, path, patch=False):
    """The active imported model written as `path`, and the images painted in Blender written back
    beside it as the game reads them; with `patch`, a component from the game exported into a mod
    is written as a <diff> patch of its XML. Returns the warnings and what was written."""
    hangar = hangar_lib()
    warnings = export_model(hangar, context, path, patch)
    coll = source_collection(context)
    used = {m for o in all_objects(coll) if o.type == "MESH" for m in o.data.materials if m is not None}
    return list(warnings) + materials_.write_textures(hangar, coll[SOURCE], path, sorted(used, key=lambda m: m.name))


def export_model(hangar, context, path, patch=False):
    coll = source_collection(context)
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    if coll is None:
        raise hangar.Error("nothing imported by hangar is active: import a model first, or make its collection active")
    src = coll[SOURCE]
    if ext == "xml":
        if coll.get(KIND) != "component":
            raise hangar.Error(f"{coll.name} is not a component: export it as .{coll.get(KIND)}")
        sc, _ = scene_from_collection(hangar, coll, path)
        return hangar.write(sc, path, original=src, patch=as_patch(coll, path, patch))
    sc, changed = patched_original(hangar, coll, path)
    if not changed:
        # Nothing edited: the library converts the original (byte for byte into its own format).
        gltf = ext in ("glb", "gltf")  # a glTF takes the motions' clips along, a game file is itself
        return hangar.convert(src, path, motions=json.loads(coll.get(MOTION_FILES, "[]")) if gltf else [])
    # Over the original: an actor rebuilt keeps its LOD chunks, which Blender does not show.
    return hangar.write(sc, path, original=src)
