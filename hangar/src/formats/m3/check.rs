//! `hangar validate` and `hangar info` for M3: references, geometry ranges, bone lookups, the
//! skeleton, and the animation tables (STG -> STC -> SD blocks).

use super::model::Model;
use super::scene::{VertexLayout, SD_FIELDS};
use super::table::{Entry, Link};
use super::M3;
use crate::document::Info;
use crate::validate::Finding;
use serde_json::json;

/// The numbers `hangar info` shows for an M3 file.
pub fn summary(m3: &M3<'_>) -> Info {
    let model = Model::new(m3);
    let mut s = Info {
        bones: Some(0),
        sequences: Some(0),
        details: json!({}),
        ..Default::default()
    };
    let Ok(modl) = model.modl() else {
        s.details = json!({ "error": "the header does not point at a readable MODL" });
        return s;
    };
    let count = |name: &str| modl.reference(name).map_or(0, |r| r.entries as u64);
    s.bones = Some(count("bones"));
    s.sequences = Some(count("sequences"));
    let mut regions = 0;
    if let Some(div) = model
        .follow(&modl, "divisions", "DIV_", "MODL")
        .ok()
        .and_then(|d| d.first().copied())
    {
        if let Ok(rs) = model.follow(&div, "regions", "REGN", "MODL.divisions[0]") {
            regions = rs.len();
            for r in rs {
                s.vertices += r.u32("vertexCount").unwrap_or(0) as u64;
                s.triangles += r.u32("faceCount").unwrap_or(0) as u64 / 3;
            }
        }
    }
    let modl_section = modl_section(m3);
    let mut tags: Vec<(String, usize)> = Vec::new();
    for sec in &m3.sections {
        let n = sec.tag.name();
        match tags.iter_mut().find(|t| t.0 == n) {
            Some(t) => t.1 += 1,
            None => tags.push((n, 1)),
        }
    }
    let sequences: Vec<String> = model
        .follow(&modl, "sequences", "SEQS", "MODL")
        .unwrap_or_default()
        .iter()
        .enumerate()
        .map(|(i, q)| model.name_of(q, "name", &format!("MODL.sequences[{i}]")))
        .collect();
    let flags = modl.u32("vertexFlags").unwrap_or(0);
    s.details = json!({
        "modl_version": modl_section.map(|v| v.version),
        "vertex_flags": format!("0x{flags:x}"),
        "vertex_size": VertexLayout::from_flags(flags).ok().map(|l| l.size),
        "regions": regions,
        "materials": count("materialMaps"),
        "sequence_names": sequences,
        "attachment_points": count("attachmentPoints"),
        "sections": m3.sections.len(),
        "section_tags": tags.iter().map(|(t, n)| format!("{t} x{n}")).collect::<Vec<_>>(),
    });
    s
}

fn modl_section<'m>(m3: &'m M3<'_>) -> Option<&'m super::Section<'m>> {
    let h = m3.sections[0].entries(m3.small_refs());
    let r = h.first()?.reference("model")?;
    m3.sections.get(r.index as usize)
}

pub fn check(m3: &M3<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    references(m3, &mut out);
    let model = Model::new(m3);
    let modl = match model.modl() {
        Ok(m) => m,
        Err(e) => {
            out.push(e.into());
            return out;
        }
    };
    let mut run = |r: crate::Result<()>| {
        if let Err(e) = r {
            out.push(e.into());
        }
    };
    let mut found = Vec::new();
    run(geometry(&model, &modl, &mut found));
    run(skeleton(&model, &modl, &mut found));
    run(animation_tables(&model, &modl, &mut found));
    out.extend(found);
    out
}

fn references(m3: &M3<'_>, out: &mut Vec<Finding>) {
    let small = m3.small_refs();
    for (si, s) in m3.sections.iter().enumerate() {
        let Some(l) = s.layout.filter(|l| l.links) else {
            continue;
        };
        for (ei, e) in s.entries(small).iter().enumerate() {
            let base = s.offset + (ei * l.size) as u64;
            e.visit(&mut |name, link| {
                let Link::Ref(want, r) = link else { return };
                if r.is_null() {
                    return;
                }
                let place = || format!("index[{si}] {:?}[{ei}].{name}", s.tag);
                let mut f = |m: String| {
                    let mut x = Finding::error(place(), m);
                    x.offset = Some(base);
                    out.push(x);
                };
                match m3.sections.get(r.index as usize) {
                    None => f(format!(
                        "points at section {} of {}",
                        r.index,
                        m3.sections.len()
                    )),
                    Some(t) if t.tag != want => f(format!(
                        "points at section {} which is {:?}, expected {want:?}",
                        r.index, t.tag
                    )),
                    Some(t) if r.entries > t.count => f(format!(
                        "wants {} entries of section {} which has {}",
                        r.entries, r.index, t.count
                    )),
                    _ => {}
                }
            });
        }
    }
}

