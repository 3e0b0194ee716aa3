//! .bgp game plans: assets, then states with prelude actions, transitions and postlude actions.
//! Strings here end with a zero that their size counts.

use super::{endianness, Bytes, Tails, Text};
use crate::bytes::{Cursor, Writer};
use crate::error::Result;
use crate::Warning;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bgp {
    pub big_endian: bool,
    pub assets: Vec<Asset>,
    pub states: Vec<State>,
    #[serde(default, skip_serializing_if = "Tails::is_empty")]
    pub tails: Tails,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Asset {
    #[serde(rename = "type")]
    pub kind: Text,
    pub id: Text,
    pub path: Text,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub id: Text,
    pub prelude: Vec<Action>,
    pub transitions: Vec<Transition>,
    pub postlude: Vec<Action>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transition {
    pub to: Text,
    pub event: Text,
    pub actions: Vec<Action>,
}

/// `action` is one of preload, show, hide, kill, pause, resume, lockupdate, unlockupdate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Action {
    pub action: Text,
    pub asset: Text,
}

pub const ACTIONS: [&str; 8] = [
    "preload",
    "show",
    "hide",
    "kill",
    "pause",
    "resume",
    "lockupdate",
    "unlockupdate",
];

fn string(c: &mut Cursor, field: &'static str) -> Result<Text> {
    let at = c.pos();
    let n = c.u32("size")? as usize;
    let b = c.bytes(n, field)?;
    match b.split_last() {
        Some((0, s)) => Ok(Text(s.to_vec())),
        _ => Err(c.error_at(
            at,
            field,
            "string does not end with the zero its size must count",
        )),
    }
}

fn count(c: &mut Cursor, field: &'static str) -> Result<usize> {
    let n = c.u32(field)? as usize;
    // Every item holds at least one 4-byte string size.
    c.check_count(n, 4, field)?;
    Ok(n)
}

fn actions(c: &mut Cursor, field: &'static str) -> Result<Vec<Action>> {
    let n = count(c, field)?;
    let mut v = Vec::with_capacity(n);
    for i in 0..n {
        v.push(c.within_item(field, i, |c| {
            Ok(Action {
                action: string(c, "action")?,
                asset: string(c, "assetId")?,
            })
        })?);
    }
    Ok(v)
}

pub fn read(data: &[u8]) -> Result<(Bgp, Vec<Warning>)> {
    let mut c = Cursor::new(data, "BGP");
    let big_endian = endianness(&mut c)?;
    c.set_big_endian(big_endian);
    let n = count(&mut c, "numAssets")?;
    let mut assets = Vec::with_capacity(n);
    for i in 0..n {
        assets.push(c.within_item("assets", i, |c| {
            Ok(Asset {
                kind: string(c, "type")?,
                id: string(c, "id")?,
                path: string(c, "bgfFilePath")?,
            })
        })?);
    }
    let n = count(&mut c, "numStates")?;
    let mut states = Vec::with_capacity(n);
    for i in 0..n {
        states.push(c.within_item("states", i, |c| {
            let id = string(c, "id")?;
            let prelude = actions(c, "preludeActions")?;
            let t = count(c, "numTransitions")?;
            let mut transitions = Vec::with_capacity(t);
            for k in 0..t {
                transitions.push(c.within_item("transitions", k, |c| {
                    Ok(Transition {
                        to: string(c, "toStateId")?,
                        event: string(c, "event")?,
                        actions: actions(c, "actions")?,
                    })
                })?);
            }
            let postlude = actions(c, "postludeActions")?;
            Ok(State {
                id,
                prelude,
                transitions,
                postlude,
            })
        })?);
    }
    let mut warnings = Vec::new();
    let mut tails = Tails::new();
    let rest = data.get(c.pos()..).unwrap_or_default();
    if !rest.is_empty() {
        warnings.push(c.warning(
            c.pos(),
            "",
            format!("{} bytes after the states: kept", rest.len()),
        ));
        tails.insert("file".into(), Bytes(rest.to_vec()));
    }
    for (si, s) in states.iter().enumerate() {
        let acts = s
            .prelude
            .iter()
            .chain(&s.postlude)
            .chain(s.transitions.iter().flat_map(|t| &t.actions));
        for a in acts {
            if !ACTIONS
                .iter()
                .any(|n| n.as_bytes() == a.action.0.as_slice())
            {
                warnings.push(Warning::new(
                    None,
                    format!("BGP.states[{si}]"),
                    format!("unknown action {:?}", a.action.lossy()),
                ));
            }
        }
    }
    Ok((
        Bgp {
            big_endian,
            assets,
            states,
            tails,
        },
        warnings,
    ))
}

fn put(w: &mut Writer, t: &Text) {
    w.u32(t.0.len() as u32 + 1);
    w.bytes(&t.0);
    w.u8(0);
}

fn put_actions(w: &mut Writer, a: &[Action]) {
    w.u32(a.len() as u32);
    for x in a {
        put(w, &x.action);
        put(w, &x.asset);
    }
}

pub fn write(f: &Bgp) -> Vec<u8> {
    let mut w = Writer::new(f.big_endian);
    w.u8(u8::from(f.big_endian));
    w.u32(f.assets.len() as u32);
    for a in &f.assets {
        put(&mut w, &a.kind);
        put(&mut w, &a.id);
        put(&mut w, &a.path);
    }
    w.u32(f.states.len() as u32);
    for s in &f.states {
        put(&mut w, &s.id);
        put_actions(&mut w, &s.prelude);
        w.u32(s.transitions.len() as u32);
        for t in &s.transitions {
            put(&mut w, &t.to);
            put(&mut w, &t.event);
            put_actions(&mut w, &t.actions);
        }
        put_actions(&mut w, &s.postlude);
    }
    if let Some(t) = f.tails.get("file") {
        w.bytes(&t.0);
    }
    w.buf
}
