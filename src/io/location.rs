//! Where a path argument leads: a local file, an object in S3 (`s3://bucket/key`), or a
//! read-only HTTP resource (`http://`, `https://`). Every command takes a URL wherever it takes
//! a path, or refuses it (docs/cli.md#object-storage); the URL is recognised by its scheme
//! alone, so a local folder named `s3:` is reached as `./s3:/...`. Any other scheme (`gs://`,
//! `file://`) is a URL too, refused: taken for a path, it would become a local `./gs:/...`.

use std::fmt;
use std::io;
use std::path::Path;

/// A path argument that is a URL, split into what the stores need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Url<'a> {
    /// `s3://bucket/key`: `key` may be empty or end in `/` (a prefix, for `batch`).
    S3 {
        /// The bucket.
        bucket: &'a str,
        /// The key, without the bucket's `/`.
        key: &'a str,
    },
    /// `http://...` or `https://...`, as given (a presigned URL keeps its query string).
    Http(&'a str),
}

impl Url<'_> {
    /// The URL of an object under an `s3://` prefix.
    pub fn s3_join(bucket: &str, key: &str) -> String {
        format!("s3://{bucket}/{key}")
    }
}

impl fmt::Display for Url<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Url::S3 { bucket, key } => write!(f, "s3://{bucket}/{key}"),
            Url::Http(url) => f.write_str(url),
        }
    }
}

/// Whether `path` is written as a URL (`s3://`, `http://`, `https://`, or any other
/// `SCHEME://`, which [`parse`] refuses), whether or not it is a well-formed one.
pub fn is_url(path: &Path) -> bool {
    path.to_str().is_some_and(|s| written_scheme(s).is_some())
}

/// The schemes this tool reads.
const SCHEMES: [&str; 3] = ["s3://", "http://", "https://"];

/// The scheme `s` begins with, `://` included, as written: RFC 3986's `ALPHA *( ALPHA / DIGIT /
/// "+" / "-" / "." )`, of two characters at least (`C://` is a Windows drive).
fn written_scheme(s: &str) -> Option<&str> {
    let end = s.find("://")?;
    let name = &s[..end];
    let well_formed = name.len() >= 2
        && name.as_bytes()[0].is_ascii_alphabetic()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    well_formed.then(|| &s[..end + 3])
}

/// The scheme of `s` when it is one this tool reads (any letter case), as [`SCHEMES`] spells it.
fn scheme(s: &str) -> Option<&'static str> {
    let written = written_scheme(s)?;
    SCHEMES
        .into_iter()
        .find(|scheme| written.eq_ignore_ascii_case(scheme))
}

/// The refusal of a URL whose scheme this tool does not read: what it reads, and how a local
/// path that begins so is written (a `file://` URL: the path itself).
fn unknown_scheme(text: &str, written: &str) -> io::Error {
    let how = match written.eq_ignore_ascii_case("file://") {
        // `file:///p` and `file://host/p` (RFC 8089) name the path `/p`.
        true => {
            let rest = &text[written.len()..];
            let path = rest.find('/').map_or(rest, |at| &rest[at..]);
            format!("give the path itself ({path})")
        }
        false => format!("a local path that begins so is written ./{text}"),
    };
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{text}: bad URL: {written} is not read by this tool (only s3://, http:// and \
             https://); {how}"
        ),
    )
}

/// The URL `path` is written as, checked: `None` for a local path, an `InvalidInput` error
/// naming the URL for a malformed one (no bucket, a bucket name S3 refuses, a key with an empty
/// segment, `.` or `..`, which object stores cannot name faithfully) or one of a scheme this
/// tool does not read (`gs://`, `file://`).
pub fn parse(path: &Path) -> io::Result<Option<Url<'_>>> {
    let Some(text) = path.to_str() else {
        return Ok(None);
    };
    let Some(written) = written_scheme(text) else {
        return Ok(None);
    };
    let Some(scheme) = scheme(text) else {
        return Err(unknown_scheme(text, written));
    };
    let bad = |why: &str| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{text}: bad URL: {why}"),
        )
    };
    if scheme != "s3://" {
        if text.len() == scheme.len() {
            return Err(bad("no host"));
        }
        return Ok(Some(Url::Http(text)));
    }
    let rest = &text[scheme.len()..];
    let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
    if bucket.is_empty() {
        return Err(bad("no bucket (s3://BUCKET/KEY)"));
    }
    let bucket_ok = (3..=63).contains(&bucket.len())
        && bucket
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-')
        && bucket.as_bytes()[0].is_ascii_alphanumeric()
        && bucket.as_bytes()[bucket.len() - 1].is_ascii_alphanumeric();
    if !bucket_ok {
        return Err(bad(&format!(
            "{bucket:?} is not a bucket name (3 to 63 lower-case letters, digits, dots and \
             hyphens, beginning and ending with a letter or digit)"
        )));
    }
    let inner = key.strip_suffix('/').unwrap_or(key);
    if !inner.is_empty() {
        for segment in inner.split('/') {
            if segment.is_empty()
                || segment == "."
                || segment == ".."
                || segment.chars().any(|c| c.is_ascii_control())
            {
                return Err(bad(&format!(
                    "the key {key:?} has an empty, \".\" or \"..\" segment or a control \
                     character, which this tool cannot name faithfully"
                )));
            }
        }
    }
    Ok(Some(Url::S3 { bucket, key }))
}

