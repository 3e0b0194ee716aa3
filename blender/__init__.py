"""hangar in Blender: File > Import / Export > "Game model (hangar)" for X4 / X Rebirth components (XML
with its _data folder and .ani), XMF, XAC and StarCraft II M3, on the hangar library (the `hangar` wheel).

Mesh data goes in and out with foreach_set / foreach_get on numpy arrays. What the game needs and Blender
does not show stays on the objects as custom properties (`hangar_extras`: the node's extras as JSON), with
the source path and a digest of each imported mesh: exported with no edit, the files come back byte for
byte (the library rewrites the original file); an edited mesh or a moved part is written from Blender.

One concern a file: common.py (shared properties, frames, digests), import_model.py, export_model.py,
animation.py, materials.py, ui.py (operators, panel, menus), newship.py (hardpoints and the new-ship
export); this file registers them.
"""
import bpy

from . import materials, newship, ui


def register():
    materials.register()
    for c in ui.CLASSES:
        bpy.utils.register_class(c)
    bpy.types.TOPBAR_MT_file_import.append(ui.menu_import)
    bpy.types.TOPBAR_MT_file_export.append(ui.menu_export)
    newship.register()


def unregister():
    newship.unregister()
    bpy.types.TOPBAR_MT_file_export.remove(ui.menu_export)
    bpy.types.TOPBAR_MT_file_import.remove(ui.menu_import)
    for c in reversed(ui.CLASSES):
        bpy.utils.unregister_class(c)
    materials.unregister()
