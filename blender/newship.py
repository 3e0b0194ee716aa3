"""A new X4 ship made in Blender: Add > hangar > X4 hardpoint (an empty drawn as an arrow along the
direction the game mounts what it holds, with its `tags`), the hardpoint's properties in the hangar
sidebar tab, and File > Export > "X4 ship, new (hangar)", which hands the objects to the library's
`hangar.new_ship` as the authoring convention reads them:

- a mesh object is a part named after it (its mesh, modifiers applied, is lod0); mesh children named
  `<part>-lod1..3` / `<part>-collision` give those meshes;
- an empty with a `tags` custom property is a connection named after it; its other string custom
  properties (`group`, `value`, ...) are the connection's attributes; an empty without tags only
  groups what it holds;
- the hierarchy gives parents and offsets.

Axes: hangar's import turns X4 (+Y up, +Z forward, left-handed) into Blender's +Z up with X4's +Z
forward along Blender's -Y of the object. An arrow empty draws along its own +Z, so a hardpoint is made
turned +90 degrees about X (its arrow along -Y: where a weapon fires); on export, an arrow empty's
frame is turned back, so that its arrow is the game's mount direction (+Z of the connection)."""
import math
import os
import re
import time
from types import SimpleNamespace

import bpy
from bpy.props import EnumProperty, IntProperty, StringProperty, BoolProperty
from mathutils import Matrix

from .common import EXTRAS, SidebarPanel, hangar_lib, trs_from_blender
from . import materials as materials_
from .export_model import mesh_from_blender

TAGS = "tags"

KINDS = ("weapon", "turret", "shield", "engine", "dock", "cockpit", "storage", "countermeasures")
SIZES = ("small", "medium", "large", "extralarge")

# The game's tags of a slot of each kind (as vanilla ships write them); cockpits, storage and
# countermeasures take no size.
TAG_FORMS = {
    "weapon": "weapon {size} standard",
    "turret": "turret {size} standard",
    "shield": "{size} shield",
    "engine": "engine {size}",
    "dock": "dockingbay {size}",
    "cockpit": "cockpit",
    "storage": "storage",
    "countermeasures": "countermeasures",
}

# An arrow empty's +Z (its arrow) is the connection's +Z (the mount direction), which hangar shows
# along Blender's -Y: the connection's frame is the empty's turned by -90 degrees about X.
ARROW_TO_MOUNT = Matrix.Rotation(-math.pi / 2, 4, "X")


def hardpoint_tags(kind, size):
    return TAG_FORMS[kind].format(size=size)


def is_arrow(ob):
    return ob.type == "EMPTY" and ob.empty_display_type == "SINGLE_ARROW"


def free_name(kind):
    """con_<kind>_NN, the first number no object has."""
    n = 1
    while f"con_{kind}_{n:02d}" in bpy.data.objects:
        n += 1
    return f"con_{kind}_{n:02d}"


class HANGAR_OT_x4_hardpoint_add(bpy.types.Operator):
    """Add an X4 hardpoint: an empty drawn as an arrow along the direction the game mounts the weapon,
    turret, shield or engine (forward: Blender's -Y), with the slot's tags"""
    bl_idname = "hangar.x4_hardpoint_add"
    bl_label = "X4 hardpoint"
    bl_options = {"REGISTER", "UNDO"}
    kind: EnumProperty(name="Kind", items=[(k, k.capitalize(), f"a {k} slot") for k in KINDS], default="weapon")
    size: EnumProperty(name="Size", items=[(s, s.capitalize(), f"{s} equipment") for s in SIZES], default="medium")

    def execute(self, context):
        ob = bpy.data.objects.new(free_name(self.kind), None)
        ob.empty_display_type = "SINGLE_ARROW"
        ob.empty_display_size = 2.0
        ob.location = context.scene.cursor.location
        ob.rotation_euler = (math.pi / 2, 0.0, 0.0)
        ob[TAGS] = hardpoint_tags(self.kind, self.size)
        (context.collection or context.scene.collection).objects.link(ob)
        for o in context.selected_objects:
            o.select_set(False)
        ob.select_set(True)
        context.view_layer.objects.active = ob
        return {"FINISHED"}


