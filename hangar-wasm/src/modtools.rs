//! The page's mod tools: new content of any kind (a ship, turret, dock, module...) built from a
//! dropped scene and template ([`hangar::new_component_with_progress`], what `hangar new component`
//! does), and the conflicts among
//! several dropped extension folders ([`hangar::conflicts_in_files`], what `hangar conflicts
//! DIR... --json` lists). The library does the work; this file hands it over.

use crate::{js_error, zip_files, Shown, Workspace};
use hangar::GameView;
use serde_json::json;
use wasm_bindgen::prelude::*;

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen]
extern "C" {
    /// The new ship's parts written so far (the worker posts it to the page's progress bar).
    #[wasm_bindgen(js_namespace = globalThis, js_name = hangarProgress)]
    fn progress(done: u32, total: u32);
}

/// [`progress`] in the page; nothing in native tests.
fn report(done: usize, total: usize) {
    #[cfg(target_arch = "wasm32")]
    progress(done as u32, total as u32);
    #[cfg(not(target_arch = "wasm32"))]
    let _ = (done, total);
}

/// What the page asks for a new ship (`hangar new ship`'s options).
#[wasm_bindgen]
pub struct ShipForm {
    scene: String,
    template: String,
    id: String,
    name: Option<String>,
    description: Option<String>,
    lods: u32,
}

#[wasm_bindgen]
impl ShipForm {
    /// `scene`: the path of a .glb/.gltf in the workspace; `template`: a macro's name, or the
    /// path of a macro file among the template's files; an empty name or description is none.
    #[wasm_bindgen(constructor)]
    pub fn new(
        scene: String,
        template: String,
        id: String,
        name: String,
        description: String,
        lods: u32,
    ) -> ShipForm {
        let some = |s: String| Some(s).filter(|s| !s.is_empty());
        ShipForm {
            scene,
            template: template.trim().to_string(),
            id: id.trim().to_string(),
            name: some(name),
            description: some(description),
            lods,
        }
    }
}

#[wasm_bindgen]
impl Workspace {
    /// The new component (any class of template) as an X4 extension, as `hangar new component
    /// SCENE --template T --id ID --name N
    /// --description D --lods L [--game G]` writes it into the folder `ID`: `meta` (JSON: the zip's
    /// name `ID.zip`, its files, parts, connections, LODs and collision meshes made, warnings)
    /// and the zip, every file under `ID/`. The template is found among `game`'s files (a game or
    /// an extension folder) when it has any, else among this workspace's (a macro file dropped
    /// with the scene).
    pub fn new_component(&self, form: &ShipForm, game: &Workspace) -> Result<Shown, JsError> {
        let (scene, mut warnings) = self
            .opened(&form.scene, &[])
            .and_then(|o| o.to_scene())
            .map_err(js_error)?;
        let from = if game.files.is_empty() { self } else { game };
        let (view, more) =
            GameView::from_sources(&from.label, from.files.clone()).map_err(js_error)?;
        warnings.extend(more);
        let mut spec = hangar::NewComponent::new(form.template.clone(), form.id.clone());
        spec.name = form.name.clone();
        spec.description = form.description.clone();
        spec.lods = form.lods.min(3);
        let ext = hangar::new_component_with_progress(&scene, &spec, Some(&view), &report)
            .map_err(js_error)?;
        warnings.extend(ext.warnings.iter().cloned());
        let id = &form.id;
        let files: Vec<(String, &[u8])> = ext
            .files()
            .iter()
            .map(|(p, b)| {
                let p = p.to_string_lossy().replace('\\', "/");
                (format!("{id}/{p}"), &b[..])
            })
            .collect();
        let name = format!("{id}.zip");
        let zip = zip_files(files.iter().map(|(p, b)| (p.clone(), *b)))
            .map_err(|e| js_error(format!("{name}: packing the zip: {e}")))?;
        let meta = json!({
            "name": name,
            "files": files.iter().map(|(p, _)| p).collect::<Vec<_>>(),
            "parts": ext.parts,
            "connections": ext.connections,
            "lodsMade": ext.lods_made,
            "collisionsMade": ext.collisions_made,
            "warnings": warnings.iter().map(ToString::to_string).collect::<Vec<_>>(),
        });
        Ok(Shown {
            meta: meta.to_string(),
            bytes: zip,
        })
    }

