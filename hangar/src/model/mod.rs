//! The format-neutral scene every format converts to and from, and glTF is made from.
//!
//! Conventions are glTF's: right-handed, +Y up, front faces counter-clockwise, UV origin at the top
//! left, tangent `w` the sign of the bitangent (`bitangent = cross(normal, tangent.xyz) * w`).
//! Each format adapter converts into this frame; exporters do not transform again.

use glam::{Mat4, Quat, Vec3};
use serde_json::{Map, Value};

mod matching;
mod same;
pub(crate) mod unchanged;
pub(crate) use matching::{base_name, find_named, match_nodes};
pub use same::same_shape;

#[derive(Debug, Clone, Default)]
pub struct Scene {
    pub name: String,
    pub nodes: Vec<Node>,
    pub meshes: Vec<Mesh>,
    pub materials: Vec<Material>,
    pub skins: Vec<Skin>,
    pub animations: Vec<Animation>,
    pub lights: Vec<Light>,
    pub cameras: Vec<Camera>,
}

/// Joints (node indices) and their inverse bind matrices (column-major), as glTF has them.
#[derive(Debug, Clone, Default)]
pub struct Skin {
    pub name: String,
    pub joints: Vec<usize>,
    pub inverse_bind: Vec<[f32; 16]>,
}

