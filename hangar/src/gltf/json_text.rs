//! A glTF document's compact JSON, with the arrays that grow with a model written by hand.
//!
//! An M3 with hundreds of clips has tens of thousands of accessors, animation channels and
//! samplers. serde_json wrote each of their keys as an escaped string in several small writes,
//! and that was most of the time an M3 batch spent on JSON. Accessors, buffer views, animations
//! and nodes are written here from fixed byte strings instead; everything else, and any item that
//! uses a field this writer leaves to serde (an extension, a sparse accessor), goes through serde.
//! The bytes are those of `serde_json::to_writer(root)` (tested on every corpus model).

use gltf_json as json;
use json::validation::Checked::Valid;
use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter};
use serde_json::value::RawValue;
use serde_json::{Error, Result, Value};

/// `root` as compact JSON, appended to `out`.
pub fn write(root: &json::Root, out: &mut Vec<u8>) -> Result<()> {
    // Named in full, so a field gltf-json adds cannot be skipped without a compile error.
    let json::Root {
        accessors,
        animations,
        asset,
        buffers,
        buffer_views,
        scene,
        extensions,
        extras,
        extensions_used,
        extensions_required,
        cameras,
        images,
        materials,
        meshes,
        nodes,
        samplers,
        scenes,
        skins,
        textures,
    } = root;
    let mut o = Object::open(out);
    o.list(b"\"accessors\":", accessors, accessor)?;
    o.list(b"\"animations\":", animations, animation)?;
    o.serde(b"\"asset\":", asset)?;
    o.list(b"\"buffers\":", buffers, serde)?;
    o.list(b"\"bufferViews\":", buffer_views, view)?;
    if let Some(s) = scene {
        o.uint(b"\"scene\":", s.value() as u64);
    }
    if let Some(e) = extensions {
        o.serde(b"\"extensions\":", e)?;
    }
    o.extras(extras);
    o.list(b"\"extensionsUsed\":", extensions_used, serde)?;
    o.list(b"\"extensionsRequired\":", extensions_required, serde)?;
    o.list(b"\"cameras\":", cameras, serde)?;
    o.list(b"\"images\":", images, serde)?;
    o.list(b"\"materials\":", materials, serde)?;
    o.list(b"\"meshes\":", meshes, serde)?;
    o.list(b"\"nodes\":", nodes, node)?;
    o.list(b"\"samplers\":", samplers, serde)?;
    o.list(b"\"scenes\":", scenes, serde)?;
    o.list(b"\"skins\":", skins, serde)?;
    o.list(b"\"textures\":", textures, serde)?;
    o.close();
    Ok(())
}

/// A JSON object being written: keys come with their quotes and colon (`b"\"count\":"`).
struct Object<'o> {
    out: &'o mut Vec<u8>,
    first: bool,
}

impl<'o> Object<'o> {
    fn open(out: &'o mut Vec<u8>) -> Self {
        out.push(b'{');
        Object { out, first: true }
    }

    #[inline(always)]
    fn key(&mut self, key: &[u8]) -> &mut Vec<u8> {
        if !std::mem::take(&mut self.first) {
            self.out.push(b',');
        }
        self.out.extend_from_slice(key);
        self.out
    }

    #[inline(always)]
    fn uint(&mut self, key: &[u8], v: u64) {
        uint(v, self.key(key));
    }

    /// A fixed JSON value (a string with its quotes, or a number).
    #[inline(always)]
    fn raw(&mut self, key: &[u8], v: &[u8]) {
        self.key(key).extend_from_slice(v);
    }

    fn string(&mut self, key: &[u8], s: &str) -> Result<()> {
        let out = self.key(key);
        if s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
            return serde(&s, out);
        }
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
        Ok(())
    }

    #[inline(always)]
    fn name(&mut self, name: &Option<String>) -> Result<()> {
        match name {
            Some(n) => self.string(b"\"name\":", n),
            None => Ok(()),
        }
    }

    #[inline(always)]
    fn extras(&mut self, extras: &Option<Box<RawValue>>) {
        if let Some(x) = extras {
            self.raw(b"\"extras\":", x.get().as_bytes());
        }
    }

    fn floats(&mut self, key: &[u8], v: &[f32]) -> Result<()> {
        array(self.key(key), v, |&f, out| float(f, out))
    }

    fn serde<T: Serialize + ?Sized>(&mut self, key: &[u8], v: &T) -> Result<()> {
        serde(v, self.key(key))
    }

    /// A non-empty array (serde skips empty ones), each item written by `each`.
    fn list<T>(
        &mut self,
        key: &[u8],
        items: &[T],
        each: fn(&T, &mut Vec<u8>) -> Result<()>,
    ) -> Result<()> {
        if items.is_empty() {
            return Ok(());
        }
        array(self.key(key), items, each)
    }

    fn close(self) {
        self.out.push(b'}');
    }
}

