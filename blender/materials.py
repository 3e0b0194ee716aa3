"""Materials: node trees on a Principled BSDF from the library's material mapping (hangar's Material:
its images by slot, its look), and the images painted in Blender written back as the game reads them.

The pictures come from hangar already as glTF reads them (normal maps in tangent-space RGB, X4's metal
and smoothness packed as metallic-roughness), so the trees are the standard ones: a Normal Map node in
tangent space, Separate Color for metallic (blue) and roughness (green), non-colour data where the
channels are not colours. A StarCraft II material's diffuse alpha is its team-colour mask: the colour
shown there is the scene's `hangar_team_colour`, which the user picks (hangar panel, or Scene properties).
"""
import os
import tempfile

import bpy
import numpy as np

from . import colors
from .common import EXTRAS, MATERIAL

TEAM = "hangar_team_colour"  # scene property: the player colour shown where an SC2 diffuse's alpha is 0
KEY = "hangar_texture"  # on an image: the picture's key (the game path of its texture)
SLOT = "hangar_slot"  # on an image: the slot it fills (base_color, normal, metallic_roughness, ...)
PIXELS = "hangar_pixels"  # on an image: the digest of its pixels as imported
NON_COLOR = {"normal", "metallic_roughness", "occlusion"}


def pixels(img):
    """An image's pixels as uint8 RGBA, (height, width, 4), rows from the bottom as Blender keeps them."""
    w, h = img.size
    px = np.empty(w * h * 4, np.float32)
    img.pixels.foreach_get(px)
    return np.round(np.clip(px, 0.0, 1.0) * 255.0).astype(np.uint8).reshape(h, w, 4)


def digest(hangar, img):
    return hangar.digest([pixels(img).reshape(-1)])


def image(hangar, key, slot, pictures, images):
    """The Blender image of a picture hangar made (PNG bytes), packed into the .blend; one a key,
    marked with its key, slot and the digest of its pixels (what tells an edit at export)."""
    if key not in images:
        first = key.split("|")[0] or key.split("|")[-1]
        name = os.path.basename(first.replace("\\", "/"))
        with tempfile.TemporaryDirectory() as d:
            f = os.path.join(d, name.rsplit(".", 1)[0] + ".png")
            with open(f, "wb") as out:
                out.write(pictures[key])
            img = bpy.data.images.load(f)
            img.pack()
            img.filepath_raw = ""
        img.name = name
        if slot in NON_COLOR:
            img.colorspace_settings.name = "Non-Color"
        img[KEY] = key
        img[SLOT] = slot
        img[PIXELS] = digest(hangar, img)
        images[key] = img
    return images[key]


def socket(sockets, name, kind=None):
    """The socket called `name` (of type `kind` where a node has several of that name)."""
    return next((s for s in sockets if s.name == name and (kind is None or s.type == kind)), None)


def build(hangar, bm, mt, pictures, images):
    """`bm`'s node tree from the hangar material `mt` (its images by slot, its look)."""
    look = mt.look or {}
    slots = [(s, k) for s, k in mt.images if k in pictures]
    bm.use_nodes = True
    nodes, links = bm.node_tree.nodes, bm.node_tree.links
    bsdf = next((n for n in nodes if n.type == "BSDF_PRINCIPLED"), None) or nodes.new("ShaderNodeBsdfPrincipled")
    bsdf.inputs["Base Color"].default_value = look.get("base_color", [1.0, 1.0, 1.0, 1.0])
    bsdf.inputs["Metallic"].default_value = look.get("metallic", 1.0)
    bsdf.inputs["Roughness"].default_value = look.get("roughness", 1.0)
    bm.use_backface_culling = not look.get("double_sided", False)
    alpha = look.get("alpha", "OPAQUE")
    if alpha != "OPAQUE" and hasattr(bm, "surface_render_method"):
        bm.surface_render_method = "BLENDED" if alpha == "BLEND" else "DITHERED"
    for k, (slot, key) in enumerate(slots):
        tex = nodes.new("ShaderNodeTexImage")
        tex.image = image(hangar, key, slot, pictures, images)
        tex.location = (-900, 400 - 300 * k)
        tex.label = slot
        if slot == "base_color":
            colour = tex.outputs["Color"]
            if look.get("team_colour"):
                # SC2: where the diffuse's alpha is 0 the player's colour shows.
                team = nodes.new("ShaderNodeAttribute")
                team.attribute_type = "VIEW_LAYER"
                team.attribute_name = TEAM
                team.location = (-600, 600)
                mix = nodes.new("ShaderNodeMix")
                mix.data_type = "RGBA"
                mix.location = (-400, 450)
                links.new(tex.outputs["Alpha"], mix.inputs[0])
                links.new(team.outputs["Color"], socket(mix.inputs, "A", "RGBA"))
                links.new(tex.outputs["Color"], socket(mix.inputs, "B", "RGBA"))
                colour = socket(mix.outputs, "Result", "RGBA")
            links.new(colour, bsdf.inputs["Base Color"])
            if alpha == "BLEND":
                links.new(tex.outputs["Alpha"], bsdf.inputs["Alpha"])
            elif isinstance(alpha, dict) and "MASK" in alpha:
                cut = nodes.new("ShaderNodeMath")
                cut.operation = "GREATER_THAN"
                cut.inputs[1].default_value = max(float(alpha["MASK"]) - 1e-4, 0.0)
                cut.location = (-400, 200)
                links.new(tex.outputs["Alpha"], cut.inputs[0])
                links.new(cut.outputs[0], bsdf.inputs["Alpha"])
        elif slot == "normal":
            nm = nodes.new("ShaderNodeNormalMap")
            nm.space = "TANGENT"
            nm.location = (-400, 400 - 300 * k)
            links.new(tex.outputs["Color"], nm.inputs["Color"])
            links.new(nm.outputs["Normal"], bsdf.inputs["Normal"])
        elif slot == "metallic_roughness":
            sep = nodes.new("ShaderNodeSeparateColor")
            sep.location = (-400, 400 - 300 * k)
            links.new(tex.outputs["Color"], sep.inputs["Color"])
            links.new(sep.outputs["Green"], bsdf.inputs["Roughness"])
            links.new(sep.outputs["Blue"], bsdf.inputs["Metallic"])
        elif slot == "emissive":
            emission = bsdf.inputs.get("Emission Color") or bsdf.inputs.get("Emission")
            if emission is not None:
                links.new(tex.outputs["Color"], emission)
            strength = bsdf.inputs.get("Emission Strength")
            if strength is not None:
                strength.default_value = max(look.get("emissive", [1.0, 1.0, 1.0]))
        elif slot == "specular":
            tint = bsdf.inputs.get("Specular Tint")
            if tint is not None and tint.type == "RGBA":
                links.new(tex.outputs["Color"], tint)
        # occlusion: Principled has no input for it; the image stays in the tree, labelled.
    if hangar.is_multimat(mt.name or ""):
        colors.multimat_nodes(bm, bsdf)


