"""The operators, the panel and the menu entries: thin; the work is in import_model.py and
export_model.py, hangar's warnings and errors go to Blender's reports."""
import json
import os
import time

import bpy
from bpy.props import BoolProperty, CollectionProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper

from . import materials as materials_
from .common import (DIGEST, EXTRAS, EXTS, FULL_NAME, KIND, MOTIONS, SOURCE, SidebarPanel, hangar_lib, mesh_changed,
                     source_collection)
from .export_model import export_file
from .import_model import import_file


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
# Files that hold a game's files: an X4 catalog, a StarCraft II map or mod saved as an MPQ archive.
GAME_FILES = (".cat", ".sc2map", ".sc2mod", ".sc2components", ".mpq")


def game_folder(game):
    """The dialog's game folder or archive as an absolute path ("" when none is named)."""
    return os.path.abspath(bpy.path.abspath(game)) if game else ""


def game_models(game):
    game = game_folder(game)
    if game not in _models:
        _models[game] = hangar_lib().models(game) if os.path.isdir(game) or game.lower().endswith(GAME_FILES) else []
    return _models[game]


def named_models(game, typed):
    """The X4 components of a game or extension folder the game shows by a name holding the typed
    words (`hangar find`, its index kept between calls), as (path, "name (component id)")."""
    game = game_folder(game)
    if len(typed.strip()) < 2 or not os.path.isdir(game):
        return []
    try:
        found = hangar_lib().find(typed, game=game, kind="component")
    except Exception:  # no game, extension or catalog there (yet): nothing to offer
        return []
    return [(f["file"], f"{f['name']} (component {f['id']})") for f in found if f["name"]]


def search_models(self, context, edit_text):
    """The picker: the models the game shows by a name holding what was typed ("Cerberus"), then
    up to 300 whose path holds it."""
    named = named_models(self.game, edit_text)
    try:
        found = game_models(self.game)
    except Exception:  # not a game folder (yet): nothing to offer
        return named
    q = edit_text.lower()
    by_path = [m for m in found if q in m.lower() and not m.lower().endswith(MOTIONS)][:300]
    shown = {p for p, _ in named}
    return named + [m for m in by_path if m not in shown]


class GameImport:
    """What the two game imports share: a dialog naming where the game's files are (`game`) and the
    model's path in them (`path`). A plain mixin: Blender does not allow one registered operator class
    to be the base of another (the base's Python class is lost, and its import brings nothing)."""
    bl_options = {"REGISTER", "UNDO"}

    def invoke(self, context, event):
        return context.window_manager.invoke_props_dialog(self, width=700)

    def execute(self, context):
        if not self.game or not self.path:
            self.report({"ERROR"}, "name the game folder and pick a model in it")
            return {"CANCELLED"}
        return run_import(self, context, f"{game_folder(self.game)}::{self.path}", [])


class IMPORT_SCENE_OT_hangar_game(GameImport, bpy.types.Operator):
    """Import a model straight from a game or mod folder's catalogs with hangar (only the catalogs'
    indexes are read, then the model's entries)"""
    bl_idname = "import_scene.hangar_game"
    bl_label = "Import game model from catalogs (hangar)"
    game: StringProperty(name="Game folder", subtype="DIR_PATH",
                         description="The game or mod folder with its .cat/.dat catalogs (or one .cat file)")
    path: StringProperty(name="Model", search=search_models,
                         description="The model: type its in-game name (Cerberus) or part of its path to pick "
                         "from the game")


class IMPORT_SCENE_OT_hangar_archive(GameImport, bpy.types.Operator):
    """Import a model straight from a StarCraft II map or mod saved as one archive (.SC2Map, .SC2Mod)
    with hangar (only the archive's tables are read, then the model and its textures)"""
    bl_idname = "import_scene.hangar_archive"
    bl_label = "Import game model from an archive (hangar)"
    game: StringProperty(name="Archive", subtype="FILE_PATH",
                         description="The .SC2Map or .SC2Mod file (an MPQ archive)")
    path: StringProperty(name="Model", search=search_models,
                         description="The model's path in the archive: type part of it to pick")


class EXPORT_SCENE_OT_hangar(bpy.types.Operator, ExportHelper):
    """Export the imported model (the active collection) as a game file; the extension picks the type"""
    bl_idname = "export_scene.hangar"
    bl_label = "Export game model (hangar)"
    filename_ext = ".xml"
    check_extension = None  # the type comes from the name given
    filter_glob: StringProperty(default="*" + ";*".join(EXTS.split(";")), options={"HIDDEN"})
    as_patch: BoolProperty(
        name="Write changes as a patch",
        description="A component read from the game's catalogs and exported into an extension (a folder "
        "with content.xml) is written as an X4 <diff> patch of the game's XML, so the game's own "
        "updates and other mods still apply; its meshes and .ani are written as files",
        default=True,
    )

    def invoke(self, context, event):
        coll = source_collection(context)
        if coll is not None and not self.filepath:
            src = coll[SOURCE].split("::")[-1]
            self.filepath = os.path.join(os.path.dirname(bpy.data.filepath) or os.path.expanduser("~"),
                                         os.path.basename(src))
        return ExportHelper.invoke(self, context, event)

    def execute(self, context):
        try:
            warnings = export_file(context, self.filepath, self.as_patch)
        except Exception as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        for w in warnings[:20]:
            self.report({"WARNING"}, w)
        self.report({"INFO"}, f"wrote {self.filepath}")
        return {"FINISHED"}


class VIEW3D_PT_hangar(SidebarPanel, bpy.types.Panel):
    """What the game needs of the active object that Blender does not show"""
    bl_label = "hangar"

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
    self.layout.operator(IMPORT_SCENE_OT_hangar_archive.bl_idname, text="Game model from an archive (hangar)")


def menu_export(self, context):
    self.layout.operator(EXPORT_SCENE_OT_hangar.bl_idname, text="Game model (hangar)")


CLASSES = (IMPORT_SCENE_OT_hangar, IMPORT_SCENE_OT_hangar_game, IMPORT_SCENE_OT_hangar_archive, EXPORT_SCENE_OT_hangar,
           VIEW3D_PT_hangar)
