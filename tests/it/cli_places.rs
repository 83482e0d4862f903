//! Every flag and positional that names a place (a file or a folder), of every command, and a
//! URL in it (docs/cli.md#object-storage): `s3://` is read or written in the store, an
//! `http(s)://` URL is read (an input) or refused (an output, a folder), and any other scheme
//! (`gs://`, `file://`, `az://`, `hdfs://`) is refused with status 2, naming the URL. A URL never
//! becomes a local path such as `./gs:/bucket/...`.
//!
//! The places, by command (what `PLACES` below runs, one row each):
//!
//! - `validate`, `migrate`, `redrive`, `dedupe`, `sample`, `filter`, `export`, `stats`: `FILE...`,
//!   `--queue-limits FILE`, `-o FILE`, `--rejects FILE`, `--summary FILE`; `validate
//!   --valid-out FILE`, `migrate --warnings-out FILE`, `dedupe --dropped FILE`;
//! - `show`: `FILE...`, `--queue-limits FILE`;
//! - `gen -o FILE`, `schema -o FILE`, `man --dir DIR`;
//! - `batch`: `IN_DIR`, `--out DIR`, `--status DIR`, `--assemble FILE`, and the
//!   `--queue-limits FILE` of its commands;
//! - `completions` and `explain` name no place; `batch --only SHARD` names a shard by its name
//!   in the input folder, not a place.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::common::{bin, scratch, stderr};

/// Whether a place is read, written, or a folder (of either).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Input,
    Output,
    Folder,
}

