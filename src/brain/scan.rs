//! Finding the notes of a brain on disk.
//!
//! A note is a `.md` or `.markdown` file under the brain folder. Hidden files
//! and folders (`.git`, `.obsidian`, `.trash`, `.noggin`), `node_modules`,
//! files over the size limit and symlinks are skipped, so the index never
//! holds what the user did not write as a note, and holds each note once, at
//! its own path (a symlink out of the brain would leak what is not the
//! brain's; one within it would show a note twice, and its edits under the
//! wrong path).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use rayon::prelude::*;
use walkdir::WalkDir;

use super::Error;

/// A note file found on disk, with what reconciling needs to know about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteFile {
    /// Path relative to the brain, `/`-separated.
    pub rel_path: String,
    pub abs_path: PathBuf,
    pub size: u64,
    /// Modification time in nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
    /// The file's identity and its last change of any kind (contents,
    /// name, links, permissions): another file moved over a note, even of
    /// the same size and mtime (`mv`, `cp -p`, `rsync -a`, `tar x`), has
    /// another of either.
    pub identity: FileIdentity,
}

/// Inode number and status-change time (nanoseconds since the Unix epoch)
/// of a file; 0 and 0 where the system has none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FileIdentity {
    pub ino: u64,
    pub ctime_ns: i64,
}

impl FileIdentity {
    #[cfg(unix)]
    fn of(meta: &std::fs::Metadata) -> FileIdentity {
        use std::os::unix::fs::MetadataExt;
        FileIdentity {
            ino: meta.ino(),
            ctime_ns: meta.ctime().saturating_mul(1_000_000_000) + meta.ctime_nsec(),
        }
    }

    #[cfg(not(unix))]
    fn of(_: &std::fs::Metadata) -> FileIdentity {
        FileIdentity::default()
    }
}

/// What a scan found besides notes.
#[derive(Debug, Default, Clone)]
pub struct ScanReport {
    pub too_large: usize,
    pub unreadable: usize,
    /// Folders that could not be read (relative, `/`-separated): what they
    /// held is unknown, not gone.
    pub unreadable_folders: Vec<String>,
    /// Symbolic links, which noggin does not follow (a link out of the
    /// brain would index what is not the user's notes).
    pub links: usize,
}

/// True for a path component that hides everything beneath it.
fn is_skipped_component(name: &str) -> bool {
    name.starts_with('.') || name == "node_modules"
}

/// True when `rel_path` (relative, `/`-separated) lies under a hidden
/// folder or `node_modules`, or is a hidden file: never part of the brain.
pub fn is_hidden_path(rel_path: &str) -> bool {
    rel_path.split('/').any(is_skipped_component)
}

/// The extensions of a note's file name.
const NOTE_EXTENSIONS: [&str; 2] = ["md", "markdown"];

/// A note's path without its extension (`Runbooks/Deploy.md`:
/// `Runbooks/Deploy`); another path as it is.
pub fn without_extension(path: &str) -> &str {
    NOTE_EXTENSIONS
        .iter()
        .find_map(|ext| path.strip_suffix(ext)?.strip_suffix('.'))
        .unwrap_or(path)
}

/// True when `rel_path` (relative, `/`-separated) names a note noggin indexes.
pub fn is_note_path(rel_path: &str) -> bool {
    let has_note_ext = rel_path
        .rsplit_once('.')
        .is_some_and(|(_, ext)| NOTE_EXTENSIONS.contains(&ext));
    has_note_ext
        && !rel_path
            .split('/')
            .any(|c| c.is_empty() || is_skipped_component(c) || c == "..")
}

