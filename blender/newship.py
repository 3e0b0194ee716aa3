"""New X4 content made in Blender: Add > hangar > X4 hardpoint (an empty drawn as an arrow along the
direction the game mounts what it holds, with its `tags`; with a template known, the connections its
macro fills, by name), the hardpoint's properties in the hangar sidebar tab, and File > Export >
"X4 component, new (hangar)" (any template class: turret, weapon, dock, station module, ship...) and
"X4 ship, new (hangar)" (a ship template required), which hand the objects to the library's
`hangar.new_component` / `hangar.new_ship` as the authoring convention reads them:

- a mesh object is a part named after it (its mesh, modifiers applied, is lod0); mesh children named
  `<part>-lod1..3` / `<part>-collision` give those meshes;
- an empty with a `tags` custom property is a connection named after it; its other string custom
  properties (`group`, `value`, ...) are the connection's attributes; an empty without tags only
  groups what it holds;
- the hierarchy gives parents and offsets;
- each action an object plays (its active one and its NLA strips') is the state named after the action
  (a `.001` Blender adds dropped, so the actions of one state on several objects are one state), a key
  a keyframe (animation.object_channels);
- a light (point, spot, sun, area) is a light where it stands, its string custom properties the game's
  attributes (`light` = omni|spotlight|arealight|box, `lighteffect`, `trigger`...); `range` and
  `intensity` custom properties set those (else the light's custom distance, and its power / 1000 W).

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

from .animation import object_actions, object_channels
from .common import EXTRAS, SidebarPanel, hangar_lib, trs_from_blender, without_suffix
from . import materials as materials_
from .export_model import mesh_from_blender

TAGS = "tags"
TEMPLATE = "hangar_template"  # on the scene: the template the last export used (the Add menu offers its connections)
GAME = "hangar_game"  # on the scene: the game folder it was found in

KINDS = ("weapon", "turret", "shield", "engine", "cockpit", "storage", "dockarea", "dockingbay", "countermeasures")
SIZES = ("small", "medium", "large", "extralarge")

# The game's tags of a slot of each kind (as vanilla ships write them); cockpits, storage, docks and
# countermeasures take no size.
TAG_FORMS = {
    "weapon": "weapon {size} standard",
    "turret": "turret {size} standard",
    "shield": "{size} shield",
    "engine": "engine {size}",
    "cockpit": "cockpit",
    "storage": "storage",
    "dockarea": "dockarea",
    "dockingbay": "dockingbay",
    "countermeasures": "countermeasures",
}

# The names ship macros give the connections they fill (a name the template's macro does not fill is
# only a place in the component): con_cockpit, con_storage01, con_dockarea_01, con_shipstorage_01.
NAME_FORMS = {"cockpit": "con_cockpit", "storage": "con_storage{n:02d}", "dockarea": "con_dockarea_{n:02d}",
              "dockingbay": "con_shipstorage_{n:02d}"}

# An arrow empty's +Z (its arrow) is the connection's +Z (the mount direction), which hangar shows
# along Blender's -Y: the connection's frame is the empty's turned by -90 degrees about X.
ARROW_TO_MOUNT = Matrix.Rotation(-math.pi / 2, 4, "X")
# A light shines down its object's -Z; glTF's down its node's -Z, Blender's +Y under the node: the
# same quarter turn (hangar's import shows a spot as a child turned back by it).
LIGHT_AIM = ARROW_TO_MOUNT


def hardpoint_tags(kind, size):
    return TAG_FORMS[kind].format(size=size)


def is_arrow(ob):
    return ob.type == "EMPTY" and ob.empty_display_type == "SINGLE_ARROW"


def free_name(kind):
    """The kind's first name no object has: con_<kind>_NN, or as ship macros name it (NAME_FORMS)."""
    form = NAME_FORMS.get(kind, f"con_{kind}_{{n:02d}}")
    if "{n:" not in form:  # con_cockpit, then con_cockpit_02
        if form not in bpy.data.objects:
            return form
        form += "_{n:02d}"
    n = 1
    while form.format(n=n) in bpy.data.objects:
        n += 1
    return form.format(n=n)


# The kind of a connection a macro fills, by the start of the macro it puts there.
MACRO_KINDS = (("cockpit", "cockpit"), ("storage", "storage"), ("shipstorage", "dockingbay"), ("dockarea", "dockarea"),
               ("dock", "dockingbay"), ("weapon", "weapon"), ("turret", "turret"), ("shield", "shield"),
               ("engine", "engine"))

