"""Clips in and out: one action per clip and animated object, keys set and read with foreach_set /
foreach_get, through action slots where Blender has them (4.4 on) and the action's own F-curves in 4.2."""
from typing import NamedTuple

import bpy
import numpy as np

from .common import NODE, trs_from_blender, trs_to_blender


INTERP = {"STEP": 0, "LINEAR": 1}  # the enum indices of Keyframe.interpolation (CONSTANT, LINEAR)


def qmul(a, b):
    """Quaternion products, w x y z rows."""
    aw, ax, ay, az = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bw, bx, by, bz = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return np.stack([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw], -1)


def qrot(q, v):
    """Vectors v turned by the unit quaternion q (w x y z)."""
    u = q[..., 1:]
    t = 2.0 * np.cross(u, v)
    return v + q[..., :1] * t + np.cross(u, t)


def under_rest(t, q):
    """What takes a joint's keys (translation rows, rotation rows) to keys relative to its rest
    (t, q): rest's offset and the matrices (row vectors on the left) that turn by q's inverse, made
    once a joint from qrot and qmul applied to the unit rows."""
    q_inv = q * np.array([1.0, -1.0, -1.0, -1.0])
    return t, qrot(np.broadcast_to(q_inv, (3, 4)), np.eye(3)), qmul(np.broadcast_to(q_inv, (4, 4)), np.eye(4))


# glTF's frame to Blender's: the columns each key's value takes, and their signs.
TO_BLENDER = {"translation": ((0, 2, 1), (1.0, -1.0, 1.0)), "rotation": ((3, 0, 2, 1), (1.0, 1.0, -1.0, 1.0)),
              "scale": ((0, 2, 1), (1.0, 1.0, 1.0))}


def clip_keys(channels, joints, fps):
    """Each channel's key frames and values in Blender's frame (a joint's relative to its rest, from
    `joints`: its under_rest or None), worked out for a clip's channels at once, a property and kind at
    a time: a channel at a time, numpy's calls were a fifth of the largest M3's import."""
    if not channels:
        return [], []
    lens = [len(c.times) for c in channels]
    frames = np.split(np.concatenate([c.times for c in channels]).astype(np.float64) * fps, np.cumsum(lens)[:-1])
    values = [None] * len(channels)
    kinds = {}
    for i, (c, j) in enumerate(zip(channels, joints)):
        kinds.setdefault((c.property, j is not None), []).append(i)
    for (prop, joint), at in kinds.items():
        cols, signs = TO_BLENDER[prop]
        n = [lens[i] for i in at]
        v = np.concatenate([channels[i].values for i in at]).astype(np.float64)[:, cols] * signs
        if joint and prop == "translation":
            t = np.repeat(np.array([joints[i][0] for i in at]), n, axis=0)
            v = np.einsum("ni,nij->nj", v - t, np.repeat(np.array([joints[i][1] for i in at]), n, axis=0))
        elif joint and prop == "rotation":
            v = np.einsum("ni,nij->nj", v, np.repeat(np.array([joints[i][2] for i in at]), n, axis=0))
        for i, part in zip(at, np.split(v, np.cumsum(n)[:-1])):
            values[i] = part
    return frames, values


def fcurves_for(action, target, id_type="OBJECT"):
    """Where `action`'s F-curves for `target` (an object, or shape keys with `id_type` KEY) are made:
    the channel bag of the action's slot for it (Blender 4.4 on, the only way in 5.0), else the
    action's own list (4.2). Returns the list, the slot (or None) and the name of `new`'s group
    argument. Looked up once an action and target: finding the slot and bag again for each curve was
    two thirds of 5.0's curve making."""
    if hasattr(action, "slots") and hasattr(action, "layers"):
        slots = [x for x in action.slots if x.name_display == target.name]
        slot = slots[0] if slots else action.slots.new(id_type=id_type, name=target.name)
        if not action.layers:
            action.layers.new("Layer").strips.new(type="KEYFRAME")
        return action.layers[0].strips[0].channelbag(slot, ensure=True).fcurves, slot, "group_name"
    return action.fcurves, None, "action_group"


class Curves(NamedTuple):
    """One channel's F-curves to make, a curve a component of `values`."""
    fcurves: object  # the F-curve list (fcurves_for)
    group_arg: str  # the name of its `new`'s group argument
    path: str
    group: str
    frames: np.ndarray
    values: np.ndarray  # keys x components
    interpolation: str