/// An object a URL names, for an output or an input read whole: the key may not be empty or end
/// in `/` (that is a prefix, for `batch`).
pub fn parse_object(path: &Path) -> io::Result<Option<Url<'_>>> {
    let url = parse(path)?;
    if let Some(Url::S3 { key, .. }) = &url {
        if key.is_empty() || key.ends_with('/') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{}: bad URL: names a prefix, not an object (s3://BUCKET/KEY)",
                    path.display()
                ),
            ));
        }
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> io::Result<Option<Url<'_>>> {
        parse(Path::new(s))
    }

    #[test]
    fn urls_are_told_from_paths_by_their_scheme() {
        assert_eq!(p("dlq.jsonl").unwrap(), None);
        assert_eq!(p("./s3://b/k").unwrap(), None);
        assert_eq!(
            p("s3://dlq-exports/2026/a.jsonl.zst").unwrap(),
            Some(Url::S3 {
                bucket: "dlq-exports",
                key: "2026/a.jsonl.zst"
            })
        );
        assert_eq!(
            p("S3://bkt/").unwrap(),
            Some(Url::S3 {
                bucket: "bkt",
                key: ""
            })
        );
        assert_eq!(
            p("https://h/x?X-Amz-Signature=1").unwrap(),
            Some(Url::Http("https://h/x?X-Amz-Signature=1"))
        );
        assert!(is_url(Path::new("HTTP://h/x")));
        assert!(!is_url(Path::new("s3:/b/k")));
        // Other schemes are URLs too, refused; a drive letter or a `:` later on is a path.
        assert!(is_url(Path::new("gs://b/k")));
        assert_eq!(p("C://x").unwrap(), None);
        assert_eq!(p("./gs://b/k").unwrap(), None);
        assert_eq!(p("dir/x://y").unwrap(), None);
        assert_eq!(p("1s3://b/k").unwrap(), None);
    }

    #[test]
    fn schemes_this_tool_does_not_read_are_refused() {
        for (url, says) in [
            (
                "gs://b/k",
                "a local path that begins so is written ./gs://b/k",
            ),
            ("az://c/k", "az:// is not read by this tool"),
            ("hdfs://nn:8020/x", "hdfs:// is not read"),
            ("s3a://bkt/k", "s3a:// is not read"),
            ("file:///tmp/x.jsonl", "give the path itself (/tmp/x.jsonl)"),
            ("FILE:///tmp/x", "give the path itself (/tmp/x)"),
            ("file://localhost/tmp/x", "give the path itself (/tmp/x)"),
        ] {
            let e = p(url).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
            let e = e.to_string();
            assert!(e.starts_with(&format!("{url}: bad URL: ")), "{e}");
            assert!(e.contains("only s3://, http:// and https://"), "{e}");
            assert!(e.contains(says), "{url}: {e}");
        }
    }

    #[test]
    fn malformed_urls_say_why() {
        for (url, why) in [
            ("s3://", "no bucket"),
            ("s3:///k", "no bucket"),
            ("s3://Bk/k", "not a bucket name"),
            ("s3://b/k", "not a bucket name"),
            ("s3://bkt/a//b", "segment"),
            ("s3://bkt/a/../b", "segment"),
            ("s3://bkt/a\tb", "control character"),
            ("http://", "no host"),
        ] {
            let e = p(url).unwrap_err().to_string();
            assert!(e.starts_with(&format!("{url}: bad URL: ")), "{e}");
            assert!(e.contains(why), "{url}: {e}");
        }
        let e = parse_object(Path::new("s3://bkt/dir/")).unwrap_err();
        assert!(e.to_string().contains("names a prefix"), "{e}");
        assert!(parse_object(Path::new("s3://bkt")).is_err());
    }
}