/// One clip: channels that each drive one property of one node.
#[derive(Debug, Clone, Default)]
pub struct Animation {
    pub name: String,
    pub channels: Vec<Channel>,
    pub extras: Map<String, Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Property {
    Translation,
    /// Quaternion x, y, z, w.
    Rotation,
    Scale,
    /// Morph target weights of the node's mesh: one value a target a key.
    Weights,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interpolation {
    Step,
    Linear,
    /// glTF's cubic spline: a key holds its in-tangent, its value and its out-tangent (a key's
    /// width each, per second). Only translation and scale tracks come so (from a glTF file); the
    /// writers that take no curve read them through [`Channel::sampled`].
    CubicSpline,
}

/// Key times in seconds (strictly increasing) and one value a key (3 floats, 4 for rotation, one a
/// morph target for weights).
#[derive(Debug, Clone)]
pub struct Channel {
    pub node: usize,
    pub property: Property,
    pub interpolation: Interpolation,
    pub times: Keys,
    pub values: Keys,
}

impl Channel {
    /// Floats a key (3, 4 for rotation, one a morph target for weights).
    pub fn width(&self) -> usize {
        let per_key = match self.interpolation {
            Interpolation::CubicSpline => 3,
            _ => 1,
        };
        match self.property {
            Property::Rotation => 4,
            Property::Weights => (self.values.len() / (self.times.len() * per_key).max(1)).max(1),
            _ => 3,
        }
    }

    /// The value of key `k` (for a cubic spline its value, not its tangents).
    pub fn key_value(&self, k: usize) -> Option<&[f32]> {
        let w = self.width();
        match self.interpolation {
            Interpolation::CubicSpline => spline_part(&self.values, w, k, 1),
            _ => self.values.get(k * w..(k + 1) * w),
        }
    }

    /// The channel as step or linear keys: itself, or a cubic spline's curve as linear keys (every
    /// key, and between keys 30 a second, at most 64 a segment and 100,000 in all).
    pub fn sampled(&self) -> std::borrow::Cow<'_, Channel> {
        if self.interpolation != Interpolation::CubicSpline {
            return std::borrow::Cow::Borrowed(self);
        }
        let w = self.width();
        let rotation = self.property == Property::Rotation;
        let (times, values) = hermite_samples(&self.times, &self.values, w, rotation);
        std::borrow::Cow::Owned(Channel {
            interpolation: Interpolation::Linear,
            times: times.into(),
            values: values.into(),
            ..self.clone()
        })
    }

    /// The channel's value at `t` seconds, held before the first key and after the last; a
    /// rotation between keys is the normalised blend of the two quaternions (as Blender plays a
    /// clip). `None` for a channel without keys.
    pub fn value_at(&self, t: f32) -> Option<Vec<f32>> {
        if self.interpolation == Interpolation::CubicSpline {
            return self.cubic_at(t);
        }
        let w = self.width();
        let key = |i: usize| self.values.get(i * w..(i + 1) * w);
        let n = self.times.len().min(self.values.len() / w);
        if n == 0 {
            return None;
        }
        let after = self.times[..n].partition_point(|&k| k <= t);
        if after == 0 {
            return key(0).map(<[f32]>::to_vec);
        }
        if after >= n || self.interpolation == Interpolation::Step {
            return key(after - 1).map(<[f32]>::to_vec);
        }
        let (t0, t1) = (self.times[after - 1], self.times[after]);
        let (a, b) = (key(after - 1)?, key(after)?);
        let f = if t1 > t0 { (t - t0) / (t1 - t0) } else { 0.0 };
        // The shorter way round for a rotation.
        let sign = if self.property == Property::Rotation
            && a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>() < 0.0
        {
            -1.0
        } else {
            1.0
        };
        let mut v: Vec<f32> = a
            .iter()
            .zip(b)
            .map(|(x, y)| x + (sign * y - x) * f)
            .collect();
        if self.property == Property::Rotation {
            let len = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            if len > 0.0 {
                v.iter_mut().for_each(|x| *x /= len);
            }
        }
        Some(v)
    }

    /// A cubic spline's value at `t`: held before the first key and after the last, the Hermite
    /// curve of the two keys around `t` between them.
    fn cubic_at(&self, t: f32) -> Option<Vec<f32>> {
        let w = self.width();
        let part = |k: usize, p: usize| spline_part(&self.values, w, k, p);
        let n = self.times.len().min(self.values.len() / (3 * w));
        if n == 0 {
            return None;
        }
        let after = self.times[..n].partition_point(|&k| k <= t);
        if after == 0 || after >= n {
            return part(after.saturating_sub(1).min(n - 1), 1).map(<[f32]>::to_vec);
        }
        let k = after - 1;
        let (t0, t1) = (self.times[k], self.times[after]);
        let (p0, m0, m1, p1) = (part(k, 1)?, part(k, 2)?, part(after, 0)?, part(after, 1)?);
        Some(hermite(
            p0,
            m0,
            m1,
            p1,
            t1 - t0,
            if t1 > t0 { (t - t0) / (t1 - t0) } else { 0.0 },
        ))
    }
}

/// Part `part` of key `k` of a cubic spline's `values` (0 in-tangent, 1 value, 2 out-tangent),
/// `width` floats.
pub(crate) fn spline_part(values: &[f32], width: usize, k: usize, part: usize) -> Option<&[f32]> {
    let at = (k * 3 + part) * width;
    values.get(at..at + width)
}

/// The Hermite curve of glTF's cubic spline at `u` (0-1) of a segment `dt` seconds long from `p0`
/// (out-tangent `m0`) to `p1` (in-tangent `m1`).
fn hermite(p0: &[f32], m0: &[f32], m1: &[f32], p1: &[f32], dt: f32, u: f32) -> Vec<f32> {
    let (u2, u3) = (u * u, u * u * u);
    (0..p0.len())
        .map(|i| {
            (2.0 * u3 - 3.0 * u2 + 1.0) * p0[i]
                + (u3 - 2.0 * u2 + u) * dt * m0.get(i).copied().unwrap_or(0.0)
                + (-2.0 * u3 + 3.0 * u2) * p1.get(i).copied().unwrap_or(0.0)
                + (u3 - u2) * dt * m1.get(i).copied().unwrap_or(0.0)
        })
        .collect()
}

/// A CUBICSPLINE track (per key: in-tangent, value, out-tangent, `width` floats each) as linear
/// keys on its curve: every key, and between keys 30 a second (at most 64 a segment, 100,000 in
/// all); a rotation's quaternions normalised, as glTF asks.
pub(crate) fn hermite_samples(
    times: &[f32],
    values: &[f32],
    width: usize,
    rotation: bool,
) -> (Vec<f32>, Vec<f32>) {
    let key = |k: usize, part: usize| spline_part(values, width, k, part);
    let mut out_t = Vec::with_capacity(times.len());
    let mut out_v = Vec::with_capacity(times.len() * width);
    let unit = |v: Vec<f32>| {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if rotation && n > 1e-12 {
            v.iter().map(|x| x / n).collect()
        } else {
            v
        }
    };
    for k in 0..times.len() {
        let Some(p0) = key(k, 1) else { break };
        out_t.push(times[k]);
        out_v.extend(unit(p0.to_vec()));
        let (Some(&t1), Some(m0), Some(m1), Some(p1)) =
            (times.get(k + 1), key(k, 2), key(k + 1, 0), key(k + 1, 1))
        else {
            continue;
        };
        let dt = t1 - times[k];
        if !dt.is_finite() || dt <= 0.0 {
            continue;
        }
        // At most 100,000 samples more than the keys: the output stays linear in the input.
        let room = (times.len() + 100_000).saturating_sub(out_t.len());
        let steps = ((dt * 30.0).ceil() as usize).clamp(1, 64).min(room.max(1));
        for s in 1..steps {
            let u = s as f32 / steps as f32;
            out_t.push(times[k] + dt * u);
            out_v.extend(unit(hermite(p0, m0, m1, p1, dt, u)));
        }
    }
    (out_t, out_v)
}

/// A channel's key floats, read as a slice: its own, or a range of one buffer that the channels of
/// a clip share (an M3 sequence decodes all its tracks into one allocation, not two a channel, and
/// its bones' identical key times into one range). Two channels reading the very same range have
/// the same slice (`std::ptr::eq`), which the glTF export uses to share accessors.
#[derive(Clone, Default)]
pub struct Keys {
    buf: std::sync::Arc<Vec<f32>>,
    start: usize,
    end: usize,
}

impl Keys {
    /// `range` of `buf`; `None` when `buf` does not hold it.
    pub fn shared(buf: &std::sync::Arc<Vec<f32>>, range: std::ops::Range<usize>) -> Option<Keys> {
        buf.get(range.clone())?;
        Some(Keys {
            buf: buf.clone(),
            start: range.start,
            end: range.end,
        })
    }
}

impl From<Vec<f32>> for Keys {
    fn from(v: Vec<f32>) -> Keys {
        Keys {
            end: v.len(),
            start: 0,
            buf: std::sync::Arc::new(v),
        }
    }
}

impl FromIterator<f32> for Keys {
    fn from_iter<I: IntoIterator<Item = f32>>(iter: I) -> Keys {
        Vec::from_iter(iter).into()
    }
}

impl<'k> IntoIterator for &'k Keys {
    type Item = &'k f32;
    type IntoIter = std::slice::Iter<'k, f32>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl std::ops::Deref for Keys {
    type Target = [f32];
    fn deref(&self) -> &[f32] {
        // `shared` and `from` only make ranges inside the buffer, which never changes.
        &self.buf[self.start..self.end]
    }
}

/// Editing keys gives the channel its own copy first when it shares its buffer (copy on write).
impl std::ops::DerefMut for Keys {
    fn deref_mut(&mut self) -> &mut [f32] {
        let whole = self.start == 0 && self.end == self.buf.len();
        if !whole || std::sync::Arc::get_mut(&mut self.buf).is_none() {
            *self = Keys::from(self.to_vec());
        }
        let (start, end) = (self.start, self.end);
        match std::sync::Arc::get_mut(&mut self.buf) {
            Some(v) => &mut v[start..end],
            // Unreachable: the buffer was just made this channel's own.
            None => &mut [],
        }
    }
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq for Keys {
    fn eq(&self, other: &Keys) -> bool {
        self[..] == other[..]
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LightKind {
    Directional,
    Point,
    /// Cone angles in radians.
    Spot {
        inner: f32,
        outer: f32,
    },
}

/// A punctual light (glTF KHR_lights_punctual); it shines down its node's -Z.
#[derive(Debug, Clone)]
pub struct Light {
    pub name: String,
    pub kind: LightKind,
    pub color: [f32; 3],
    pub intensity: f32,
    pub range: Option<f32>,
}

/// A perspective camera looking down its node's -Z.
#[derive(Debug, Clone)]
pub struct Camera {
    pub name: String,
    pub yfov: f32,
    pub znear: f32,
    pub zfar: Option<f32>,
}

/// What a node is for the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Role {
    #[default]
    Visual,
    /// A collision mesh: exported as its own node and marked in `extras`.
    Collision,
}

#[derive(Debug, Clone, Default)]
pub struct Node {
    pub name: String,
    pub parent: Option<usize>,
    pub translation: Vec3,
    pub rotation: Quat,
    pub scale: Vec3,
    pub mesh: Option<usize>,
    /// With a mesh: the skin that deforms it.
    pub skin: Option<usize>,
    pub light: Option<usize>,
    pub camera: Option<usize>,
    pub role: Role,
    pub extras: Map<String, Value>,
}

impl Node {
    pub fn new(name: impl Into<String>) -> Self {
        Node {
            name: name.into(),
            scale: Vec3::ONE,
            ..Default::default()
        }
    }

    pub fn local_matrix(&self) -> Mat4 {
        Mat4::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }
}

/// One vertex set shared by primitives that each draw a range of triangles with one material
/// (the shape of an XMF file and of most game meshes).
#[derive(Debug, Clone, Default)]
pub struct Mesh {
    pub name: String,
    pub vertices: Vertices,
    pub primitives: Vec<Primitive>,
    /// Shapes the mesh can blend towards (glTF morph targets).
    pub morph_targets: Vec<MorphTarget>,
    pub extras: Map<String, Value>,
}

/// Offsets from the mesh's vertices, one a vertex.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MorphTarget {
    pub name: String,
    pub positions: Vec<[f32; 3]>,
    pub normals: Option<Vec<[f32; 3]>>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Vertices {
    pub positions: Vec<[f32; 3]>,
    pub normals: Option<Vec<[f32; 3]>>,
    pub tangents: Option<Vec<[f32; 4]>>,
    /// UV sets in order (glTF TEXCOORD_0, _1, ...).
    pub uvs: Vec<Vec<[f32; 2]>>,
    /// Colour sets in order, RGBA 0..1.
    pub colors: Vec<Vec<[f32; 4]>>,
    /// The role of each colour set that is shader data rather than a tint (X4's `col`, `multimat`,
    /// `color_2`: see docs/MATERIALS.md), one a set in the order of `colors`; empty when the sets
    /// are tints (glTF `COLOR_n`, which viewers multiply into the base colour). A named set goes to
    /// glTF as the application attribute `_X4_<NAME>` and comes back from it.
    pub color_names: Vec<String>,
    /// Attributes glTF has no name for, exported as `_NAME`.
    pub custom: Vec<CustomAttribute>,
    /// Up to four joints a vertex (indices into the skin's joint list) and their weights, summing to 1.
    pub joints: Option<Vec<[u16; 4]>>,
    pub weights: Option<Vec<[f32; 4]>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CustomAttribute {
    pub name: String,
    pub values: Vec<[f32; 4]>,
}

/// The box of `positions`: (least, greatest) on each axis; None for none.
pub(crate) fn bounds(positions: &[[f32; 3]]) -> Option<([f32; 3], [f32; 3])> {
    let first = *positions.first()?;
    Some(positions.iter().fold((first, first), |(lo, hi), p| {
        (
            [lo[0].min(p[0]), lo[1].min(p[1]), lo[2].min(p[2])],
            [hi[0].max(p[0]), hi[1].max(p[1]), hi[2].max(p[2])],
        )
    }))
}

impl Vertices {
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }
}

/// Triangles (a triangle list) over the mesh's vertices.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Primitive {
    pub indices: Vec<u32>,
    pub material: Option<usize>,
}

#[derive(Debug, Clone, Default)]
pub struct Material {
    pub name: String,
    /// Image paths as the game names them (exported as glTF image URIs).
    pub textures: Textures,
    /// Factors and alpha, as glTF's metallic-roughness model has them.
    pub look: Look,
    pub extras: Map<String, Value>,
}

/// A material's textures by what their channels mean, each the game's path of the file. How each
/// becomes a glTF image (a normal map decoded to tangent-space RGB, metal and smoothness packed
/// into one metallic-roughness image) is `crate::material`'s.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Textures {
    /// Colour in RGB; alpha as the material's [`Alpha`] says (SC2: the team-colour mask).
    pub base_color: Option<String>,
    /// A tangent-space normal map in whatever layout the game stores (RGB, DXT5nm, two-channel).
    pub normal: Option<String>,
    pub emissive: Option<String>,
    /// Ambient occlusion in red (grey maps).
    pub occlusion: Option<String>,
    /// Specular colour in RGB (StarCraft II's specular layer).
    pub specular: Option<String>,
    /// Metalness as grey (X4's `metal_map`).
    pub metal: Option<String>,
    /// Smoothness as grey, 1 - roughness (X4's `smooth_map`).
    pub smooth: Option<String>,
}

/// How a material's surface answers light, apart from its textures. Crosses to Python as JSON.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Look {
    /// Multiplies the base colour texture (RGBA, linear).
    pub base_color: [f32; 4],
    pub metallic: f32,
    pub roughness: f32,
    /// Multiplies the emissive texture; without one, nothing is emitted.
    pub emissive: [f32; 3],
    pub alpha: Alpha,
    pub double_sided: bool,
    /// The base colour's alpha is StarCraft II's team-colour mask: where it is 0 the player's
    /// colour replaces the texture's.
    pub team_colour: bool,
}

