//! Normalized integers as Direct3D vertex declarations and glTF both define them: a signed value
//! is `v / max` (the most negative one also -1), an unsigned one `v / max`; encoding rounds to
//! the nearest and clamps.

#[inline]
pub fn snorm8(v: f32) -> i8 {
    (v.clamp(-1.0, 1.0) * 127.0).round() as i8
}

#[inline]
pub fn snorm16(v: f32) -> i16 {
    (v.clamp(-1.0, 1.0) * 32767.0).round() as i16
}

#[inline]
pub fn unorm8(v: f32) -> u8 {
    (v.clamp(0.0, 1.0) * 255.0).round() as u8
}

#[inline]
pub fn unorm16(v: f32) -> u16 {
    (v.clamp(0.0, 1.0) * 65535.0).round() as u16
}

#[inline]
pub fn from_snorm8(v: i8) -> f32 {
    (v as f32 / 127.0).max(-1.0)
}

#[inline]
pub fn from_snorm16(v: i16) -> f32 {
    (v as f32 / 32767.0).max(-1.0)
}

#[inline]
pub fn from_unorm8(v: u8) -> f32 {
    v as f32 / 255.0
}

#[inline]
pub fn from_unorm16(v: u16) -> f32 {
    v as f32 / 65535.0
}
