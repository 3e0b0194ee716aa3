//! The `<part>` element of a part hangar writes new (`hangar new ship`, a new component from a
//! glTF, a mesh added in Blender): the game finds a part's `PART-lodN.xmf` through its `<lods>`
//! (as `validate` follows them) and bounds it by `<size>`; a part without them shows nothing. Real
//! components carry both on every part with a mesh.

use crate::formats::{x4xml::escaped, xmf};
use crate::model::{bounds, Material, Mesh};

/// What a `<part>` says of its meshes.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct PartMeshes {
    /// Each lod level written, with the materials its XMF names (their ids count from 1).
    pub lods: Vec<(u32, Vec<String>)>,
    /// lod0's half extents and centre in X4's frame (X mirrored from the neutral model's).
    pub size: Option<([f32; 3], [f32; 3])>,
}

impl PartMeshes {
    /// Records lod `level` written from `mesh`; lod0 also gives the size.
    pub(crate) fn add_lod(&mut self, level: u32, mesh: &Mesh, materials: &[Material]) {
        self.lods
            .push((level, xmf::mesh::material_names(mesh, materials)));
        if level == 0 {
            self.size = size(mesh);
        }
    }

    /// `<part name="NAME">` with `<lods>` and `<size>`, at `indent` (a bare `<part name/>` when no
    /// lod was written: a part without geometry).
    pub(crate) fn xml(&self, indent: &str, name: &str) -> String {
        self.xml_with(indent, name, "")
    }

    /// [`PartMeshes::xml`] with `inner` (lines already indented, each after a newline: the part's
    /// `<lights>`) before the part's end.
    pub(crate) fn xml_with(&self, indent: &str, name: &str, inner: &str) -> String {
        let name = escaped(name);
        if self.lods.is_empty() {
            if inner.is_empty() {
                return format!("<part name=\"{name}\"/>");
            }
            return format!("<part name=\"{name}\">{inner}\n{indent}</part>");
        }
        let mut s = format!("<part name=\"{name}\">\n{indent}\t<lods>\n");
        for (level, materials) in &self.lods {
            s.push_str(&format!("{indent}\t\t<lod index=\"{level}\">\n"));
            if !materials.is_empty() {
                s.push_str(&format!("{indent}\t\t\t<materials>\n"));
                for (k, m) in materials.iter().enumerate() {
                    s.push_str(&format!(
                        "{indent}\t\t\t\t<material id=\"{}\" ref=\"{}\"/>\n",
                        k + 1,
                        escaped(m)
                    ));
                }
                s.push_str(&format!("{indent}\t\t\t</materials>\n"));
            }
            s.push_str(&format!("{indent}\t\t</lod>\n"));
        }
        s.push_str(&format!("{indent}\t</lods>\n"));
        if let Some(([mx, my, mz], [cx, cy, cz])) = self.size {
            s.push_str(&format!(
                "{indent}\t<size>\n{indent}\t\t<max x=\"{mx}\" y=\"{my}\" z=\"{mz}\"/>\n{indent}\t\t<center x=\"{cx}\" y=\"{cy}\" z=\"{cz}\"/>\n{indent}\t</size>\n"
            ));
        }
        if !inner.is_empty() {
            s.push_str(inner.trim_start_matches('\n'));
            s.push('\n');
        }
        s.push_str(&format!("{indent}</part>"));
        s
    }
}

/// A mesh's half extents and centre in X4's frame (X mirrored: its least X is the mesh's greatest).
fn size(mesh: &Mesh) -> Option<([f32; 3], [f32; 3])> {
    let (lo, hi) = bounds(&mesh.vertices.positions)?;
    let (lo, hi) = ([-hi[0], lo[1], lo[2]], [-lo[0], hi[1], hi[2]]);
    let half = [0, 1, 2].map(|k| (hi[k] - lo[k]) / 2.0);
    let centre = [0, 1, 2].map(|k| lo[k] + half[k]);
    Some((half, centre))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Primitive, Vertices};
    use serde_json::Map;

    fn material(name: &str) -> Material {
        Material {
            name: name.into(),
            ..Default::default()
        }
    }

    /// A box from (-1, 0, 2) to (3, 4, 10) in the neutral frame, two materials over three
    /// primitives: X4's frame mirrors X, so its box runs from -3 to 1 in X.
    #[test]
    fn a_part_lists_its_lods_materials_and_size_in_x4s_frame() {
        let positions = vec![[-1.0, 0.0, 2.0], [3.0, 4.0, 10.0], [0.0, 1.0, 5.0]];
        let mesh = Mesh {
            vertices: Vertices {
                positions,
                ..Default::default()
            },
            primitives: [Some(1), Some(0), Some(1)]
                .into_iter()
                .map(|m| Primitive {
                    indices: vec![0, 1, 2],
                    material: m,
                })
                .collect(),
            ..Default::default()
        };
        let mut xmf_named = material("mine.hull");
        let mut extras = Map::new();
        extras.insert("xmf_name".into(), "p1.hull".into());
        xmf_named.extras = extras;
        let materials = [material("generic.fx"), xmf_named];
        let mut p = PartMeshes::default();
        p.add_lod(0, &mesh, &materials);
        p.add_lod(1, &mesh, &materials[..1]);
        assert_eq!(p.size, Some(([2.0, 2.0, 4.0], [-1.0, 2.0, 6.0])));
        assert_eq!(
            p.lods,
            vec![
                (0, vec!["p1.hull".to_string(), "generic.fx".to_string()]),
                (1, vec!["unnamed".to_string(), "generic.fx".to_string()]),
            ]
        );
        let xml = p.xml("\t", "hull");
        let doc = crate::xml::parse(&xml).unwrap();
        let lods: Vec<_> = doc
            .descendants()
            .filter(|e| e.has_tag_name("lod"))
            .collect();
        assert_eq!(lods.len(), 2);
        assert_eq!(lods[1].attribute("index"), Some("1"));
        let refs: Vec<_> = lods[0]
            .descendants()
            .filter(|e| e.has_tag_name("material"))
            .map(|e| (e.attribute("id").unwrap(), e.attribute("ref").unwrap()))
            .collect();
        assert_eq!(refs, [("1", "p1.hull"), ("2", "generic.fx")]);
        let max = doc.descendants().find(|e| e.has_tag_name("max")).unwrap();
        assert_eq!(max.attribute("z"), Some("4"));
        let center = doc
            .descendants()
            .find(|e| e.has_tag_name("center"))
            .unwrap();
        assert_eq!(center.attribute("x"), Some("-1"));
        assert_eq!(
            PartMeshes::default().xml("", "dummy"),
            "<part name=\"dummy\"/>"
        );
    }
}
