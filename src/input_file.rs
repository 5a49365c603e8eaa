//! Reading an input file the user names, bounded: only a regular file is opened (a FIFO would
//! block forever, `/dev/zero` be read until memory runs out) and at most a stated number of
//! bytes read. Errors are `io::Error`s, so every caller's I/O error path names file and reason.

use std::io::{Error, ErrorKind, Read};
use std::path::Path;

/// The largest study file read (a study is a few kilobytes of TOML).
pub const STUDY_CAP: u64 = 16 << 20;
/// The largest Matrix Market file read: 1 GiB of text, tens of millions of entries.
pub const MTX_CAP: u64 = 1 << 30;
/// The largest result file (CSV, JSON) read back: millions of rows.
pub const RESULT_CAP: u64 = 4 << 30;

fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kinds = [
            (t.is_fifo(), "a FIFO"),
            (t.is_char_device(), "a character device"),
            (t.is_block_device(), "a block device"),
            (t.is_socket(), "a socket"),
        ];
        if let Some((_, kind)) = kinds.into_iter().find(|(is, _)| *is) {
            return kind;
        }
    }
    "not a regular file"
}

/// The bytes of a regular file (links followed) of at most `cap` bytes; anything else, or a
/// larger file, is refused naming why.
pub fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, Error> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "{} is {}; inputs are read from regular files only",
                path.display(),
                kind_of(&meta)
            ),
        ));
    }
    let file = std::fs::File::open(path)?;
    let mut data = Vec::new();
    // A byte past the cap tells a larger file (even one growing while read) from one of `cap`.
    file.take(cap.saturating_add(1)).read_to_end(&mut data)?;
    if data.len() as u64 > cap {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "{} is larger than the {} limit for this input",
                path.display(),
                bytes_text(cap)
            ),
        ));
    }
    Ok(data)
}

pub fn read_text_capped(path: &Path, cap: u64) -> Result<String, Error> {
    String::from_utf8(read_capped(path, cap)?).map_err(|_| {
        Error::new(
            ErrorKind::InvalidData,
            format!("{} is not UTF-8 text", path.display()),
        )
    })
}

/// A byte count as people read it: `16 MiB`, `1 GiB`, else bytes.
pub fn bytes_text(bytes: u64) -> String {
    const UNITS: [(&str, u32); 3] = [("GiB", 30), ("MiB", 20), ("KiB", 10)];
    for (unit, shift) in UNITS {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    format!("{bytes} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_over_the_cap_is_refused_naming_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, vec![b'x'; 2048]).unwrap();
        assert_eq!(read_capped(&p, 2048).unwrap().len(), 2048);
        let e = read_capped(&p, 1024).unwrap_err().to_string();
        assert!(e.contains("larger than the 1 KiB limit"), "{e}");
    }

    #[test]
    fn a_folder_and_a_device_are_refused_by_kind() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_capped(dir.path(), 10).unwrap_err().to_string();
        assert!(e.contains("is a folder"), "{e}");
        let e = read_capped(Path::new("/dev/zero"), 10)
            .unwrap_err()
            .to_string();
        assert!(e.contains("a character device"), "{e}");
    }
}