class VIEW3D_PT_hangar_hardpoint(SidebarPanel, bpy.types.Panel):
    """The active empty's connection: its tags and other attributes, editable"""
    bl_label = "X4 connection"

    @classmethod
    def poll(cls, context):
        ob = context.active_object
        return ob is not None and ob.type == "EMPTY"

    def draw(self, context):
        ob = context.active_object
        col = self.layout.column()
        if TAGS not in ob:
            col.label(text="no tags: a group, not a connection")
            col.operator(HANGAR_OT_x4_tags_add.bl_idname)
            return
        for key in attributes(ob):
            col.prop(ob, f'["{key}"]', text=key)


class HANGAR_OT_x4_tags_add(bpy.types.Operator):
    """Make the active empty a connection: give it a tags property to fill in"""
    bl_idname = "hangar.x4_tags_add"
    bl_label = "Add tags"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        ob = context.active_object
        if ob is None:
            return {"CANCELLED"}
        ob[TAGS] = ""
        return {"FINISHED"}


def attributes(ob):
    """The object's string custom properties the connection carries, `tags` first."""
    keys = [k for k, v in ob.items() if isinstance(v, str) and not k.startswith("hangar_") and k != EXTRAS]
    return sorted(keys, key=lambda k: k != TAGS)


def in_parent_order(obs):
    """The objects with each one's nearest kept ancestor before it."""
    kept = {o.name for o in obs}
    out, seen = [], set()

    def visit(o):
        if o.name in seen:
            return
        seen.add(o.name)
        p = kept_parent(o, kept)
        if p is not None:
            visit(p)
        out.append(o)

    for o in sorted(obs, key=lambda o: o.name):
        visit(o)
    return out


def kept_parent(ob, kept):
    p = ob.parent
    while p is not None and p.name not in kept:
        p = p.parent
    return p


def frame(ob):
    """The object's world frame as the connection's: an arrow empty's turned so its arrow is +Z."""
    m = ob.matrix_world.copy()
    return m @ ARROW_TO_MOUNT if is_arrow(ob) else m


def ship_scene(hangar, context, output):
    """The neutral scene (glTF's frame) of the scene's meshes and empties, as hangar.new_ship reads it."""
    obs = in_parent_order([o for o in context.scene.objects if o.type in ("MESH", "EMPTY")])
    kept = {o.name for o in obs}
    index = {o.name: k for k, o in enumerate(obs)}
    deps = context.evaluated_depsgraph_get()
    sc = hangar.Scene(name=context.scene.name)
    mat_index = {}
    for o in obs:
        p = kept_parent(o, kept)
        local = frame(p).inverted_safe() @ frame(o) if p is not None else frame(o)
        loc, q, s = local.decompose()
        t, r, sc_ = trs_from_blender(tuple(loc), tuple(q), tuple(s))
        node = hangar.Node(name=o.name, parent=index[p.name] if p is not None else None, translation=t,
                           rotation=r, scale=sc_, extras={k: o[k] for k in attributes(o)})
        if o.type == "MESH":
            ev = o.evaluated_get(deps)
            me = ev.to_mesh()
            try:
                if len(me.polygons):
                    node.mesh = len(sc.meshes)
                    sc.meshes.append(mesh_from_blender(hangar, SimpleNamespace(data=me), sc.materials, mat_index,
                                                       output))
                    sc.meshes[-1].name = o.data.name
            finally:
                ev.to_mesh_clear()
        sc.nodes.append(node)
    return sc


def valid_id(text):
    return re.fullmatch(r"[A-Za-z0-9_]+", text or "") is not None


