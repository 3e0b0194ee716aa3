"""A mesh's colour sets as Blender colour attributes named by role, and back.

X4's colour sets are shader data (docs/MATERIALS.md): the library names them by role (`col`, `multimat`,
`color_N`). In Blender each is a point colour attribute of that name, except the multimat set, which
packs four values a modder paints apart: it becomes four grey attributes named as Egosoft's tools name
them, `multimatsmooth` (red), `multimatmetal` (green), `multimatid` (blue: the texture array's layer,
id / 255) and `dirt` (alpha). A set with no role (a tint: SC2, glTF COLOR_n) is `Color{k}`."""
import numpy as np

MULTIMAT = "multimat"
#: The multimat set's channels, in RGBA order.
MULTIMAT_CHANNELS = ("multimatsmooth", "multimatmetal", "multimatid", "dirt")


def _attribute(me, name, rgba):
    """A point colour attribute `name` holding `rgba`; returns {its name as Blender gave it: the values}."""
    a = me.color_attributes.new(name=name, type="FLOAT_COLOR", domain="POINT")
    flat = np.ascontiguousarray(rgba, np.float32).ravel()
    a.data.foreach_set("color", flat)
    return {a.name: flat}


def add_color_sets(me, m):
    """The hangar mesh `m`'s colour sets as colour attributes of the Blender mesh `me`. Returns the
    values set by attribute name, which are what `digest_arrays` would read back."""
    names = list(getattr(m, "color_names", []) or [])
    out = {}
    for k, c in enumerate(m.colors):
        c = np.asarray(c, np.float32).reshape(-1, 4)
        role = names[k] if k < len(names) and names[k] else None
        if role == MULTIMAT:
            # The four channels as four greys at once: (channel, vertex, rgba); a copy a component
            # from the channels laid out contiguously (3x faster than one broadcast of c.T).
            channels = np.ascontiguousarray(c.T)
            greys = np.empty((4, len(c), 4), np.float32)
            for component in range(3):
                greys[:, :, component] = channels
            greys[:, :, 3] = 1.0
            for name, grey in zip(MULTIMAT_CHANNELS, greys):
                out.update(_attribute(me, name, grey))
        else:
            out.update(_attribute(me, role or f"Color{k}", c))
    return out


def _read(me, name, n):
    a = me.color_attributes.get(name)
    if a is None or a.domain != "POINT" or a.data_type != "FLOAT_COLOR":
        return None
    out = np.empty(n * 4, np.float32)
    a.data.foreach_get("color", out)
    return out.reshape(-1, 4)


def color_sets(me, roles):
    """The sets `roles` names read back from `me`'s colour attributes (one (N, 4) array a role), or
    None when one is missing (then the caller keeps what the file had)."""
    n = len(me.vertices)
    out = []
    for role in roles:
        if role == MULTIMAT:
            chans = [_read(me, name, n) for name in MULTIMAT_CHANNELS]
            if any(c is None for c in chans):
                return None
            out.append(np.stack([c[:, 0] for c in chans], axis=1).astype(np.float32))
        else:
            c = _read(me, role, n)
            if c is None:
                return None
            out.append(c)
    return out


def roles_in(me):
    """The roles of the colour attributes a mesh made in Blender carries, in the order the XMF writer
    gives them indices: `col`, the `color_N`, any other name, the multimat set last."""
    names = [a.name for a in me.color_attributes if a.domain == "POINT" and a.data_type == "FLOAT_COLOR"]
    multimat = all(c in names for c in MULTIMAT_CHANNELS)
    rest = [n for n in names if n not in MULTIMAT_CHANNELS and not n.startswith("Color")]
    col = [n for n in rest if n == "col"]
    indexed = sorted((n for n in rest if n.startswith("color_") and n[6:].isdigit()), key=lambda n: int(n[6:]))
    other = sorted(n for n in rest if n not in col and n not in indexed)
    return col + indexed + other + ([MULTIMAT] if multimat else [])


def digest_arrays(me, values=None):
    """Every point colour attribute's values (by name), for the mesh digest: painting is an edit.
    `values`: what `add_color_sets` set, when the mesh has no other (spares reading them back)."""
    if values is not None:
        return [values[name] for name in sorted(values)]
    n = len(me.vertices)
    names = sorted(a.name for a in me.color_attributes if a.domain == "POINT" and a.data_type == "FLOAT_COLOR")
    return [_read(me, name, n).ravel() for name in names]


