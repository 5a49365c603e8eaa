//! Writing outputs without following links: a whole file goes to a fresh temporary beside the
//! target, renamed over it (a rename replaces a link, never writes through it); a growing file
//! is opened with `O_NOFOLLOW`; a folder about to receive outputs is checked for links first.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::{io_err, ExportError};

/// Creates the parent directory of `path` if it has one, so outputs can name fresh folders.
pub(crate) fn create_parent_dirs(path: &Path) -> Result<(), ExportError> {
    let dir = folder_of(path);
    fs::create_dir_all(dir).map_err(io_err(dir))
}

/// The folder a file of `path` lives in (`.` for a bare name).
fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// Refuses a target that is not a plain file of its own (a missing one passes): a link (a rename
/// would destroy it), a device node or FIFO (`/dev/null` replaced by a file breaks the system),
/// a folder, or a file with other hard links (a rename would part it from its other names).
pub fn check_target(path: &Path) -> Result<(), ExportError> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_err(path)(e)),
    };
    let path = path.to_path_buf();
    if meta.file_type().is_symlink() {
        return Err(ExportError::Link { path });
    }
    if !meta.is_file() {
        return Err(ExportError::NotAFile { path });
    }
    if meta.nlink() > 1 {
        return Err(ExportError::HardLinked {
            path,
            links: meta.nlink(),
        });
    }
    Ok(())
}

/// Refuses `target` when it names one of `owned` (a run folder's own files, the study being
/// read): the same file, or the same name in the same folder when neither exists yet. Paths
/// are compared after resolving their folders, so `./out/../out/folder.json` is caught too.
pub fn refuse_owned(target: &Path, owned: &[PathBuf]) -> Result<(), ExportError> {
    let target_place = resolved_place(target);
    for own in owned {
        let same_file = matches!((fs::metadata(target), fs::metadata(own)), (Ok(a), Ok(b)) if (a.dev(), a.ino()) == (b.dev(), b.ino()));
        if same_file || (target_place.is_some() && target_place == resolved_place(own)) {
            return Err(ExportError::Owned {
                path: target.to_path_buf(),
                owner: own.to_path_buf(),
            });
        }
    }
    Ok(())
}

/// `path` with its folder resolved (the file need not exist); `None` without the folder.
fn resolved_place(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?;
    Some(fs::canonicalize(folder_of(path)).ok()?.join(name))
}

/// Writes `bytes` to `path` all-or-nothing (a synced temporary renamed over it): a crash leaves
/// the old file or the new one, never a truncated one; what [`check_target`] refuses is refused.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ExportError> {
    check_target(path)?;
    create_parent_dirs(path)?;
    // Created exclusively under a random name (nothing planted).
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        // As `File::create` would make it: the umask decides, not the temporary's 0600.
        .permissions(fs::Permissions::from_mode(0o666))
        .tempfile_in(folder_of(path))
        .map_err(io_err(path))?;
    // Errors name the file being written, which the user knows, not its random temporary.
    tmp.as_file_mut().write_all(bytes).map_err(io_err(path))?;
    tmp.as_file().sync_all().map_err(io_err(path))?;
    // On failure the temporary is removed when `e.file` drops.
    tmp.persist(path).map_err(|e| io_err(path)(e.error))?;
    Ok(())
}

/// Lets `write` (a library that insists on opening the file itself) create the file in a
/// private folder of random name beside `path`, so it opens no planted link, then renames it.
pub fn write_through<E>(
    path: &Path,
    write: impl FnOnce(&Path) -> Result<(), E>,
) -> Result<Result<(), E>, ExportError> {
    check_target(path)?;
    create_parent_dirs(path)?;
    let private = tempfile::Builder::new()
        .prefix(".clvscu-")
        .permissions(fs::Permissions::from_mode(0o700))
        .tempdir_in(folder_of(path))
        .map_err(io_err(path))?;
    let inner = private.path().join(path.file_name().unwrap_or_default());
    if let Err(e) = write(&inner) {
        return Ok(Err(e));
    }
    fs::rename(&inner, path).map_err(io_err(path))?;
    Ok(Ok(()))
}

/// Opens `path` for appending, creating it if missing, refusing what [`check_target`] refuses;
/// `O_NONBLOCK` keeps a FIFO's open from waiting forever, and the opened file is checked again.
pub fn open_append(path: &Path) -> Result<File, ExportError> {
    check_target(path)?;
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| link_or_io(path, e))?;
    let file = regular(path, file)?;
    check_target(path)?;
    Ok(file)
}

/// Opens the regular file `path` read-write (created exclusively when missing), no link followed.
pub fn open_rw(path: &Path) -> Result<File, ExportError> {
    let open = |new: bool| {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(new)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path)
    };
    // A file gone a moment later (a lock let go) is created afresh, a bounded number of times.
    for _ in 0..100 {
        let file = match open(true) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => match open(false) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(link_or_io(path, e)),
            },
            Err(e) => return Err(link_or_io(path, e)),
        };
        return regular(path, file);
    }
    Err(io_err(path)(std::io::Error::other(
        "the file keeps appearing and vanishing",
    )))
}