/// Turns `abs` under `root` into a relative `/`-separated path.
pub fn relative_path(root: &Path, abs: &Path) -> Option<String> {
    // A path the walk of `root` found is `root`, a separator and the rest:
    // that rest is the answer when it is plain (the listing's most frequent
    // call).
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let rest = abs
            .as_os_str()
            .as_bytes()
            .strip_prefix(root.as_os_str().as_bytes());
        let rest = rest.and_then(|rest| match rest {
            [b'/', rest @ ..] => Some(rest),
            _ if root.as_os_str().as_bytes().ends_with(b"/") => Some(rest),
            _ => None,
        });
        if let Some(rest) = rest.and_then(|rest| std::str::from_utf8(rest).ok()) {
            if !rest
                .split('/')
                .any(|c| c.is_empty() || c == "." || c == "..")
            {
                return Some(rest.to_string());
            }
        }
    }
    let rel = abs.strip_prefix(root).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    let joined = parts?.join("/");
    (!joined.is_empty()).then_some(joined)
}

/// The brain's folder, held open while a pass reads its notes: each note
/// is then opened by its path relative to it, so the system does not walk
/// the brain's own path again for every note.
pub struct BrainDir {
    #[cfg(unix)]
    dir: std::fs::File,
}

impl BrainDir {
    pub fn open(root: &Path) -> std::io::Result<BrainDir> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            let dir = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECTORY)
                .open(root)?;
            Ok(BrainDir { dir })
        }
        #[cfg(not(unix))]
        {
            let _ = root;
            Ok(BrainDir {})
        }
    }

    /// Opens the note at `path` for reading: by its relative path where the
    /// system can, by its absolute one elsewhere.
    fn open_note(&self, path: &NotePath) -> std::io::Result<std::fs::File> {
        #[cfg(unix)]
        {
            use rustix::fs::{Mode, OFlags};
            // Not a pipe's open that blocks (see [`open_note`]), and not a
            // path that leaves the brain (no listed path does).
            debug_assert!(
                !path.rel_path.starts_with('/') && !path.rel_path.split('/').any(|c| c == "..")
            );
            let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
            let fd = rustix::fs::openat(&self.dir, path.rel_path.as_str(), flags, Mode::empty())?;
            Ok(std::fs::File::from(fd))
        }
        #[cfg(not(unix))]
        {
            open_for_reading(&path.abs_path)
        }
    }
}

/// A note path found by [`list_notes`], not yet looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotePath {
    /// Path relative to the brain, `/`-separated.
    pub rel_path: String,
    pub abs_path: PathBuf,
}

/// Lists the note paths of the brain at `root`, sorted by relative path,
/// without looking into the files: the walk reads only directories (their
/// entries carry the file type).
///
/// `root` must be canonical (see [`super::canonical_root`]).
pub fn list_notes(root: &Path) -> Result<(Vec<NotePath>, ScanReport), Error> {
    let mut found = Vec::new();
    let report = walk_notes(root, &mut |path| found.push(path))?;
    found.sort_unstable_by(|a, b| a.rel_path.cmp(&b.rel_path));
    Ok((found, report))
}

/// Walks the brain at `root` as [`list_notes`] does, handing each note path
/// to `each` as soon as it is found, in the walk's order. An error when the
/// brain itself cannot be read, before any path is handed over.
pub fn walk_notes(root: &Path, each: &mut dyn FnMut(NotePath)) -> Result<ScanReport, Error> {
    if !root.is_dir() {
        return Err(Error::NotAFolder(root.to_path_buf()));
    }
    let mut report = ScanReport::default();
    // Symlinks are not followed: their entries are neither files nor folders.
    let walker = WalkDir::new(root).into_iter().filter_entry(|e| {
        e.depth() == 0 || !e.file_name().to_str().is_some_and(is_skipped_component)
    });
    for entry in walker {
        let entry = match entry {
            Ok(entry) => entry,
            // The brain itself cannot be read: that is no empty brain.
            Err(error) if error.depth() == 0 => {
                let source = error
                    .into_io_error()
                    .unwrap_or_else(|| std::io::Error::other("cannot walk the folder"));
                return Err(Error::Io {
                    path: root.to_path_buf(),
                    source,
                });
            }
            Err(error) => {
                tracing::warn!(%error, "skipping an unreadable entry of the brain");
                report.unreadable += 1;
                if let Some(folder) = error.path().and_then(|p| relative_path(root, p)) {
                    report.unreadable_folders.push(folder);
                }
                continue;
            }
        };
        if entry.file_type().is_symlink() {
            report.links += 1;
            continue;
        }
        if !entry.file_type().is_file() {
            continue;
        }
        let Some(rel_path) = relative_path(root, entry.path()) else {
            // noggin names notes by their paths as text: a note whose name
            // is no UTF-8 cannot be one, which is said rather than hidden.
            let named_as_note = entry
                .path()
                .extension()
                .is_some_and(|e| NOTE_EXTENSIONS.iter().any(|n| e == *n));
            if named_as_note && entry.path().to_str().is_none() {
                tracing::warn!(path = %entry.path().display(), "skipping a note whose name is not UTF-8; rename it to index it");
                report.unreadable += 1;
            }
            continue;
        };
        if is_note_path(&rel_path) {
            each(NotePath {
                rel_path,
                abs_path: entry.into_path(),
            });
        }
    }
    Ok(report)
}

