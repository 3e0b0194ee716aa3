"""Blender import and export speed against Blender's own glTF importer and exporter, in one process.

    python3 bench/blender_speed.py [ZIP CLI MODEL...]
run by a Python without `bpy`, runs itself in each Blender of BLENDERS (env: Pythons with PyPI's bpy,
`:`-separated; default ~/.cache/hangar-ci/bpy-5.0.1 and bpy-4.2.20, as .ci/blender installs them).
ZIP and CLI default to target/blender/hangar.zip and target/release/hangar (`./blender/build`,
`cargo build --release -p hangar-cli`); MODELs to the corpus' (HANGAR_CORPUS, default ../shared/corpus)
dropship and largest M3. Not a test: it prints figures.

Import: File > Import of each MODEL by the extension, against Blender's glTF importer on hangar's GLB
of it (`hangar convert`), the two alternated, best of ROUNDS (env, default 5) after one warm-up each.
Export, for each MODEL: File > Export (export_scene.hangar) of the untouched import, then of the same
scene with one vertex of its largest visible mesh moved (that part rewritten), each against Blender's
glTF exporter (export_scene.gltf, GLB) on the same scene, alternated likewise (EXPORT_ROUNDS, default 3).
Prints one line a measurement: hangar's and glTF's best seconds of the process' CPU (what a busy
machine moves least) and of the clock, and glTF / hangar of each (goal: import >= 5, export >= 1)."""
import glob
import importlib.util
import os
import subprocess
import sys
import tempfile
import time

ROUNDS = int(os.environ.get("ROUNDS", "5"))
EXPORT_ROUNDS = int(os.environ.get("EXPORT_ROUNDS", "3"))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def defaults(args):
    """ZIP, CLI and MODELs from the command line, else the built ones and the corpus' two models."""
    if args:
        return args[0], args[1], args[2:]
    corpus = os.environ.get("HANGAR_CORPUS", os.path.join(ROOT, "..", "shared", "corpus"))
    dropship = glob.glob(os.path.join(corpus, "x4-components", "**", "arg_dropship.xml"), recursive=True)
    m3s = glob.glob(os.path.join(corpus, "m3", "*.m3"))
    models = dropship[:1] + ([max(m3s, key=os.path.getsize)] if m3s else [])
    return os.path.join(ROOT, "target/blender/hangar.zip"), os.path.join(ROOT, "target/release/hangar"), models


def in_each_blender():
    """This script again in each Blender's Python (no `bpy` here)."""
    cache = os.path.expanduser("~/.cache/hangar-ci")
    pythons = os.environ.get("BLENDERS", f"{cache}/bpy-5.0.1:{cache}/bpy-4.2.20").split(":")
    zip_path, cli, models = defaults(sys.argv[1:])
    rc = 0
    for p in pythons:
        py = os.path.join(p, "bin", "python")
        if not os.path.exists(py):
            print(f"{p}: no Python with bpy there (.ci/blender installs it)", flush=True)
            rc = 1
            continue
        r = subprocess.run([py, os.path.abspath(__file__), zip_path, cli, *models], capture_output=True, text=True)
        # Blender's own messages (the importers' and exporters' progress) left out.
        print("".join(x + "\n" for x in r.stdout.splitlines() if x.startswith(("bpy ", "import ", "export "))), end="",
              flush=True)
        if r.returncode:
            print(r.stderr[-2000:], flush=True)
            rc = 1
    return rc


def timed(op, **kw):
    """CPU and clock seconds of one operator call."""
    c, t = time.process_time(), time.perf_counter()
    r = op(**kw)
    c, t = time.process_time() - c, time.perf_counter() - t
    if "FINISHED" not in r:
        raise RuntimeError(f"{op} returned {r}")
    return c, t


def race(a, b, rounds):
    """Best (CPU, clock) seconds of `a` and of `b`, alternated, after one warm-up each."""
    a()
    b()
    ta, tb = [], []
    for _ in range(rounds):
        ta.append(a())
        tb.append(b())
    return (min(x[0] for x in ta), min(x[1] for x in ta)), (min(x[0] for x in tb), min(x[1] for x in tb))


def line(what, h, g):
    print(f"{what}: CPU hangar {h[0]:.3f} s, glTF {g[0]:.3f} s, glTF/hangar {g[0] / h[0]:.2f}x; "
          f"clock {h[1]:.3f} s, {g[1]:.3f} s, {g[1] / h[1]:.2f}x", flush=True)


def main():
    import bpy

    def reset():
        bpy.ops.wm.read_homefile(use_empty=True)  # keeps the installed extension

    def import_hangar(path):
        reset()
        return timed(bpy.ops.import_scene.hangar, filepath=path)

    def import_gltf(glb):
        reset()
        return timed(bpy.ops.import_scene.gltf, filepath=glb)

    def export_race(what, out, name):
        def hangar_export():
            d = tempfile.mkdtemp(dir=out)
            return timed(bpy.ops.export_scene.hangar, filepath=os.path.join(d, name))

        def gltf_export():
            return timed(bpy.ops.export_scene.gltf, filepath=os.path.join(out, "scene.glb"), export_format="GLB")

        h, g = race(hangar_export, gltf_export, EXPORT_ROUNDS)
        line(what, h, g)

    zip_path, cli, models = sys.argv[1], sys.argv[2], sys.argv[3:]
    bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default", enable_on_install=True)
    print(f"bpy {bpy.app.version_string}, {ROUNDS} rounds, load average {os.getloadavg()[0]:.1f}", flush=True)
    out = tempfile.mkdtemp(prefix="hangar-blender-speed-")
    for m in models:
        name = os.path.basename(m)
        glb = os.path.join(out, name + ".glb")
        subprocess.run([cli, "convert", m, glb], check=True, capture_output=True)
        h, g = race(lambda: import_hangar(m), lambda: import_gltf(glb), ROUNDS)
        line(f"import {name}", h, g)
        import_hangar(m)
        export_race(f"export {name} untouched", out, name)
        meshes = [o for o in bpy.context.scene.objects if o.type == "MESH" and o.visible_get()]
        ob = max(meshes, key=lambda o: len(o.data.vertices))
        ob.data.vertices[0].co.z += 0.01
        export_race(f"export {name}, {ob.name} edited", out, name)


if __name__ == "__main__":
    if importlib.util.find_spec("bpy") is None:
        sys.exit(in_each_blender())
    main()
