//! Decoded pictures, below the texture formats that make them (DDS, TGA, PNG).

/// 8-bit RGBA pixels, rows top to bottom.
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
}
