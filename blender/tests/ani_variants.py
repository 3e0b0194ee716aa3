"""Synthetic .ani states for the round trips at other frame rates, made from a real component's .ani by
FORMAT-NOTES.md's layout (16-byte header, 160-byte descriptions, 128-byte keys): the cases issue 50 keeps
back, built on the corpus dropship since the visible corpus has none of them.
- door: a part turning 45 degrees about Y by 0.7 s (frame 16.8 at 24 a second, 21 at 30) of a 2-second
  state the other parts fill: Blender samples the door over the whole clip.
- loop: the `loop` state turning a part a full 360 degrees about Z in 2.9 s (frame 69.6 at 24).
- snap: a door held shut, snapped to 45 degrees at 0.5 s by a step key and turned on to 90 by 1.2 s: the
  step's hold just before 0.5 s must stay apart from the key after it (Blender's importer merges keys less
  than a hundredth of a frame apart; random states of ani_random.py found it).
- hide: a landing gear shrunk to a scale of 0 by 1 s (a matrix of scale 0 holds no rotation: Blender's
  exporter lost the gear's rotation in this state and in its others).
Each keeps the file's other states as they are."""
import math, os, shutil, struct


def _parse(data):
    count, key_offset = struct.unpack_from("<2i", data, 0)
    descs, at = [], key_offset
    for i in range(count):
        d = bytearray(data[16 + 160 * i:16 + 160 * (i + 1)])
        n = sum(struct.unpack_from("<5i", d, 128))
        descs.append([d, [data[at + 128 * j:at + 128 * (j + 1)] for j in range(n)]])
        at += 128 * n
    return data[8:16], descs


def _write(tail, descs):
    out = struct.pack("<2i", len(descs), 16 + 160 * len(descs)) + tail
    out += b"".join(bytes(d) for d, _ in descs)
    return out + b"".join(k for _, keys in descs for k in keys)


def _key(value, time, interpolation):
    return struct.pack("<3f3if", *value, *[interpolation] * 3, time) + bytes(100)


def _rotation(descs, part, state, keys, duration, track=1):
    """`part`'s description in `state` (found by names) with only these keys (value, time[,
    interpolation]; by default linear, the last a step) of one track (1 rotation, 2 scale)."""
    for d in descs:
        if d[0][:64].split(b"\0")[0] == part.encode() and d[0][64:128].split(b"\0")[0] == state.encode():
            struct.pack_into("<5if", d[0], 128, *[len(keys) if i == track else 0 for i in range(5)], duration)
            d[1] = [_key(k[0], k[1], k[2] if len(k) > 2 else 1 if i == len(keys) - 1 else 2) for i, k in enumerate(keys)]
            return
    raise KeyError(f"{part} {state}")


VARIANTS = {
    "door": ("detail_m_landinggear_front_01", "landinggears_activating",
             [((0, 0, 0), 0.0), ((0, math.radians(45), 0), 0.7)], 2.0),
    "loop": ("anim_poslights", "loop", [((0, 0, 0), 0.0), ((0, 0, 2 * math.pi), 2.9)], 2.9),
    "snap": ("detail_m_landinggear_front_01", "landinggears_activating",
             [((0, 0, 0), 0.0, 1), ((0, math.radians(45), 0), 0.5, 2), ((0, math.radians(90), 0), 1.2, 1)], 2.0),
    "hide": ("detail_m_landinggear_front_01", "landinggears_activating", [((1, 1, 1), 0.0), ((0, 0, 0), 1.0)], 1.0, 2),
}


def component(src_xml, ani_name, kind, out_dir):
    """A copy of the component's folder in `out_dir` whose .ani has the `kind` state; its XML's path."""
    if os.path.exists(out_dir):
        shutil.rmtree(out_dir)
    shutil.copytree(os.path.dirname(src_xml), out_dir)
    ani = os.path.join(out_dir, ani_name)
    os.chmod(ani, 0o644)
    tail, descs = _parse(open(ani, "rb").read())
    _rotation(descs, *VARIANTS[kind])
    open(ani, "wb").write(_write(tail, descs))
    return os.path.join(out_dir, os.path.basename(src_xml))
