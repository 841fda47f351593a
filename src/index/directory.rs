//! Where the index lives on disk: tantivy's `MmapDirectory`, except that a
//! file tantivy writes is made durable when the index commits rather than
//! the moment it is closed.
//!
//! Closing a segment's file used to wait for the disk (`fdatasync`) on the
//! indexing thread that wrote it, a dozen times at the end of a cold index
//! while that thread still had a segment to finish. Here a closed file only
//! starts its write-back; the commit, before it writes the `meta.json` that
//! names the new files, waits for all of them together (tantivy syncs the
//! directory first, [`Directory::sync_directory`]). A commit is as durable
//! as before: nothing names a file that is not on the disk.
//!
//! The same holds for tantivy's list of the files it made
//! (`.managed.json`), which it writes anew, atomically, for every new file:
//! a dozen times as a cold index starts its segments, each write waiting
//! for the disk on an indexing thread. Here it is replaced without waiting
//! and made durable by the next sync. A crash before then leaves the list
//! as it was or the new one: at worst a file of a commit that never
//! happened is not on it, and stays on disk unused.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use tantivy::directory::error::{
    DeleteError, LockError, OpenDirectoryError, OpenReadError, OpenWriteError,
};
use tantivy::directory::{
    AntiCallToken, Directory, DirectoryLock, FileHandle, Lock, MmapDirectory, TerminatingWrite,
    WatchCallback, WatchHandle, WritePtr,
};

/// tantivy's list of the files it manages, in the index folder.
const MANAGED_LIST: &str = ".managed.json";

/// The index folder, with the files written since the last sync.
#[derive(Clone, Debug)]
pub struct IndexDirectory {
    inner: MmapDirectory,
    root: PathBuf,
    /// Files closed since the last sync, not yet known to be on the disk.
    unsynced: Arc<Mutex<Vec<File>>>,
    /// The list of managed files as last written, when that write is not
    /// yet known to be on the disk.
    unsynced_list: Arc<Mutex<Option<File>>>,
}

impl IndexDirectory {
    pub fn open(root: &Path) -> Result<IndexDirectory, OpenDirectoryError> {
        Ok(IndexDirectory {
            inner: MmapDirectory::open(root)?,
            root: root.to_path_buf(),
            unsynced: Arc::default(),
            unsynced_list: Arc::default(),
        })
    }
}

/// Test builds only: index folders under these paths refuse new files, as a
/// full disk would.
#[cfg(test)]
pub(super) static REFUSING_NEW_FILES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Test builds only: the index folder of every file refused so far.
#[cfg(test)]
pub(super) static REFUSED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A file being written; closing it hands it to the next sync.
struct DeferredSyncFile {
    file: Option<File>,
    unsynced: Arc<Mutex<Vec<File>>>,
}

impl Write for DeferredSyncFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.file {
            Some(file) => file.write(buf),
            None => Err(io::Error::other("write to a closed index file")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl TerminatingWrite for DeferredSyncFile {
    fn terminate_ref(&mut self, _: AntiCallToken) -> io::Result<()> {
        if let Some(file) = self.file.take() {
            start_write_back(&file);
            lock(&self.unsynced).push(file);
        }
        Ok(())
    }
}

/// Asks the kernel to start writing the file out now, without waiting, so
/// that the sync at the commit finds little left to write.
#[cfg(target_os = "linux")]
fn start_write_back(file: &File) {
    use std::os::fd::AsRawFd;
    // SAFETY: a plain system call on a file descriptor this `File` owns.
    unsafe {
        libc::sync_file_range(file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE);
    }
}

#[cfg(not(target_os = "linux"))]
fn start_write_back(_: &File) {}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().expect("index directory lock poisoned")
}

impl Directory for IndexDirectory {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        self.inner.get_file_handle(path)
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        self.inner.delete(path)
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        self.inner.exists(path)
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        #[cfg(test)]
        if lock(&REFUSING_NEW_FILES)
            .iter()
            .any(|under| self.root.starts_with(under))
        {
            lock(&REFUSED).push(self.root.clone());
            let full = io::Error::new(io::ErrorKind::StorageFull, "no space left on device");
            return Err(OpenWriteError::wrap_io_error(full, path.to_path_buf()));
        }
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(self.root.join(path))
            .map_err(|error| {
                if error.kind() == io::ErrorKind::AlreadyExists {
                    OpenWriteError::FileAlreadyExists(path.to_path_buf())
                } else {
                    OpenWriteError::wrap_io_error(error, path.to_path_buf())
                }
            })?;
        Ok(BufWriter::new(Box::new(DeferredSyncFile {
            file: Some(file),
            unsynced: self.unsynced.clone(),
        })))
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.inner.atomic_read(path)
    }