def add_curves(channels):
    """F-curves for channels (each a Curves): a curve a component. The (frame, value) pairs of all of them
    are laid out in one buffer, curve after curve, and a curve's slice goes in with foreach_set; the
    interpolation as bytes, the type Blender keeps it in (its fast copy; int32 went key by key). Made
    a channel at a time, the pairs were a fifth of the largest M3's import."""
    if not channels:
        return
    lens = np.array([len(c.frames) for c in channels])
    widths = np.array([c.values.shape[1] for c in channels])
    frames = np.concatenate([c.frames for c in channels])
    values = np.concatenate([c.values.T.ravel() for c in channels])  # curve after curve
    starts = np.cumsum(lens) - lens  # each channel's first key in `frames`
    curve_lens = np.repeat(lens, widths)
    curve_starts = np.cumsum(curve_lens) - curve_lens
    # Each key's frame: its curve's channel's frames, taken again for each component.
    frame_of = np.arange(len(values)) - np.repeat(curve_starts - np.repeat(starts, widths), curve_lens)
    co = np.empty((len(values), 2), np.float32)
    co[:, 0] = frames[frame_of]
    co[:, 1] = values
    co = co.ravel()
    interp = np.repeat(np.array([INTERP.get(c.interpolation, 1) for c in channels], np.uint8), lens * widths)
    # update() sorts the keys and sets their Bezier handles, which linear and constant keys do not
    # use: called only for keys out of order (it was a fifth of the largest M3's import, 5,382 curves).
    rising = np.ones(len(frames), bool)
    rising[1:] = frames[1:] > frames[:-1]
    rising[starts] = True
    ordered = np.logical_and.reduceat(rising, starts)
    at = 0  # the next curve's first key in `co` (pairs) and `interp`
    for c, n, ok in zip(channels, lens.tolist(), ordered.tolist()):
        kw = {c.group_arg: c.group}
        for k in range(c.values.shape[1]):
            fc = c.fcurves.new(c.path, index=k, **kw)
            keys = fc.keyframe_points
            keys.add(n)
            keys.foreach_set("co", co[2 * at:2 * (at + n)])
            keys.foreach_set("interpolation", interp[at:at + n])
            if not ok:
                fc.update()
            at += n


def shape_key_action(clip, c, frames, ob):
    """A morph weights channel as an action on the object's shape keys (one F-curve a target, on
    `key_blocks["NAME"].value`), played by them. Returns the actions made (0 or 1)."""
    keys = getattr(getattr(ob, "data", None), "shape_keys", None)
    if keys is None:
        return 0
    blocks = keys.key_blocks[1:]  # after the basis, in the targets' order
    v = np.asarray(c.values, np.float32).reshape(len(frames), -1)
    act = bpy.data.actions.new(f"{clip} {ob.name} shapes")
    act.use_fake_user = True
    act["hangar_clip"] = clip
    fcurves, slot, group_arg = fcurves_for(act, keys, "KEY")
    add_curves([Curves(fcurves, group_arg, f'key_blocks["{block.name}"].value', ob.name, frames, v[:, k:k + 1],
                       c.interpolation) for k, block in enumerate(blocks[: v.shape[1]])])
    ad = keys.animation_data or keys.animation_data_create()
    if ad.action is None:
        ad.action = act
        if slot is not None and hasattr(ad, "action_slot"):
            ad.action_slot = slot
    return 1


