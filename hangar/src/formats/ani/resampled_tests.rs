//! States that come back from a tool sampled at its own frame rate (Blender's default glTF
//! export: a key every frame of the scene, 24 or 30 a second, over the whole clip) are the file
//! read, byte for byte, when every sample lies on the stored curve.

use super::*;

fn key(value: [f32; 3], time: f32, interpolation: i32) -> Value {
    json!({
        "value": value, "interpolationX": interpolation, "interpolationY": interpolation,
        "interpolationZ": interpolation, "time": time, "bezier": ([0.0f32; 12]),
        "tcb": ([0.0f32; 5]), "derivatives": ([0.0f32; 7]), "angle": 0,
    })
}

/// An .ani of `(part, state, rotation keys, duration)`, written and read back.
fn ani(states: &[(&str, &str, Vec<Value>, f32)]) -> (Vec<u8>, Ani) {
    let fields = json!({
        "count": states.len(), "keyOffset": HEADER + states.len() * DESCRIPTION_SIZE,
        "version": 1, "reserved": 0,
        "animations": states.iter().map(|s| {
            description(s.0, s.1, &[0, s.2.len(), 0, 0, 0], json!(s.3)).unwrap()
        }).collect::<Vec<_>>(),
        "keys": states.iter().flat_map(|s| s.2.clone()).collect::<Vec<_>>(),
    });
    let bytes = write(&Ani { fields }).unwrap();
    let (read_back, _) = read(&bytes).unwrap();
    (bytes, read_back)
}

const PARTS: [&str; 2] = ["door", "gear"];

/// The states as glTF clips, every channel sampled as Blender's exporter does: at each frame of
/// `fps` from 0 to the clip's last frame (rounded up), the quaternion taken from the exact
/// Euler angles of the stored keys (not hangar's samples), its sign as `flip` says.
fn blender(read_back: &Ani, fps: f32, flip: &dyn Fn(usize) -> bool) -> Vec<Animation> {
    let (mut anims, _) = animations(read_back, &mut |p| PARTS.iter().position(|&x| x == p));
    for a in &mut anims {
        let end = a
            .channels
            .iter()
            .filter_map(|c| c.times.last().copied())
            .fold(0.0f32, f32::max);
        let frames = (end * fps - 1e-3).ceil() as usize;
        for c in &mut a.channels {
            let times: Vec<f32> = (0..=frames).map(|f| f as f32 / fps).collect();
            let values: Vec<f32> = times
                .iter()
                .enumerate()
                .flat_map(|(i, &t)| {
                    let v = c.value_at(t).unwrap();
                    let s = if flip(i) { -1.0 } else { 1.0 };
                    v.into_iter().map(move |x| s * x)
                })
                .collect();
            (c.times, c.values) = (times.into(), values.into());
        }
    }
    anims
}

fn part_of(n: usize) -> Option<String> {
    PARTS.get(n).map(|p| p.to_string())
}

/// A landing-gear door turning 45 degrees by 0.7 s (frame 16.8 at 24 a second, 21 at 30) of a
/// 2-second state whose gear moves all along: the door's samples go on to 2 s holding 45
/// degrees. At 24 and 30 frames a second it is the stored state; a sample moved by half a
/// degree is an edit, written from the samples.
#[test]
fn a_door_ending_between_frames_inside_a_longer_state_is_unchanged() {
    let r45 = 45f32.to_radians();
    let (bytes, read_back) = ani(&[
        (
            "door",
            "landinggears_activating",
            vec![key([0.0; 3], 0.0, 2), key([0.0, r45, 0.0], 0.7, 1)],
            2.0,
        ),
        (
            "gear",
            "landinggears_activating",
            vec![key([0.0; 3], 0.0, 2), key([-0.5, 0.0, 0.0], 2.0, 1)],
            2.0,
        ),
    ]);
    for fps in [24.0, 30.0, 25.0, 60.0] {
        let anims = blender(&read_back, fps, &|_| false);
        let door = &anims[0].channels[0];
        assert_eq!(door.times.last().copied(), Some(2.0), "{fps}");
        let (built, _) = from_animations(&anims, &mut part_of).unwrap();
        assert!(built.unchanged, "{fps} fps");
        assert!(write(&built.ani).unwrap() == bytes, "{fps} fps");
    }
    // Half a degree off at 0.5 s (frame 12 at 24): the door is written from Blender's keys.
    let mut anims = blender(&read_back, 24.0, &|_| false);
    let door = &mut anims[0].channels[0];
    let q = Quat::from_euler(
        EulerRot::XYZ,
        0.0,
        -(r45 * 0.5 / 0.7 + 0.5f32.to_radians()),
        0.0,
    );
    let mut values = door.values.to_vec();
    values[12 * 4..13 * 4].copy_from_slice(&q.to_array());
    door.values = values.into();
    let (built, _) = from_animations(&anims, &mut part_of).unwrap();
    assert!(!built.unchanged);
    let d = &built.ani.fields["animations"][0];
    assert!(d["numRotation"].as_u64().unwrap() > 2, "{d}");
    // The gear's description is the one read.
    assert_eq!(built.ani.fields["animations"][1]["numRotation"], 2);
}

