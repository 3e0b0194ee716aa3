"""New X4 content that moves and shines, from Blender primitives (PyPI's bpy): installs the built zip, makes a
body (a 10 m cube) with a door part on it whose action `door_opening` turns it 90 degrees about Blender's Z
over 1 s (two linear keys, 30 fps), a point light on the door and a spot light on the component, exports
with bpy.ops.export_scene.hangar_x4_component (the dropships mod's template) and reads the component back
with hangar: the state's `<animation>` frames, the door at 45 degrees at 0.5 s and 90 at 1 s about the
game's up axis, each light's element, colour (0-255), range, cone and place; then the Add menu's template
connections (the names the template's macro fills) and a hardpoint added by one of them, written where
it stands. Prints one line a case and 'N passed, M failed'; exits 1 on any failure.
usage: BPY_PYTHON newcomponent.py ZIP CORPUS OUTDIR"""
import glob, math, os, shutil, sys
import xml.etree.ElementTree as ET

import bpy
import numpy as np

import checks

zip_path, corpus, out = sys.argv[1:4]
bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default", enable_on_install=True)
import hangar  # the wheel the extension brought

newship = next(m for n, m in sys.modules.items() if n.endswith(".hangar.newship"))
animation = next(m for n, m in sys.modules.items() if n.endswith(".hangar.animation"))
template = next(iter(sorted(glob.glob(os.path.join(
    corpus, "x4-mods/xirsoi__dropships__dropships/assets/units/size_m/macros/ship_*_macro.xml")))), None)
ID = "ship_door_m_01"


def scene():
    """Body, door (its child, 6 m in front: Blender -Y) turning, a lamp on the door, a spot above the body."""
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.context.scene.render.fps = 30
    bpy.ops.mesh.primitive_cube_add(size=10.0)
    body = bpy.context.active_object
    body.name = "body"
    bpy.ops.mesh.primitive_cube_add(size=2.0, location=(0, -6, 0))
    door = bpy.context.active_object
    door.name = "door"
    door.parent = body
    door.rotation_euler = (0, 0, 0)
    door.keyframe_insert("rotation_euler", frame=1)
    door.rotation_euler = (0, 0, math.pi / 2)
    door.keyframe_insert("rotation_euler", frame=31)
    door.animation_data.action.name = "door_opening"
    for fc in animation.object_fcurves(door.animation_data.action, door):
        for k in fc.keyframe_points:
            k.interpolation = "LINEAR"
    door.rotation_euler = (0, 0, 0)
    bpy.context.scene.frame_set(1)
    lamp = bpy.data.objects.new("door_lamp", bpy.data.lights.new("door_lamp", "POINT"))
    lamp.data.color = (1.0, 0.5, 0.0)
    lamp["range"] = 4.0
    lamp["lighteffect"] = "1"
    lamp.location = (1, -1, 2)  # in the door's frame (its parent, unturned)
    lamp.parent = door
    beam = bpy.data.objects.new("beam", bpy.data.lights.new("beam", "SPOT"))
    beam.data.color = (0.0, 0.0, 1.0)
    beam.data.spot_size = math.radians(60)
    beam.data.energy = 2000.0  # 2 in the game
    beam.location = (0, 0, 8)  # shining down its -Z: Blender's -Z, the game's -Y
    for ob in (lamp, beam):
        bpy.context.scene.collection.objects.link(ob)
    bpy.context.view_layer.update()


def export(folder, **kw):
    return bpy.ops.export_scene.hangar_x4_component(directory=folder, template=template, component_id=ID,
                                                    component_name="Door Test", lods=0, **kw)


def exported(case):
    """The scene exported into OUTDIR/CASE/door_ext (made anew); raises when the export does not finish."""
    scene()
    folder = os.path.join(out, case, "door_ext")
    shutil.rmtree(os.path.dirname(folder), ignore_errors=True)
    if "FINISHED" not in export(folder):
        raise RuntimeError("export did not finish")
    return folder


def angle_at(ch, t):
    """The channel's rotation at time t (keys slerped): its angle in degrees and axis (glTF's frame)."""
    times, q = np.asarray(ch.times, np.float64), np.asarray(ch.values, np.float64)
    k = min(max(int(np.searchsorted(times, t, side="right")) - 1, 0), len(times) - 2)
    a, b = q[k], q[k + 1]
    f = (t - times[k]) / (times[k + 1] - times[k])
    if np.dot(a, b) < 0:
        b = -b
    w = math.acos(min(1.0, abs(float(np.dot(a, b)))))
    r = a if w < 1e-9 else (math.sin((1 - f) * w) * a + math.sin(f * w) * b) / math.sin(w)
    r /= np.linalg.norm(r)
    angle = math.degrees(2 * math.acos(min(1.0, abs(r[3]))))
    axis = r[:3] / (np.linalg.norm(r[:3]) or 1.0) * np.sign(r[3] or 1.0)
    return angle, axis


