//! A note named the way people and notes name it: a wikilink's target
//! (`[[Deploy]]`, `[[Runbooks/Deploy|the runbook]]`), a path without its
//! extension, a file name in any letter case. One definition for the note
//! pages' links and for the MCP `read_note` tool.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::parse::file_stem;
use super::scan::{scan_brain, without_extension};

/// The brain's notes by path and by file name, as a wikilink finds them.
#[derive(Default)]
pub struct NoteNames {
    paths: HashSet<String>,
    /// Lower-cased path without extension → path.
    by_path: HashMap<String, String>,
    /// Lower-cased file name without extension → paths.
    by_name: HashMap<String, Vec<String>>,
}

/// The note a name points at, as written in a link or typed by hand: the
/// brackets of a wikilink, its shown text (`|…`), the heading or block it
/// points into (`#…`) and a leading `./` or `/` are not part of it.
pub fn link_target(name: &str) -> &str {
    let name = name.trim();
    let name = name
        .strip_prefix("[[")
        .and_then(|n| n.strip_suffix("]]"))
        .unwrap_or(name);
    let name = name.split('|').next().unwrap_or(name);
    let name = name.split('#').next().unwrap_or(name);
    let mut name = name.trim();
    while let Some(rest) = name.strip_prefix("./").or_else(|| name.strip_prefix('/')) {
        name = rest;
    }
    name
}

impl NoteNames {
    /// The notes of the brain at `brain` (an unreadable brain has none).
    pub fn scan(brain: &Path, max_note_bytes: u64) -> NoteNames {
        let mut names = NoteNames::default();
        let Ok((files, _)) = scan_brain(brain, max_note_bytes) else {
            return names;
        };
        for file in files {
            let path = file.rel_path;
            let name = file_stem(&path).to_lowercase();
            names.by_name.entry(name).or_default().push(path.clone());
            names
                .by_path
                .insert(without_extension(&path).to_lowercase(), path.clone());
            names.paths.insert(path);
        }
        names
    }

    /// Whether `rel_path` is a note of the brain.
    pub fn contains(&self, rel_path: &str) -> bool {
        self.paths.contains(rel_path)
    }

    /// The note `target` (a link target, see [`link_target`]) names by its
    /// path or file name, in any letter case: of two notes with that name,
    /// the one in `from`'s folder (or below it), then the shorter path.
    pub fn resolve(&self, target: &str, from: &str) -> Option<String> {
        let wanted = without_extension(target).to_lowercase();
        if let Some(path) = self.by_path.get(&wanted) {
            return Some(path.clone());
        }
        let paths = self.by_name.get(&wanted)?;
        let folder = from.rsplit_once('/').map_or("", |(f, _)| f);
        paths
            .iter()
            .min_by_key(|p| (!p.starts_with(folder), p.len(), p.as_str()))
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_target_is_the_note_part_of_a_name() {
        for (name, target) in [
            ("Deploy", "Deploy"),
            ("[[Deploy]]", "Deploy"),
            ("[[Runbooks/Deploy|the runbook]]", "Runbooks/Deploy"),
            ("[[Deploy#Rollback]]", "Deploy"),
            ("./Runbooks/Deploy.md", "Runbooks/Deploy.md"),
            ("/Runbooks/Deploy.md", "Runbooks/Deploy.md"),
            ("  Deploy  ", "Deploy"),
        ] {
            assert_eq!(link_target(name), target, "{name}");
        }
    }

    #[test]
    fn names_resolve_by_path_then_by_file_name_beside_the_linking_note() {
        let brain = tempfile::tempdir().unwrap();
        for path in [
            "Deploy.md",
            "Runbooks/Deploy.md",
            "Runbooks/Rollback.md",
            "Archive/Rollback.md",
        ] {
            let file = brain.path().join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, "# x\n").unwrap();
        }
        let names = NoteNames::scan(brain.path(), 1 << 20);
        assert_eq!(
            names.resolve("runbooks/deploy", "").as_deref(),
            Some("Runbooks/Deploy.md")
        );
        assert_eq!(names.resolve("Deploy.md", "").as_deref(), Some("Deploy.md"));
        // A path wins over a file name; of two file names, the one beside
        // the linking note, then the shorter path.
        assert_eq!(
            names.resolve("deploy", "Runbooks/Rollback.md").as_deref(),
            Some("Deploy.md")
        );
        assert_eq!(
            names.resolve("Rollback", "Runbooks/Deploy.md").as_deref(),
            Some("Runbooks/Rollback.md")
        );
        assert_eq!(
            names.resolve("rollback", "").as_deref(),
            Some("Archive/Rollback.md")
        );
        assert_eq!(names.resolve("Release", ""), None);
        assert!(names.contains("Runbooks/Rollback.md"));
    }
}