/// A weapon effect's `loop` turning a part a full 360 degrees about Z in 1.7 s: Blender's
/// samples are quaternions with either sign (q and -q are one rotation, and the turn ends at
/// -q of its start); they are the stored loop.
#[test]
fn a_full_turn_sampled_as_quaternions_is_unchanged() {
    let tau = std::f32::consts::TAU;
    let (bytes, read_back) = ani(&[(
        "door",
        "loop",
        vec![key([0.0; 3], 0.0, 2), key([0.0, 0.0, tau], 1.7, 1)],
        1.7,
    )]);
    for fps in [24.0, 30.0] {
        for flip in [&(|_| false) as &dyn Fn(usize) -> bool, &|i| i % 3 == 1] {
            let anims = blender(&read_back, fps, flip);
            let (built, _) = from_animations(&anims, &mut part_of).unwrap();
            assert!(built.unchanged, "{fps} fps");
            assert!(write(&built.ani).unwrap() == bytes, "{fps} fps");
        }
    }
    // Stopped at 350 degrees: an edit.
    let mut anims = blender(&read_back, 24.0, &|_| false);
    let loop_ = &mut anims[0].channels[0];
    let n = loop_.times.len();
    let q = Quat::from_euler(EulerRot::XYZ, 0.0, 0.0, -350f32.to_radians());
    let mut values = loop_.values.to_vec();
    values[(n - 1) * 4..].copy_from_slice(&q.to_array());
    loop_.values = values.into();
    let (built, _) = from_animations(&anims, &mut part_of).unwrap();
    assert!(!built.unchanged);
}

/// Blender's glTF importer and default exporter for one channel of a clip ending at `end`: keys
/// put on frames (t x fps), a key less than a hundredth of a frame after the one before merged
/// into it (the later value kept, as Blender's importer does), then sampled at every whole frame
/// from the first key's frame to the clip's last, both truncated (`int(action.frame_range)`).
fn through_blender(c: &Channel, fps: f32, end: f32) -> Channel {
    let w = c.width();
    let mut kept: Vec<(f32, Vec<f32>)> = Vec::new();
    for (t, v) in c.times.iter().zip(c.values.chunks_exact(w)) {
        let f = t * fps;
        match kept.last_mut() {
            Some(last) if f - last.0 < 0.01 => last.1 = v.to_vec(),
            _ => kept.push((f, v.to_vec())),
        }
    }
    let merged = Channel {
        times: kept.iter().map(|k| k.0 / fps).collect::<Vec<f32>>().into(),
        values: kept
            .iter()
            .flat_map(|k| k.1.clone())
            .collect::<Vec<f32>>()
            .into(),
        ..c.clone()
    };
    let first = kept.first().map_or(0.0, |k| k.0.trunc());
    let frames: Vec<f32> = (first as usize..=(end * fps).trunc() as usize)
        .map(|f| f as f32 / fps)
        .collect();
    let values: Vec<f32> = frames
        .iter()
        .flat_map(|&t| merged.value_at(t).unwrap())
        .collect();
    Channel {
        interpolation: Interpolation::Linear,
        times: frames.into(),
        values: values.into(),
        ..c.clone()
    }
}