def moving_and_shining():
    folder = exported("door")
    comp_path = os.path.join(folder, f"assets/units/size_m/{ID}.xml")
    ani = os.path.join(folder, f"assets/units/size_m/{ID}_data.ani")
    if not os.path.isfile(comp_path) or not os.path.isfile(ani):
        return f"no component or .ani: {sorted(os.listdir(folder))}"
    comp = ET.parse(comp_path).getroot().find("component")
    anims = [(a.get("name"), a.get("start"), a.get("end")) for a in comp.iter("animation")]
    if ("door_opening", "0", "30") not in anims:
        return f"<animation>s {anims}"
    back = hangar.open(comp_path)
    door = next(i for i, n in enumerate(back.nodes) if n.name == "door")
    state = next((a for a in back.animations if a.name == "door_opening"), None)
    if state is None:
        return f"read back: states {[a.name for a in back.animations]}"
    rot = [c for c in state.channels if c.node == door and c.property == "rotation"]
    if len(rot) != 1 or [c.node for c in state.channels if c.node != door]:
        return f"channels {[(back.nodes[c.node].name, c.property) for c in state.channels]}"
    for t, want in ((0.0, 0.0), (0.5, 45.0), (1.0, 90.0)):
        angle, axis = angle_at(rot[0], t)
        # Blender's +Z is glTF's +Y (the game's up).
        if abs(angle - want) > 0.1 or (want and np.abs(axis - [0, 1, 0]).max() > 1e-3):
            return f"door at {t} s: {angle:.3f} degrees about {axis.round(4).tolist()}, want {want} about +Y"
    # The lights: elements, colours 0-255, range, cone, places (the game's axes: Blender (x, y, z) is (-x, z, -y)).
    lamp = comp.find(".//part[@name='door']/lights/omni")
    if lamp is None:
        return "no omni on the door part"
    p = [float(lamp.find("offset/position").get(k)) for k in "xyz"]
    got = (lamp.get("name"), lamp.get("r"), lamp.get("g"), lamp.get("b"), lamp.get("range"), lamp.get("lighteffect"))
    if got != ("door_lamp", "255", "128", "0", "4", "1") or np.abs(np.array(p) - [-1, 2, 1]).max() > 1e-4:
        return f"door_lamp {got} at {p}"
    beam = [e for e in comp.iter("spot") if e.get("name") == "beam"]
    if len(beam) != 1:
        return f"spots {[e.attrib for e in comp.iter('spot')]}"
    b = beam[0]
    p = [float(b.find("offset/position").get(k)) for k in "xyz"]
    got = (b.get("r"), b.get("g"), b.get("b"), b.get("intensity"), round(float(b.get("angle")), 3))
    if got != ("0", "0", "255", "2", 60.0) or np.abs(np.array(p) - [0, 8, 0]).max() > 1e-4:
        return f"beam {got} at {p}"
    lights = {l.name: (l.kind, tuple(round(c, 3) for c in l.color)) for l in back.lights}
    if lights.get("door_lamp") != ("point", (1.0, 0.502, 0.0)) or lights.get("beam") != ("spot", (0.0, 0.0, 1.0)):
        return f"read back lights {lights}"
    # The spot shines down (the game's -Y): its node's -Z.
    node = next(n for n in back.nodes if n.light is not None and back.lights[n.light].name == "beam")
    x, y, z, w = node.rotation
    down = np.array([-(2 * (x * z + w * y)), -(2 * (y * z - w * x)), -(1 - 2 * (x * x + y * y))])
    if np.abs(down - [0, -1, 0]).max() > 1e-4:
        return f"beam shines along {down.round(4).tolist()}"
    return ""


def template_hardpoints():
    """After an export, Add > hangar offers the template macro's connections; one added stands where placed."""
    folder = exported("menu")
    offered = newship.template_connections(bpy.context)
    want = [("con_cockpit", "cockpit"), ("con_dockarea_arg_s_ship_01", "dockarea"), ("con_dock_xs", "dockingbay"),
            ("con_shipstorage_s_01", "dockingbay"), ("con_shipstorage_xs_01", "dockingbay"),
            ("con_storage01", "storage")]
    if offered != want:
        return f"offered {offered}"
    bpy.context.scene.cursor.location = (0, 2, 4)
    if "FINISHED" not in bpy.ops.hangar.x4_hardpoint_add(kind="cockpit", connection="con_cockpit"):
        return "x4_hardpoint_add did not finish"
    e = bpy.context.active_object
    if (e.name, e["tags"]) != ("con_cockpit", "cockpit"):
        return f"added {e.name} {e['tags']!r}"
    shutil.rmtree(folder)
    if "FINISHED" not in export(folder):
        return "second export did not finish"
    comp = ET.parse(os.path.join(folder, f"assets/units/size_m/{ID}.xml")).getroot()
    c = [x for x in comp.iter("connection") if x.get("name") == "con_cockpit"]
    p = [float(c[0].find("offset/position").get(k)) for k in "xyz"] if c else None
    if not c or c[0].get("tags").split() != ["cockpit"] or np.abs(np.array(p) - [0, 4, -2]).max() > 1e-4:
        return f"con_cockpit: {[x.attrib for x in c]} at {p}"
    return ""


if template is None:
    print("skipped: no dropships mod in the corpus")
    sys.exit(0)
checks.case("new component moving and shining", moving_and_shining)
checks.case("new component template hardpoints", template_hardpoints)
checks.finish()
