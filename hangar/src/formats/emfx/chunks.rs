//! The chunk layouts of XAC (actors), XSM (skeletal motions) and XPM (morph motions), by chunk id
//! and version. From the spec in shared/seeds (004) and, for the versions it lacks, FORMAT-NOTES.md;
//! checked against every corpus file (CHUNKS.tsv).

use super::Kind;
use crate::formats::schema::{Count, F};

use Count::{Field, Mul, Rest};
use F::*;

const NODE_V3: &[F] = &[
    Floats("rotation", 4),
    Floats("scaleRotation", 4),
    Floats("position", 3),
    Floats("scale", 3),
    Floats("unused", 3),
    I32("unknown0"),
    I32("parent"),
    U32("unknown1"),
    Floats("transform", 16),
    Str("name"),
];

const NODE_B: &[F] = &[
    Floats("rotation", 4),
    Floats("scaleRotation", 4),
    Floats("position", 3),
    Floats("scale", 3),
    Floats("unused", 3),
    I32("unknown0"),
    I32("unknown1"),
    I32("parent"),
    I32("numChildren"),
    I32("includeInBounds"),
    Floats("transform", 16),
    F32("importance"),
    Str("name"),
];

const NODES_V1: &[F] = &[
    I32("numNodes"),
    I32("numRoots"),
    List("nodes", Field("numNodes"), NODE_B),
];

const METADATA_V2: &[F] = &[
    U32("repositionMask"),
    I32("repositioningNode"),
    U8("exporterMajor"),
    U8("exporterMinor"),
    Bytes("pad", 2),
    F32("retargetRootOffset"),
    Str("sourceApp"),
    Str("originalFile"),
    Str("exportDate"),
    Str("actorName"),
];

const TOTALS_V1: &[F] = &[
    I32("totalMaterials"),
    I32("standardMaterials"),
    I32("fxMaterials"),
];

const MATERIAL_HEAD: [F; 13] = [
    Floats("ambient", 4),
    Floats("diffuse", 4),
    Floats("specular", 4),
    Floats("emissive", 4),
    F32("shine"),
    F32("shineStrength"),
    F32("opacity"),
    F32("ior"),
    U8("doubleSided"),
    U8("wireframe"),
    U8("unused"),
    U8("numLayers"),
    Str("name"),
];

const LAYER: &[F] = &[
    F32("amount"),
    F32("uOffset"),
    F32("vOffset"),
    F32("uTiling"),
    F32("vTiling"),
    F32("rotation"),
    I16("materialId"),
    U8("mapType"),
    U8("unused"),
    Str("texture"),
];

const MATERIAL_V1: &[F] = &MATERIAL_HEAD;

const MATERIAL_V2: [F; 14] = join(&MATERIAL_HEAD, &[List("layers", Field("numLayers"), LAYER)]);

const ATTRIBUTE_LAYER: &[F] = &[
    I32("type"),
    I32("attribSize"),
    U8("keepOriginals"),
    U8("isScaleFactor"),
    Bytes("pad", 2),
    Blob("data", Mul("numVertices", "attribSize"), 1),
];

const SUBMESH: &[F] = &[
    I32("numIndices"),
    I32("numVertices"),
    I32("materialId"),
    I32("numBones"),
    Words("indices", Field("numIndices")),
    Words("bones", Field("numBones")),
];

const MESH_V1: &[F] = &[
    I32("node"),
    I32("numInfluenceRanges"),
    I32("numVertices"),
    I32("numIndices"),
    I32("numSubMeshes"),
    I32("numAttribLayers"),
    U8("isCollision"),
    Bytes("pad", 3),
    List("layers", Field("numAttribLayers"), ATTRIBUTE_LAYER),
    List("subMeshes", Field("numSubMeshes"), SUBMESH),
];

const INFLUENCE: &[F] = &[F32("weight"), I16("bone"), Bytes("pad", 2)];
const RANGE: &[F] = &[I32("first"), I32("count")];

const SKIN_TAIL: [F; 4] = [
    U8("isCollision"),
    Bytes("pad", 3),
    List("influences", Field("numInfluences"), INFLUENCE),
    List("ranges", Rest(8), RANGE),
];