fn bezier_key(value: [f32; 3], time: f32, interpolation: i32, handles: [f32; 12]) -> Value {
    let mut k = key(value, time, interpolation);
    k["bezier"] = json!(handles);
    k
}

/// A landing-gear state as real files hold them: the door snaps open at 0.5 s (a step key) and
/// turns on to 90 degrees by 1.2 s; the gear eases down on a bezier to a key off the 30 fps grid
/// (0.7346 s, frame 17.63 at 24). hangar's track once held each step 1e-4 s before the next key
/// and sampled 30 fps frames a few hundredths of a frame from a key: Blender's importer merged
/// those pairs, the clip it exported left the curve, and the state came back rebuilt with more
/// keys. Now no two keys of a track are closer than KEY_GAP and the file comes back as read, at
/// 24, 25, 30 and 60 frames a second.
#[test]
fn keys_blender_would_merge_are_kept_apart() {
    let (r45, r90) = (45f32.to_radians(), 90f32.to_radians());
    let h = |a: [f32; 4]| -> [f32; 12] { [a, a, a].concat().try_into().unwrap() };
    let (bytes, read_back) = ani(&[
        (
            "door",
            "landinggears_activating",
            vec![
                key([0.0; 3], 0.0, 1),
                key([0.0, r45, 0.0], 0.5, 2),
                key([0.0, r90, 0.0], 1.2, 1),
            ],
            2.0,
        ),
        (
            "gear",
            "landinggears_activating",
            vec![
                bezier_key([0.0; 3], 0.0, 5, h([0.3, 0.1, -0.2, 0.0])),
                bezier_key([-1.5, 0.4, 0.0], 0.7346, 1, h([1.0, -1.5, 0.5, -1.2])),
            ],
            2.0,
        ),
    ]);
    let (anims, _) = animations(&read_back, &mut |p| PARTS.iter().position(|&x| x == p));
    let door = &anims[0].channels[0];
    // The door's hold 2 ms before its step ends, and no sample within 2 ms of a key.
    assert!(
        door.times.iter().any(|&t| (t - 0.498).abs() < 1e-6),
        "{:?}",
        door.times
    );
    for c in &anims[0].channels {
        assert!(
            c.times.windows(2).all(|w| w[1] - w[0] >= KEY_GAP - 1e-6),
            "{:?}",
            c.times
        );
    }
    for fps in [24.0, 25.0, 30.0, 60.0] {
        let mut through = anims.clone();
        for c in &mut through[0].channels {
            *c = through_blender(c, fps, 2.0);
        }
        let (built, _) = from_animations(&through, &mut part_of).unwrap();
        assert!(built.unchanged, "{fps} fps");
        assert!(write(&built.ani).unwrap() == bytes, "{fps} fps");
    }
}

/// A landing-gear light hidden by a scale of 0 by 1 s: in glTF the scale is HIDDEN, not 0 (a
/// matrix of scale 0 holds no rotation, and Blender's exporter samples matrices: the part's
/// rotation came back lost in this state and in the part's other states); a track rebuilt from
/// the glTF writes it as 0 again.
#[test]
fn a_part_hidden_by_a_scale_of_0_keeps_a_rotation_in_gltf() {
    let key = |value: [f32; 3], time: f32, i: i32| Key {
        value,
        interpolation: [i; 3],
        time,
        bezier: [0.0; 12],
    };
    let c = channel(
        &[key([1.0; 3], 0.0, 2), key([0.0; 3], 1.0, 1)],
        Property::Scale,
        0,
    )
    .unwrap();
    assert_eq!(c.values[..3], [1.0; 3]);
    assert_eq!(c.values[c.values.len() - 3..], [HIDDEN; 3]);
    let (d, keys) = rebuilt("light", "hide", &[&c], [0, 0], Vec::new(), None).unwrap();
    assert_eq!(d["numScale"], 2);
    assert_eq!(keys[1]["value"], json!([0.0, 0.0, 0.0]));
    assert_eq!(keys[1]["time"], json!(1.0));
}