/// glTF's defaults: white, metallic and rough, opaque.
impl Default for Look {
    fn default() -> Look {
        Look {
            base_color: [1.0; 4],
            metallic: 1.0,
            roughness: 1.0,
            emissive: [1.0; 3],
            alpha: Alpha::Opaque,
            double_sided: false,
            team_colour: false,
        }
    }
}

/// How a material's alpha is drawn (JSON: `"OPAQUE"`, `{"MASK": cutoff}`, `"BLEND"`).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Alpha {
    /// Alpha is ignored (or means something else: SC2's team-colour mask).
    #[default]
    Opaque,
    /// Drawn where alpha is at least the cutoff.
    Mask(f32),
    /// Blended over what is behind.
    Blend,
}

impl Mesh {
    pub fn triangle_count(&self) -> usize {
        self.primitives.iter().map(|p| p.indices.len() / 3).sum()
    }

    /// The corners of all primitives one after the other, cut to whole triangles.
    pub fn corners(&self) -> impl Iterator<Item = u32> + '_ {
        let whole = self
            .primitives
            .iter()
            .map(|p| p.indices.len())
            .sum::<usize>()
            / 3
            * 3;
        self.primitives
            .iter()
            .flat_map(|p| p.indices.iter().copied())
            .take(whole)
    }

    /// The mesh's edges as an editor that stores them (Blender) needs: each vertex pair a triangle
    /// side joins, once, and for each corner of [`Mesh::corners`] the edge from its vertex to the
    /// next corner's in the triangle. Bucketed by the lower vertex, so linear in the corners.
    pub fn edges(&self) -> Edges {
        let corners: Vec<u32> = self.corners().collect();
        let side = |c: usize| {
            let next = if c % 3 == 2 { c - 2 } else { c + 1 };
            let (a, b) = (corners[c], corners[next]);
            (a.min(b), a.max(b))
        };
        let buckets = corners.iter().max().map_or(0, |&m| m as usize + 1);
        if buckets > self.vertices.len() {
            return edges_sorted(corners.len(), side); // a corner past the vertices: no bucket a vertex
        }
        let mut start = vec![0u32; buckets + 1];
        for c in 0..corners.len() {
            start[side(c).0 as usize + 1] += 1;
        }
        for v in 0..buckets {
            start[v + 1] += start[v];
        }
        let mut fill = start.clone();
        let mut sides = vec![(0u32, 0u32); corners.len()];
        for c in 0..corners.len() {
            let (lo, hi) = side(c);
            let at = &mut fill[lo as usize];
            sides[*at as usize] = (hi, c as u32);
            *at += 1;
        }
        let mut verts = Vec::with_capacity(corners.len() / 2 + 1);
        let mut of_corners = vec![0u32; corners.len()];
        for lo in 0..buckets {
            let bucket = &mut sides[start[lo] as usize..start[lo + 1] as usize];
            bucket.sort_unstable();
            let mut last = None;
            for &(hi, c) in bucket.iter() {
                if last != Some(hi) {
                    verts.push([lo as u32, hi]);
                    last = Some(hi);
                }
                of_corners[c as usize] = verts.len() as u32 - 1;
            }
        }
        Edges { verts, of_corners }
    }
}

