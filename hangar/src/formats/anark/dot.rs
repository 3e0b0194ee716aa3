//! .bgp -> Graphviz: states as boxes, transitions as arrows labelled with their event.

use super::bgp::{Action, Bgp};
use std::fmt::Write as _;

fn q(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn acts(a: &[Action]) -> String {
    a.iter()
        .map(|a| format!("{} {}", a.action.lossy(), a.asset.lossy()))
        .collect::<Vec<_>>()
        .join("\\n")
}

pub fn to_dot(f: &Bgp) -> String {
    let mut o = String::from("digraph bgp {\n  rankdir=LR;\n  node [shape=box];\n");
    for s in &f.states {
        let id = s.id.lossy();
        let mut label = id.clone();
        if !s.prelude.is_empty() {
            let _ = write!(
                label,
                "\nprelude: {}",
                acts(&s.prelude).replace("\\n", ", ")
            );
        }
        if !s.postlude.is_empty() {
            let _ = write!(
                label,
                "\npostlude: {}",
                acts(&s.postlude).replace("\\n", ", ")
            );
        }
        let _ = writeln!(o, "  {} [label={}];", q(&id), q(&label));
    }
    for s in &f.states {
        for t in &s.transitions {
            let mut label = t.event.lossy();
            if !t.actions.is_empty() {
                label.push('\n');
                label.push_str(&acts(&t.actions).replace("\\n", "\n"));
            }
            let _ = writeln!(
                o,
                "  {} -> {} [label={}];",
                q(&s.id.lossy()),
                q(&t.to.lossy()),
                q(&label)
            );
        }
    }
    o.push_str("}\n");
    o
}