    fn atomic_write(&self, path: &Path, data: &[u8]) -> io::Result<()> {
        if path != Path::new(MANAGED_LIST) {
            return self.inner.atomic_write(path, data);
        }
        // Written beside the list and renamed over it, as tantivy does (a
        // crash may leave the same `.tmp…` file behind), but left to the
        // next sync.
        let mut temp = tempfile::Builder::new().tempfile_in(&self.root)?;
        temp.write_all(data)?;
        let file = temp.persist(self.root.join(path)).map_err(|e| e.error)?;
        *lock(&self.unsynced_list) = Some(file);
        Ok(())
    }

    fn acquire_lock(&self, lock: &Lock) -> Result<DirectoryLock, LockError> {
        match self.inner.acquire_lock(lock) {
            // A reader keeps the commit it reads from a writer's clean-up
            // with this lock, which is a file: in a folder this process
            // cannot write (a read-only mount, another user's), the index
            // is read without it. Deleted files stay readable to a reader
            // that has them open, and one that finds a file gone tries again.
            Err(LockError::IoError(error))
                if lock.filepath == tantivy::directory::META_LOCK.filepath
                    && matches!(
                        error.kind(),
                        io::ErrorKind::ReadOnlyFilesystem | io::ErrorKind::PermissionDenied
                    ) =>
            {
                Ok(DirectoryLock::from(Box::new(())))
            }
            locked => locked,
        }
    }

    fn watch(&self, callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        self.inner.watch(callback)
    }

    /// Waits until every file closed since the last sync is on the disk,
    /// then syncs the folder itself. Their write-back started as each was
    /// closed, so the first sync waits for the journal and the rest find
    /// little to do.
    fn sync_directory(&self) -> io::Result<()> {
        let mut files = std::mem::take(&mut *lock(&self.unsynced));
        let list = lock(&self.unsynced_list).take();
        files.extend(list);
        if let Err(error) = files.iter().try_for_each(File::sync_data) {
            // Not durable yet: the next sync tries them again (the list
            // too, unless a newer one was written meanwhile).
            let mut unsynced = lock(&self.unsynced);
            unsynced.extend(files);
            return Err(error);
        }
        self.inner.sync_directory()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_file_waits_for_the_next_sync() {
        let dir = tempfile::tempdir().unwrap();
        let directory = IndexDirectory::open(dir.path()).unwrap();
        let mut writer = directory.open_write(Path::new("a.bin")).unwrap();
        writer.write_all(b"passages").unwrap();
        writer.terminate().unwrap();
        assert_eq!(lock(&directory.unsynced).len(), 1);
        assert_eq!(
            std::fs::read(dir.path().join("a.bin")).unwrap(),
            b"passages"
        );
        directory.sync_directory().unwrap();
        assert!(lock(&directory.unsynced).is_empty());
        assert!(matches!(
            directory.open_write(Path::new("a.bin")),
            Err(OpenWriteError::FileAlreadyExists(_))
        ));
    }

    #[test]
    fn the_list_of_managed_files_waits_for_the_next_sync_and_the_commit_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let directory = IndexDirectory::open(dir.path()).unwrap();
        for list in [&b"[\"a.idx\"]"[..], b"[\"a.idx\",\"a.term\"]"] {
            directory
                .atomic_write(Path::new(MANAGED_LIST), list)
                .unwrap();
            assert_eq!(std::fs::read(dir.path().join(MANAGED_LIST)).unwrap(), list);
        }
        // Only the last list waits; no temporary file is left.
        assert!(lock(&directory.unsynced_list).is_some());
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, [MANAGED_LIST]);
        // The commit's own file is written as tantivy writes it, durable
        // at once: it is no list that waits.
        directory
            .atomic_write(Path::new("meta.json"), b"{}")
            .unwrap();
        assert!(lock(&directory.unsynced).is_empty());
        assert!(lock(&directory.unsynced_list).is_some());
        directory.sync_directory().unwrap();
        assert!(lock(&directory.unsynced_list).is_none());
        assert_eq!(
            directory.atomic_read(Path::new(MANAGED_LIST)).unwrap(),
            b"[\"a.idx\",\"a.term\"]"
        );
    }
}