/// [`Mesh::edges`] by sorting every corner's side (for indices past the vertex count, where
/// buckets by vertex would take memory the mesh does not justify).
fn edges_sorted(corners: usize, side: impl Fn(usize) -> (u32, u32)) -> Edges {
    let mut sides: Vec<((u32, u32), u32)> = (0..corners).map(|c| (side(c), c as u32)).collect();
    sides.sort_unstable();
    let mut verts: Vec<[u32; 2]> = Vec::new();
    let mut of_corners = vec![0u32; corners];
    for ((lo, hi), c) in sides {
        if verts.last() != Some(&[lo, hi]) {
            verts.push([lo, hi]);
        }
        of_corners[c as usize] = verts.len() as u32 - 1;
    }
    Edges { verts, of_corners }
}

/// A mesh's edges ([`Mesh::edges`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Edges {
    /// The two vertices of each edge, the lower first.
    pub verts: Vec<[u32; 2]>,
    /// For each corner, the edge to the next corner of its triangle.
    pub of_corners: Vec<u32>,
}

impl Scene {
    /// The scene with every cubic-spline channel as its curve sampled ([`Channel::sampled`]), for
    /// a writer whose format keeps no such curve; itself when it has none.
    pub fn cubic_sampled(&self) -> std::borrow::Cow<'_, Scene> {
        let cubic = |c: &Channel| c.interpolation == Interpolation::CubicSpline;
        if !self.animations.iter().any(|a| a.channels.iter().any(cubic)) {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut out = self.clone();
        for c in out
            .animations
            .iter_mut()
            .flat_map(|a| a.channels.iter_mut())
        {
            if cubic(c) {
                *c = c.sampled().into_owned();
            }
        }
        std::borrow::Cow::Owned(out)
    }