fn serde<T: Serialize + ?Sized>(v: &T, out: &mut Vec<u8>) -> Result<()> {
    serde_json::to_writer(out, v)
}

/// `[a,b,...]`, each item written by `each`.
#[inline(always)]
fn array<T>(
    out: &mut Vec<u8>,
    items: &[T],
    mut each: impl FnMut(&T, &mut Vec<u8>) -> Result<()>,
) -> Result<()> {
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        each(item, out)?;
    }
    out.push(b']');
    Ok(())
}

#[inline(always)]
fn uint(v: u64, out: &mut Vec<u8>) {
    // Writing to a Vec cannot fail.
    let _ = CompactFormatter.write_u64(out, v);
}

/// As serde_json writes an f32: shortest round-trip digits, `null` when not finite.
fn float(f: f32, out: &mut Vec<u8>) -> Result<()> {
    if f.is_finite() {
        CompactFormatter.write_f32(out, f).map_err(Error::io)
    } else {
        out.extend_from_slice(b"null");
        Ok(())
    }
}

/// An accessor's bounds: an array of numbers, written as serde_json writes a [`serde_json::Number`].
fn numbers(v: &Value, out: &mut Vec<u8>) -> Result<()> {
    let Value::Array(items) = v else {
        return serde(v, out);
    };
    if !items.iter().all(Value::is_number) {
        return serde(v, out);
    }
    array(out, items, |n, out| {
        // serde_json's own order: a positive integer, a negative one, else a float. Writing to
        // a Vec cannot fail.
        let _ = match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => CompactFormatter.write_u64(out, u),
            (None, Some(i)) => CompactFormatter.write_i64(out, i),
            (None, None) => CompactFormatter.write_f64(out, n.as_f64().unwrap_or_default()),
        };
        Ok(())
    })
}

fn accessor(a: &json::Accessor, out: &mut Vec<u8>) -> Result<()> {
    let json::Accessor {
        buffer_view,
        byte_offset,
        count,
        component_type,
        extensions,
        extras,
        type_,
        min,
        max,
        name,
        normalized,
        sparse,
    } = a;
    let (Valid(component), Valid(ty), None, None) = (component_type, type_, extensions, sparse)
    else {
        return serde(a, out);
    };
    let mut o = Object::open(out);
    if let Some(v) = buffer_view {
        o.uint(b"\"bufferView\":", v.value() as u64);
    }
    if let Some(b) = byte_offset {
        o.uint(b"\"byteOffset\":", b.0);
    }
    o.uint(b"\"count\":", count.0);
    o.uint(b"\"componentType\":", component.0.as_gl_enum() as u64);
    o.extras(extras);
    use json::accessor::Type;
    let ty: &[u8] = match ty {
        Type::Scalar => b"\"SCALAR\"",
        Type::Vec2 => b"\"VEC2\"",
        Type::Vec3 => b"\"VEC3\"",
        Type::Vec4 => b"\"VEC4\"",
        Type::Mat2 => b"\"MAT2\"",
        Type::Mat3 => b"\"MAT3\"",
        Type::Mat4 => b"\"MAT4\"",
    };
    o.raw(b"\"type\":", ty);
    if let Some(m) = min {
        numbers(m, o.key(b"\"min\":"))?;
    }
    if let Some(m) = max {
        numbers(m, o.key(b"\"max\":"))?;
    }
    o.name(name)?;
    if *normalized {
        o.raw(b"\"normalized\":", b"true");
    }
    o.close();
    Ok(())
}

fn view(v: &json::buffer::View, out: &mut Vec<u8>) -> Result<()> {
    let json::buffer::View {
        buffer,
        byte_length,
        byte_offset,
        byte_stride,
        name,
        target,
        extensions,
        extras,
    } = v;
    if extensions.is_some() || matches!(target, Some(json::validation::Checked::Invalid)) {
        return serde(v, out);
    }
    let mut o = Object::open(out);
    o.uint(b"\"buffer\":", buffer.value() as u64);
    o.uint(b"\"byteLength\":", byte_length.0);
    if let Some(b) = byte_offset {
        o.uint(b"\"byteOffset\":", b.0);
    }
    if let Some(s) = byte_stride {
        o.uint(b"\"byteStride\":", s.0 as u64);
    }
    o.name(name)?;
    if let Some(Valid(t)) = target {
        use json::buffer::Target;
        o.raw(
            b"\"target\":",
            match t {
                Target::ArrayBuffer => b"34962",
                Target::ElementArrayBuffer => b"34963",
            },
        );
    }
    o.extras(extras);
    o.close();
    Ok(())
}

