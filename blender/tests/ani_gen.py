"""Random .ani states for the round trip through Blender's own glTF importer and exporter (issue 50: the
kept-back files are hidden, so the failure classes are found by generation). A state is made by
FORMAT-NOTES.md's layout (16-byte header, 160-byte descriptions, 128-byte keys: value vec3, three i32
interpolations, time, 12 bezier floats, 5 TCB floats, 7 derivatives, u32 angle) with the degrees of freedom
the visible corpus barely shows: interpolation (1 step, 2 linear, 5 bezier with absolute handles, a last
key of another kind), position / rotation / scale alone or together, one to six keys, key times on 30 or 24
frames a second or anywhere (a first key after 0, a last key past or before the state's end), angles
about one or several axes up to two turns either way, whole turns (a `loop` of 360 or 720 degrees), a
state shared with another part or its own, a part nested under another animated part.
`generate(rng, parts, base_states)` gives one state; `install(...)` writes a copy of a component whose
.ani holds given states (added, or in place of the description of the same part and state)."""
import math, os, shutil, struct

from ani_variants import _parse as parse, _write as write

FPS_GRID = (30, 24)


def names(d):
    return d[:64].split(b"\0")[0].decode("latin-1"), d[64:128].split(b"\0")[0].decode("latin-1")


def key(value, time, interpolation, bezier=(0.0,) * 12):
    return struct.pack("<3f3if12f", *value, *interpolation, time, *bezier) + bytes(52)


def description(part, state, counts, duration):
    d = bytearray(160)
    d[:len(part)] = part.encode()
    d[64:64 + len(state)] = state.encode()
    struct.pack_into("<5if", d, 128, *counts, duration)
    return d


def _times(rng, n):
    grid = rng.choice(("30", "30", "24", "any"))
    start = rng.choice((0.0, 0.0, 0.0, 1 / 30, 2 / 30, 0.1, -1 / 3))
    t, out = start, []
    for _ in range(n):
        out.append(t)
        if grid == "any":
            t += rng.uniform(0.05, 1.5)
        else:
            f = FPS_GRID[0] if grid == "30" else FPS_GRID[1]
            t += rng.randint(1, 60) / f
    return [float(struct.unpack("<f", struct.pack("<f", x))[0]) for x in out], grid


def _values(rng, kind, n):
    if kind == "rotation":
        style = rng.choice(("door", "turn", "turn", "free", "multi"))
        if style == "door":
            axis = rng.randrange(3)
            a = math.radians(rng.choice((45, -45, 30, 90, 120, 170, -135)))
            vs = [[0.0, 0.0, 0.0] for _ in range(n)]
            for i in range(1, n):
                vs[i][axis] = a if i % 2 else 0.0
            return vs, f"door{axis}"
        if style == "turn":
            axis = rng.randrange(3)
            total = rng.choice((1, 1, -1, 2, -2, 0.5, 1.5)) * 2 * math.pi
            return [[total * i / max(n - 1, 1) if j == axis else 0.0 for j in range(3)] for i in range(n)], f"turn{axis}:{total / (2 * math.pi):g}"
        if style == "multi":
            return [[rng.uniform(-1, 1) * math.pi * i for _ in range(3)] for i in range(n)], "multi"
        return [[rng.uniform(-3.5, 3.5) for _ in range(3)] for _ in range(n)], "free"
    if kind == "position":
        return [[rng.uniform(-5, 5) for _ in range(3)] for _ in range(n)], "pos"
    if rng.random() < 0.3:
        # A part hidden by a scale of 0 on one axis or all three (game files hide lights so).
        axes = rng.choice(((0, 1, 2), (rng.randrange(3),)))
        return [[0.0 if i % 2 and j in axes else 1.0 for j in range(3)] for i in range(n)], f"scale0{len(axes)}"
    return [[rng.uniform(0.2, 2.0) for _ in range(3)] for _ in range(n)], "scale"


def _track(rng, kind):
    """Keys (bytes) of one track and a short description of it."""
    n = rng.choice((1, 2, 2, 2, 3, 4, 6))
    times, grid = _times(rng, n)
    values, vdesc = _values(rng, kind, n)
    interp = rng.choice(("linear", "linear", "linear", "step", "bezier", "mixed"))
    keys = []
    for i, (t, v) in enumerate(zip(times, values)):
        last = i == n - 1
        if interp == "linear":
            it = 1 if last and rng.random() < 0.8 else 2
        elif interp == "step":
            it = 1
        elif interp == "bezier":
            it = 1 if last and rng.random() < 0.5 else 5
        else:
            it = rng.choice((1, 2, 5))
        bez = [0.0] * 12
        if it == 5 or (interp == "bezier" and rng.random() < 0.5):
            # Absolute handles per axis: out time, out value (toward the next key), in time, in value.
            nt = times[i + 1] if not last else t + 1.0
            pt = times[i - 1] if i else t - 1.0
            for a in range(3):
                bez[4 * a:4 * a + 4] = [t + (nt - t) / 3, v[a] + rng.uniform(-0.3, 0.3), t - (t - pt) / 3, v[a] + rng.uniform(-0.3, 0.3)]
        keys.append(key(v, t, (it, it, it), bez))
    return keys, f"{kind}[{n} {interp} {grid} t0={times[0]:.3g} end={times[-1]:.4g} {vdesc}]", times[-1]


