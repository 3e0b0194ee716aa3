"""The Blender extension inside Blender (PyPI's bpy): installs the built zip, then for a file of each
kind in the corpus does File > Import and File > Export with no edit and checks that every file comes
back byte for byte (a component: its XML, every file of its data folder and its .ani); then moves and
turns one part of a component and checks that only offset lines of its XML change; and that an M3's
textures arrive decoded, packed and wired into its material.
Prints one line a case and 'N passed, M failed'; exits 1 on any failure.
usage: BPY_PYTHON roundtrip.py ZIP CORPUS OUTDIR"""
import difflib, filecmp, glob, math, os, sys

import bpy

zip_path, corpus, out = sys.argv[1:4]
bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default", enable_on_install=True)


def fresh():
    # An empty scene that keeps the installed extension (factory settings would drop it).
    bpy.ops.wm.read_homefile(use_empty=True)


def files_under(d):
    return sorted(os.path.relpath(p, d) for p in glob.glob(os.path.join(d, "**", "*"), recursive=True) if os.path.isfile(p))


def same_component(src_xml, dst_xml):
    """Differences between a component and its copy: the XML, the data folder, the .ani beside it."""
    bad = []
    if not filecmp.cmp(src_xml, dst_xml, shallow=False):
        bad.append(os.path.basename(src_xml))
    src_dir, dst_dir = os.path.dirname(src_xml), os.path.dirname(dst_xml)
    stem = os.path.splitext(os.path.basename(src_xml))[0].lower()
    for name in os.listdir(src_dir):
        low = name.lower()
        if low == stem + "_data" and os.path.isdir(os.path.join(src_dir, name)):
            for rel in files_under(os.path.join(src_dir, name)):
                theirs = os.path.join(dst_dir, name, rel)
                if not os.path.isfile(theirs) or not filecmp.cmp(os.path.join(src_dir, name, rel), theirs, shallow=False):
                    bad.append(f"{name}/{rel}")
        elif low == stem + "_data.ani":
            theirs = os.path.join(dst_dir, name)
            if not os.path.isfile(theirs) or not filecmp.cmp(os.path.join(src_dir, name), theirs, shallow=False):
                bad.append(name)
    return bad


def first(pattern):
    found = sorted(glob.glob(os.path.join(corpus, pattern)), key=os.path.getsize)
    return found[0] if found else None


dropship = first("x4-components/*/*/assets/units/size_m/arg_dropship.xml")
cases = [
    ("xmf", first("x4/*-lod0.xmf"), ()),
    ("m3", first("m3/*.m3"), ()),
    ("xac", os.path.join(corpus, "emfx/vic2vl__Zulu_Infantry.xac"), ()),
    ("component", dropship, ()),
]
passed = failed = 0
for name, src, motions in cases:
    dst_dir = os.path.join(out, name)
    os.makedirs(dst_dir, exist_ok=True)
    dst = os.path.join(dst_dir, os.path.basename(src))
    try:
        fresh()
        if "FINISHED" not in bpy.ops.import_scene.hangar(filepath=src):
            raise RuntimeError("import did not finish")
        if "FINISHED" not in bpy.ops.export_scene.hangar(filepath=dst):
            raise RuntimeError("export did not finish")
        bad = same_component(src, dst) if name == "component" else ([] if filecmp.cmp(src, dst, shallow=False) else [os.path.basename(src)])
        problem = f"not byte for byte: {', '.join(bad[:3])}" if bad else ""
    except Exception as e:  # a report in Blender; here a failed case
        problem = str(e).splitlines()[0] if str(e) else type(e).__name__
    print(f"{'fail' if problem else 'ok'}\t{name}\t{problem}", flush=True)
    passed, failed = (passed, failed + 1) if problem else (passed + 1, failed)

