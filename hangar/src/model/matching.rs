//! Which item of a scene that went through another tool is which item of the scene it was made
//! from, by name: tools append `.001` to a repeated name and Blender cuts names at 63 bytes; where
//! names repeat (an M3's bone and its attachment point), the place in the tree decides.

use super::Node;

/// A name without the `.NNN` Blender appends to a repeated name.
pub(crate) fn base_name(name: &str) -> &str {
    match name.rsplit_once('.') {
        Some((base, n)) if n.len() == 3 && n.bytes().all(|b| b.is_ascii_digit()) => base,
        _ => name,
    }
}

/// How well `candidate` answers to `name`: 0 the same, 1 with a `.NNN`, 2 cut at 63 bytes.
fn tier(candidate: &str, name: &str) -> Option<u8> {
    let base = base_name(candidate);
    if candidate == name {
        Some(0)
    } else if base == name {
        Some(1)
    } else if base.len() >= 60 && name.starts_with(base) {
        Some(2)
    } else {
        None
    }
}

/// The first item not taken yet named `name`: the same name, else the name with a tool's `.NNN`
/// suffix, else (Blender cuts names at 63 bytes) a name that is the start of it.
pub(crate) fn find_named<T>(
    items: &[T],
    taken: &[bool],
    name: &str,
    name_of: impl Fn(&T) -> &str,
) -> Option<usize> {
    (0..items.len())
        .filter(|&i| !taken.get(i).copied().unwrap_or(true))
        .filter_map(|i| Some((tier(name_of(items.get(i)?), name)?, i)))
        .min()
        .map(|(_, i)| i)
}

/// For each node of `was`, the node of `edited` that is it (`None`: gone), parents first: of the
/// nodes answering to its name, one that has a mesh if it has one (an actor's bone and its skinned
/// mesh share a name), under its parent's match, else under a node of its parent's name (Blender
/// hangs a repeated name under its namesake), else the first.
pub(crate) fn match_nodes(was: &[Node], edited: &[Node]) -> Vec<Option<usize>> {
    use std::collections::HashMap;
    let mut by_base: HashMap<&str, Vec<usize>> = HashMap::new();
    for (j, n) in edited.iter().enumerate() {
        by_base.entry(base_name(&n.name)).or_default().push(j);
    }
    let depth = |mut i: usize| {
        let mut d = 0;
        while let Some(p) = was.get(i).and_then(|n| n.parent) {
            d += 1;
            i = p;
            if d > was.len() {
                break;
            }
        }
        d
    };
    let mut order: Vec<usize> = (0..was.len()).collect();
    order.sort_by_cached_key(|&i| depth(i));
    let mut of = vec![None; was.len()];
    let mut taken = vec![false; edited.len()];
    let parent_name = |nodes: &[Node], n: &Node| {
        n.parent
            .and_then(|p| nodes.get(p))
            .map(|p| base_name(&p.name).to_string())
    };
    for i in order {
        let Some(n) = was.get(i) else { continue };
        let mine = n.parent.map(|p| of.get(p).copied().flatten());
        let rank = |j: usize| {
            let Some(e) = edited.get(j) else {
                return (1, 3);
            };
            let kind = u8::from(e.mesh.is_some() != n.mesh.is_some());
            let place = match mine {
                Some(Some(p)) if e.parent == Some(p) => 0,
                None if e.parent.is_none() => 0,
                _ if parent_name(edited, e) == parent_name(was, n) => 1,
                _ => 2,
            };
            (kind, place)
        };
        let free = |j: &usize| !taken.get(*j).copied().unwrap_or(true);
        let named = by_base.get(base_name(&n.name)).map_or(&[][..], |v| &v[..]);
        let best = named
            .iter()
            .copied()
            .filter(free)
            .filter_map(|j| Some((rank(j), tier(&edited.get(j)?.name, &n.name)?, j)))
            .min()
            .map(|(_, _, j)| j)
            .or_else(|| find_named(edited, &taken, &n.name, |x| &x.name));
        if let Some(j) = best {
            taken[j] = true;
            of[i] = Some(j);
        }
    }
    of
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, parent: Option<usize>) -> Node {
        let mut n = Node::new(name);
        n.parent = parent;
        n
    }

    #[test]
    fn names_with_a_tools_suffix_or_cut_are_found() {
        let items = ["hull.001".to_string(), "hull".into(), "x".repeat(63)];
        fn name_of(s: &String) -> &str {
            s
        }
        assert_eq!(find_named(&items, &[false; 3], "hull", name_of), Some(1));
        assert_eq!(
            find_named(&items, &[false, true, false], "hull", name_of),
            Some(0)
        );
        let long = "x".repeat(70);
        assert_eq!(find_named(&items, &[false; 3], &long, name_of), Some(2));
        assert_eq!(find_named(&items, &[false; 3], "deck", name_of), None);
    }

    #[test]
    fn repeated_names_are_told_apart_by_their_parents() {
        // An M3: a bone Ref_Target under Spine3 with an attachment point of its name on it, and
        // another attachment point Ref_Target on the bone Vol_Target.
        let was = vec![
            node("root", None),
            node("Spine3", Some(0)),
            node("Vol_Target", Some(0)),
            node("Ref_Target", Some(1)),
            node("Ref_Target", Some(2)),
            node("Ref_Target", Some(3)),
        ];
        // Blender's export: other order, the third one renamed and hung under its namesake.
        let edited = vec![
            node("Ref_Target.001", Some(1)),
            node("Ref_Target", Some(2)),
            node("Vol_Target", Some(5)),
            node("Ref_Target", Some(4)),
            node("Spine3", Some(5)),
            node("root", None),
        ];
        assert_eq!(
            match_nodes(&was, &edited),
            vec![Some(5), Some(4), Some(2), Some(3), Some(1), Some(0)]
        );
        // An actor: a root skinned mesh named as a bone; Blender hangs it under the armature.
        let mut body = node("hull", None);
        body.mesh = Some(0);
        let was = vec![node("tank", None), node("hull", Some(0)), body.clone()];
        body.parent = Some(0);
        let edited = vec![node("tank", None), node("hull", Some(0)), body];
        assert_eq!(match_nodes(&was, &edited), vec![Some(0), Some(1), Some(2)]);
    }
}
