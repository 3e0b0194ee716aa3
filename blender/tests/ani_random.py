"""Random .ani states (ani_gen.py) on a real component, each trip through the exact path the acceptance
takes: `hangar convert X.xml X.glb`, Blender's glTF importer (defaults) into a scene of FPS frames a
second, Blender's glTF exporter (defaults), `hangar convert back.glb OUT.xml --original X.xml`; every
file compared byte for byte, the .ani description by description.
usage: BPY_PYTHON ani_random.py HANGAR COMPONENT.xml OUTDIR SEED TRIPS [STATES_A_TRIP] [FPS,FPS...]
Prints a line a generated state ('ok|fail FPS what [problem] trip folder'), a 'note' for a state of the
component's own .ani that changed, then 'N passed, M failed'; exits 1 on any failure."""
import os, random, struct, subprocess, sys

import bpy

import ani_gen
from checks import ani_states, changed_files

hangar, src, out, seed, trips = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
per = int(sys.argv[6]) if len(sys.argv) > 6 else 4
rates = [int(f) for f in sys.argv[7].split(",")] if len(sys.argv) > 7 else [24, 30, 25]


def run(*args):
    r = subprocess.run([hangar, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError((r.stderr.strip().splitlines() or ["hangar failed"])[-1][:200])


rng = random.Random(seed)
parts = ani_gen.component_parts(src)
base = ani_gen.parse(open(ani_gen.find_ani(os.path.dirname(src), src), "rb").read())[1]
base_states = sorted({ani_gen.names(d)[1] for d, _ in base})
passed = failed = 0
for trip in range(trips):
    fps = rates[trip % len(rates)]
    states, seen = [], set()
    while len(states) < per:
        part, state, d, keys, what = ani_gen.generate(rng, parts, base_states)
        if (part, state) not in seen:
            seen.add((part, state))
            states.append((part, state, d, keys, what))
    work = os.path.join(out, f"t{seed}-{trip}")
    x = ani_gen.install(src, os.path.join(work, "src"), [s[:4] for s in states])
    dst = os.path.join(work, "out", os.path.basename(x))
    problem = ""
    try:
        run("convert", x, os.path.join(work, "a.glb"))
        bpy.ops.wm.read_factory_settings(use_empty=True)
        bpy.context.scene.render.fps = fps
        bpy.ops.import_scene.gltf(filepath=os.path.join(work, "a.glb"))
        bpy.ops.export_scene.gltf(filepath=os.path.join(work, "d.glb"), export_format="GLB")
        run("convert", os.path.join(work, "d.glb"), dst, "--original", x)
    except Exception as e:
        problem = f"trip: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
    others = [] if problem else [f for f in changed_files(x, dst) if not f.endswith(".ani")]
    a = ani_states(ani_gen.find_ani(os.path.dirname(x), x))
    b = ani_states(ani_gen.find_ani(os.path.dirname(dst), dst)) if not problem else {}
    differ = {k for k in a if a[k] != b.get(k)} | {k for k in b if k not in a}
    mine = {(p.encode("latin-1"), s.encode("latin-1")) for p, s, *_ in states}
    for part, state, d, keys, what in states:
        k = (part.encode("latin-1"), state.encode("latin-1"))
        bad = problem or ("changed" if k in differ else "")
        if not bad and others:
            bad = f"other files: {', '.join(others[:3])}"
        if bad and k in differ and k in b:
            c0, c1 = struct.unpack_from("<5i", a[k], 128), struct.unpack_from("<5i", b[k], 128)
            bad += f" counts {list(c0)} -> {list(c1)}"
        print(f"{'fail' if bad else 'ok'}\t{fps}\t{what}\t{bad}\t{work}", flush=True)
        passed, failed = (passed, failed + 1) if bad else (passed + 1, failed)
    for k in sorted(differ - mine):
        print(f"note\t{fps}\tbase description {k[0].decode()} {k[1].decode()} changed too (trip {trip})", flush=True)
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