def import_animations(scene, objs, bones, fps):
    """Actions for the scene's clips: object channels on the part objects, joint channels on the pose
    bones (relative to the joint's rest). Returns the number of actions made."""
    made = 0
    rest = {}  # a joint's under_rest, made at its first channel
    first = {}
    for a in scene.animations:
        actions = {}
        chans = []  # (channel, F-curve list, its group argument, data path, group, joint's under_rest or None)
        for c in a.channels:
            if len(c.times) == 0:
                continue
            if c.property == "weights":
                frames = np.asarray(c.times, np.float64) * fps
                made += shape_key_action(a.name, c, frames, objs[c.node] if c.node < len(objs) else None)
                continue
            if len(c.values) != len(c.times):
                continue  # cubic splines carry tangents: not read here
            joint = None
            if c.node in bones:
                arm, bone, _ = bones[c.node]
                target, base, group = arm, f'pose.bones["{bone}"].', bone
                if c.node not in rest:
                    n = scene.nodes[c.node]
                    t, q, _ = trs_to_blender(n.translation, n.rotation, n.scale)
                    rest[c.node] = under_rest(np.array(t, np.float64), np.array(q, np.float64))
                joint = rest[c.node]
            elif objs[c.node] is not None:
                target, base, group = objs[c.node], "", objs[c.node].name
            else:
                continue
            key = target.name
            if key not in actions:
                act = bpy.data.actions.new(f"{a.name}" if target.type == "ARMATURE" else f"{a.name} {target.name}")
                act.use_fake_user = True
                act["hangar_clip"] = a.name
                if target.type != "ARMATURE":
                    act["hangar_node"] = target.get(NODE, c.node)  # exported back as this node's channels
                actions[key] = (act, *fcurves_for(act, target))
                made += 1
            act, fcurves, slot, group_arg = actions[key]
            path = base + {"translation": "location", "rotation": "rotation_quaternion", "scale": "scale"}[c.property]
            chans.append((c, fcurves, group_arg, path, group, joint))
            if target.name not in first:
                first[target.name] = (target, act, slot)
        frames, values = clip_keys([x[0] for x in chans], [x[5] for x in chans], fps)
        add_curves([Curves(fcurves, group_arg, path, group, f, v, c.interpolation)
                    for (c, fcurves, group_arg, path, group, _), f, v in zip(chans, frames, values)])
    # A skeleton plays its first clip; a component's parts keep their rest (their offsets) on
    # show, the clips wait as actions (a part playing a clip would be exported where the clip has it).
    for target, act, slot in first.values():
        if target.type != "ARMATURE":
            continue
        ad = target.animation_data or target.animation_data_create()
        ad.action = act
        if slot is not None and hasattr(ad, "action_slot"):
            ad.action_slot = slot
    return made


def action_fcurves(action):
    """Every F-curve of an action: its slots' channel bags (Blender 4.4 on), else its own list."""
    if hasattr(action, "layers") and action.layers:
        return [fc for layer in action.layers for strip in layer.strips for bag in strip.channelbags
                for fc in bag.fcurves]
    return list(getattr(action, "fcurves", []))


def keys_of(fc):
    n = len(fc.keyframe_points)
    co = np.empty(n * 2, np.float32)
    fc.keyframe_points.foreach_get("co", co)
    interp = np.empty(n, np.int32)
    fc.keyframe_points.foreach_get("interpolation", interp)
    return co[0::2], co[1::2], interp


def property_keys(fcs, width, rest, frames=None):
    """One property's keys from its F-curves (`fcs`, by component index): the frames (the union of the
    curves' keyframes, unless `frames` are given), each component's value there (a curve's own key
    values where its keys are those frames, evaluated otherwise, `rest` where no curve moves it) and
    the set of the keys' interpolations (Keyframe.interpolation's enum indices: 0 constant, 1 linear)."""
    keys = {i: keys_of(fc) for i, fc in fcs.items()}
    if frames is None:
        frames = np.unique(np.concatenate([k[0] for k in keys.values()]))
    v = np.empty((len(frames), width), np.float64)
    interps = set()
    for i in range(width):
        if i not in keys:
            v[:, i] = rest[i]
            continue
        f, val, interp = keys[i]
        interps.update(interp.tolist())
        v[:, i] = val if len(f) == len(frames) and np.array_equal(f, frames) else [fcs[i].evaluate(x) for x in frames]
    return frames, v, interps


def curves_by_path(fcurves):
    """F-curves by data path, then component index."""
    by_path = {}
    for fc in fcurves:
        by_path.setdefault(fc.data_path, {})[fc.array_index] = fc
    return by_path


def animations_from_blender(hangar, node_at, fps):
    """The clips of the actions hangar made for parts (`hangar_clip`, `hangar_node`), with the keys the
    user has (a key a keyframe, not a key a frame), in glTF's frame."""
    clips = {}
    for act in bpy.data.actions:
        node = node_at.get(act.get("hangar_node", -1))
        if "hangar_clip" not in act or node is None:
            continue
        by_path = curves_by_path(action_fcurves(act))
        for path, prop, width, rest in (("location", "translation", 3, (0.0, 0.0, 0.0)),
                                         ("rotation_quaternion", "rotation", 4, (1.0, 0.0, 0.0, 0.0)),
                                         ("scale", "scale", 3, (1.0, 1.0, 1.0))):
            fcs = by_path.get(path)
            if not fcs:
                continue
            frames, v, interps = property_keys(fcs, width, rest)
            if prop == "translation":
                v = np.stack([v[:, 0], v[:, 2], -v[:, 1]], -1)
            elif prop == "rotation":
                v = np.stack([v[:, 1], v[:, 3], -v[:, 2], v[:, 0]], -1)
            else:
                v = np.stack([v[:, 0], v[:, 2], v[:, 1]], -1)
            clips.setdefault(act["hangar_clip"], []).append(hangar.Channel(
                node=node, property=prop, times=(frames / fps).astype(np.float32),
                values=v.astype(np.float32), interpolation="STEP" if interps == {0} else "LINEAR"))
    return [hangar.Animation(name=name, channels=chans) for name, chans in clips.items()]


