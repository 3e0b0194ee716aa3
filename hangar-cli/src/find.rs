//! `hangar find QUERY`: the macros, components and wares of a game found by the name a player
//! reads. The work is `hangar::find`'s; this file parses arguments and prints.

use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
hangar find \"Cerberus\" --game \"C:/Games/X4 Foundations\"\n  \
hangar find \"osprey dropship\" --game extensions/dropships --json\n  \
hangar find frigate_01 --game X4 --kind macro          # part of an id\n  \
hangar find \"Cerberus\" --game X4 --game my_mod          # the game with a mod on top\n  \
hangar find \"Energiezellen\" --game X4 --kind text --lang 49   # the t files' strings, German")]
pub struct FindArgs {
    /// What to find: a name as the game shows it, or part of an id; case-insensitive, its words
    /// in any order ("dropship osprey" finds "Osprey Dropship").
    query: String,
    /// A game folder (with its catalogs and extensions), an extension folder, a folder of
    /// catalogs or one .cat (repeatable: stacked in the order given). Default: the current folder.
    #[arg(long, value_name = "DIR")]
    game: Vec<PathBuf>,
    /// Only this kind: macro, component (named as the macro building it), ware, or text (the t
    /// files' strings by {page,id}).
    #[arg(long, value_name = "KIND")]
    kind: Option<String>,
    /// The language of the names: 44 English (default), 49 German, 33 French, 7 Russian...
    #[arg(long, default_value_t = 44)]
    lang: u32,
    /// Print a list of objects with kind, id, name, file and extension (null for the game).
    #[arg(long)]
    json: bool,
    /// Build the index anew and keep no copy of it (the kept copy lives in the user's cache
    /// folder and is rebuilt by itself when a catalog or extension changes).
    #[arg(long)]
    no_cache: bool,
}

/// Runs `hangar find`: true when something matched.
pub fn run(a: FindArgs) -> Result<bool> {
    let kind = a
        .kind
        .as_deref()
        .map(hangar::FoundKind::parse)
        .transpose()?;
    let games = if a.game.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        a.game
    };
    let options = hangar::FindOptions {
        kind,
        lang: a.lang,
        cache: !a.no_cache,
    };
    let found = hangar::find(&games, &a.query, &options)?;
    if a.json {
        out!("{}", serde_json::to_string_pretty(&found)?);
    } else {
        for f in &found {
            let ext = f.extension.as_deref().unwrap_or("game");
            let name = if f.name.is_empty() { "-" } else { &f.name };
            out!("{}\t{}\t{}\t{}\t{}", f.kind.name(), f.id, name, f.file, ext);
        }
        if found.is_empty() {
            eprintln!("nothing matches {:?}", a.query);
        }
    }
    Ok(!found.is_empty())
}