/// Lists every note of the brain at `root` with its size, mtime and identity.
///
/// `root` must be canonical (see [`super::canonical_root`]).
pub fn scan_brain(root: &Path, max_note_bytes: u64) -> Result<(Vec<NoteFile>, ScanReport), Error> {
    let (found, mut report) = list_notes(root)?;
    // A stat on all cores: most of a scan's time in a brain of many small
    // notes.
    let stats: Vec<Result<Option<NoteFile>, Error>> = found
        .into_par_iter()
        .map(|p| stat_file(p.abs_path, &p.rel_path, max_note_bytes))
        .collect();
    let mut notes = Vec::new();
    for stat in stats {
        match stat {
            Ok(Some(note)) => notes.push(note),
            Ok(None) => {}
            Err(Error::TooLarge { path, size }) => {
                tracing::warn!(path = %path.display(), size, "skipping a note over the size limit");
                report.too_large += 1;
            }
            Err(error) => {
                tracing::warn!(%error, "skipping an unreadable note");
                report.unreadable += 1;
            }
        }
    }
    Ok((notes, report))
}

/// Looks at one note path: `Ok(None)` when it is gone, not a note, or
/// reached through a symlink.
pub fn stat_note(
    root: &Path,
    rel_path: &str,
    max_note_bytes: u64,
) -> Result<Option<NoteFile>, Error> {
    if !is_note_path(rel_path) {
        return Ok(None);
    }
    let abs_path = root.join(rel_path);
    // A symlinked file or folder anywhere on the way makes it no note.
    match std::fs::canonicalize(&abs_path) {
        Ok(real) if real == abs_path => {}
        Ok(_) => return Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(Error::Io {
                path: abs_path,
                source,
            })
        }
    }
    stat_file(abs_path, rel_path, max_note_bytes)
}

/// Reads size, mtime and identity of a note file already known to lie inside the brain.
pub fn stat_file(
    abs_path: PathBuf,
    rel_path: &str,
    max_note_bytes: u64,
) -> Result<Option<NoteFile>, Error> {
    match std::fs::metadata(&abs_path) {
        Ok(meta) => note_file(abs_path, rel_path, &meta, max_note_bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(Error::Io {
            path: abs_path,
            source,
        }),
    }
}

/// The [`NoteFile`] of a stat: `Ok(None)` when it is not a file.
fn note_file(
    abs_path: PathBuf,
    rel_path: &str,
    meta: &std::fs::Metadata,
    max_note_bytes: u64,
) -> Result<Option<NoteFile>, Error> {
    if !meta.is_file() {
        return Ok(None);
    }
    if meta.len() > max_note_bytes {
        return Err(Error::TooLarge {
            path: abs_path,
            size: meta.len(),
        });
    }
    let mtime_ns = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i64);
    Ok(Some(NoteFile {
        rel_path: rel_path.to_string(),
        abs_path,
        size: meta.len(),
        mtime_ns,
        identity: FileIdentity::of(meta),
    }))
}