def object_actions(ob):
    """The actions an object plays: its active one, then its NLA strips'."""
    ad = ob.animation_data
    if ad is None:
        return []
    found = [ad.action] if ad.action is not None else []
    for track in ad.nla_tracks:
        for strip in track.strips:
            if strip.action is not None and strip.action not in found:
                found.append(strip.action)
    return found


def object_fcurves(action, ob):
    """The F-curves of `action` that move `ob`: its slot's (Blender 4.4 on: the slot named after the
    object, else the one the object plays, else the first), else the action's own list."""
    if hasattr(action, "slots") and hasattr(action, "layers"):
        ad = ob.animation_data
        slots = [s for s in action.slots if s.name_display == ob.name]
        playing = getattr(ad, "action_slot", None) if ad is not None and ad.action == action else None
        slot = slots[0] if slots else playing if playing is not None else (action.slots[0] if len(action.slots) else None)
        if slot is None:
            return []
        return [fc for layer in action.layers for strip in layer.strips
                for bag in strip.channelbags if bag.slot == slot for fc in bag.fcurves]
    return list(getattr(action, "fcurves", []))


ROTATION_PATHS = {"QUATERNION": ("rotation_quaternion", 4), "AXIS_ANGLE": ("rotation_axis_angle", 4)}
SAMPLE_FPS = 30.0  # a curve the game cannot hold (bezier...) is keyed this often


def object_channels(hangar, ob, action, node, before, after, fps):
    """The channels (glTF's frame) of `action` on `ob`, whose node frame is `before @ basis @ after`
    (`basis`: the object's location, rotation and scale, as keyed): a key each keyframe (STEP where all
    of a property's keys are constant, LINEAR else); a property with other keys (bezier...) keyed every
    30th of a second. Times in seconds from the action's first frame."""
    from mathutils import Euler, Matrix, Quaternion, Vector

    rot_path, rot_width = ROTATION_PATHS.get(ob.rotation_mode, ("rotation_euler", 3))
    rests = {"location": tuple(ob.location), rot_path: tuple(getattr(ob, rot_path)), "scale": tuple(ob.scale)}
    widths = {"location": 3, rot_path: rot_width, "scale": 3}
    by_path = curves_by_path(object_fcurves(action, ob))
    start = float(action.frame_range[0])
    chans = []
    for path, prop in (("location", "translation"), (rot_path, "rotation"), ("scale", "scale")):
        fcs = by_path.get(path)
        if not fcs:
            continue
        frames, _, interps = property_keys(fcs, widths[path], rests[path])
        if not len(frames):
            continue
        if interps - {0, 1}:
            step = fps / SAMPLE_FPS
            frames = np.unique(np.concatenate([frames, np.arange(frames[0], frames[-1], step)]))
        basis = {p: property_keys(by_path.get(p, {}), widths[p], rests[p], frames)[1] for p in widths}
        values, prev = [], None
        for k in range(len(frames)):
            loc, r, s = (basis[p][k] for p in ("location", rot_path, "scale"))
            if rot_path == "rotation_quaternion":
                q = Quaternion(r).normalized()
            elif rot_path == "rotation_axis_angle":
                q = Quaternion(Vector(r[1:]), r[0])
            else:
                q = Euler(r, ob.rotation_mode).to_quaternion()
            m = before @ Matrix.LocRotScale(Vector(loc), q, Vector(s)) @ after
            t, q, sc = m.decompose()
            if prev is not None and q.dot(prev) < 0:
                q.negate()  # the short way to the next key
            prev = q
            values.append(trs_from_blender(tuple(t), tuple(q), tuple(sc))[("translation", "rotation", "scale").index(prop)])
        chans.append(hangar.Channel(node=node, property=prop, times=((frames - start) / fps).astype(np.float32),
                                    values=np.array(values, np.float32), interpolation="STEP" if interps == {0} else "LINEAR"))
    return chans