_template_cache = {}


def template_connections(context):
    """(name, kind) of each connection the scene's template macro fills (`<connections><connection
    ref>` of its macro file, the kind by the macro it holds), in the macro's order: [] when no template
    file is known or it does not read."""
    import xml.etree.ElementTree as ET

    path = bpy.path.abspath(context.scene.get(TEMPLATE, "") or "")
    if not path or not os.path.isfile(path):
        return []
    key = (path, os.path.getmtime(path))
    if key not in _template_cache:
        found = []
        try:
            macro = ET.parse(path).getroot().find("macro")
            for c in macro.iterfind("connections/connection") if macro is not None else ():
                inner = (c.find("macro").get("ref", "") if c.find("macro") is not None else "").lower()
                kind = next((k for start, k in MACRO_KINDS if inner.startswith(start)), None)
                if c.get("ref") and kind is not None:
                    found.append((c.get("ref"), kind))
        except (OSError, ET.ParseError):
            pass
        _template_cache[key] = found
    return _template_cache[key]


class HANGAR_OT_x4_hardpoint_add(bpy.types.Operator):
    """Add an X4 hardpoint: an empty drawn as an arrow along the direction the game mounts the weapon,
    turret, shield, engine, cockpit, storage or dock (forward: Blender's -Y), with the slot's tags"""
    bl_idname = "hangar.x4_hardpoint_add"
    bl_label = "X4 hardpoint"
    bl_options = {"REGISTER", "UNDO"}
    kind: EnumProperty(name="Kind", items=[(k, k.capitalize(), f"a {k} slot") for k in KINDS], default="weapon")
    size: EnumProperty(name="Size", items=[(s, s.capitalize(), f"{s} equipment") for s in SIZES], default="medium")
    connection: StringProperty(name="Name", description="The connection's name (a template macro's connection "
                               "ref: con_cockpit, con_storage01...); empty: the kind's next free name")
    tags: StringProperty(name="Tags", description="The connection's tags; empty: the kind's")

    def execute(self, context):
        ob = bpy.data.objects.new(self.connection or free_name(self.kind), None)
        ob.empty_display_type = "SINGLE_ARROW"
        ob.empty_display_size = 2.0
        ob.location = context.scene.cursor.location
        ob.rotation_euler = (math.pi / 2, 0.0, 0.0)
        ob[TAGS] = self.tags or hardpoint_tags(self.kind, self.size)
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


def own_frame(ob):
    """What turns the object's matrix into its node's frame: an arrow empty's so its arrow is +Z, a
    light's so it shines down glTF's -Z."""
    return ARROW_TO_MOUNT if is_arrow(ob) else LIGHT_AIM if ob.type == "LIGHT" else Matrix.Identity(4)


def frame(ob):
    """The object's world frame as its node's."""
    return ob.matrix_world @ own_frame(ob)


def light_of(hangar, ob, extras):
    """The object's light as glTF's (an area light a point with `light` = arealight and its size as
    areax/areay unless set); `extras` (the node's) get those. `range` and `intensity` custom properties
    (the object's, else the light's) win over the light's custom distance and power (1000 W, a new
    point light's, is the game's 1)."""
    L = ob.data
    props = {**{k: v for k, v in L.items()}, **{k: v for k, v in ob.items()}}

    def number(key):
        try:
            return float(props[key]) if key in props else None
        except (TypeError, ValueError):
            return None

    kind = {"SPOT": "spot", "SUN": "directional"}.get(L.type, "point")
    rng = number("range")
    if rng is None and getattr(L, "use_custom_distance", False):
        rng = L.cutoff_distance
    intensity = number("intensity")
    light = hangar.Light(name=L.name, kind=kind, color=tuple(L.color), range=rng,
                         intensity=intensity if intensity is not None else L.energy / 1000.0)
    if L.type == "SPOT":
        light.outer = L.spot_size / 2
        light.inner = light.outer * (1.0 - L.spot_blend)
    if L.type == "AREA":
        x, y = (L.size, L.size_y) if L.shape in ("RECTANGLE", "ELLIPSE") else (L.size, L.size)
        extras.setdefault("light", "arealight")
        extras.setdefault("areax", f"{x:g}")
        extras.setdefault("areay", f"{y:g}")
    for k in ("range", "intensity"):
        extras.pop(k, None)
    return light


