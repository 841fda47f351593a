//! Native file events on Linux: one inotify watch per folder that is part
//! of the brain.
//!
//! A recursive watch would take every folder beneath the brain: `.git`,
//! `node_modules`, noggin's own `.noggin`. Those can use up the kernel's
//! limit of watches (`fs.inotify.max_user_watches`), and every write there
//! (an index commit, a `git status`) would wake noggin for nothing. So the
//! folders are walked as the scan walks them (hidden ones left out) and
//! each is watched alone; a folder made or moved into the brain later is
//! watched when its event comes. Only writes are asked for, not opens and
//! reads: reading the notes (a search tool, a backup) costs noggin nothing.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask};

use super::scan::is_note_path;
use super::watch::brain_path;

/// What each folder's watch reports: a file made, written, closed after
/// writing, changed in its attributes (a `chmod`), deleted or moved in or
/// out. Symlinks are not followed: they are no notes, and following one
/// would watch a folder under two paths.
fn mask() -> WatchMask {
    WatchMask::CREATE
        | WatchMask::MODIFY
        | WatchMask::CLOSE_WRITE
        | WatchMask::ATTRIB
        | WatchMask::DELETE
        | WatchMask::MOVED_FROM
        | WatchMask::MOVED_TO
        | WatchMask::ONLYDIR
        | WatchMask::DONT_FOLLOW
        | WatchMask::EXCL_UNLINK
}

/// The brain's folders under watch.
pub(super) struct Folders {
    inotify: Inotify,
    root: PathBuf,
    folders: HashMap<WatchDescriptor, PathBuf>,
    buffer: Vec<u8>,
}

/// What one read of the events found.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Seen {
    /// Paths made, written, deleted or moved (absolute).
    pub paths: Vec<PathBuf>,
    /// The kernel's queue overflowed: events were lost.
    pub lost: bool,
}

impl Folders {
    /// Ready to watch the brain at `root`; nothing is watched yet
    /// ([`Folders::watch_all`]).
    pub fn new(root: &Path) -> io::Result<Folders> {
        Ok(Folders {
            inotify: Inotify::init()?,
            root: root.to_path_buf(),
            folders: HashMap::new(),
            buffer: vec![0; 64 * 1024],
        })
    }