# A part moved and turned: only offset lines of the XML change, every data file stays as it was.
problem = ""
try:
    fresh()
    bpy.ops.import_scene.hangar(filepath=dropship)
    part = next(o for o in bpy.data.objects if o.parent is not None and o.type == "EMPTY" and "_" in o.name)
    part.location.z += 1.0
    part.rotation_mode = "XYZ"
    part.rotation_euler.z += math.radians(10)
    dst = os.path.join(out, "moved", os.path.basename(dropship))
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    bpy.ops.export_scene.hangar(filepath=dst)
    a = open(dropship, encoding="utf-8").read().splitlines()
    b = open(dst, encoding="utf-8").read().splitlines()
    changed = [l[1:] for l in difflib.unified_diff(a, b, lineterm="", n=0) if l[:1] in "+-" and l[:3] not in ("+++", "---")]
    offset = ("<position", "<quaternion", "<offset", "</offset")
    if not changed or any(not l.strip().startswith(offset) for l in changed):
        problem = f"XML changed beyond the offset ({len(changed)} lines)"
    bad = [f for f in same_component(dropship, dst) if not f.endswith(".xml")]
    if bad:
        problem = f"data files changed: {', '.join(bad[:3])}"
except Exception as e:
    problem = str(e).splitlines()[0] if str(e) else type(e).__name__
print(f"{'fail' if problem else 'ok'}\tmoved part\t{problem}", flush=True)
passed, failed = (passed, failed + 1) if problem else (passed + 1, failed)
# A key moved in one part's action: only that state of the .ani changes, with the keys the user set.
problem = ""
try:
    import struct

    def states(path):
        b = open(path, "rb").read()
        count = struct.unpack_from("<i", b, 0)[0]
        at, out = 16 + 160 * count, {}
        for i in range(count):
            d = b[16 + 160 * i:16 + 160 * (i + 1)]
            n = sum(struct.unpack_from("<5i", d, 128))
            out[(d[:64].split(b"\0")[0], d[64:128].split(b"\0")[0])] = (n, d + b[at:at + 128 * n])
            at += 128 * n
        return out

    fresh()
    bpy.ops.import_scene.hangar(filepath=dropship)
    ext = sys.modules[next(k for k in sys.modules if k.endswith(".hangar") and "user_default" in k)]
    act = next(a for a in bpy.data.actions if "hangar_node" in a and any(
        fc.data_path == "location" and len(fc.keyframe_points) >= 2 for fc in ext.action_fcurves(a)))
    fc = next(fc for fc in ext.action_fcurves(act) if fc.data_path == "location" and len(fc.keyframe_points) >= 2)
    k = fc.keyframe_points[len(fc.keyframe_points) // 2]
    k.co.y += 0.25
    fc.update()
    dst = os.path.join(out, "key", os.path.basename(dropship))
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    bpy.ops.export_scene.hangar(filepath=dst)
    bad = [f for f in same_component(dropship, dst) if not f.lower().endswith(".ani")]
    ani = lambda d: next(os.path.join(d, n) for n in os.listdir(d) if n.lower().endswith("_data.ani"))
    a, b = states(ani(os.path.dirname(dropship))), states(ani(os.path.dirname(dst)))
    differ = [k for k in a if a[k] != b.get(k)] + [k for k in b if k not in a]
    if bad:
        problem = f"other files changed: {', '.join(bad[:3])}"
    elif len(differ) != 1 or differ[0][1].decode() != act["hangar_clip"]:
        problem = f"states changed: {differ[:3]}, expected only {act['hangar_clip']}"
except Exception as e:
    problem = str(e).splitlines()[0] if str(e) else type(e).__name__
print(f"{'fail' if problem else 'ok'}\tkey moved\t{problem}", flush=True)
passed, failed = (passed, failed + 1) if problem else (passed + 1, failed)

# Textures decoded by hangar arrive as packed images wired into the material (an M3 of a mod, its
# DDS files beside it in the mod's Assets/Textures).
problem = ""
try:
    fresh()
    src = first("textures/ArtemKez__testMod/Base.SC2Data/Assets/Models/*.m3")
    bpy.ops.import_scene.hangar(filepath=src)
    found = sorted((n.image.name, tuple(n.image.size), n.image.packed_file is not None)
                   for m in bpy.data.materials if m.use_nodes for n in m.node_tree.nodes
                   if n.type == "TEX_IMAGE" and n.image)
    want = [("Capillary Tower dif.dds", (512, 512), True), ("Capillary Tower nrm.dds", (512, 512), True)]
    if found != want:
        problem = f"images {found}, expected {want}"
except Exception as e:
    problem = str(e).splitlines()[0] if str(e) else type(e).__name__
print(f"{'fail' if problem else 'ok'}\ttextures\t{problem}", flush=True)
passed, failed = (passed, failed + 1) if problem else (passed + 1, failed)
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