/// Opens a note file not looked at before and reads it: its size and mtime
/// come from the open file, which costs less than a stat of its path and
/// then a read. `Ok(None)` when it is gone or not a file; `TooLarge` when it
/// is over the limit, also if it grew past it since the stat or cannot be
/// opened at all.
/// `dir`, when given, is the brain's folder the note is opened from.
pub fn open_note(
    path: &NotePath,
    max_note_bytes: u64,
    dir: Option<&BrainDir>,
) -> Result<Option<(NoteFile, String)>, Error> {
    let io_error = |source| Error::Io {
        path: path.abs_path.clone(),
        source,
    };
    let opened = match dir {
        Some(dir) => dir.open_note(path),
        None => open_for_reading(&path.abs_path),
    };
    let mut opened = match opened {
        Ok(opened) => opened,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        // Its size still decides first whether it is a note at all.
        Err(source) => {
            return stat_file(path.abs_path.clone(), &path.rel_path, max_note_bytes)
                .and(Err(io_error(source)))
        }
    };
    let meta = opened.metadata().map_err(io_error)?;
    let Some(file) = note_file(path.abs_path.clone(), &path.rel_path, &meta, max_note_bytes)?
    else {
        return Ok(None);
    };
    let bytes = read_all(&mut opened, file.size, max_note_bytes).map_err(io_error)?;
    if bytes.len() as u64 > max_note_bytes {
        return Err(Error::TooLarge {
            path: path.abs_path.clone(),
            size: bytes.len() as u64,
        });
    }
    let text = note_text(&file, bytes);
    Ok(Some((file, text)))
}

/// Opens a file for reading. A note swapped for a named pipe since the
/// listing must not block the open; on a regular file the flag changes
/// nothing.
fn open_for_reading(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    options.open(path)
}

