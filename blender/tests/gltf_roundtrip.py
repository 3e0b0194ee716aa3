"""Blender's own glTF importer and exporter between hangar and the game (PyPI's bpy, no extension): what a
modder gets who uses File > Import / Export > glTF 2.0. For every component and XMF of the corpus: hangar's
GLB imported with defaults, exported with defaults (custom properties off, so the glTF loses hangar's extras)
and converted back with `--original`; the same for the small M3s and each actor with a motion of its name; a component also exported with custom properties on and converted back
without `--original`. Every file must come back byte for byte. Then three edits on a component, each changing
only what was edited: a part moved and turned (only its connection's offset lines), one mesh scaled (only its
XMF), one key of one action moved (only that state of the .ani).
Then four synthetic .ani states on the dropship (ani_variants.py: a door ending between frames inside a
longer state, a full-turn loop, a door snapped open by a step key, a gear hidden by a scale of 0), each
through scenes of 24 and 30 frames a second: the .ani comes back.
Prints one line a case and 'N passed, M failed'; exits 1 on any failure.
usage: BPY_PYTHON gltf_roundtrip.py HANGAR CORPUS OUTDIR [models|others]
(models: only the M3s and actors; others: all but them; CI runs the two side by side)"""
import filecmp, glob, math, os, subprocess, sys

import bpy

import ani_variants
import checks
from checks import ani_states, beyond_offset, changed_files, component_ani

hangar, corpus, out = sys.argv[1:4]
part = sys.argv[4] if len(sys.argv) > 4 else "all"


