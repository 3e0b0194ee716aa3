//! Value types for raw, reversible structures: they keep every bit of what a file held and
//! still show as readable JSON in a dump.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;

/// Bytes borrowed from the input (or owned after a JSON load); base64 in JSON.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Bytes<'a>(pub Cow<'a, [u8]>);

impl<'a> Bytes<'a> {
    pub fn borrowed(b: &'a [u8]) -> Self {
        Bytes(Cow::Borrowed(b))
    }

    pub fn owned(b: Vec<u8>) -> Self {
        Bytes(Cow::Owned(b))
    }

    /// Owned bytes, or none at all when they are all zero (writers pad with zeros, and a dump stays short).
    pub fn unless_zero(b: &[u8]) -> Bytes<'static> {
        if b.iter().all(|&x| x == 0) {
            Bytes::default()
        } else {
            Bytes::owned(b.to_vec())
        }
    }

    pub fn is_zero(&self) -> bool {
        self.0.iter().all(|&b| b == 0)
    }

    pub fn into_owned(self) -> Bytes<'static> {
        Bytes(Cow::Owned(self.0.into_owned()))
    }

    pub fn to_base64(&self) -> String {
        B64.encode(&self.0)
    }
}

impl std::ops::Deref for Bytes<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for Bytes<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Bytes({} bytes)", self.0.len())
    }
}

impl Serialize for Bytes<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_base64())
    }
}

impl<'de, 'a> Deserialize<'de> for Bytes<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = Cow::<str>::deserialize(d)?;
        B64.decode(s.as_bytes())
            .map(Bytes::owned)
            .map_err(|e| D::Error::custom(format!("bad base64: {e}")))
    }
}

macro_rules! float_bits {
    ($name:ident, $float:ty, $bits:ty) => {
        /// A float kept bit for bit: a JSON number when that reproduces it exactly, else `"0x…"` bits
        /// (NaN payloads and other garbage survive a JSON round trip).
        #[derive(Clone, Copy, PartialEq, Eq, Default)]
        pub struct $name(pub $bits);

        impl $name {
            pub fn get(self) -> $float {
                <$float>::from_bits(self.0)
            }
            pub fn new(v: $float) -> Self {
                $name(v.to_bits())
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{:?}", self.get())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let v = self.get();
                if v.is_finite() {
                    s.serialize_f64(v as f64)
                } else {
                    s.serialize_str(&format!("0x{:x}", self.0))
                }
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                #[derive(Deserialize)]
                #[serde(untagged)]
                enum Repr<'a> {
                    Num(f64),
                    #[serde(borrow)]
                    Bits(Cow<'a, str>),
                }
                match Repr::deserialize(d)? {
                    Repr::Num(v) => Ok($name::new(v as $float)),
                    Repr::Bits(s) => s
                        .strip_prefix("0x")
                        .and_then(|h| <$bits>::from_str_radix(h, 16).ok())
                        .map($name)
                        .ok_or_else(|| {
                            D::Error::custom(format!("expected a number or 0x bits, got {s:?}"))
                        }),
                }
            }
        }
    };
}

float_bits!(F32Bits, f32, u32);
float_bits!(F64Bits, f64, u64);

/// An f32 as the shortest JSON number that gives back the same bits, or `"0x…"` when not finite.
pub fn float_value(bits: u32) -> serde_json::Value {
    let f = f32::from_bits(bits);
    if !f.is_finite() {
        return serde_json::Value::String(format!("0x{bits:08x}"));
    }
    let short: f64 = format!("{f}").parse().unwrap_or(f as f64);
    let v = if (short as f32).to_bits() == bits {
        short
    } else {
        f as f64
    };
    serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, serde_json::Value::Number)
}

pub fn float_bits(v: &serde_json::Value) -> Option<u32> {
    match v {
        serde_json::Value::Number(n) => n.as_f64().map(|f| (f as f32).to_bits()),
        serde_json::Value::String(s) => s
            .strip_prefix("0x")
            .and_then(|h| u32::from_str_radix(h, 16).ok()),
        _ => None,
    }
}