def component_scene(hangar, context, output):
    """The neutral scene (glTF's frame) of the scene's meshes, empties and lights and the actions they
    play, as hangar.new_component reads it. Returns it and notes for the user (actions not exported)."""
    obs = in_parent_order([o for o in context.scene.objects if o.type in ("MESH", "EMPTY", "LIGHT")])
    kept = {o.name for o in obs}
    index = {o.name: k for k, o in enumerate(obs)}
    deps = context.evaluated_depsgraph_get()
    sc = hangar.Scene(name=context.scene.name)
    mat_index = {}
    fps = context.scene.render.fps / context.scene.render.fps_base
    states = {}  # the state's name: its channels, in the order the scene first plays them
    notes = []
    for o in obs:
        p = kept_parent(o, kept)
        local = frame(p).inverted_safe() @ frame(o) if p is not None else frame(o)
        loc, q, s = local.decompose()
        t, r, sc_ = trs_from_blender(tuple(loc), tuple(q), tuple(s))
        extras = {k: o[k] for k in attributes(o)}
        if o.type == "LIGHT":
            extras = {**{k: v for k, v in o.data.items() if isinstance(v, str) and not k.startswith("hangar_")},
                      **extras}
        node = hangar.Node(name=o.name, parent=index[p.name] if p is not None else None, translation=t,
                           rotation=r, scale=sc_, extras=extras)
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
        elif o.type == "LIGHT":
            node.light = len(sc.lights)
            sc.lights.append(light_of(hangar, o, node.extras))
        # The node's frame is before @ basis @ after: basis the object's keyed location, rotation, scale.
        before = frame(p).inverted_safe() if p is not None else Matrix.Identity(4)
        if o.parent is not None:
            before = before @ o.parent.matrix_world @ o.matrix_parent_inverse
        for act in object_actions(o):
            states.setdefault(without_suffix(act.name), []).extend(
                object_channels(hangar, o, act, len(sc.nodes), before, own_frame(o), fps))
        sc.nodes.append(node)
    for o in context.scene.objects:
        if o.name not in kept:
            notes += [f"action {a.name!r} on {o.name!r} ({o.type.lower()}): not exported, only meshes, "
                      "empties and lights are" for a in object_actions(o)]
    sc.animations = [hangar.Animation(name=name, channels=chans) for name, chans in states.items() if chans]
    return sc, notes


def valid_id(text):
    return re.fullmatch(r"[A-Za-z0-9_]+", text or "") is not None


class NewContent:
    """What both exports share: the dialog's fields and the call (new_ship / new_component)."""
    directory: StringProperty(name="Extension folder", subtype="DIR_PATH",
                              description="The extension folder to write; its name is the extension's id")
    filter_folder: BoolProperty(default=True, options={"HIDDEN"})
    template: StringProperty(name="Template", description="The macro to clone (its class is the new content's): "
                             "a macro file (…/macros/…_macro.xml), or a macro name found in the game folder")
    game: StringProperty(name="Game folder", subtype="DIR_PATH",
                         description="Where a template named by name is found: the game (with its catalogs and "
                                     "extensions) or an extension folder")
    description: StringProperty(name="Description", description="The description in the game")
    lods: IntProperty(name="LODs", description="LODs made below lod0 where the scene gives none", default=2,
                      min=0, max=3)
    pack: BoolProperty(name="Pack", description="Everything but content.xml in ext_01.cat/.dat")
    force: BoolProperty(name="Write into a folder that is not empty", default=False)

    FIELDS = ()  # the subclass's id and name fields

    def invoke(self, context, event):
        # The template of the last export (the one the Add menu offers the connections of).
        self.template = self.template or context.scene.get(TEMPLATE, "")
        self.game = self.game or context.scene.get(GAME, "")
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    def draw(self, context):
        col = self.layout.column()
        for p in ("template", "game", *self.FIELDS, "description", "lods", "pack", "force"):
            col.prop(self, p)

    def export(self, context, new, content_id, content_name):
        """Hands the scene to `new` (hangar.new_ship or hangar.new_component); reports its warnings."""
        if not self.directory or not self.template:
            self.report({"ERROR"}, "name the extension folder to write and the template macro")
            return {"CANCELLED"}
        if not valid_id(content_id):
            self.report({"ERROR"}, f"{content_id!r} is not an id the game takes (letters, digits and _)")
            return {"CANCELLED"}
        hangar = hangar_lib()
        out = os.path.normpath(os.path.abspath(bpy.path.abspath(self.directory)))
        wm = context.window_manager
        t = time.perf_counter()
        wm.progress_begin(0, 100)
        warnings = []
        try:
            scene, notes = component_scene(hangar, context, out)
            game = os.path.abspath(bpy.path.abspath(self.game)) if self.game else None
            template = self.template
            if os.path.isfile(bpy.path.abspath(template)):
                template = os.path.abspath(bpy.path.abspath(template))
            context.scene[TEMPLATE] = template
            context.scene[GAME] = game or ""

            def progress(done, total):
                wm.progress_update(int(100 * done / max(total, 1)))

            # Images of materials made in Blender: the library names the new materials and writes them.
            used = {s.material for o in context.scene.objects if o.type == "MESH"
                    for s in o.material_slots if s.material is not None}
            images = materials_.new_images(hangar, sorted(used, key=lambda m: m.name), None)
            written = new(scene, out, template, content_id, content_name or None,
                          description=self.description or None, lods=self.lods, game=game, pack=self.pack,
                          force=self.force, progress=progress, images=images, warnings=warnings)
        except Exception as e:  # hangar.Error and Blender's own
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        finally:
            wm.progress_end()
        for w in notes + warnings:
            self.report({"WARNING"}, w)
        self.report({"INFO"}, f"wrote {out}: {len(written)} files in {time.perf_counter() - t:.2f} s"
                              + (f", {len(notes) + len(warnings)} warnings" if notes or warnings else ""))
        return {"FINISHED"}