/// Each place: the command line with `{}` where the place goes, and what it is.
const PLACES: &[(&[&str], Role)] = &[
    // The commands that read envelopes, each flag they share.
    (&["validate", "{}"], Role::Input),
    (
        &["validate", "--queue-limits", "{}", "in.jsonl"],
        Role::Input,
    ),
    (&["validate", "in.jsonl", "-o", "{}"], Role::Output),
    (&["validate", "in.jsonl", "--rejects", "{}"], Role::Output),
    (&["validate", "in.jsonl", "--summary", "{}"], Role::Output),
    (&["validate", "in.jsonl", "--valid-out", "{}"], Role::Output),
    (&["migrate", "--to", "2", "{}"], Role::Input),
    (
        &["migrate", "--to", "2", "--queue-limits", "{}", "in.jsonl"],
        Role::Input,
    ),
    (
        &["migrate", "--to", "2", "in.jsonl", "-o", "{}"],
        Role::Output,
    ),
    (
        &["migrate", "--to", "2", "in.jsonl", "--rejects", "{}"],
        Role::Output,
    ),
    (
        &["migrate", "--to", "2", "in.jsonl", "--summary", "{}"],
        Role::Output,
    ),
    (
        &["migrate", "--to", "2", "in.jsonl", "--warnings-out", "{}"],
        Role::Output,
    ),
    (&["redrive", "{}"], Role::Input),
    (
        &["redrive", "--queue-limits", "{}", "in.jsonl"],
        Role::Input,
    ),
    (&["redrive", "in.jsonl", "-o", "{}"], Role::Output),
    (&["redrive", "in.jsonl", "--rejects", "{}"], Role::Output),
    (&["redrive", "in.jsonl", "--summary", "{}"], Role::Output),
    (&["dedupe", "{}"], Role::Input),
    (&["dedupe", "--keep", "first", "{}"], Role::Input),
    (&["dedupe", "--queue-limits", "{}", "in.jsonl"], Role::Input),
    (&["dedupe", "in.jsonl", "-o", "{}"], Role::Output),
    (&["dedupe", "in.jsonl", "--rejects", "{}"], Role::Output),
    (&["dedupe", "in.jsonl", "--summary", "{}"], Role::Output),
    (&["dedupe", "in.jsonl", "--dropped", "{}"], Role::Output),
    (&["sample", "2", "{}"], Role::Input),
    (
        &["sample", "2", "--queue-limits", "{}", "in.jsonl"],
        Role::Input,
    ),
    (&["sample", "2", "in.jsonl", "-o", "{}"], Role::Output),
    (
        &["sample", "2", "in.jsonl", "--rejects", "{}"],
        Role::Output,
    ),
    (
        &["sample", "2", "in.jsonl", "--summary", "{}"],
        Role::Output,
    ),
    (&["filter", "{}"], Role::Input),
    (&["filter", "--queue-limits", "{}", "in.jsonl"], Role::Input),
    (&["filter", "in.jsonl", "-o", "{}"], Role::Output),
    (&["filter", "in.jsonl", "--rejects", "{}"], Role::Output),
    (&["filter", "in.jsonl", "--summary", "{}"], Role::Output),
    (&["export", "{}"], Role::Input),
    (&["export", "--queue-limits", "{}", "in.jsonl"], Role::Input),
    (
        &["export", "--format", "csv", "in.jsonl", "-o", "{}"],
        Role::Output,
    ),
    (
        &["export", "--format", "parquet", "in.jsonl", "-o", "{}"],
        Role::Output,
    ),
    (&["export", "in.jsonl", "--rejects", "{}"], Role::Output),
    (&["export", "in.jsonl", "--summary", "{}"], Role::Output),
    (&["stats", "{}"], Role::Input),
    (&["stats", "--queue-limits", "{}", "in.jsonl"], Role::Input),
    (
        &["stats", "--format", "json", "in.jsonl", "-o", "{}"],
        Role::Output,
    ),
    (
        &["stats", "--format", "html", "in.jsonl", "-o", "{}"],
        Role::Output,
    ),
    (&["stats", "in.jsonl", "--rejects", "{}"], Role::Output),
    (&["stats", "in.jsonl", "--summary", "{}"], Role::Output),
    (&["show", "01J00000000000000000000000", "{}"], Role::Input),
    (
        &[
            "show",
            "01J00000000000000000000000",
            "--queue-limits",
            "{}",
            "in.jsonl",
        ],
        Role::Input,
    ),
    // The commands that read no envelope.
    (&["gen", "--count", "2", "-o", "{}"], Role::Output),
    (&["schema", "-o", "{}"], Role::Output),
    (&["man", "--dir", "{}"], Role::Folder),
    // batch.
    (&["batch", "validate", "{}", "--out", "out"], Role::Folder),
    (
        &["batch", "validate", "shards", "--out", "{}"],
        Role::Folder,
    ),
    (&["batch", "--status", "{}"], Role::Folder),
    (
        &[
            "batch",
            "validate",
            "shards",
            "--out",
            "only",
            "--assemble",
            "{}",
        ],
        Role::Input,
    ),
    (
        &[
            "batch",
            "validate",
            "--queue-limits",
            "{}",
            "shards",
            "--out",
            "out",
        ],
        Role::Input,
    ),
];

/// URLs of schemes this tool does not read: refused wherever a place goes.
const OTHER_SCHEMES: [&str; 5] = [
    "gs://bkt/places/x.jsonl",
    "file:///tmp/rdq-places/x.jsonl",
    "az://container/places/x.jsonl",
    "hdfs://namenode:8020/places/x.jsonl",
    "S3A://bkt/places/x.jsonl",
];

/// Every path under `dir`, for a before and after.
fn tree(dir: &Path) -> BTreeSet<PathBuf> {
    let mut all = BTreeSet::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(at) = todo.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path.clone());
            }
            all.insert(path);
        }
    }
    all
}

