"""A new X4 ship from Blender: Add > hangar > X4 hardpoint (an empty with a `tags` property, drawn as an
arrow along the direction the game mounts it) and File > Export > "X4 ship, new (hangar)", which writes
the same extension as `hangar new ship`. The scene's mesh objects are parts, empties with `tags` are
connections, `<part>-lod1` / `<part>-collision` children give those meshes (the authoring convention of
the library, which does all the work)."""
import math
import os

import bpy
from bpy.props import EnumProperty, IntProperty, StringProperty
from mathutils import Matrix

from .common import hangar_lib, trs_from_blender
from .export_model import mesh_from_blender

KINDS = [(k, k, f"a {k} slot") for k in
         ("weapon", "turret", "shield", "engine", "dock", "cockpit", "storage", "countermeasures")]
SIZES = [(s, s, f"{s} slot") for s in ("small", "medium", "large", "extralarge")]
ARROW = "hangar_arrow"  # on an empty the operator made: its arrow (local +Z) is the mount's forward
# The game mounts along its +Z, Blender's -Y: the arrow (local +Z) is turned onto it.
TO_ARROW = Matrix.Rotation(math.pi / 2, 4, "X")


def default_tags(kind, size):
    return {"weapon": f"weapon {size} standard", "turret": f"turret {size} standard",
            "shield": f"shield {size} standard", "engine": f"engine {size}"}.get(kind, f"{kind} {size}")


class HANGAR_OT_x4_hardpoint_add(bpy.types.Operator):
    """Add an X4 hardpoint: an empty whose `tags` name the slot, drawn as an arrow along the direction the
    game mounts it (edit the tags in the sidebar's hangar tab)"""
    bl_idname = "hangar.x4_hardpoint_add"
    bl_label = "X4 hardpoint"
    bl_options = {"REGISTER", "UNDO"}
    kind: EnumProperty(name="Kind", items=KINDS, default="weapon")
    size: EnumProperty(name="Size", items=SIZES, default="medium")

    def execute(self, context):
        base = f"con_{self.kind}"
        n = 1
        while f"{base}_{n:02d}" in bpy.data.objects:
            n += 1
        ob = bpy.data.objects.new(f"{base}_{n:02d}", None)
        ob.empty_display_type = "SINGLE_ARROW"
        ob.empty_display_size = 2.0
        ob.location = context.scene.cursor.location
        ob.matrix_basis = Matrix.Translation(ob.location) @ TO_ARROW
        ob["tags"] = default_tags(self.kind, self.size)
        ob[ARROW] = 1
        context.collection.objects.link(ob)
        for o in context.selected_objects:
            o.select_set(False)
        ob.select_set(True)
        context.view_layer.objects.active = ob
        return {"FINISHED"}


def ship_scene(hangar, context, output):
    """The scene's objects as the library's neutral scene, by the authoring convention."""
    obs = [o for o in context.scene.objects if o.type in ("MESH", "EMPTY")]
    where = {o.name: k for k, o in enumerate(obs)}
    sc = hangar.Scene(name=context.scene.name)
    mat_index = {}
    for o in obs:
        basis = o.matrix_parent_inverse @ o.matrix_basis if o.parent else o.matrix_basis
        if o.get(ARROW):
            basis = basis @ TO_ARROW.inverted()
        loc, q, s = basis.decompose()
        t, r, sc_ = trs_from_blender(tuple(loc), tuple(q), tuple(s))
        extras = {k: v for k, v in o.items() if isinstance(v, str) and not k.startswith("hangar")}
        node = hangar.Node(name=o.name, translation=t, rotation=r, scale=sc_,
                           parent=where.get(o.parent.name) if o.parent else None, extras=extras)
        if o.type == "MESH" and o.data is not None and len(o.data.polygons):
            node.mesh = len(sc.meshes)
            sc.meshes.append(mesh_from_blender(hangar, o, sc.materials, mat_index, output))
        sc.nodes.append(node)
    return sc


class EXPORT_SCENE_OT_hangar_x4_ship(bpy.types.Operator):
    """Write the scene as a new X4 ship extension (a folder the game loads): the meshes as parts, the
    hardpoints as connections, macro, ware and texts cloned from a template ship"""
    bl_idname = "export_scene.hangar_x4_ship"
    bl_label = "Export X4 ship (hangar)"
    directory: StringProperty(name="Extension folder", subtype="DIR_PATH",
                              description="The extension folder to write (its name is the extension's id)")
    template: StringProperty(name="Template", description="A ship macro file, or a macro name found in the game folder")
    game: StringProperty(name="Game folder", subtype="DIR_PATH", description="Where a template named by name is found")
    ship_id: StringProperty(name="Id", default="ship_my_m_01", description="The component's name (letters, digits, _)")
    ship_name: StringProperty(name="Name", description="The ship's name in the game")
    description: StringProperty(name="Description")
    lods: IntProperty(name="LODs", default=2, min=0, max=3, description="LODs made below lod0")

    def invoke(self, context, event):
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    def execute(self, context):
        try:
            hangar = hangar_lib()
            directory = os.path.abspath(bpy.path.abspath(self.directory)).rstrip("/\\")
            sc = ship_scene(hangar, context, os.path.join(directory, self.ship_id + ".xml"))
            game = os.path.abspath(bpy.path.abspath(self.game)) if self.game else None
            written = hangar.new_ship(sc, directory, bpy.path.abspath(self.template), self.ship_id,
                                      ship_name=self.ship_name or None, description=self.description or None,
                                      lods=self.lods, game=game, force=True)
        except Exception as e:  # hangar.Error and Blender's own
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self.report({"INFO"}, f"wrote {len(written)} files in {directory}")
        return {"FINISHED"}


class VIEW3D_PT_hangar_x4_ship(bpy.types.Panel):
    """The active object's X4 connection tags, editable"""
    bl_label = "X4 ship"
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "hangar"

    def draw(self, context):
        col = self.layout.column()
        col.operator_menu_enum(HANGAR_OT_x4_hardpoint_add.bl_idname, "kind", text="Add X4 hardpoint")
        ob = context.active_object
        if ob is not None and "tags" in ob:
            col.prop(ob, '["tags"]', text="tags")


class VIEW3D_MT_hangar_add(bpy.types.Menu):
    bl_idname = "VIEW3D_MT_hangar_add"
    bl_label = "hangar"

    def draw(self, context):
        self.layout.operator_menu_enum(HANGAR_OT_x4_hardpoint_add.bl_idname, "kind", text="X4 hardpoint")


def menu_add(self, context):
    self.layout.menu(VIEW3D_MT_hangar_add.bl_idname)


def menu_export(self, context):
    self.layout.operator(EXPORT_SCENE_OT_hangar_x4_ship.bl_idname, text="X4 ship, new (hangar)")


CLASSES = (HANGAR_OT_x4_hardpoint_add, EXPORT_SCENE_OT_hangar_x4_ship, VIEW3D_PT_hangar_x4_ship,
           VIEW3D_MT_hangar_add)


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