class EXPORT_SCENE_OT_hangar_x4_component(NewContent, bpy.types.Operator):
    """Write the scene's meshes (parts), hardpoint empties, lights and actions (states) as new X4 content
    of the template's class (turret, weapon, dock, station module, ship...): a whole extension the game
    loads as it is (component, LODs, collision meshes, .ani, macro and ware cloned from the template,
    index entries, texts, content.xml)"""
    bl_idname = "export_scene.hangar_x4_component"
    bl_label = "Export X4 component (hangar)"
    component_id: StringProperty(name="Id", description="The new component's name (letters, digits, _); the "
                                 "macro is ID_macro, the ware ID", default="my_component_01")
    component_name: StringProperty(name="Name", description="Its name in the game (default: the id)")
    FIELDS = ("component_id", "component_name")

    def execute(self, context):
        return self.export(context, hangar_lib().new_component, self.component_id, self.component_name)


class EXPORT_SCENE_OT_hangar_x4_ship(NewContent, bpy.types.Operator):
    """Write the scene as a new X4 ship (export_scene.hangar_x4_component with a ship template required)"""
    bl_idname = "export_scene.hangar_x4_ship"
    bl_label = "Export X4 ship (hangar)"
    ship_id: StringProperty(name="Id", description="The new component's name (letters, digits, _); the macro is "
                            "ID_macro, the ware ID", default="ship_my_m_01")
    ship_name: StringProperty(name="Name", description="The ship's name in the game (default: the id)")
    FIELDS = ("ship_id", "ship_name")

    def execute(self, context):
        return self.export(context, hangar_lib().new_ship, self.ship_id, self.ship_name)


class VIEW3D_MT_hangar_add(bpy.types.Menu):
    bl_idname = "VIEW3D_MT_hangar_add"
    bl_label = "hangar"

    def draw(self, context):
        layout = self.layout
        layout.operator_menu_enum(HANGAR_OT_x4_hardpoint_add.bl_idname, "kind", text="X4 hardpoint")
        # The template's connections the scene does not place yet, by the names its macro fills.
        todo = [(n, k) for n, k in template_connections(context) if n not in bpy.data.objects]
        if todo:
            layout.separator()
            layout.label(text="Template connections")
            for name, kind in todo:
                op = layout.operator(HANGAR_OT_x4_hardpoint_add.bl_idname, text=f"{name} ({kind})")
                op.kind, op.connection = kind, name


def menu_add(self, context):
    self.layout.menu(VIEW3D_MT_hangar_add.bl_idname)


def menu_export(self, context):
    self.layout.operator(EXPORT_SCENE_OT_hangar_x4_component.bl_idname, text="X4 component, new (hangar)")
    self.layout.operator(EXPORT_SCENE_OT_hangar_x4_ship.bl_idname, text="X4 ship, new (hangar)")


CLASSES = (HANGAR_OT_x4_hardpoint_add, HANGAR_OT_x4_tags_add, VIEW3D_PT_hangar_hardpoint,
           EXPORT_SCENE_OT_hangar_x4_component, EXPORT_SCENE_OT_hangar_x4_ship, VIEW3D_MT_hangar_add)


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