def layer_hue(layer):
    """The hue a multimat layer is drawn in while the texture array is not shown (golden-ratio steps:
    neighbouring layers far apart)."""
    return (layer * 0.618034) % 1.0


#: The shared node group of the multimat shader's vertex data, made once a .blend file.
MULTIMAT_GROUP = "hangar multimat"
_GROUP_OUTPUTS = (("Base Color", "NodeSocketColor"), ("Roughness", "NodeSocketFloat"), ("Metallic", "NodeSocketFloat"))


def _multimat_group():
    """The node group of `multimat_nodes` (Egosoft: red smoothness, green metalness, blue the texture
    array's layer, alpha dirt): roughness 1 - multimatsmooth, metallic multimatmetal, the base colour the
    layer's (`layer_hue`, as the array's layers are not shown yet) darkened towards dirt by `dirt`. One
    group a file, not a dozen nodes a material: a ship has tens of multimat materials."""
    import bpy
    ng = bpy.data.node_groups.get(MULTIMAT_GROUP)
    if ng is not None and ng.bl_idname == "ShaderNodeTree" and all(ng.interface.items_tree.get(n) for n, _ in _GROUP_OUTPUTS):
        return ng
    ng = bpy.data.node_groups.new(MULTIMAT_GROUP, "ShaderNodeTree")
    for name, kind in _GROUP_OUTPUTS:
        ng.interface.new_socket(name=name, in_out="OUTPUT", socket_type=kind)
    nodes, links = ng.nodes, ng.links
    out = nodes.new("NodeGroupOutput")
    out.location = (200, 0)

    def attr(name, y):
        a = nodes.new("ShaderNodeAttribute")
        a.attribute_type = "GEOMETRY"
        a.attribute_name = name
        a.label = name
        a.location = (-1300, y)
        return a.outputs["Fac"]

    def math(op, a, b, y, x=-1050):
        m = nodes.new("ShaderNodeMath")
        m.operation = op
        m.location = (x, y)
        for k, v in enumerate((a, b)):
            if isinstance(v, (int, float)):
                m.inputs[k].default_value = v
            else:
                links.new(v, m.inputs[k])
        return m.outputs[0]

    smooth, metal, layer_id, dirt = (attr(n, 300 - 200 * k) for k, n in enumerate(MULTIMAT_CHANNELS))
    links.new(math("SUBTRACT", 1.0, smooth, 300), out.inputs["Roughness"])
    links.new(metal, out.inputs["Metallic"])
    # The layer: the blue byte (id / 255) back to a whole number, then its hue.
    layer = math("ROUND", math("MULTIPLY", layer_id, 255.0, -100), 0.0, -100, -850)
    hue = math("FRACT", math("MULTIPLY", layer, 0.618034, -100, -650), 0.0, -100, -450)
    hsv = nodes.new("ShaderNodeCombineColor")
    hsv.mode = "HSV"
    hsv.location = (-250, -100)
    links.new(hue, hsv.inputs[0])
    hsv.inputs[1].default_value = 0.6
    hsv.inputs[2].default_value = 0.8
    mix = nodes.new("ShaderNodeMix")
    mix.data_type = "RGBA"
    mix.location = (-50, 0)
    links.new(dirt, mix.inputs[0])
    links.new(hsv.outputs["Color"], [s for s in mix.inputs if s.name == "A" and s.type == "RGBA"][0])
    [s for s in mix.inputs if s.name == "B" and s.type == "RGBA"][0].default_value = (0.12, 0.1, 0.08, 1.0)
    links.new([s for s in mix.outputs if s.name == "Result" and s.type == "RGBA"][0], out.inputs["Base Color"])
    return ng


def multimat_nodes(bm, bsdf):
    """The multimat shader's vertex data on `bsdf`: the shared group (`_multimat_group`) feeding its base
    colour, roughness and metallic."""
    g = bm.node_tree.nodes.new("ShaderNodeGroup")
    g.node_tree = _multimat_group()
    g.location = (-300, 0)
    links = bm.node_tree.links
    for name, _ in _GROUP_OUTPUTS:
        links.new(g.outputs[name], bsdf.inputs[name])