/// A folder with an input and a folder of shards, for the rows above.
fn folder() -> PathBuf {
    let dir = scratch("places");
    let out = bin()
        .args(["gen", "-q", "--count", "5", "--seed", "2", "-o", "in.jsonl"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::create_dir_all(dir.join("shards")).unwrap();
    std::fs::copy(dir.join("in.jsonl"), dir.join("shards/a.jsonl")).unwrap();
    dir
}

fn fill(args: &[&str], place: &str) -> Vec<String> {
    args.iter().map(|a| a.replace("{}", place)).collect()
}

#[test]
fn a_url_of_a_scheme_this_tool_does_not_read_is_refused_on_every_place() {
    let dir = folder();
    let before = tree(&dir);
    for (args, _) in PLACES {
        for url in OTHER_SCHEMES {
            let args = fill(args, url);
            let out = bin().args(&args).current_dir(&dir).output().unwrap();
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert!(
                err.contains(&format!("{url}: bad URL: "))
                    && err.contains("is not read by this tool"),
                "{args:?}: {err}"
            );
            assert_eq!(tree(&dir), before, "{args:?} made a local path");
        }
    }
    // file:// names the path to give instead.
    let out = bin()
        .args(["validate", "file:///tmp/rdq-places/x.jsonl"])
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("give the path itself (/tmp/rdq-places/x.jsonl)"),
        "{}",
        stderr(&out)
    );
}

/// An `http(s)://` URL is read-only: refused where a command writes or makes a folder, before
/// anything is read or made.
#[test]
fn an_http_url_is_refused_on_every_output_and_folder() {
    let dir = folder();
    let before = tree(&dir);
    for (args, role) in PLACES {
        if *role == Role::Input {
            continue;
        }
        for url in [
            "https://127.0.0.1:9/places/x.jsonl",
            "HTTP://127.0.0.1:9/places/",
        ] {
            let args = fill(args, url);
            let out = bin().args(&args).current_dir(&dir).output().unwrap();
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert!(err.contains(url), "{args:?}: {err}");
            assert!(
                err.contains("read-only") || err.contains("cannot be listed"),
                "{args:?}: {err}"
            );
            assert_eq!(tree(&dir), before, "{args:?} made a local path");
        }
    }
}

/// A local folder or file whose name begins like a URL is reached as `./NAME`, as the refusal
/// says, and is then a path like any other.
#[test]
fn a_local_path_that_begins_like_a_url_is_written_with_dot_slash() {
    let dir = folder();
    let out = bin()
        .args(["man", "--dir", "./gs://bkt/man"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(dir.join("gs:/bkt/man/rdq-envelope.1").is_file());
    let out = bin()
        .args(["validate", "-q", "in.jsonl", "--summary", "./file:/s.json"])
        .current_dir(&dir)
        .output();
    let out = out.unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "the folder file: does not exist"
    );
    std::fs::create_dir_all(dir.join("file:")).unwrap();
    let out = bin()
        .args(["validate", "-q", "in.jsonl", "--summary", "./file:/s.json"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(dir.join("file:/s.json").is_file());
}

/// `s3://` on every place, against a local S3 server: each output is an object, each input is
/// read from the store, `man --dir` writes its pages as objects under the prefix, and no
/// local path is made for any of them. Also `http://` inputs (the server's public objects) on
/// the places read whole.
#[cfg(feature = "s3")]
#[test]
fn an_s3_url_is_read_or_written_in_the_store_on_every_place() {
    let Some(s3) = crate::common::s3::server() else {
        return;
    };
    let bucket = s3.bucket("places");
    let dir = folder();
    let input = std::fs::read(dir.join("in.jsonl")).unwrap();
    s3.put(&bucket, "in/in.jsonl", &input);
    s3.put(
        &bucket,
        "in/limits.toml",
        b"\"billing.invoices\" = 2097152\n",
    );
    s3.put(&bucket, "shards/a.jsonl", &input);
    // A batch run's entry (for --assemble), and a batch output prefix (for --status).
    let out = s3
        .bin()
        .args([
            "batch", "validate", "-q", "shards", "--out", "only", "--only", "a.jsonl",
        ])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    s3.put(&bucket, "in/entries.jsonl", &out.stdout);
    let prefix = format!("s3://{bucket}/done/");
    let out = s3
        .bin()
        .args(["batch", "validate", "-q", "shards", "--out", &prefix])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let before = tree(&dir);
    for (n, (args, role)) in PLACES.iter().enumerate() {
        let input_name = match args.iter().position(|a| *a == "{}") {
            Some(at) if at > 0 && args[at - 1] == "--queue-limits" => "in/limits.toml",
            Some(at) if at > 0 && args[at - 1] == "--assemble" => "in/entries.jsonl",
            _ => "in/in.jsonl",
        };
        let (url, written) = match role {
            Role::Input => (format!("s3://{bucket}/{input_name}"), None),
            Role::Output => {
                let ending = match args {
                    a if a.contains(&"parquet") => "parquet",
                    a if a.contains(&"html") => "html",
                    a if a.contains(&"--summary") || a.contains(&"schema") => "json",
                    a if a.contains(&"export") && a.contains(&"-o") => "csv",
                    a if a.contains(&"stats") && a.contains(&"-o") => "json",
                    _ => "jsonl",
                };
                let key = format!("out/{n}.{ending}");
                (format!("s3://{bucket}/{key}"), Some(key))
            }
            Role::Folder if args.contains(&"--status") => (prefix.clone(), None),
            Role::Folder if args[1] == "validate" && args[2] == "{}" => {
                (format!("s3://{bucket}/shards/"), None)
            }
            Role::Folder => {
                let key = format!("folder{n}/");
                (format!("s3://{bucket}/{key}"), Some(key))
            }
        };
        let args = fill(args, &url);
        let out = s3.bin().args(&args).current_dir(&dir).output().unwrap();
        let err = stderr(&out);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{args:?}: {err}");
        assert!(!err.contains("bad URL"), "{args:?}: {err}");
        if let Some(key) = written {
            let found = match key.ends_with('/') {
                true => !s3.keys(&bucket, &key).is_empty(),
                false => s3.get(&bucket, &key).is_some(),
            };
            assert!(found, "{args:?}: nothing at {key}: {err}");
        }
        // The local runs' own outputs aside (batch's `out` and `only`), nothing new: above
        // all no `s3:`.
        let made: Vec<PathBuf> = tree(&dir)
            .difference(&before)
            .filter(|p| !p.starts_with(dir.join("out")) && !p.starts_with(dir.join("only")))
            .cloned()
            .collect();
        assert!(made.is_empty(), "{args:?} made {made:?}");
        assert!(!dir.join("s3:").exists(), "{args:?}");
        let _ = std::fs::remove_dir_all(dir.join("out"));
    }
    // man --dir: a page per command under the prefix.
    let pages = s3.keys(&bucket, "folder");
    assert!(
        pages.iter().any(|k| k.ends_with("/rdq-envelope.1"))
            && pages
                .iter()
                .any(|k| k.ends_with("/rdq-envelope-validate.1")),
        "{pages:?}"
    );

    // http:// on the places read whole: the server's objects are public.
    for (flag, key) in [
        ("--queue-limits", "in/limits.toml"),
        ("--assemble", "in/entries.jsonl"),
    ] {
        let url = format!("{}/{bucket}/{key}", s3.endpoint());
        let args: Vec<String> = match flag {
            "--queue-limits" => fill(&["validate", "--queue-limits", "{}", "in.jsonl"], &url),
            _ => fill(
                &[
                    "batch",
                    "validate",
                    "shards",
                    "--out",
                    "only",
                    "--assemble",
                    "{}",
                ],
                &url,
            ),
        };
        let out = s3.bin().args(&args).current_dir(&dir).output().unwrap();
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    // A missing object is named, status 2.
    let missing = format!("s3://{bucket}/in/missing.toml");
    let out = s3
        .bin()
        .args(["validate", "--queue-limits", &missing, "in.jsonl"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains(&missing), "{}", stderr(&out));
}
