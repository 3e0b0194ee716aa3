//! X4's XML data files that models depend on.

pub mod material_library;