/// Reads a file of `size` bytes (by its stat) to the end, or to a byte past
/// `limit`.
///
/// One read asks for a byte more than `size`; getting exactly `size` back
/// from a regular file means its end was reached, so the read that would
/// find nothing more is left out. Anything else (a file that grew or shrank
/// since the stat) reads on. `fs::read`, or a `File`'s own `read_to_end`,
/// would also stat and seek the open file again: per note, those calls cost
/// more than parsing a small one.
fn read_all(file: &mut std::fs::File, size: u64, limit: u64) -> std::io::Result<Vec<u8>> {
    let size = size.min(limit) as usize;
    let mut bytes = vec![0; size + 1];
    let got = loop {
        match file.read(&mut bytes) {
            Ok(got) => break got,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    };
    bytes.truncate(got);
    if got != size {
        let rest = limit.saturating_add(1).saturating_sub(got as u64);
        file.take(rest).read_to_end(&mut bytes)?;
    }
    Ok(bytes)
}

/// Reads a note's bytes as text, replacing invalid UTF-8 (with a warning).
pub fn read_note_text(file: &NoteFile) -> Result<String, Error> {
    let bytes = std::fs::File::open(&file.abs_path)
        .and_then(|mut f| read_all(&mut f, file.size, u64::MAX))
        .map_err(|source| Error::Io {
            path: file.abs_path.clone(),
            source,
        })?;
    Ok(note_text(file, bytes))
}

fn note_text(file: &NoteFile, bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(text) => text,
        // A note of no UTF-8 letter beyond ASCII was written in a Windows
        // or Latin-1 code page ("Café" saved by an old editor): read so.
        Err(e) if !e.as_bytes().utf8_chunks().any(|c| !c.valid().is_ascii()) => {
            tracing::warn!(path = %file.rel_path, "note is not UTF-8; reading it as Windows-1252");
            windows_1252(e.as_bytes())
        }
        Err(e) => {
            tracing::warn!(path = %file.rel_path, "note is not valid UTF-8; decoding lossily");
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    }
}

/// Windows-1252, which is Latin-1 (ISO 8859-1) but for 0x80–0x9F.
fn windows_1252(bytes: &[u8]) -> String {
    /// 0x80–0x9F; U+FFFD where the code page has no character.
    const HIGH: [char; 32] = [
        '€', '\u{FFFD}', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u{FFFD}', 'Ž',
        '\u{FFFD}', '\u{FFFD}', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ',
        '\u{FFFD}', 'ž', 'Ÿ',
    ];
    bytes
        .iter()
        .map(|&b| match b {
            0x80..=0x9f => HIGH[usize::from(b - 0x80)],
            b => char::from(b),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_in_a_windows_code_page_is_read_as_written() {
        let file = NoteFile {
            rel_path: "café.md".into(),
            abs_path: PathBuf::from("café.md"),
            size: 0,
            mtime_ns: 0,
            identity: FileIdentity::default(),
        };
        // "Café – 5 €" in Windows-1252.
        let text = note_text(&file, b"Caf\xe9 \x96 5 \x80".to_vec());
        assert_eq!(text, "Café – 5 €");
        // UTF-8 with one broken byte stays UTF-8, the byte replaced.
        let text = note_text(&file, "두뇌 \u{e9}".bytes().chain([0xff]).collect());
        assert_eq!(text, "두뇌 é\u{FFFD}");
    }

    #[test]
    fn note_paths_follow_the_ignore_rules() {
        let cases = [
            ("a.md", true),
            ("dir/b.markdown", true),
            ("한국어/노트.md", true),
            ("a.txt", false),
            (".obsidian/x.md", false),
            ("dir/.trash/x.md", false),
            (".noggin/x.md", false),
            ("node_modules/pkg/README.md", false),
            ("dir/.hidden.md", false),
            ("../escape.md", false),
            ("a//b.md", false),
        ];
        for (path, expected) in cases {
            assert_eq!(is_note_path(path), expected, "{path}");
        }
    }

    #[test]
    fn relative_paths_are_the_rest_under_the_root() {
        let rel = |root: &str, abs: &str| relative_path(Path::new(root), Path::new(abs));
        assert_eq!(rel("/brain", "/brain/a/b.md").as_deref(), Some("a/b.md"));
        assert_eq!(rel("/", "/a/b.md").as_deref(), Some("a/b.md"));
        assert_eq!(rel("/brain", "/brain/a/./b.md").as_deref(), Some("a/b.md"));
        assert_eq!(rel("/brain", "/brain//a.md").as_deref(), Some("a.md"));
        assert_eq!(
            rel("/brain", "/brain/a/../b.md").as_deref(),
            Some("a/../b.md")
        );
        assert_eq!(rel("/brain", "/brain2/a.md"), None);
        assert_eq!(rel("/brain", "/other/a.md"), None);
        assert_eq!(rel("/brain", "/brain"), None);
    }

    #[test]
    fn scan_skips_what_is_not_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let write = |p: &str, content: &[u8]| {
            let path = root.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        };
        write("keep.md", b"# Keep");
        write("sub/also.markdown", b"text");
        write(".git/x.md", b"no");
        write(".obsidian/y.md", b"no");
        write("node_modules/z.md", b"no");
        write("big.md", &vec![b'a'; 2048]);
        write("other.txt", b"no");
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.md"), "secret").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.md"), root.join("link.md")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("linkdir")).unwrap();
        std::os::unix::fs::symlink(root.join("keep.md"), root.join("inside-link.md")).unwrap();

        let (notes, report) = scan_brain(&root, 1024).unwrap();
        let paths: Vec<&str> = notes.iter().map(|n| n.rel_path.as_str()).collect();
        assert_eq!(paths, ["keep.md", "sub/also.markdown"]);
        assert_eq!(report.too_large, 1);
        // The links left out are counted, so a summary can say so.
        assert_eq!(report.links, 3);
        // A note is one note, at its own path: not again through a link.
        std::os::unix::fs::symlink(root.join("sub"), root.join("sublink")).unwrap();
        let (notes, _) = scan_brain(&root, 1024).unwrap();
        assert_eq!(notes.len(), 2);
        assert!(stat_note(&root, "sublink/also.markdown", 1024)
            .unwrap()
            .is_none());
        assert!(stat_note(&root, "inside-link.md", 1024).unwrap().is_none());
        assert!(stat_note(&root, "sub/also.markdown", 1024)
            .unwrap()
            .is_some());
    }

    /// A note whose name is not UTF-8 cannot be indexed under its path:
    /// it is counted as unreadable (and logged), not silently left out.
    #[test]
    fn a_note_whose_name_is_not_utf8_is_counted_unreadable() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(root.join("keep.md"), "# Keep").unwrap();
        let name = std::ffi::OsStr::from_bytes(b"caf\xe9.md");
        std::fs::write(root.join(name), "# Cafe").unwrap();
        std::fs::write(root.join(std::ffi::OsStr::from_bytes(b"caf\xe9.txt")), "no").unwrap();
        let (notes, report) = list_notes(&root).unwrap();
        let paths: Vec<&str> = notes.iter().map(|n| n.rel_path.as_str()).collect();
        assert_eq!(paths, ["keep.md"]);
        assert_eq!(report.unreadable, 1);
    }

    #[test]
    fn invalid_utf8_is_decoded_lossily() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(root.join("bad.md"), b"caf\xc3\xa9 \xe9 ok").unwrap();
        let file = stat_note(&root, "bad.md", 1024).unwrap().unwrap();
        assert_eq!(read_note_text(&file).unwrap(), "café \u{fffd} ok");
        // With no UTF-8 letter at all, it is a code page's text.
        std::fs::write(root.join("latin.md"), b"caf\xe9 ok").unwrap();
        let file = stat_note(&root, "latin.md", 1024).unwrap().unwrap();
        assert_eq!(read_note_text(&file).unwrap(), "café ok");
    }

    /// A note that grew or shrank between its stat and its read is read
    /// whole, as it is at the read.
    #[test]
    fn a_note_is_read_whole_whatever_its_stat_said() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.md");
        let text = "x".repeat(5000);
        std::fs::write(&path, &text).unwrap();
        for stat_size in [0, 1, 4999, 5000, 5001, 20000] {
            let file = NoteFile {
                rel_path: "a.md".to_string(),
                abs_path: path.clone(),
                size: stat_size,
                mtime_ns: 0,
                identity: FileIdentity::default(),
            };
            assert_eq!(
                read_note_text(&file).unwrap(),
                text,
                "stat said {stat_size}"
            );
        }
        let note = NotePath {
            rel_path: "a.md".to_string(),
            abs_path: path,
        };
        let brain = BrainDir::open(dir.path()).unwrap();
        for from in [None, Some(&brain)] {
            let (file, read) = open_note(&note, 1 << 20, from).unwrap().unwrap();
            assert_eq!((file.size, read.as_str()), (5000, text.as_str()));
        }
    }

    /// A note path that turned into a named pipe since the listing is no
    /// note, and opening it does not wait for a writer (without the
    /// non-blocking open this test hangs).
    #[cfg(unix)]
    #[test]
    fn a_named_pipe_is_no_note_and_does_not_block() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pipe.md");
        let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
        let note = NotePath {
            rel_path: "pipe.md".to_string(),
            abs_path: path,
        };
        let brain = BrainDir::open(dir.path()).unwrap();
        for from in [None, Some(&brain)] {
            assert!(matches!(open_note(&note, 1 << 20, from), Ok(None)));
        }
    }

    /// A new note over the limit is not read, nor one that grew past it
    /// since its stat.
    #[test]
    fn a_new_note_over_the_limit_is_too_large() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.md");
        std::fs::write(&path, "x".repeat(300)).unwrap();
        let note = NotePath {
            rel_path: "big.md".to_string(),
            abs_path: path.clone(),
        };
        let brain = BrainDir::open(dir.path()).unwrap();
        for from in [None, Some(&brain)] {
            assert!(matches!(
                open_note(&note, 100, from),
                Err(Error::TooLarge { size: 300, .. })
            ));
            assert!(matches!(open_note(&note, 300, from), Ok(Some(_))));
        }
        let mut file = std::fs::File::open(&path).unwrap();
        let bytes = read_all(&mut file, 10, 100).unwrap();
        assert_eq!(
            bytes.len(),
            101,
            "a note that grew since its stat is read to the limit only"
        );
    }
}