/// `file`, opened at `path`, when it is a regular file (a FIFO or a device opens too).
fn regular(path: &Path, file: File) -> Result<File, ExportError> {
    if file.metadata().map_err(io_err(path))?.is_file() {
        Ok(file)
    } else {
        Err(ExportError::NotAFile {
            path: path.to_path_buf(),
        })
    }
}

/// A link (`O_NOFOLLOW` fails with `ELOOP`) or a folder (`EISDIR`) said by name.
fn link_or_io(path: &Path, e: std::io::Error) -> ExportError {
    let path = path.to_path_buf();
    match e.raw_os_error() {
        Some(libc::ELOOP) => ExportError::Link { path },
        Some(libc::EISDIR) => ExportError::NotAFile { path },
        _ => ExportError::Io { path, source: e },
    }
}

/// Creates `dir` (and its parents) and refuses it when it holds a symbolic link anywhere
/// below it, or is one itself when `dir_may_be_link` is false (a folder clvscu names itself,
/// such as `charts/` in a run folder, is never meant to point elsewhere).
pub fn prepare_dir(dir: &Path, dir_may_be_link: bool) -> Result<(), ExportError> {
    check_dir(dir, dir_may_be_link)?;
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    check_dir(dir, dir_may_be_link)
}

/// [`prepare_dir`] without creating anything: a missing `dir` passes.
pub fn check_dir(dir: &Path, dir_may_be_link: bool) -> Result<(), ExportError> {
    if !dir_may_be_link && fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(ExportError::Link {
            path: dir.to_path_buf(),
        });
    }
    if !dir.is_dir() {
        return Ok(());
    }
    // Links are not followed into.
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).map_err(io_err(&d))? {
            let entry = entry.map_err(io_err(&d))?;
            let kind = entry.file_type().map_err(io_err(&entry.path()))?;
            if kind.is_symlink() {
                return Err(ExportError::Link { path: entry.path() });
            }
            if kind.is_dir() {
                stack.push(entry.path());
            }
        }
    }
    Ok(())
}

/// A way to ask, before each write, whether a lock is still this process's.
#[derive(Debug, Clone, PartialEq)]
pub struct LockCheck {
    path: PathBuf,
    /// The lock file's device and inode, which tell a lock deleted and made again by another
    /// run from this run's own.
    id: (u64, u64),
}

