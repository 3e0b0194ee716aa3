"""What the extension's files share: the custom properties hangar leaves on Blender's data, the way to
the library (the `hangar` wheel shipped in the extension), the frames of glTF and Blender, and the mesh
digest that tells an edited mesh from one as imported."""
import re

import bpy
import numpy as np

from . import colors


NODE = "hangar_node"  # the node's index in the imported scene


EXTRAS = "hangar_extras"  # the node's extras (JSON)


SOURCE = "hangar_source"  # on the collection: the imported file


KIND = "hangar_kind"  # on the collection: component, xmf, m3, xac, ...


DIGEST = "hangar_digest"  # on a mesh: digest of the data as imported


FULL_NAME = "hangar_name"  # the node's name when Blender cut it (63 bytes)


MATERIAL = "hangar_material"  # on a material: 1 when imported (one made in Blender has none)
MOTION_FILES = "hangar_motions"  # on the collection: the motions imported with the model (JSON list)


EXTS = ".xml;.xmf;.m3;.m3a;.xac;.xsm;.xpm;.ani;.bsg;.glb;.gltf"


MOTIONS = (".xsm", ".xpm", ".m3a")


class SidebarPanel:
    """Where hangar's panels are: the 3D view's sidebar, its hangar tab."""
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "hangar"


def hangar_lib():
    import hangar  # the wheel shipped in the extension

    return hangar


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


def mesh_digest(co, vi, mat, uvs):
    """The library's fingerprint of the arrays (Adler-32 and length of each, side by side): any edit
    of the vertices, corners, material slots, UVs or colour attributes (given after the UVs) changes it."""
    return hangar_lib().digest(co, vi, mat, *uvs)


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


def mesh_changed(me):
    co, vi, mat, uvs = blender_mesh_arrays(me)
    return me.get(DIGEST) != mesh_digest(co, vi, mat, uvs + colors.digest_arrays(me))


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


def without_suffix(name):
    """A name without the `.001` Blender adds to a duplicate."""
    return re.sub(r"\.\d{3}$", "", name)
