//! The mod check's XML reading: the library's one ([`crate::xml`]), named here as the mod check
//! and authoring have always called it.

pub(crate) use crate::xml::{line, parse, text, too_deep};