    /// Moves `other` into this scene, its root nodes under `parent`; returns where its nodes went.
    /// Materials, meshes, skins, lights, cameras and animations are re-indexed.
    pub fn append(&mut self, other: Scene, parent: Option<usize>) -> Vec<usize> {
        let (nb, mb, ma, sb, lb, cb) = (
            self.nodes.len(),
            self.meshes.len(),
            self.materials.len(),
            self.skins.len(),
            self.lights.len(),
            self.cameras.len(),
        );
        self.materials.extend(other.materials);
        for mut m in other.meshes {
            for p in &mut m.primitives {
                p.material = p.material.map(|x| x + ma);
            }
            self.meshes.push(m);
        }
        for mut s in other.skins {
            s.joints.iter_mut().for_each(|j| *j += nb);
            self.skins.push(s);
        }
        self.lights.extend(other.lights);
        self.cameras.extend(other.cameras);
        let map: Vec<usize> = (0..other.nodes.len()).map(|i| nb + i).collect();
        for mut n in other.nodes {
            n.parent = n.parent.map(|p| p + nb).or(parent);
            n.mesh = n.mesh.map(|x| x + mb);
            n.skin = n.skin.map(|x| x + sb);
            n.light = n.light.map(|x| x + lb);
            n.camera = n.camera.map(|x| x + cb);
            self.nodes.push(n);
        }
        for mut a in other.animations {
            a.channels.iter_mut().for_each(|c| c.node += nb);
            self.animations.push(a);
        }
        map
    }

    /// Node by node through `range`, gives `to` as parent to each node whose parent chain never
    /// ends (it loops back), so later nodes see the cut. Returns the nodes cut.
    pub fn cut_parent_loops(
        &mut self,
        range: std::ops::Range<usize>,
        to: Option<usize>,
    ) -> Vec<usize> {
        let mut cut = Vec::new();
        for i in range {
            let (mut p, mut steps) = (self.nodes[i].parent, 0);
            while let Some(pi) = p {
                if pi == i || steps > self.nodes.len() {
                    self.nodes[i].parent = to;
                    cut.push(i);
                    break;
                }
                p = self.nodes[pi].parent;
                steps += 1;
            }
        }
        cut
    }

    /// The world matrix of node `i` (parents first).
    pub fn world_matrix(&self, i: usize) -> Mat4 {
        let mut m = self.nodes[i].local_matrix();
        let mut p = self.nodes[i].parent;
        let mut guard = 0;
        while let Some(pi) = p {
            m = self.nodes[pi].local_matrix() * m;
            p = self.nodes[pi].parent;
            guard += 1;
            if guard > self.nodes.len() {
                break; // a cycle: stop rather than loop
            }
        }
        m
    }