fn geometry(model: &Model<'_, '_>, modl: &Entry<'_>, out: &mut Vec<Finding>) -> crate::Result<()> {
    let flags = modl.u32("vertexFlags").unwrap_or(0);
    let vbytes = model.values(
        modl.reference("vertices").unwrap_or_default(),
        "U8__",
        "MODL.vertices",
    )?;
    let divisions = model.follow(modl, "divisions", "DIV_", "MODL")?;
    let Some(div) = divisions.first() else {
        return Ok(());
    };
    let regions = model.follow(div, "regions", "REGN", "MODL.divisions[0]")?;
    if regions.is_empty() {
        return Ok(());
    }
    let vsize = match VertexLayout::from_flags(flags) {
        Ok(l) => l.size,
        Err(m) => {
            out.push(Finding::error("MODL.vertexFlags", m));
            return Ok(());
        }
    };
    if vbytes.len() % vsize != 0 {
        out.push(Finding::error(
            "MODL.vertices",
            format!(
                "{} bytes are not a whole number of {vsize}-byte vertices (flags 0x{flags:x})",
                vbytes.len()
            ),
        ));
    }
    let vcount = vbytes.len() / vsize;
    let faces = model.u16s(
        div.reference("faces").unwrap_or_default(),
        "MODL.divisions[0].faces",
    )?;
    let lookup = model.u16s(
        modl.reference("boneLookup").unwrap_or_default(),
        "MODL.boneLookup",
    )?;
    let bones = modl.reference("bones").map_or(0, |r| r.entries as usize);
    for (ri, r) in regions.iter().enumerate() {
        let p = format!("MODL.divisions[0].regions[{ri}]");
        let get = |f: &str| r.u32(f).unwrap_or(0) as u64;
        let (fv, vc, ff, fc) = (
            get("firstVertex"),
            get("vertexCount"),
            get("firstFace"),
            get("faceCount"),
        );
        if fv + vc > vcount as u64 {
            out.push(Finding::error(
                format!("{p}.firstVertex"),
                format!(
                    "vertices {fv}..{} are outside the {vcount} vertices",
                    fv + vc
                ),
            ));
        }
        if ff + fc > faces.len() as u64 {
            out.push(Finding::error(
                format!("{p}.firstFace"),
                format!(
                    "face indices {ff}..{} are outside the {} face indices",
                    ff + fc,
                    faces.len()
                ),
            ));
        } else {
            if fc % 3 != 0 {
                out.push(Finding::error(
                    format!("{p}.faceCount"),
                    format!("{fc} face indices is not a whole number of triangles"),
                ));
            }
            let bad = faces[ff as usize..(ff + fc) as usize]
                .iter()
                .filter(|&&f| f as u64 >= vc)
                .count();
            if bad > 0 {
                out.push(Finding::error(
                    format!("{p}.faces"),
                    format!("{bad} face indices are past the region's {vc} vertices"),
                ));
            }
        }
        let (fl, lc) = (
            get("firstBoneLookup") as usize,
            get("boneLookupCount") as usize,
        );
        if fl + lc > lookup.len() {
            out.push(Finding::error(
                format!("{p}.firstBoneLookup"),
                format!(
                    "bone lookups {fl}..{} are outside the {} lookups",
                    fl + lc,
                    lookup.len()
                ),
            ));
        } else if let Some(b) = lookup[fl..fl + lc].iter().find(|&&b| b as usize >= bones) {
            out.push(Finding::error(
                format!("{p}.firstBoneLookup"),
                format!("bone lookup names bone {b} of {bones}"),
            ));
        }
    }
    let maps = modl.reference("materialMaps").map_or(0, |r| r.entries);
    for (bi, b) in model
        .follow(div, "batches", "BAT_", "MODL.divisions[0]")?
        .iter()
        .enumerate()
    {
        let p = format!("MODL.divisions[0].batches[{bi}]");
        if b.u32("region").unwrap_or(0) as usize >= regions.len() {
            out.push(Finding::error(
                format!("{p}.region"),
                format!(
                    "region {} of {}",
                    b.u32("region").unwrap_or(0),
                    regions.len()
                ),
            ));
        }
        if b.u32("materialMap").unwrap_or(0) >= maps {
            out.push(Finding::error(
                format!("{p}.materialMap"),
                format!("material {} of {maps}", b.u32("materialMap").unwrap_or(0)),
            ));
        }
    }
    Ok(())
}