    /// The conflicts among the extension folders this workspace holds (each a folder at its
    /// root with a `content.xml`), as `hangar conflicts DIR... --json` lists them: JSON
    /// `{"mods": [folders in load order], "conflicts": [{kind, name, mods, files, message}]}`.
    pub fn conflicts(&self) -> Result<String, JsError> {
        let (mods, conflicts) = hangar::conflicts_in_files(self.files.clone()).map_err(js_error)?;
        Ok(json!({"mods": mods, "conflicts": conflicts}).to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn read_zip(bytes: Vec<u8>) -> Vec<(String, Vec<u8>)> {
        let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
        (0..z.len())
            .map(|i| {
                let mut f = z.by_index(i).unwrap();
                let mut b = Vec::new();
                std::io::Read::read_to_end(&mut f, &mut b).unwrap();
                (f.name().to_string(), b)
            })
            .collect()
    }

    /// A ship from the sample wedge and a macro file dropped with it: the zip holds, under
    /// `ID/`, exactly the files and bytes `hangar::new_ship` makes from the same inputs.
    #[test]
    fn a_new_ship_downloads_as_the_library_makes_it() {
        let (scene, _) = hangar::open("../samples/wedge-lod0.xmf")
            .unwrap()
            .to_scene()
            .unwrap();
        let glb = hangar::write_scene(&scene, "s.glb", &Default::default())
            .unwrap()
            .bytes;
        let macro_xml = br#"<macros><macro name="ship_x_macro" class="ship_s"><component ref="ship_x"/></macro></macros>"#;
        let mut ws = Workspace::new("files".into());
        ws.add_bytes("s.glb".into(), glb.clone());
        ws.add_bytes("ship_x_macro.xml".into(), macro_xml.to_vec());
        assert!(ws.index().is_ok());
        let none = Workspace::new("none".into());
        let form = |id: &str| {
            ShipForm::new(
                "s.glb".into(),
                "ship_x_macro.xml".into(),
                id.into(),
                "My Ship".into(),
                String::new(),
                1,
            )
        };
        // The same through the library's door, the template read from the same view.
        let (view, _) = GameView::from_sources("files", ws.files.clone()).unwrap();
        let (scene, _) = hangar::open(hangar::Source::bytes("s.glb", glb))
            .unwrap()
            .to_scene()
            .unwrap();
        let mut spec = hangar::NewShip::new("ship_x_macro.xml", "ship_my_s_01");
        spec.name = Some("My Ship".into());
        spec.lods = 1;
        let want = hangar::new_ship(&scene, &spec, Some(&view)).unwrap();
        let want: Vec<(String, Vec<u8>)> = (want.files().iter())
            .map(|(p, b)| (format!("ship_my_s_01/{}", p.display()), b.clone()))
            .collect();
        let Ok(mut shown) = ws.new_component(&form("ship_my_s_01"), &none) else {
            panic!("no ship")
        };
        let meta: Value = serde_json::from_str(&shown.meta()).unwrap();
        assert_eq!(meta["name"], "ship_my_s_01.zip");
        assert_eq!(meta["parts"], 1);
        let got = read_zip(shown.take_bytes());
        assert_eq!(got.len(), want.len());
        assert_eq!(got, want);
        assert!(got.iter().any(|(p, _)| p == "ship_my_s_01/content.xml"));
    }

    /// Two copies of one extension under different folder names: every definition of it is a
    /// conflict, named with both folders in load order.
    #[test]
    fn two_copies_of_a_mod_conflict() {
        let mut ws = Workspace::new("mods".into());
        for folder in ["b_copy", "a_mod"] {
            ws.add_bytes(
                format!("{folder}/content.xml"),
                format!(r#"<content id="{folder}" version="1" name="m"/>"#).into_bytes(),
            );
            ws.add_bytes(
                format!("{folder}/index/macros.xml"),
                br#"<diff><add sel="/index"><entry name="ship_x_macro" value="x"/></add></diff>"#
                    .to_vec(),
            );
            ws.add_bytes(format!("{folder}/libraries/Jobs.xml"), b"<jobs/>".to_vec());
        }
        ws.add_bytes("not_a_mod/libraries/jobs.xml".into(), b"<jobs/>".to_vec());
        let Ok(json) = ws.conflicts() else {
            panic!("no answer")
        };
        let v: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["mods"], json!(["a_mod", "b_copy"]));
        let c = v["conflicts"].as_array().unwrap();
        let kinds: Vec<(&str, &str)> = c
            .iter()
            .map(|c| (c["kind"].as_str().unwrap(), c["name"].as_str().unwrap()))
            .collect();
        assert_eq!(
            kinds,
            [("file", "libraries/jobs.xml"), ("macro", "ship_x_macro")]
        );
        assert_eq!(
            c[0]["files"],
            json!(["a_mod/libraries/Jobs.xml", "b_copy/libraries/Jobs.xml"])
        );
    }
}