const SKIN_V2: [F; 6] = join(&[I32("node"), I32("numInfluences")], &SKIN_TAIL);
const SKIN_V3: [F; 7] = join(
    &[I32("node"), I32("numLocalBones"), I32("numInfluences")],
    &SKIN_TAIL,
);

const DEFORMATION: &[F] = &[
    I32("node"),
    F32("minValue"),
    F32("maxValue"),
    I32("numVertices"),
    Blob("positionOffsets", Field("numVertices"), 6),
    Blob("normalOffsets", Field("numVertices"), 3),
    Blob("tangentOffsets", Field("numVertices"), 3),
    Words("vertexIndices", Field("numVertices")),
];

const MORPH_TRANSFORM: &[F] = &[
    I32("node"),
    Floats("rotation", 4),
    Floats("scaleRotation", 4),
    Floats("position", 3),
    Floats("scale", 3),
];

const MORPH_TARGET: &[F] = &[
    F32("rangeMin"),
    F32("rangeMax"),
    I32("lod"),
    I32("numDeformations"),
    I32("numTransformations"),
    U32("phonemes"),
    Str("name"),
    List("deformations", Field("numDeformations"), DEFORMATION),
    List(
        "transformations",
        Field("numTransformations"),
        MORPH_TRANSFORM,
    ),
];

const MORPHS_V1: &[F] = &[
    I32("numTargets"),
    I32("lodIndex"),
    List("targets", Field("numTargets"), MORPH_TARGET),
];

const NODE_LIMITS_V1: &[F] = &[
    Floats("limits", 18),
    Bytes("flags", 9),
    Bytes("pad", 3),
    I32("node"),
];

const GROUP: &[F] = &[
    U16("numNodes"),
    U8("disabled"),
    Str("name"),
    List("nodes", Field("numNodes"), &[U16("node")]),
];

const GROUPS_V1: &[F] = &[U16("numGroups"), List("groups", Field("numGroups"), GROUP)];

const LOD_V1: &[F] = &[U32("level"), U32("size"), Nested("actor", Field("size"))];

// Motions.

const MOTION_INFO_V1: &[F] = &[
    I32("fps"),
    U8("exporterMajor"),
    U8("exporterMinor"),
    Bytes("pad", 2),
    Str("sourceApp"),
    Str("originalFile"),
    Str("exportDate"),
    Str("motionName"),
];

const MOTION_INFO_V2: &[F] = &[
    F32("unused"),
    F32("maxError"),
    I32("fps"),
    U8("exporterMajor"),
    U8("exporterMinor"),
    Bytes("pad", 2),
    Str("sourceApp"),
    Str("originalFile"),
    Str("exportDate"),
    Str("motionName"),
];

const KEY3: &[F] = &[Floats("value", 3), F32("time")];
const KEY4: &[F] = &[Floats("value", 4), F32("time")];
const KEYQ16: &[F] = &[Quat16("value"), F32("time")];

/// The pose part of a sub-motion: four quaternions (f32 or i16), four vectors, four key counts.
const fn quat(q16: bool, name: &'static str) -> F {
    if q16 {
        Quat16(name)
    } else {
        Floats(name, 4)
    }
}

const fn pose(q16: bool) -> [F; 12] {
    [
        quat(q16, "poseRotation"),
        quat(q16, "bindPoseRotation"),
        quat(q16, "poseScaleRotation"),
        quat(q16, "bindPoseScaleRotation"),
        Floats("posePosition", 3),
        Floats("poseScale", 3),
        Floats("bindPosePosition", 3),
        Floats("bindPoseScale", 3),
        I32("numPositionKeys"),
        I32("numRotationKeys"),
        I32("numScaleKeys"),
        I32("numScaleRotationKeys"),
    ]
}

const SUBMOTION_F32_HEAD: [F; 12] = pose(false);
const SUBMOTION_Q16_HEAD: [F; 12] = pose(true);

const fn join<const N: usize>(a: &[F], b: &[F]) -> [F; N] {
    let mut out = [F::U8(""); N];
    let mut i = 0;
    while i < a.len() {
        out[i] = a[i];
        i += 1;
    }
    let mut k = 0;
    while k < b.len() {
        out[i + k] = b[k];
        k += 1;
    }
    out
}