    /// The scene with only the nodes `keep` accepts: a dropped node's children hang on its nearest
    /// kept ancestor; skins lose dropped joints (with their matrices), animations their channels.
    /// Drops the materials `keep` refuses (by index); the primitives that drew with one draw with
    /// none, the others follow their material to its new index.
    pub fn retain_materials(&mut self, keep: impl Fn(usize) -> bool) {
        let mut new_index = Vec::with_capacity(self.materials.len());
        let mut at = 0;
        for k in 0..self.materials.len() {
            new_index.push(keep(k).then(|| {
                at += 1;
                at - 1
            }));
        }
        let mut kept = new_index.iter();
        self.materials
            .retain(|_| kept.next().is_some_and(Option::is_some));
        for p in self.meshes.iter_mut().flat_map(|m| m.primitives.iter_mut()) {
            p.material = p.material.and_then(|m| new_index.get(m).copied().flatten());
        }
    }

    pub fn retain_nodes(&self, keep: impl Fn(usize) -> bool) -> Scene {
        let kept: Vec<usize> = (0..self.nodes.len()).filter(|&i| keep(i)).collect();
        let new_index = |i: usize| kept.iter().position(|&k| k == i);
        let mut out = Scene {
            nodes: Vec::with_capacity(kept.len()),
            skins: Vec::with_capacity(self.skins.len()),
            animations: Vec::with_capacity(self.animations.len()),
            ..self.clone()
        };
        for n in self
            .nodes
            .iter()
            .enumerate()
            .filter(|(i, _)| kept.contains(i))
        {
            let mut n = n.1.clone();
            let mut p = n.parent;
            for _ in 0..=self.nodes.len() {
                match p {
                    Some(q) if new_index(q).is_none() => {
                        p = self.nodes.get(q).and_then(|x| x.parent)
                    }
                    _ => break,
                }
            }
            n.parent = p.and_then(new_index);
            out.nodes.push(n);
        }
        for s in &self.skins {
            let (joints, inverse_bind) = s
                .joints
                .iter()
                .zip(&s.inverse_bind)
                .filter_map(|(&j, m)| new_index(j).map(|n| (n, *m)))
                .unzip();
            out.skins.push(Skin {
                name: s.name.clone(),
                joints,
                inverse_bind,
            });
        }
        for a in &self.animations {
            let mut a = a.clone();
            a.channels.retain_mut(|c| match new_index(c.node) {
                Some(n) => {
                    c.node = n;
                    true
                }
                None => false,
            });
            out.animations.push(a);
        }
        out
    }

    /// True for a node hangar added on the way to glTF that the source file does not have (one
    /// root over an actor's several roots).
    pub fn is_added_root(&self, i: usize) -> bool {
        self.nodes.get(i).is_some_and(|n| {
            n.extras
                .get("hangar")
                .and_then(|h| h.get("actor_root"))
                .and_then(serde_json::Value::as_bool)
                == Some(true)
        })
    }

    /// The level of detail node `i` is marked as: the `{"hangar": {"lod": N}}` mark on it or on the
    /// nearest node above it that has one. Unmarked nodes are the model itself.
    pub fn lod_mark(&self, i: usize) -> Option<u32> {
        let mut at = Some(i);
        for _ in 0..=self.nodes.len() {
            let n = at.and_then(|i| self.nodes.get(i))?;
            if let Some(l) = n
                .extras
                .get("hangar")
                .and_then(|h| h.get("lod"))
                .and_then(serde_json::Value::as_u64)
            {
                return Some(u32::try_from(l).unwrap_or(u32::MAX));
            }
            at = n.parent;
        }
        None
    }

    /// Which nodes make level of detail `lod`: for LOD 0 the unmarked model (an actor's nested LOD 0
    /// copy is left out), or the nodes marked 0 when nothing with a mesh is unmarked; for LOD N the
    /// nodes marked N.
    pub fn lod_mask(&self, lod: u32) -> Vec<bool> {
        let marks: Vec<Option<u32>> = (0..self.nodes.len()).map(|i| self.lod_mark(i)).collect();
        let unmarked_mesh = self
            .nodes
            .iter()
            .zip(&marks)
            .any(|(n, m)| n.mesh.is_some() && m.is_none());
        marks
            .iter()
            .map(|m| match m {
                None => lod == 0 && unmarked_mesh,
                Some(l) => *l == lod && !(lod == 0 && unmarked_mesh),
            })
            .collect()
    }