impl LockCheck {
    /// `Ok` while the lock file is the one this run took; an error naming it once it was
    /// deleted or replaced (by hand, or by another run that then took it).
    pub fn still_held(&self) -> Result<(), ExportError> {
        if fs::symlink_metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == self.id) {
            Ok(())
        } else {
            Err(ExportError::LockLost {
                path: self.path.clone(),
            })
        }
    }

    /// Removes the lock file while it is still this one (and held): a waiter then sees its
    /// file gone and takes a fresh one.
    pub fn release(&self) {
        if self.still_held().is_ok() {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// An exclusive advisory lock on a file of its own, held until dropped; the file goes with it.
#[derive(Debug)]
pub struct FileLock {
    _file: File,
    pub check: LockCheck,
}

/// What [`take_lock`] found.
pub enum Taken {
    Lock(FileLock),
    /// Another holds it: its file, which says who.
    Busy(File),
    Replaced,
}

/// Takes the lock at `path`, never through a link: created exclusively when missing, or taken
/// over from a killed holder (the kill released it); one its holder removed meanwhile is taken
/// afresh, at most `tries` times. Without a `holder` it waits; with one, it tries for a fifth
/// of a second and then writes `holder` into the file for whoever finds it busy.
pub fn take_lock(path: &Path, holder: Option<&str>, tries: usize) -> Result<Taken, ExportError> {
    for _ in 0..tries {
        let mut file = open_rw(path)?;
        if holder.is_none() {
            file.lock().map_err(io_err(path))?;
        } else if !try_briefly(&file) {
            return Ok(Taken::Busy(file));
        }
        let Ok(meta) = file.metadata() else { continue };
        let check = LockCheck {
            path: path.to_path_buf(),
            id: (meta.dev(), meta.ino()),
        };
        if check.still_held().is_err() {
            continue;
        }
        if let Some(text) = holder {
            file.set_len(0)
                .and_then(|_| file.write_all(text.as_bytes()))
                .map_err(io_err(path))?;
        }
        return Ok(Taken::Lock(FileLock { _file: file, check }));
    }
    Ok(Taken::Replaced)
}

/// Tries the lock for a fifth of a second: a child process another thread is starting holds a
/// copy of every open file until it execs, and with it, briefly, the lock.
fn try_briefly(file: &File) -> bool {
    for _ in 0..10 {
        if file.try_lock().is_ok() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}

/// Waits for the lock at `path` ([`take_lock`]).
pub fn lock_exclusive(path: &Path) -> Result<FileLock, ExportError> {
    // Each retry follows a holder that let go; a file replaced this often is no lock at all.
    match take_lock(path, None, 100)? {
        Taken::Lock(lock) => Ok(lock),
        _ => Err(io_err(path)(std::io::Error::other(
            "the lock file keeps being replaced",
        ))),
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        self.check.release();
    }
}

/// Fails when `dir` cannot be written, probing with an anonymous temporary (nothing planted).
pub fn probe_writable(dir: &Path) -> Result<(), ExportError> {
    tempfile::tempfile_in(dir).map(drop).map_err(io_err(dir))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn setup() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, b"keep").unwrap();
        (dir, victim)
    }

    #[test]
    fn write_atomic_refuses_a_link_a_fifo_and_a_hard_linked_file() {
        let (dir, victim) = setup();
        let out = dir.path().join("out.txt");
        symlink(&victim, &out).unwrap();
        assert!(matches!(
            write_atomic(&out, b"new"),
            Err(ExportError::Link { .. })
        ));
        assert!(fs::symlink_metadata(&out).unwrap().file_type().is_symlink());
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(matches!(
            write_atomic(&fifo, b"new"),
            Err(ExportError::NotAFile { .. })
        ));
        assert!(matches!(
            open_append(&fifo),
            Err(ExportError::NotAFile { .. })
        ));
        let twin = dir.path().join("twin");
        fs::hard_link(&victim, &twin).unwrap();
        assert!(matches!(
            write_atomic(&twin, b"new"),
            Err(ExportError::HardLinked { .. })
        ));
        assert!(matches!(
            open_append(&twin),
            Err(ExportError::HardLinked { .. })
        ));
        assert_eq!(fs::read(&victim).unwrap(), b"keep");
    }

    #[test]
    fn refuse_owned_catches_the_same_place_by_another_spelling() {
        let (dir, victim) = setup();
        let spelled = dir.path().join(".").join("victim");
        assert!(matches!(
            refuse_owned(&spelled, std::slice::from_ref(&victim)),
            Err(ExportError::Owned { .. })
        ));
        let missing = dir.path().join("folder.json");
        assert!(refuse_owned(&dir.path().join("./folder.json"), &[missing]).is_err());
        assert!(refuse_owned(&dir.path().join("other"), &[victim]).is_ok());
    }

    #[test]
    fn write_atomic_ignores_a_planted_tmp_link_and_leaves_no_temporary() {
        let (dir, victim) = setup();
        let out = dir.path().join("out.txt");
        symlink(&victim, dir.path().join("out.txt.tmp")).unwrap();
        write_atomic(&out, b"new").unwrap();
        assert_eq!(fs::read(&victim).unwrap(), b"keep");
        // The victim, the planted link and the output: no temporary is left.
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 3);
    }

    #[test]
    fn append_and_rw_refuse_a_link_by_name() {
        let (dir, victim) = setup();
        let out = dir.path().join("rows.csv");
        symlink(&victim, &out).unwrap();
        let e = open_append(&out).unwrap_err();
        assert!(
            matches!(&e, ExportError::Link { path } if path == &out),
            "{e}"
        );
        let e = open_rw(&out).unwrap_err();
        assert!(
            matches!(&e, ExportError::Link { path } if path == &out),
            "{e}"
        );
        assert_eq!(fs::read(&victim).unwrap(), b"keep");
    }

    #[test]
    fn a_folder_holding_a_link_is_refused_naming_it() {
        let (dir, victim) = setup();
        let out = dir.path().join("out");
        fs::create_dir_all(out.join("sub")).unwrap();
        symlink(&victim, out.join("sub/x")).unwrap();
        let e = prepare_dir(&out, true).unwrap_err();
        assert!(matches!(&e, ExportError::Link { path } if path == &out.join("sub/x")));
        let charts = dir.path().join("charts");
        symlink(dir.path(), &charts).unwrap();
        assert!(matches!(
            prepare_dir(&charts, false),
            Err(ExportError::Link { .. })
        ));
    }

    #[test]
    fn write_through_renames_what_the_writer_made() {
        let (dir, victim) = setup();
        let out = dir.path().join("a.png");
        write_through(&out, |p| fs::write(p, b"img"))
            .unwrap()
            .unwrap();
        assert_eq!(fs::read(&out).unwrap(), b"img");
        assert_eq!(fs::read(&victim).unwrap(), b"keep");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn write_atomic_replaces_content_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/dir/out.txt");
        write_atomic(&path, b"first").unwrap();
        write_atomic(&path, b"second").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"second");
        assert_eq!(fs::read_dir(dir.path().join("sub/dir")).unwrap().count(), 1);
    }

    #[test]
    fn write_atomic_reports_the_failing_path() {
        let dir = tempfile::tempdir().unwrap();
        // The target is an existing directory: the rename must fail and name it.
        let target = dir.path().join("occupied");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("f"), b"x").unwrap();
        let err = write_atomic(&target, b"data").unwrap_err();
        match &err {
            ExportError::NotAFile { path } => assert_eq!(path, &target),
            other => panic!("unexpected error {other:?}"),
        }
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