class EXPORT_SCENE_OT_hangar_x4_ship(bpy.types.Operator):
    """Write the scene's meshes (parts) and hardpoint empties as a new X4 ship: a whole extension the
    game loads as it is (component, LODs, collision meshes, macro and ware cloned from a template ship,
    index entries, texts, content.xml)"""
    bl_idname = "export_scene.hangar_x4_ship"
    bl_label = "Export X4 ship (hangar)"
    directory: StringProperty(name="Extension folder", subtype="DIR_PATH",
                              description="The extension folder to write; its name is the extension's id")
    filter_folder: BoolProperty(default=True, options={"HIDDEN"})
    template: StringProperty(name="Template", description="The ship macro to clone: a macro file "
                             "(…/macros/ship_…_macro.xml), or a macro name found in the game folder")
    game: StringProperty(name="Game folder", subtype="DIR_PATH",
                         description="Where a template named by name is found: the game (with its catalogs and "
                                     "extensions) or an extension folder")
    ship_id: StringProperty(name="Id", description="The new component's name (letters, digits, _); the macro is "
                            "ID_macro, the ware ID", default="ship_my_m_01")
    ship_name: StringProperty(name="Name", description="The ship's name in the game (default: the id)")
    description: StringProperty(name="Description", description="The ship's description in the game")
    lods: IntProperty(name="LODs", description="LODs made below lod0 where the scene gives none", default=2,
                      min=0, max=3)
    pack: BoolProperty(name="Pack", description="Everything but content.xml in ext_01.cat/.dat")
    force: BoolProperty(name="Write into a folder that is not empty", default=False)

    def invoke(self, context, event):
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    def draw(self, context):
        col = self.layout.column()
        for p in ("template", "game", "ship_id", "ship_name", "description", "lods", "pack", "force"):
            col.prop(self, p)

    def execute(self, context):
        if not self.directory or not self.template:
            self.report({"ERROR"}, "name the extension folder to write and the template ship macro")
            return {"CANCELLED"}
        if not valid_id(self.ship_id):
            self.report({"ERROR"}, f"{self.ship_id!r} is not an id the game takes (letters, digits and _)")
            return {"CANCELLED"}
        hangar = hangar_lib()
        out = os.path.normpath(os.path.abspath(bpy.path.abspath(self.directory)))
        wm = context.window_manager
        t = time.perf_counter()
        wm.progress_begin(0, 100)
        try:
            scene = ship_scene(hangar, context, out)
            game = os.path.abspath(bpy.path.abspath(self.game)) if self.game else None
            template = self.template
            if os.path.isfile(bpy.path.abspath(template)):
                template = os.path.abspath(bpy.path.abspath(template))

            def progress(done, total):
                wm.progress_update(int(100 * done / max(total, 1)))

            # Images of materials made in Blender: the library names the new materials and writes them.
            used = {s.material for o in context.scene.objects if o.type == "MESH"
                    for s in o.material_slots if s.material is not None}
            images = materials_.new_images(hangar, sorted(used, key=lambda m: m.name), None)
            written = hangar.new_ship(scene, out, template, self.ship_id, ship_name=self.ship_name or None,
                                      description=self.description or None, lods=self.lods, game=game,
                                      pack=self.pack, force=self.force, progress=progress, images=images)
        except Exception as e:  # hangar.Error and Blender's own
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        finally:
            wm.progress_end()
        self.report({"INFO"}, f"wrote {out}: {len(written)} files in {time.perf_counter() - t:.2f} s")
        return {"FINISHED"}


class VIEW3D_MT_hangar_add(bpy.types.Menu):
    bl_idname = "VIEW3D_MT_hangar_add"
    bl_label = "hangar"

    def draw(self, context):
        self.layout.operator_menu_enum(HANGAR_OT_x4_hardpoint_add.bl_idname, "kind", text="X4 hardpoint")


def menu_add(self, context):
    self.layout.menu(VIEW3D_MT_hangar_add.bl_idname)


def menu_export(self, context):
    self.layout.operator(EXPORT_SCENE_OT_hangar_x4_ship.bl_idname, text="X4 ship, new (hangar)")


CLASSES = (HANGAR_OT_x4_hardpoint_add, HANGAR_OT_x4_tags_add, VIEW3D_PT_hangar_hardpoint,
           EXPORT_SCENE_OT_hangar_x4_ship, VIEW3D_MT_hangar_add)


def register():
    for c in CLASSES:
        bpy.utils.register_class(c)
    bpy.types.VIEW3D_MT_add.append(menu_add)
    bpy.types.TOPBAR_MT_file_export.append(menu_export)


def unregister():
    bpy.types.TOPBAR_MT_file_export.remove(menu_export)
    bpy.types.VIEW3D_MT_add.remove(menu_add)
    for c in reversed(CLASSES):
        bpy.utils.unregister_class(c)