/// The bytes of a JSON string holding base64 (how dumps store raw bytes), if it is one.
pub fn base64_of(v: &serde_json::Value) -> Option<Vec<u8>> {
    B64.decode(v.as_str()?).ok()
}

/// A fixed-size, NUL-padded text field. In JSON it is a plain string when the field is clean text
/// followed by zeros, else `{"text": …, "bytes": base64}` with every byte of the field.
#[derive(Clone, PartialEq, Eq)]
pub struct FixedString {
    pub bytes: Vec<u8>,
}

impl FixedString {
    /// The text up to the first NUL, lossily decoded.
    pub fn text(&self) -> Cow<'_, str> {
        let end = self
            .bytes
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(self.bytes.len());
        String::from_utf8_lossy(&self.bytes[..end])
    }

    /// A field of `size` bytes holding `text`; `None` when it does not fit with its NUL.
    pub fn from_text(text: &str, size: usize) -> Option<Self> {
        if text.len() >= size || text.as_bytes().contains(&0) {
            return None;
        }
        let mut bytes = text.as_bytes().to_vec();
        bytes.resize(size, 0);
        Some(FixedString { bytes })
    }

    fn is_clean(&self) -> bool {
        let end = match self.bytes.iter().position(|&b| b == 0) {
            Some(e) => e,
            None => return false,
        };
        std::str::from_utf8(&self.bytes[..end]).is_ok() && self.bytes[end..].iter().all(|&b| b == 0)
    }
}

impl std::fmt::Debug for FixedString {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.text())
    }
}

#[derive(Serialize, Deserialize)]
struct FixedStringFull {
    text: String,
    bytes: Bytes<'static>,
}

impl Serialize for FixedString {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.is_clean() {
            s.serialize_str(&self.text())
        } else {
            FixedStringFull {
                text: self.text().into_owned(),
                bytes: Bytes::owned(self.bytes.clone()),
            }
            .serialize(s)
        }
    }
}

/// A fixed string read back from JSON; its field size is applied by the writer (`FixedString` from a
/// plain string holds just the text and its NUL until then).
impl<'de> Deserialize<'de> for FixedString {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr {
            Text(String),
            Full(FixedStringFull),
        }
        match Repr::deserialize(d)? {
            Repr::Text(t) => {
                if t.as_bytes().contains(&0) {
                    return Err(D::Error::custom("a name may not contain NUL"));
                }
                let mut bytes = t.into_bytes();
                bytes.push(0);
                Ok(FixedString { bytes })
            }
            Repr::Full(f) => Ok(FixedString {
                bytes: f.bytes.0.into_owned(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_keep_every_bit_through_json() {
        for bits in [
            0x7fc0_0001u32,
            0xffff_ffff,
            0x8000_0000,
            0x3f80_0000,
            0x0000_0001,
        ] {
            let j = serde_json::to_string(&F32Bits(bits)).unwrap();
            let back: F32Bits = serde_json::from_str(&j).unwrap();
            assert_eq!(back.0, bits, "{j}");
        }
        for bits in [
            0x7ff8_0000_0000_0001u64,
            0xc050_2400_0000_0000,
            0x8000_0000_0000_0000,
            // Found by fuzzing (round_trip, an XMF buffer's bounds): its shortest decimal needs an
            // exact parse (serde_json's float_roundtrip), or the dump comes back one bit off.
            0x3fbe_00dd_a000_0000,
        ] {
            let j = serde_json::to_string(&F64Bits(bits)).unwrap();
            let back: F64Bits = serde_json::from_str(&j).unwrap();
            assert_eq!(back.0, bits, "{j}");
        }
    }

    #[test]
    fn fixed_string_is_plain_text_when_clean() {
        let s = FixedString::from_text("omen.evemata", 8 + 128).unwrap();
        assert_eq!(serde_json::to_string(&s).unwrap(), "\"omen.evemata\"");
        let mut dirty = s.clone();
        dirty.bytes[100] = 7;
        let j = serde_json::to_string(&dirty).unwrap();
        assert!(j.contains("\"bytes\""), "{j}");
        let back: FixedString = serde_json::from_str(&j).unwrap();
        assert_eq!(back.bytes, dirty.bytes);
        assert!(FixedString::from_text(&"x".repeat(128), 128).is_none());
    }
}