/// The four key lists of a sub-motion, with f32 or i16 quaternions.
const fn key_lists(q16: bool) -> [F; 4] {
    let q = if q16 { KEYQ16 } else { KEY4 };
    [
        List("positionKeys", Field("numPositionKeys"), KEY3),
        List("rotationKeys", Field("numRotationKeys"), q),
        List("scaleKeys", Field("numScaleKeys"), KEY3),
        List("scaleRotationKeys", Field("numScaleRotationKeys"), q),
    ]
}

const NAMED: [F; 2] = [F32("maxError"), Str("name")];

const SUBMOTION_V1: [F; 18] = join(&join::<14>(&SUBMOTION_F32_HEAD, &NAMED), &key_lists(false));
const SUBMOTION_V2: [F; 18] = join(&join::<14>(&SUBMOTION_Q16_HEAD, &NAMED), &key_lists(true));
/// 0xC8 v1: one sub-motion a chunk, no max-error field.
const SUBMOTION_C8: [F; 17] = join(
    &join::<13>(&SUBMOTION_F32_HEAD, &[Str("name")]),
    &key_lists(false),
);

const BONE_ANIM_V1: &[F] = &[
    I32("numSubMotions"),
    List("subMotions", Field("numSubMotions"), &SUBMOTION_V1),
];

const BONE_ANIM_V2: &[F] = &[
    I32("numSubMotions"),
    List("subMotions", Field("numSubMotions"), &SUBMOTION_V2),
];

const MORPH_KEY: &[F] = &[F32("time"), U16("amount"), Bytes("pad", 2)];

const MORPH_ANIM_V1: &[F] = &[
    I32("numTracks"),
    List(
        "tracks",
        Field("numTracks"),
        &[
            F32("poseWeight"),
            F32("minWeight"),
            F32("maxWeight"),
            U32("phonemes"),
            I32("numKeys"),
            Str("name"),
            List("keys", Field("numKeys"), MORPH_KEY),
        ],
    ),
];

/// The layout of chunk `id` at `version` in a file of `kind`, and the chunk's name.
pub fn layout(kind: Kind, id: u32, version: u32) -> Option<(&'static str, &'static [F])> {
    Some(match (kind, id, version) {
        (Kind::Xac, 0x0, 3) => ("node", NODE_V3),
        (Kind::Xac, 0x1, 1) => ("mesh", MESH_V1),
        (Kind::Xac, 0x2, 2) => ("skinning", &SKIN_V2),
        (Kind::Xac, 0x2, 3) => ("skinning", &SKIN_V3),
        (Kind::Xac, 0x3, 1) => ("material", MATERIAL_V1),
        (Kind::Xac, 0x3, 2) => ("material", &MATERIAL_V2),
        (Kind::Xac, 0x4, 2) => ("materialLayer", LAYER),
        (Kind::Xac, 0x6, 1) => ("nodeLimits", NODE_LIMITS_V1),
        (Kind::Xac, 0x7, 2) => ("metadata", METADATA_V2),
        (Kind::Xac, 0x8, 1) => ("meshLod", LOD_V1),
        (Kind::Xac, 0xA, 1) => ("nodeGroups", GROUPS_V1),
        (Kind::Xac, 0xB, 1) => ("nodes", NODES_V1),
        (Kind::Xac, 0xC, 1) => ("morphTargets", MORPHS_V1),
        (Kind::Xac, 0xD, 1) => ("materialTotals", TOTALS_V1),
        (Kind::Xsm, 0xC8, 1) => ("subMotion", &SUBMOTION_C8),
        (Kind::Xsm, 0xC9, 1) => ("metadata", MOTION_INFO_V1),
        (Kind::Xsm, 0xC9, 2) => ("metadata", MOTION_INFO_V2),
        (Kind::Xsm, 0xCA, 1) => ("boneAnimation", BONE_ANIM_V1),
        (Kind::Xsm, 0xCA, 2) => ("boneAnimation", BONE_ANIM_V2),
        (Kind::Xpm, 0x65, 1) => ("metadata", MOTION_INFO_V1),
        (Kind::Xpm, 0x66, 1) => ("morphAnimation", MORPH_ANIM_V1),
        _ => return None,
    })
}