def _real(rng):
    """Keys shaped as game files have them: a loop of whole turns (two keys, or a key a quarter turn
    with the first after 0 and the last past the state's end), or a gear: held, then moving, on
    the 30 fps grid with a step key first and last."""
    axis, f = rng.randrange(3), 1 / 30
    if rng.random() < 0.6:
        turns = rng.choice((1, 1, -1, 2))
        if rng.random() < 0.5:
            end = rng.choice((1 / 30, 0.1, 1 / 6, 0.5, 1.7, 2.9, 30.0, 2000 / 3))
            keys = [([0.0] * 3, 0.0, 2), ([2 * math.pi * turns if j == axis else 0.0 for j in range(3)], end, 1)]
            return "rotation", keys, f"loop{axis}:{turns} 2 keys end={end:.4g}", end
        start = rng.choice((f, 2 * f))
        keys = [([math.pi / 2 * turns * i if j == axis else 0.0 for j in range(3)], start + 0.5 * i, 2 if i < 4 else 1) for i in range(5)]
        return "rotation", keys, f"loop{axis}:{turns} quarter keys t0={start:.3g}", 2.0
    a = math.radians(rng.choice((45, 70, -45, 140)))
    end = rng.choice((2.0, 0.8333, 2.9667, 2.9333, 0.1, 1.0))
    v = lambda x: [x if j == axis else 0.0 for j in range(3)]
    keys = [(v(0.0), 0.0, 1), (v(a / 2), f, 2), (v(a / 2), end - f, 2), (v(a), end, 1)]
    return "rotation", keys, f"gear{axis} end={end:.4g}", end


def generate(rng, parts, base_states):
    """One random state: (part, state name, description bytearray, key list, what it is)."""
    part = rng.choice(parts)
    if rng.random() < 0.3:
        kind, ks, what, dur = _real(rng)
        state = "loop" if what.startswith("loop") else rng.choice(("landinggears_activating", "landinggears_deactivating", "gen_gear"))
        keys = [key(v, float(struct.unpack("<f", struct.pack("<f", t))[0]), (i, i, i)) for v, t, i in ks]
        dur = float(struct.unpack("<f", struct.pack("<f", dur))[0])
        return part, state, description(part, state, [0, len(keys), 0, 0, 0], dur), keys, f"{part} {state} real {what}"
    state = rng.choice(base_states + ["loop", "gen_state", "landinggears_activating", "loop"])
    kinds = rng.choice((["rotation"], ["rotation"], ["rotation"], ["position"], ["scale"], ["position", "rotation"],
                        ["position", "rotation", "scale"], []))
    counts, keys, what, end = [0] * 5, [], [], 0.0
    for kind in kinds:
        k, w, last = _track(rng, kind)
        counts[("position", "rotation", "scale").index(kind)] = len(k)
        keys += k
        what.append(w)
        end = max(end, last)
    duration = rng.choice(("end", "end", "end", "longer", "shorter", "frame"))
    dur = {"end": end, "longer": end + rng.choice((0.5, 1 / 3, 1.234)), "shorter": max(end - 0.25, 1 / 30), "frame": 1 / 30}[duration]
    if end <= 0:
        dur = 1 / 30
    dur = float(struct.unpack("<f", struct.pack("<f", dur))[0])
    return part, state, description(part, state, counts, dur), keys, f"{part} {state} {' '.join(what) or 'no keys'} dur={duration}:{dur:.4g}"


def component_parts(xml):
    import xml.etree.ElementTree as ET
    root = ET.parse(xml).getroot()
    return sorted({p.get("name") for c in root.iter("connection") for p in c.iter("part") if p.get("name")})


def find_ani(folder, xml):
    stem = os.path.splitext(os.path.basename(xml))[0].lower()
    return next((os.path.join(folder, f) for f in os.listdir(folder) if f.lower() == stem + "_data.ani"), None)


def install(src_xml, out_dir, states):
    """A copy of the component's folder in `out_dir` whose .ani holds `states` [(part, state, desc, keys)]
    (replacing the description of the same part and state); the copy's XML path."""
    if os.path.exists(out_dir):
        shutil.rmtree(out_dir)
    shutil.copytree(os.path.dirname(src_xml), out_dir)
    for root, dirs, files in os.walk(out_dir):
        for f in dirs + files:
            os.chmod(os.path.join(root, f), 0o755 if f in dirs else 0o644)
    ani = find_ani(out_dir, src_xml)
    tail, descs = parse(open(ani, "rb").read())
    for part, state, d, keys in states:
        at = next((i for i, x in enumerate(descs) if names(x[0]) == (part, state)), None)
        if at is None:
            descs.append([d, keys])
        else:
            descs[at] = [d, keys]
    open(ani, "wb").write(write(tail, descs))
    return os.path.join(out_dir, os.path.basename(src_xml))
