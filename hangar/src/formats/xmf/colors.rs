//! What X4's vertex colour sets are: shader data, not a tint (docs/MATERIALS.md).
//!
//! Egosoft's multimat shader reads one colour set as red smoothness, green metalness, blue the layer
//! of the multimat texture array and alpha dirt; that set is the highest COLORn of a mesh that uses
//! a multimat material (COLOR1 in the p1 ships, COLOR2 in the p2 ones of the corpus). COLOR0 holds
//! the colour the other shaders read (`col`); any other set keeps its index as its name.
//! The names are the roles the neutral model carries (`Vertices::color_names`), so the Blender
//! extension shows them as colour attributes of those names and glTF keeps them as `_X4_<NAME>`.

/// The set the multimat shader reads.
pub const MULTIMAT: &str = "multimat";
/// COLOR0: the vertex colour the hull and effect shaders read.
pub const COL: &str = "col";
/// Prefix of a set of no known role, followed by its COLOR index.
const INDEXED: &str = "color_";

/// Whether the material named `name` (`collection.material`) is a multimat one.
pub fn is_multimat(name: &str) -> bool {
    name.to_ascii_lowercase().contains("multimat")
}

/// The role of each colour set, given the sets' COLOR indices in order and the mesh's material
/// names.
pub fn roles(ids: &[u8], materials: &[&str]) -> Vec<String> {
    let multimat = materials
        .iter()
        .any(|m| is_multimat(m))
        .then(|| ids.iter().copied().filter(|&i| i > 0).max())
        .flatten();
    ids.iter()
        .map(|&i| match i {
            _ if Some(i) == multimat => MULTIMAT.to_string(),
            0 => COL.to_string(),
            _ => format!("{INDEXED}{i}"),
        })
        .collect()
}

/// The COLOR index of each set from its role, for a mesh that does not carry the indices it was
/// read with: `col` 0, `color_N` N, the multimat set the first index left after those, a set of
/// another name (or none) the next free one. `None` when two sets claim one index.
pub fn ids_from_roles(names: &[String], count: usize) -> Option<Vec<u8>> {
    let fixed: Vec<Option<u8>> = (0..count)
        .map(|k| match names.get(k).map(String::as_str) {
            Some(COL) => Some(0),
            Some(n) => n.strip_prefix(INDEXED).and_then(|i| i.parse().ok()),
            None => None,
        })
        .collect();
    let mut taken: Vec<u8> = fixed.iter().flatten().copied().collect();
    let mut out = Vec::with_capacity(count);
    for (k, f) in fixed.iter().enumerate() {
        let id = match f {
            Some(i) => *i,
            None => {
                let from = u8::from(names.get(k).is_some_and(|n| n == MULTIMAT));
                let free = (from..=u8::MAX).find(|i| !taken.contains(i))?;
                taken.push(free);
                free
            }
        };
        out.push(id);
    }
    let mut sorted = out.clone();
    sorted.sort_unstable();
    sorted.dedup();
    (sorted.len() == out.len()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_multimat_set_is_the_highest_of_a_multimat_mesh() {
        let p1 = ["generic.generic_p1_hulltexture", "p1.multimat"];
        assert_eq!(roles(&[0, 1], &p1), names(&["col", "multimat"]));
        let p2 = ["p2multimat.p2_multimat_01"];
        assert_eq!(roles(&[0, 2], &p2), names(&["col", "multimat"]));
        assert_eq!(
            roles(&[0, 1, 2], &p2),
            names(&["col", "color_1", "multimat"])
        );
        // No multimat material: the sets keep their indices.
        assert_eq!(
            roles(&[0, 1], &["generic.generic_p1_hulltexture"]),
            names(&["col", "color_1"])
        );
        // A lone COLOR0 is never the multimat set.
        assert_eq!(roles(&[0], &p1), names(&["col"]));
    }

    #[test]
    fn roles_give_back_the_indices() {
        let back = |n: &[&str]| ids_from_roles(&names(n), n.len());
        assert_eq!(back(&["col", "multimat"]), Some(vec![0, 1]));
        assert_eq!(back(&["col", "color_1", "multimat"]), Some(vec![0, 1, 2]));
        assert_eq!(back(&["multimat"]), Some(vec![1]));
        assert_eq!(back(&["color_3", "col"]), Some(vec![3, 0]));
        assert_eq!(back(&["col", "col"]), None);
        // Sets with no name take the free indices in order.
        assert_eq!(ids_from_roles(&[], 2), Some(vec![0, 1]));
    }
}
