"""Blender import and export speed against Blender's own glTF importer and exporter, in one process.

Run by a Python with `bpy` (PyPI's bpy 4.2 LTS or 5.0):
    BPY bench/blender_speed.py target/blender/hangar.zip target/release/hangar MODEL...
MODELs: a component XML (the dropship) or any model file (the largest M3). Not a test: it prints figures.

Import: File > Import of each MODEL by the extension, against Blender's glTF importer on hangar's GLB
of it (`hangar convert`), the two alternated, best of ROUNDS (env, default 5) after one warm-up each.
Export, for each component: File > Export (export_scene.hangar) of the untouched import, then of the
same scene with one vertex of its largest visible mesh moved (that part's XMF rewritten), each against
Blender's glTF exporter (export_scene.gltf, GLB) on the same scene, alternated likewise.
Prints one line a measurement: what, hangar's seconds, glTF's seconds, and glTF / hangar (goal: import
>= 5, export >= 1)."""
import os
import subprocess
import sys
import tempfile
import time

import bpy

ROUNDS = int(os.environ.get("ROUNDS", "5"))


def reset():
    bpy.ops.wm.read_homefile(use_empty=True)  # keeps the installed extension


def timed(op, **kw):
    t = time.perf_counter()
    r = op(**kw)
    t = time.perf_counter() - t
    if "FINISHED" not in r:
        raise RuntimeError(f"{op} returned {r}")
    return t


def race(a, b):
    """Best seconds of `a` and of `b`, alternated, after one warm-up each (caches, first calls)."""
    a()
    b()
    ta, tb = [], []
    for _ in range(ROUNDS):
        ta.append(a())
        tb.append(b())
    return min(ta), min(tb)


def line(what, h, g):
    print(f"{what}: hangar {h:.3f} s, glTF {g:.3f} s, glTF/hangar {g / h:.2f}x", flush=True)


def import_hangar(path):
    reset()
    return timed(bpy.ops.import_scene.hangar, filepath=path)


def import_gltf(glb):
    reset()
    return timed(bpy.ops.import_scene.gltf, filepath=glb)


def largest_visible_mesh():
    meshes = [o for o in bpy.context.scene.objects if o.type == "MESH" and o.visible_get()]
    return max(meshes, key=lambda o: len(o.data.vertices))


def export_race(what, out, name):
    def hangar_export():
        d = tempfile.mkdtemp(dir=out)
        return timed(bpy.ops.export_scene.hangar, filepath=os.path.join(d, name))

    def gltf_export():
        return timed(bpy.ops.export_scene.gltf, filepath=os.path.join(out, "scene.glb"), export_format="GLB")

    h, g = race(hangar_export, gltf_export)
    line(what, h, g)


def main():
    zip_path, cli, models = sys.argv[1], sys.argv[2], sys.argv[3:]
    bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default", enable_on_install=True)
    print(f"bpy {bpy.app.version_string}, {ROUNDS} rounds, load average {os.getloadavg()[0]:.1f}", flush=True)
    out = tempfile.mkdtemp(prefix="hangar-blender-speed-")
    for m in models:
        name = os.path.basename(m)
        glb = os.path.join(out, name + ".glb")
        subprocess.run([cli, "convert", m, glb], check=True, capture_output=True)
        h, g = race(lambda: import_hangar(m), lambda: import_gltf(glb))
        line(f"import {name}", h, g)
        if not name.lower().endswith(".xml"):
            continue
        import_hangar(m)
        export_race(f"export {name} untouched", out, name)
        ob = largest_visible_mesh()
        ob.data.vertices[0].co.z += 0.01
        export_race(f"export {name}, {ob.name} edited", out, name)


main()