    /// Merges the meshes of the nodes (by index) that `keep` accepts into one mesh in world space,
    /// one primitive per material. Used to write a single-mesh format from a scene of several objects.
    pub fn flatten(&self, keep: impl Fn(usize) -> bool) -> Mesh {
        let mut out = Mesh::default();
        let mut by_material: Vec<(Option<usize>, Vec<u32>)> = Vec::new();
        // (node, its mesh): a node naming a mesh that does not exist is left out.
        let chosen: Vec<(usize, &Mesh)> = self
            .nodes
            .iter()
            .enumerate()
            .filter(|(i, _)| keep(*i))
            .filter_map(|(i, n)| Some((i, self.meshes.get(n.mesh?)?)))
            .collect();
        let any = |f: &dyn Fn(&Vertices) -> bool| chosen.iter().any(|(_, m)| f(&m.vertices));
        let with_normals = any(&|v| v.normals.is_some());
        let with_tangents = any(&|v| v.tangents.is_some());
        let uv_sets = chosen
            .iter()
            .map(|(_, m)| m.vertices.uvs.len())
            .max()
            .unwrap_or(0);
        let color_sets = chosen
            .iter()
            .map(|(_, m)| m.vertices.colors.len())
            .max()
            .unwrap_or(0);
        let v = &mut out.vertices;
        if with_normals {
            v.normals = Some(Vec::new());
        }
        if with_tangents {
            v.tangents = Some(Vec::new());
        }
        v.uvs = vec![Vec::new(); uv_sets];
        v.colors = vec![Vec::new(); color_sets];
        // A single mesh keeps its extras (an XMF's set indices among them).
        if let [(_, only)] = chosen.as_slice() {
            out.extras = only.extras.clone();
        }
        let v = &mut out.vertices;
        // The roles of the sets, from the first mesh that names all of them.
        v.color_names = chosen
            .iter()
            .map(|(_, m)| &m.vertices.color_names)
            .find(|n| n.len() == color_sets)
            .cloned()
            .unwrap_or_default();
        for &(ni, mesh) in &chosen {
            let world = self.world_matrix(ni);
            let normal_m = glam::Mat3::from_mat4(world).inverse().transpose();
            let flips = world.determinant() < 0.0;
            let base = v.positions.len() as u32;
            let src = &mesh.vertices;
            let n = src.len();
            v.positions.extend(
                src.positions
                    .iter()
                    .map(|p| world.transform_point3(Vec3::from(*p)).to_array()),
            );
            if let Some(dst) = v.normals.as_mut() {
                match &src.normals {
                    Some(ns) => dst.extend(
                        ns.iter()
                            .map(|x| (normal_m * Vec3::from(*x)).normalize_or_zero().to_array()),
                    ),
                    None => dst.extend(std::iter::repeat_n([0.0, 0.0, 1.0], n)),
                }
            }
            if let Some(dst) = v.tangents.as_mut() {
                match &src.tangents {
                    Some(ts) => dst.extend(ts.iter().map(|t| {
                        let d = world
                            .transform_vector3(Vec3::new(t[0], t[1], t[2]))
                            .normalize_or_zero();
                        [d.x, d.y, d.z, if flips { -t[3] } else { t[3] }]
                    })),
                    None => dst.extend(std::iter::repeat_n([1.0, 0.0, 0.0, 1.0], n)),
                }
            }
            for (k, dst) in v.uvs.iter_mut().enumerate() {
                match src.uvs.get(k) {
                    Some(s) => dst.extend_from_slice(s),
                    None => dst.extend(std::iter::repeat_n([0.0, 0.0], n)),
                }
            }
            for (k, dst) in v.colors.iter_mut().enumerate() {
                match src.colors.get(k) {
                    Some(s) => dst.extend_from_slice(s),
                    None => dst.extend(std::iter::repeat_n([1.0, 1.0, 1.0, 1.0], n)),
                }
            }
            for p in &mesh.primitives {
                let slot = match by_material.iter().position(|(m, _)| *m == p.material) {
                    Some(s) => s,
                    None => {
                        by_material.push((p.material, Vec::new()));
                        by_material.len() - 1
                    }
                };
                let dst = &mut by_material[slot].1;
                for tri in p.indices.chunks_exact(3) {
                    // A mirroring transform turns the winding around; keep faces pointing out.
                    if flips {
                        dst.extend_from_slice(&[tri[0] + base, tri[2] + base, tri[1] + base]);
                    } else {
                        dst.extend(tri.iter().map(|i| i + base));
                    }
                }
            }
        }
        out.primitives = by_material
            .into_iter()
            .map(|(material, indices)| Primitive { indices, material })
            .collect();
        out
    }
}

#[cfg(test)]
mod keys_tests {
    use super::Keys;
    use std::sync::Arc;