fn skeleton(model: &Model<'_, '_>, modl: &Entry<'_>, out: &mut Vec<Finding>) -> crate::Result<()> {
    let bones = model.follow(modl, "bones", "BONE", "MODL")?;
    let parents: Vec<i64> = bones
        .iter()
        .map(|b| b.int("parent").unwrap_or(-1))
        .collect();
    for (i, &p) in parents.iter().enumerate() {
        if p >= bones.len() as i64 || p < -1 {
            out.push(Finding::error(
                format!("MODL.bones[{i}].parent"),
                format!("parent {p} of {} bones", bones.len()),
            ));
            continue;
        }
    }
    for i in crate::validate::looping_parents(&parents) {
        out.push(Finding::error(
            format!("MODL.bones[{i}].parent"),
            "the parent chain loops back",
        ));
    }
    let irefs = modl
        .reference("initialReference")
        .map_or(0, |r| r.entries as usize);
    if irefs != bones.len() {
        out.push(Finding::error(
            "MODL.initialReference",
            format!("{irefs} bind matrices for {} bones", bones.len()),
        ));
    }
    Ok(())
}

fn animation_tables(
    model: &Model<'_, '_>,
    modl: &Entry<'_>,
    out: &mut Vec<Finding>,
) -> crate::Result<()> {
    let seqs = modl
        .reference("sequences")
        .map_or(0, |r| r.entries as usize);
    let stgs = model.follow(modl, "stg", "STG_", "MODL")?;
    let stcs = model.follow(modl, "stc", "STC_", "MODL")?;
    let sts = modl.reference("sts").map_or(0, |r| r.entries);
    if seqs != stgs.len() {
        out.push(Finding::error(
            "MODL.stg",
            format!("{} STG_ for {seqs} sequences", stgs.len()),
        ));
    }
    for (gi, g) in stgs.iter().enumerate() {
        let p = format!("MODL.stg[{gi}].stcIndices");
        for i in model.u32s(g.reference("stcIndices").unwrap_or_default(), &p)? {
            if i as usize >= stcs.len() {
                out.push(Finding::error(&p, format!("STC {i} of {}", stcs.len())));
            }
        }
    }
    for (ci, c) in stcs.iter().enumerate() {
        let p = format!("MODL.stc[{ci}]");
        if c.u32("stsIndex").unwrap_or(0) >= sts.max(1) && sts > 0 {
            out.push(Finding::error(
                format!("{p}.stsIndex"),
                format!("STS {} of {sts}", c.u32("stsIndex").unwrap_or(0)),
            ));
        }
        let ids = model.field_u32s(c, "animIds", &p)?;
        let refs = model.field_u32s(c, "animRefs", &p)?;
        if ids.len() != refs.len() {
            out.push(Finding::error(
                format!("{p}.animRefs"),
                format!("{} animation refs for {} ids", refs.len(), ids.len()),
            ));
        }
        for (k, r) in refs.iter().enumerate() {
            let (ty, block) = ((r >> 16) as usize, (r & 0xffff) as usize);
            let Some(&(field, _)) = SD_FIELDS.get(ty) else {
                out.push(Finding::error(
                    format!("{p}.animRefs[{k}]"),
                    format!("sequence data type {ty} does not exist"),
                ));
                continue;
            };
            let have = c.reference(field).map_or(0, |r| r.entries as usize);
            if block >= have {
                out.push(Finding::error(
                    format!("{p}.animRefs[{k}]"),
                    format!(
                        "animation id 0x{:08x} points at {field}[{block}] but there are {have}",
                        ids.get(k).copied().unwrap_or(0)
                    ),
                ));
            }
        }
    }
    Ok(())
}