def changed_images(hangar, materials):
    """(material, slot, key, pixels top row first) of every image hangar imported into `materials`
    whose pixels differ from what was imported."""
    out, seen = [], set()
    for bm in materials:
        if bm is None or not bm.node_tree:
            continue
        for n in bm.node_tree.nodes:
            img = getattr(n, "image", None) if n.type == "TEX_IMAGE" else None
            if img is None or KEY not in img or img.name in seen:
                continue
            seen.add(img.name)
            px = pixels(img)
            if hangar.digest([px.reshape(-1)]) == img.get(PIXELS):
                continue
            name = bm.name.rsplit(".", 1)[0] if bm.name[-4:-3] == "." and bm.name[-3:].isdigit() else bm.name
            out.append((name, img[SLOT], img[KEY], np.ascontiguousarray(px[::-1])))
    return out


def image_slot(bsdf_input):
    """The slot an image fills through the Principled BSDF input it feeds (directly, or through a
    Normal Map or Separate Color node, as `build` wires them)."""
    return {"Base Color": "base_color", "Normal": "normal", "Emission Color": "emissive", "Emission": "emissive",
            "Metallic": "metallic_roughness", "Roughness": "metallic_roughness"}.get(bsdf_input)


def new_images(hangar, materials, output):
    """(material, slot, "", pixels top row first) of each image of a material made in Blender (not
    imported: no `hangar_extras`) that feeds its Principled BSDF, the material named as the model
    written to `output` names it (`hangar.material_name`; `output` None: by its Blender name)."""
    out = []
    for bm in materials:
        if bm is None or MATERIAL in bm or EXTRAS in bm or not bm.node_tree:  # imported, not new
            continue
        for link in bm.node_tree.links:
            if link.to_node.type != "BSDF_PRINCIPLED":
                continue
            src = link.from_node
            if src.type in ("NORMAL_MAP", "SEPARATE_COLOR") and src.inputs[-1].links:
                src = src.inputs[-1].links[0].from_node
            slot = image_slot(link.to_socket.name)
            if src.type != "TEX_IMAGE" or src.image is None or slot is None or KEY in src.image:
                continue
            if any(e[0] == bm.name and e[1] == slot for e in out):
                continue
            out.append((bm.name, slot, "", np.ascontiguousarray(pixels(src.image)[::-1])))
    if output is None:  # named by the caller (a new ship names them itself)
        return out
    return [(hangar.material_name(output, name), slot, key, px) for name, slot, key, px in out]


def write_textures(hangar, source, output, materials):
    """The images changed in Blender, and those of materials made in Blender, written back beside
    `output` as the game reads them (an X4 material new in Blender also into the mod's material
    library); returns messages of what was written and what was not."""
    edits = changed_images(hangar, materials) + new_images(hangar, materials, output)
    if not edits:
        return []
    wrote = hangar.write_textures(source, output, edits)
    return [f"wrote {f}{what}" if f is not None else what for f, what in wrote]


def register():
    bpy.types.Scene.hangar_team_colour = bpy.props.FloatVectorProperty(
        name="Team colour", description="The player colour StarCraft II shows where a diffuse texture's alpha is 0",
        subtype="COLOR", size=3, min=0.0, max=1.0, default=(0.0, 0.26, 1.0))


def unregister():
    del bpy.types.Scene.hangar_team_colour
