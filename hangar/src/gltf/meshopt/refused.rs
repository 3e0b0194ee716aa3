//! The twin of `codec.rs` without the `native` feature: meshoptimizer is C++, so compressing and
//! reading EXT_meshopt_compression are refused ([`check`] runs before anything else is called).

use crate::error::{Error, Result};

pub(super) fn check(what: &str) -> Result<()> {
    Err(Error::unsupported(format!(
        "{what} needs the native build of hangar (meshoptimizer is C++)"
    )))
}

pub(super) fn encode_indices(_: &[u32], _: usize) -> Option<Vec<u8>> {
    None
}

pub(super) fn encode_vertices(_: &[u8], _: usize) -> Option<Vec<u8>> {
    None
}

pub(super) fn decode(
    _: &[u8],
    _: &str,
    _: &str,
    _: usize,
    _: usize,
) -> std::result::Result<Vec<u8>, String> {
    Err("meshoptimizer is not in this build".into())
}