def run(*args):
    r = subprocess.run([hangar, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError((r.stderr.strip().splitlines() or ["hangar failed"])[-1][:200])


def blender_trip(src_glb, dst_glb, extras=False, edit=None, fps=None):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    if fps:
        bpy.context.scene.render.fps = fps
    bpy.ops.import_scene.gltf(filepath=src_glb)
    if edit:
        edit()
    kw = dict(filepath=dst_glb, export_format="GLB")
    if extras:
        kw["export_extras"] = True
    bpy.ops.export_scene.gltf(**kw)


def fcurves(action):
    if hasattr(action, "fcurves"):
        return list(action.fcurves)
    return [fc for layer in action.layers for strip in layer.strips for bag in strip.channelbags for fc in bag.fcurves]


def case(name, body):
    if part != "all" and (part == "models") != name.startswith(("m3 ", "xac ")):
        return
    checks.case(name, body)


components = sorted(glob.glob(os.path.join(corpus, "x4-components", "**", "*.xml"), recursive=True))
components = [c for c in components if os.path.basename(c).lower() != "manifest.tsv"]
for src in components:
    stem = os.path.splitext(os.path.basename(src))[0]
    work = os.path.join(out, "component", stem)
    os.makedirs(work, exist_ok=True)
    glb = os.path.join(work, "a.glb")

    def default(src=src, work=work, glb=glb):
        run("convert", src, glb)
        blender_trip(glb, os.path.join(work, "d.glb"))
        dst = os.path.join(work, "default", os.path.basename(src))
        run("convert", os.path.join(work, "d.glb"), dst, "--original", src)
        bad = changed_files(src, dst)
        return f"not byte for byte: {', '.join(bad[:3])}" if bad else ""

    def extras(src=src, work=work, glb=glb):
        blender_trip(glb, os.path.join(work, "e.glb"), extras=True)
        dst = os.path.join(work, "extras", os.path.basename(src))
        run("convert", os.path.join(work, "e.glb"), dst)
        bad = changed_files(src, dst)
        return f"not byte for byte: {', '.join(bad[:3])}" if bad else ""

    case(f"component {stem} (default export, --original)", default)
    case(f"component {stem} (custom properties)", extras)

for src in sorted(glob.glob(os.path.join(corpus, "x4", "*.xmf"))):
    stem = os.path.splitext(os.path.basename(src))[0]
    work = os.path.join(out, "xmf", stem)
    os.makedirs(work, exist_ok=True)

    def xmf(src=src, work=work):
        run("convert", src, os.path.join(work, "a.glb"))
        blender_trip(os.path.join(work, "a.glb"), os.path.join(work, "d.glb"))
        dst = os.path.join(work, os.path.basename(src))
        run("convert", os.path.join(work, "d.glb"), dst, "--original", src)
        return "" if filecmp.cmp(src, dst, shallow=False) else "not byte for byte"

    case(f"xmf {stem}", xmf)

# Every M3 and each Emotion FX actor with a motion of its name: Blender rebinds skins at the rest
# pose, renames repeated names and resamples every action, and still the original's bytes come back.
models = sorted(glob.glob(os.path.join(corpus, "m3", "*.m3")))
for src in sorted(glob.glob(os.path.join(corpus, "emfx", "*.xac"))):
    stem = os.path.splitext(src)[0]
    models += [(src, m) for m in sorted(glob.glob(stem + "_*.xsm"))[:1]]
for item in models:
    src, motion = item if isinstance(item, tuple) else (item, None)
    stem = os.path.splitext(os.path.basename(src))[0]
    work = os.path.join(out, "models", stem)
    os.makedirs(work, exist_ok=True)

    def model(src=src, motion=motion, work=work):
        run("convert", src, *(["--motion", motion] if motion else []), os.path.join(work, "a.glb"))
        blender_trip(os.path.join(work, "a.glb"), os.path.join(work, "d.glb"))
        dst = os.path.join(work, os.path.basename(src))
        run("convert", os.path.join(work, "d.glb"), dst, "--original", src)
        if motion:
            run("convert", os.path.join(work, "d.glb"), os.path.join(work, os.path.basename(motion)), "--original", motion)
        return "" if filecmp.cmp(src, dst, shallow=False) else "not byte for byte"

    case(f"{'m3' if src.endswith('.m3') else 'xac'} {stem}", model)

# Edits on the dropship, through the default export and --original.
ship = next((c for c in components if os.path.basename(c) == "arg_dropship.xml"), None)
work = os.path.join(out, "edits")
os.makedirs(work, exist_ok=True)
glb = os.path.join(work, "a.glb")


def edited(tag, edit):
    run("convert", ship, glb)
    blender_trip(glb, os.path.join(work, f"{tag}.glb"), edit=edit)
    dst = os.path.join(work, tag, os.path.basename(ship))
    run("convert", os.path.join(work, f"{tag}.glb"), dst, "--original", ship)
    return dst


def moved():
    def edit():
        o = bpy.data.objects["detail_m_main"]
        o.location.z += 1.0
        o.rotation_mode = "XYZ"
        o.rotation_euler.z += math.radians(10)
    dst = edited("moved", edit)
    problem = beyond_offset(ship, dst)
    if problem:
        return problem
    bad = [f for f in changed_files(ship, dst) if not f.endswith(".xml")]
    return f"other files changed: {', '.join(bad[:3])}" if bad else ""


def scaled():
    def edit():
        bpy.data.objects["detail_m_main-lod0"].data.transform(__import__("mathutils").Matrix.Scale(1.1, 4))
    bad = changed_files(ship, edited("scaled", edit))
    return "" if bad == ["arg_dropship_data/detail_m_main-lod0.xmf"] else f"changed: {', '.join(bad[:4]) or 'nothing'}"


def key_moved():
    moved_action = []

    def edit():
        for a in bpy.data.actions:
            for fc in fcurves(a):
                if fc.data_path.endswith("location") and len(fc.keyframe_points) >= 2:
                    k = fc.keyframe_points[len(fc.keyframe_points) // 2]
                    k.co.y += 0.25
                    k.handle_left.y += 0.25
                    k.handle_right.y += 0.25
                    fc.update()
                    moved_action.append(a.name)
                    return
    dst = edited("key", edit)
    if not moved_action:
        return "no action with location keys"
    bad = [f for f in changed_files(ship, dst) if not f.endswith(".ani")]
    if bad:
        return f"other files changed: {', '.join(bad[:3])}"
    a, b = ani_states(component_ani(ship)), ani_states(component_ani(dst))
    differ = [k for k in a if a[k] != b.get(k)] + [k for k in b if k not in a]
    return "" if len(differ) == 1 else f"{len(differ)} states changed, not 1 ({moved_action[0]})"


def other_rate(kind, fps):
    """A synthetic state (ani_variants.py) through a scene of `fps` frames a second: untouched, the .ani
    comes back byte for byte."""
    d = os.path.join(work, f"{kind}-{fps}")
    src = ani_variants.component(ship, os.path.basename(component_ani(ship)), kind, os.path.join(d, "src"))
    run("convert", src, os.path.join(d, "a.glb"))
    blender_trip(os.path.join(d, "a.glb"), os.path.join(d, "d.glb"), fps=fps)
    dst = os.path.join(d, "out", os.path.basename(src))
    run("convert", os.path.join(d, "d.glb"), dst, "--original", src)
    bad = changed_files(src, dst)
    return f"not byte for byte: {', '.join(bad[:3])}" if bad else ""


if ship:
    for kind in ani_variants.VARIANTS:
        for fps in (24, 30):
            case(f"ani {kind} at {fps} fps", lambda kind=kind, fps=fps: other_rate(kind, fps))
    case("edit: a part moved and turned", moved)
    case("edit: a mesh scaled", scaled)
    case("edit: a key moved", key_moved)
checks.finish()