    #[test]
    fn shared_keys_read_their_range_and_copy_before_an_edit() {
        let buf = Arc::new(vec![0.0, 0.5, 1.0, 7.0, 8.0, 9.0]);
        let times = Keys::shared(&buf, 0..3).unwrap();
        let mut values = Keys::shared(&buf, 3..6).unwrap();
        assert!(Keys::shared(&buf, 4..7).is_none());
        assert_eq!(times[..], [0.0, 0.5, 1.0]);
        let again = Keys::shared(&buf, 0..3).unwrap();
        assert!(std::ptr::eq(&times[..], &again[..]));
        let own_copy = Keys::from(vec![0.0, 0.5, 1.0]);
        assert!(!std::ptr::eq(&times[..], &own_copy[..]));
        assert_eq!(times, Keys::from(vec![0.0, 0.5, 1.0]));
        values[1] = -8.0;
        assert_eq!(values[..], [7.0, -8.0, 9.0]);
        // The shared buffer, and the other channel reading it, are unchanged.
        assert_eq!(buf[..], [0.0, 0.5, 1.0, 7.0, 8.0, 9.0]);
        assert!(!std::ptr::eq(&values[..], &buf[3..6]));
        // A channel's own keys are edited in place.
        let mut own = Keys::from(vec![1.0, 2.0]);
        own[0] = 3.0;
        assert_eq!(own[..], [3.0, 2.0]);
        assert_eq!(format!("{own:?}"), "[3.0, 2.0]");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mesh drawing `prims`, with as many vertices as they use.
    fn mesh(prims: &[&[u32]]) -> Mesh {
        let used = prims
            .iter()
            .flat_map(|p| p.iter())
            .max()
            .map_or(0, |&m| m as usize + 1);
        Mesh {
            vertices: Vertices {
                positions: vec![[0.0; 3]; used.min(1 << 20)],
                ..Default::default()
            },
            primitives: prims
                .iter()
                .map(|i| Primitive {
                    indices: i.to_vec(),
                    material: None,
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn a_quad_has_five_edges_and_its_diagonal_is_shared() {
        let e = mesh(&[&[0, 1, 2], &[2, 1, 3]]).edges();
        assert_eq!(e.verts, vec![[0, 1], [0, 2], [1, 2], [1, 3], [2, 3]]);
        // Corner 1 (vertex 1) runs to vertex 2, as does corner 3 (vertex 2) to vertex 1.
        assert_eq!(e.of_corners, vec![0, 2, 1, 2, 3, 4]);
    }

    #[test]
    fn every_corner_names_the_side_to_its_next_corner_and_no_edge_is_twice() {
        // A strip of 40 triangles over 22 vertices in two primitives, a degenerate triangle and a
        // leftover index (not a whole triangle: left out).
        let mut a = Vec::new();
        for k in 0..20u32 {
            a.extend([k, k + 1, k + 2]);
        }
        let mut b: Vec<u32> = (0..20u32).flat_map(|k| [k + 2, k + 1, k]).collect();
        b.extend([5, 5, 7, 9]);
        let m = mesh(&[&a, &b]);
        let corners: Vec<u32> = m.corners().collect();
        assert_eq!(corners.len(), 123);
        let e = m.edges();
        assert_eq!(e.of_corners.len(), 123);
        for (c, &edge) in e.of_corners.iter().enumerate() {
            let next = if c % 3 == 2 { c - 2 } else { c + 1 };
            let (x, y) = (corners[c], corners[next]);
            assert_eq!(e.verts[edge as usize], [x.min(y), x.max(y)], "corner {c}");
        }
        let mut unique = e.verts.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), e.verts.len());
        // The strip: 21 sides k..k+1 and 20 sides k..k+2; the degenerate triangle adds 5-5 only
        // (its 5-7 is the strip's).
        assert_eq!(e.verts.len(), 21 + 20 + 1);
    }

    #[test]
    fn corners_past_the_vertices_get_edges_without_a_bucket_a_vertex() {
        let mut m = mesh(&[&[0, 1, 2], &[2, 1, 3], &[u32::MAX, 0, 1]]);
        m.vertices.positions.truncate(4);
        let e = m.edges();
        assert_eq!(
            e.verts,
            vec![
                [0, 1],
                [0, 2],
                [0, u32::MAX],
                [1, 2],
                [1, 3],
                [1, u32::MAX],
                [2, 3]
            ]
        );
        assert_eq!(e.of_corners, vec![0, 3, 1, 3, 4, 6, 2, 0, 5]);
        // Within range, both ways give the same table.
        m.primitives.pop();
        assert_eq!(
            m.edges().verts,
            vec![[0, 1], [0, 2], [1, 2], [1, 3], [2, 3]]
        );
    }

    #[test]
    fn retained_materials_are_renumbered_and_dropped_ones_leave_their_primitives_bare() {
        let mut s = Scene {
            materials: ["a", "b", "c"]
                .map(|n| Material {
                    name: n.into(),
                    ..Default::default()
                })
                .to_vec(),
            meshes: vec![mesh(&[&[0, 1, 2], &[1, 2, 3], &[2, 3, 0]])],
            ..Default::default()
        };
        for (p, m) in s.meshes[0]
            .primitives
            .iter_mut()
            .zip([Some(2), Some(1), None])
        {
            p.material = m;
        }
        s.retain_materials(|k| k != 1);
        let names: Vec<&str> = s.materials.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["a", "c"]);
        let drawn: Vec<Option<usize>> = s.meshes[0].primitives.iter().map(|p| p.material).collect();
        assert_eq!(drawn, [Some(1), None, None]);
    }

    #[test]
    fn no_triangles_no_edges() {
        assert_eq!(mesh(&[]).edges(), Edges::default());
        assert_eq!(mesh(&[&[1, 2]]).edges(), Edges::default());
    }
}