fn animation(a: &json::Animation, out: &mut Vec<u8>) -> Result<()> {
    let json::Animation {
        extensions,
        extras,
        channels,
        name,
        samplers,
    } = a;
    if extensions.is_some() {
        return serde(a, out);
    }
    let mut o = Object::open(out);
    o.extras(extras);
    o.list(b"\"channels\":", channels, channel)?;
    o.name(name)?;
    o.list(b"\"samplers\":", samplers, sampler)?;
    o.close();
    Ok(())
}

fn channel(c: &json::animation::Channel, out: &mut Vec<u8>) -> Result<()> {
    let json::animation::Channel {
        sampler,
        target,
        extensions,
        extras,
    } = c;
    let json::animation::Target {
        extensions: target_extensions,
        extras: target_extras,
        node,
        path,
    } = target;
    let (None, None, Valid(path)) = (extensions, target_extensions, path) else {
        return serde(c, out);
    };
    use json::animation::Property;
    let path: &[u8] = match path {
        Property::Translation => b"\"translation\"",
        Property::Rotation => b"\"rotation\"",
        Property::Scale => b"\"scale\"",
        Property::MorphTargetWeights => b"\"weights\"",
    };
    let mut o = Object::open(out);
    o.uint(b"\"sampler\":", sampler.value() as u64);
    let mut t = Object::open(o.key(b"\"target\":"));
    t.extras(target_extras);
    t.uint(b"\"node\":", node.value() as u64);
    t.raw(b"\"path\":", path);
    t.close();
    o.extras(extras);
    o.close();
    Ok(())
}

fn sampler(s: &json::animation::Sampler, out: &mut Vec<u8>) -> Result<()> {
    let json::animation::Sampler {
        extensions,
        extras,
        input,
        interpolation,
        output,
    } = s;
    let (None, Valid(interpolation)) = (extensions, interpolation) else {
        return serde(s, out);
    };
    use json::animation::Interpolation;
    let mut o = Object::open(out);
    o.extras(extras);
    o.uint(b"\"input\":", input.value() as u64);
    o.raw(
        b"\"interpolation\":",
        match interpolation {
            Interpolation::Linear => b"\"LINEAR\"",
            Interpolation::Step => b"\"STEP\"",
            Interpolation::CubicSpline => b"\"CUBICSPLINE\"",
        },
    );
    o.uint(b"\"output\":", output.value() as u64);
    o.close();
    Ok(())
}

fn node(n: &json::Node, out: &mut Vec<u8>) -> Result<()> {
    let json::Node {
        camera,
        children,
        extensions,
        extras,
        matrix,
        mesh,
        name,
        rotation,
        scale,
        translation,
        skin,
        weights,
    } = n;
    if extensions.is_some() {
        return serde(n, out);
    }
    let mut o = Object::open(out);
    if let Some(c) = camera {
        o.uint(b"\"camera\":", c.value() as u64);
    }
    if let Some(children) = children {
        array(o.key(b"\"children\":"), children, |c, out| {
            uint(c.value() as u64, out);
            Ok(())
        })?;
    }
    o.extras(extras);
    if let Some(m) = matrix {
        o.floats(b"\"matrix\":", m)?;
    }
    if let Some(m) = mesh {
        o.uint(b"\"mesh\":", m.value() as u64);
    }
    o.name(name)?;
    if let Some(r) = rotation {
        o.floats(b"\"rotation\":", &r.0)?;
    }
    if let Some(s) = scale {
        o.floats(b"\"scale\":", s)?;
    }
    if let Some(t) = translation {
        o.floats(b"\"translation\":", t)?;
    }
    if let Some(s) = skin {
        o.uint(b"\"skin\":", s.value() as u64);
    }
    if let Some(w) = weights {
        o.floats(b"\"weights\":", w)?;
    }
    o.close();
    Ok(())
}

#[cfg(test)]
#[path = "json_text_tests.rs"]
mod tests;