    /// The file descriptor to wait on for events.
    pub fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        std::os::fd::AsFd::as_fd(&self.inotify)
    }

    /// How many folders are watched.
    #[cfg(test)]
    pub fn watched(&self) -> Vec<PathBuf> {
        let mut folders: Vec<PathBuf> = self.folders.values().cloned().collect();
        folders.sort();
        folders
    }

    /// Forgets every watch, then watches every folder of the brain: at
    /// start, when another folder took the brain's path (a restore, a fresh
    /// clone), and when watching is tried again after the limit of watches
    /// was reached. On an error nothing stays watched: the watches are
    /// given back for other programs, and the caller polls.
    pub fn watch_all(&mut self) -> io::Result<()> {
        self.forget_all();
        let root = self.root.clone();
        self.watch_tree(&root).inspect_err(|_| self.forget_all())
    }

    fn forget_all(&mut self) {
        for (wd, _) in self.folders.drain() {
            let _ = self.inotify.watches().remove(wd);
        }
    }

    /// Watches `dir` and every folder beneath it that is part of the brain.
    /// A folder gone before its watch is no error; running out of watches
    /// is.
    fn watch_tree(&mut self, dir: &Path) -> io::Result<()> {
        let root = self.root.clone();
        let walk = walkdir::WalkDir::new(dir)
            .follow_links(false)
            .into_iter()
            .filter_entry(|entry| {
                entry.file_type().is_dir()
                    && (entry.path() == root || brain_path(&root, entry.path()).is_some())
            });
        for entry in walk {
            let Ok(entry) = entry else { continue };
            match self.inotify.watches().add(entry.path(), mask()) {
                Ok(wd) => {
                    self.folders.insert(wd, entry.into_path());
                }
                Err(error) if error.raw_os_error() == Some(libc::ENOSPC) => {
                    return Err(io::Error::other(
                        "the kernel's limit of watched folders (fs.inotify.max_user_watches) is reached",
                    ));
                }
                // Gone or replaced by a file since it was listed: its
                // parent's event says so.
                Err(_) => {}
            }
        }
        Ok(())
    }

    /// Whether `dir` is watched.
    fn watches(&self, dir: &Path) -> bool {
        self.folders.values().any(|watched| watched == dir)
    }

    /// Stops watching `dir` and every folder beneath it.
    fn forget_tree(&mut self, dir: &Path) {
        let gone: Vec<WatchDescriptor> = self
            .folders
            .iter()
            .filter(|(_, path)| path.starts_with(dir))
            .map(|(wd, _)| wd.clone())
            .collect();
        for wd in gone {
            self.folders.remove(&wd);
            let _ = self.inotify.watches().remove(wd);
        }
    }

    /// Reads the events that are ready, without waiting. A folder made or
    /// moved into the brain is watched here (its path is reported, so the
    /// caller compares it in full: notes may have been written into it
    /// before its watch); a folder deleted or moved away is forgotten. When
    /// a new folder cannot be watched, none stays watched.
    pub fn read(&mut self) -> io::Result<Seen> {
        let mut seen = Seen::default();
        loop {
            let events: Vec<(WatchDescriptor, EventMask, Option<OsString>)> =
                match self.inotify.read_events(&mut self.buffer) {
                    Ok(events) => events
                        .map(|e| (e.wd, e.mask, e.name.map(|n| n.to_os_string())))
                        .collect(),
                    Err(error) if error.kind() == io::ErrorKind::WouldBlock => break,
                    Err(error) => return Err(error),
                };
            if events.is_empty() {
                break;
            }
            for (wd, mask, name) in events {
                if let Err(error) = self.take_in(wd, mask, name, &mut seen) {
                    // A new folder cannot be watched: nothing stays watched
                    // (as in `watch_all`), and the caller polls.
                    self.forget_all();
                    return Err(error);
                }
            }
        }
        if seen.lost {
            // Folders made, moved or deleted while events were lost are
            // not known here: the brain's folders are walked and watched
            // anew (and the caller compares every note).
            self.watch_all()?;
        }
        Ok(seen)
    }

    fn take_in(
        &mut self,
        wd: WatchDescriptor,
        mask: EventMask,
        name: Option<OsString>,
        seen: &mut Seen,
    ) -> io::Result<()> {
        if mask.contains(EventMask::Q_OVERFLOW) {
            seen.lost = true;
            return Ok(());
        }
        if mask.contains(EventMask::IGNORED) {
            // The folder was deleted (or its watch removed): its number
            // may be given to another folder.
            self.folders.remove(&wd);
            return Ok(());
        }
        let (Some(folder), Some(name)) = (self.folders.get(&wd), name) else {
            return Ok(());
        };
        let path = folder.join(name);
        if !mask.contains(EventMask::ISDIR) {
            // A file that is no note (an image, an editor's backup or the
            // `4913` vim makes and deletes at every save) changes no note:
            // it neither wakes the index nor, once gone, looks like a
            // folder that went away (which compares the whole brain).
            if !brain_path(&self.root, &path).is_some_and(|rel| is_note_path(&rel)) {
                return Ok(());
            }
        } else if mask.intersects(EventMask::CREATE | EventMask::MOVED_TO) {
            if brain_path(&self.root, &path).is_none() {
                return Ok(());
            }
            self.watch_tree(&path)?;
        } else if mask.intersects(EventMask::DELETE | EventMask::MOVED_FROM) {
            self.forget_tree(&path);
        } else if self.watches(&path) || brain_path(&self.root, &path).is_none() {
            // A watched folder's attributes changed: no note did.
            return Ok(());
        } else {
            // A folder that could not be watched (it could not be read) may
            // be readable now (`chmod 755`): it is watched, and its notes
            // compared in full.
            self.watch_tree(&path)?;
            if !self.watches(&path) {
                return Ok(());
            }
        }
        seen.paths.push(path);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn write(path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    /// Reads events until `want` holds of all seen so far, or two seconds
    /// pass.
    fn read_until(folders: &mut Folders, want: impl Fn(&Seen) -> bool) -> Seen {
        let mut all = Seen::default();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while std::time::Instant::now() < deadline {
            let seen = folders.read().unwrap();
            all.paths.extend(seen.paths);
            all.lost |= seen.lost;
            if want(&all) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        all
    }

    fn watch(root: &Path) -> io::Result<Folders> {
        let mut folders = Folders::new(root)?;
        folders.watch_all()?;
        Ok(folders)
    }

    #[test]
    fn only_the_folders_of_the_brain_are_watched() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        write(&root.join("a.md"), "a");
        write(&root.join("projects/x/b.md"), "b");
        write(&root.join("node_modules/pkg/lib/README.md"), "no");
        write(&root.join(".git/objects/ab/cd"), "no");
        write(&root.join(".noggin/index/meta.json"), "no");
        write(&root.join(".obsidian/workspace.json"), "no");
        std::os::unix::fs::symlink(root.join("projects"), root.join("link")).unwrap();
        let folders = watch(&root).unwrap();
        assert_eq!(
            folders.watched(),
            vec![root.clone(), root.join("projects"), root.join("projects/x")]
        );
    }

    #[test]
    fn reading_notes_wakes_nothing_and_writing_does() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        write(&root.join("notes/a.md"), "a");
        let mut folders = watch(&root).unwrap();
        assert_eq!(fs::read_to_string(root.join("notes/a.md")).unwrap(), "a");
        let _ = fs::read_dir(root.join("notes")).unwrap().count();
        assert_eq!(folders.read().unwrap(), Seen::default());
        fs::write(root.join("notes/a.md"), "b").unwrap();
        let seen = read_until(&mut folders, |s| !s.paths.is_empty());
        assert!(seen.paths.iter().all(|p| p == &root.join("notes/a.md")));
        assert!(!seen.paths.is_empty());
    }

    #[test]
    fn after_events_were_lost_the_folders_are_watched_anew() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        write(&root.join("old/sub/a.md"), "a");
        fs::create_dir(root.join("spam")).unwrap();
        let mut folders = watch(&root).unwrap();
        // More events than the kernel keeps for a reader that does not read.
        let limit: usize = fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
            .ok()
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(16_384);
        for i in 0..limit {
            fs::File::create(root.join(format!("spam/{i}.txt"))).unwrap();
        }
        // Meanwhile a folder is renamed and another made.
        fs::rename(root.join("old"), root.join("renamed")).unwrap();
        fs::create_dir_all(root.join("made/deep")).unwrap();
        let seen = read_until(&mut folders, |s| s.lost);
        assert!(seen.lost, "the kernel's queue should have overflowed");
        assert!(folders.watched().contains(&root.join("renamed/sub")));
        assert!(folders.watched().contains(&root.join("made/deep")));
        write(&root.join("renamed/sub/b.md"), "b");
        write(&root.join("made/deep/c.md"), "c");
        let want = [root.join("renamed/sub/b.md"), root.join("made/deep/c.md")];
        let seen = read_until(&mut folders, |s| want.iter().all(|w| s.paths.contains(w)));
        assert!(
            want.iter().all(|w| seen.paths.contains(w)),
            "notes in folders renamed or made while events were lost: {seen:?}"
        );
    }

    #[test]
    fn files_that_are_no_notes_are_not_reported() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        write(&root.join("notes/a.md"), "a");
        let mut folders = watch(&root).unwrap();
        // What vim does at every save, and an attachment added and removed.
        write(&root.join("notes/4913"), "");
        fs::remove_file(root.join("notes/4913")).unwrap();
        write(&root.join("notes/diagram.png"), "png");
        fs::remove_file(root.join("notes/diagram.png")).unwrap();
        fs::write(root.join("notes/a.md"), "b").unwrap();
        let seen = read_until(&mut folders, |s| !s.paths.is_empty());
        assert!(!seen.paths.is_empty());
        assert!(
            seen.paths.iter().all(|p| p == &root.join("notes/a.md")),
            "{seen:?}"
        );
    }

    #[test]
    fn a_folder_that_could_not_be_watched_is_watched_once_its_mode_changes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        write(&root.join("Decisions/adr.md"), "a");
        let mut folders = watch(&root).unwrap();
        // As when the folder could not be read when the brain was watched.
        folders.forget_tree(&root.join("Decisions"));
        assert_eq!(folders.watched(), vec![root.clone()]);
        let mode = fs::metadata(root.join("Decisions")).unwrap().permissions();
        fs::set_permissions(root.join("Decisions"), mode).unwrap();
        let seen = read_until(&mut folders, |s| !s.paths.is_empty());
        assert_eq!(seen.paths, vec![root.join("Decisions")]);
        assert_eq!(
            folders.watched(),
            vec![root.clone(), root.join("Decisions")]
        );
        // Watched now: its mode changing again says nothing.
        let mode = fs::metadata(root.join("Decisions")).unwrap().permissions();
        fs::set_permissions(root.join("Decisions"), mode).unwrap();
        assert_eq!(
            read_until(&mut folders, |_| false).paths,
            Vec::<PathBuf>::new()
        );
        fs::write(root.join("Decisions/adr.md"), "b").unwrap();
        let seen = read_until(&mut folders, |s| !s.paths.is_empty());
        assert!(
            seen.paths.contains(&root.join("Decisions/adr.md")),
            "{seen:?}"
        );
    }

    #[test]
    fn a_folder_made_or_moved_later_is_watched_under_its_new_path() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        write(&root.join("old/a.md"), "a");
        let mut folders = watch(&root).unwrap();

        fs::create_dir_all(root.join("new/deeper")).unwrap();
        let seen = read_until(&mut folders, |s| s.paths.contains(&root.join("new")));
        assert!(seen.paths.contains(&root.join("new")), "{seen:?}");
        write(&root.join("new/deeper/b.md"), "b");
        let seen = read_until(&mut folders, |s| {
            s.paths.contains(&root.join("new/deeper/b.md"))
        });
        assert!(
            seen.paths.contains(&root.join("new/deeper/b.md")),
            "{seen:?}"
        );

        fs::rename(root.join("old"), root.join("archive")).unwrap();
        let seen = read_until(&mut folders, |s| s.paths.contains(&root.join("archive")));
        assert!(seen.paths.contains(&root.join("old")), "{seen:?}");
        fs::write(root.join("archive/a.md"), "edited").unwrap();
        let seen = read_until(&mut folders, |s| !s.paths.is_empty());
        assert!(
            seen.paths.iter().all(|p| p == &root.join("archive/a.md")),
            "reported under the folder's new path: {seen:?}"
        );

        // A folder moved out of the brain is no longer watched.
        let outside = tempfile::tempdir().unwrap();
        fs::rename(root.join("archive"), outside.path().join("archive")).unwrap();
        read_until(&mut folders, |s| !s.paths.is_empty());
        assert_eq!(
            folders.watched(),
            vec![root.clone(), root.join("new"), root.join("new/deeper")]
        );

        // Made in a hidden folder: never watched.
        fs::create_dir_all(root.join("node_modules/pkg")).unwrap();
        fs::create_dir_all(root.join(".git/refs")).unwrap();
        assert_eq!(
            read_until(&mut folders, |_| false).paths,
            Vec::<PathBuf>::new()
        );
        assert_eq!(folders.watched().len(), 3);
    }
}
