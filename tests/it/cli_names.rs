//! Names as people type them (docs/cli.md#outputs): an output's endings, format and compression
//! alike, are read in one place and in any letter case. `-o r.json.ZST` is JSON compressed with
//! zstd, `r.csv.GZ` CSV in gzip, `x.Parquet` Parquet; `x.parquet.ZST` is refused as
//! `x.parquet.zst` is; and `batch` takes `A.JSONL.ZST` for a shard as it takes `a.jsonl.zst`.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::common::{bin, scratch, stderr};

/// What a written file is, once decompressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    /// One JSON object per line.
    JsonLines,
    /// One JSON object (a summary, a schema, stats --format json).
    Json,
    /// validate's rows for people (`SOURCE:LINE: ...`).
    Human,
    /// A header row of comma-separated names.
    Csv,
    /// A header row of tab-separated names.
    Tsv,
    Parquet,
    Html,
    /// stats' tables.
    Table,
}

/// How a file's bytes are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stored {
    Plain,
    Zstd,
    Gzip,
}

/// The bytes `bytes` hold once decompressed as `stored` says; panics when they are not stored
/// so (a plain file read as zstd, a zstd file as plain).
fn decompressed(bytes: &[u8], stored: Stored, what: &str) -> Vec<u8> {
    let zstd_magic = bytes.starts_with(&[0x28, 0xB5, 0x2F, 0xFD]);
    let gzip_magic = bytes.starts_with(&[0x1F, 0x8B]);
    match stored {
        Stored::Plain => {
            assert!(!zstd_magic && !gzip_magic, "{what}: compressed");
            bytes.to_vec()
        }
        Stored::Zstd => {
            assert!(zstd_magic, "{what}: not zstd");
            zstd::decode_all(bytes).unwrap()
        }
        Stored::Gzip => {
            assert!(gzip_magic, "{what}: not gzip");
            let mut out = Vec::new();
            flate2::read::MultiGzDecoder::new(bytes)
                .read_to_end(&mut out)
                .unwrap();
            out
        }
    }
}

fn is(format: Format, bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    let first = text.lines().next().unwrap_or("");
    let object =
        |s: &str| serde_json::from_str::<serde_json::Value>(s).is_ok_and(|v| v.is_object());
    // Envelopes may hold numbers no f64 holds: a line of them is not parsed.
    let line = |s: &str| s.starts_with('{') && s.ends_with('}');
    match format {
        Format::JsonLines => !text.is_empty() && text.lines().all(line),
        Format::Json => object(&text),
        Format::Human => first.contains(".jsonl:") && !first.starts_with('{'),
        Format::Csv => first.starts_with("id,"),
        Format::Tsv => first.starts_with("id\t"),
        Format::Parquet => bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"),
        Format::Html => text.starts_with("<!DOCTYPE html>"),
        Format::Table => !first.starts_with('{') && !first.starts_with('<') && !text.is_empty(),
    }
}

/// Every output flag, with a name (without its compression ending) and the format it holds.
/// `{in}` is the input.
const OUTPUTS: &[(&[&str], &str, Format)] = &[
    (&["validate", "{in}", "-o"], "e.JSON", Format::JsonLines),
    (&["validate", "{in}", "-o"], "e.Jsonl", Format::JsonLines),
    (&["validate", "{in}", "-o"], "e.TXT", Format::Human),
    (&["validate", "{in}", "-o"], "e.Log", Format::Human),
    (
        &["validate", "{in}", "-o", "/dev/null", "--valid-out"],
        "v.JSONL",
        Format::JsonLines,
    ),
    (
        &["validate", "{in}", "-o", "/dev/null", "--rejects"],
        "r.JSONL",
        Format::JsonLines,
    ),
    (
        &["validate", "{in}", "-o", "/dev/null", "--summary"],
        "s.JSON",
        Format::Json,
    ),
    (
        &["migrate", "--to", "2", "{in}", "-o"],
        "m.NDJSON",
        Format::JsonLines,
    ),
    (
        &[
            "migrate",
            "--to",
            "2",
            "{in}",
            "-o",
            "/dev/null",
            "--warnings-out",
        ],
        "w.Jsonl",
        Format::JsonLines,
    ),
    (
        &["redrive", "--at", "2030-01-01T00:00:00.000Z", "{in}", "-o"],
        "t.JSONL",
        Format::JsonLines,
    ),
    (
        &["dedupe", "{in}", "{in}", "-o"],
        "k.JSONL",
        Format::JsonLines,
    ),
    (
        &["dedupe", "{in}", "{in}", "-o", "/dev/null", "--dropped"],
        "d.JSONL",
        Format::JsonLines,
    ),
    (
        &["sample", "5", "--seed", "1", "{in}", "-o"],
        "p.JSONL",
        Format::JsonLines,
    ),
    (&["filter", "{in}", "-o"], "f.JSONL", Format::JsonLines),
    (&["filter", "{in}", "-o"], "f", Format::JsonLines),
    (&["export", "{in}", "-o"], "x.CSV", Format::Csv),
    (&["export", "{in}", "-o"], "x.Tsv", Format::Tsv),
    (&["stats", "{in}", "-o"], "s.JSON", Format::Json),
    (&["stats", "{in}", "-o"], "s.HTML", Format::Html),
    (&["stats", "{in}", "-o"], "s.Htm", Format::Html),
    (&["stats", "{in}", "-o"], "s.TXT", Format::Table),
    (
        &["gen", "--count", "20", "-o"],
        "g.JSONL",
        Format::JsonLines,
    ),
    (&["schema", "-o"], "schema.JSON", Format::Json),
];

/// Compression endings as people type them, and what each is.
const COMPRESSIONS: [(&str, Stored); 7] = [
    ("", Stored::Plain),
    (".zst", Stored::Zstd),
    (".ZST", Stored::Zstd),
    (".Zst", Stored::Zstd),
    (".gz", Stored::Gzip),
    (".GZ", Stored::Gzip),
    (".Gz", Stored::Gzip),
];

/// Lines to read: valid ones of every kind (dedupe reads them twice, for --dropped), one with a
/// warning (for migrate --warnings-out) and a rejected one.
fn input(dir: &Path) -> PathBuf {
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/dlq-sample.jsonl.zst");
    let path = dir.join("in.jsonl");
    let out = bin()
        .args(["migrate", "-q", "--to", "2", "--rejects", "/dev/null", "-o"])
        .arg(&path)
        .arg(&sample)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let mut bytes = std::fs::read(&path).unwrap();
    // The first line again, under an ID whose time is not its created_at: a warning.
    let first = String::from_utf8_lossy(bytes.split(|&b| b == b'\n').next().unwrap()).into_owned();
    let id = first
        .split("\"id\":\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    let warned = first.replace(id, "01HWT0D7G0Q8V9W2R4T6Y8A0B2");
    bytes.extend_from_slice(format!("{warned}\n").as_bytes());
    bytes.extend_from_slice(b"{\"id\":\"not an envelope\"}\n");
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn every_output_follows_its_endings_in_any_letter_case() {
    let dir = scratch("names");
    let input = input(&dir);
    let input = input.to_str().unwrap();
    for (args, name, format) in OUTPUTS {
        for (ending, stored) in COMPRESSIONS {
            let path = dir.join(format!("{name}{ending}"));
            let _ = std::fs::remove_file(&path);
            let mut command = bin();
            for arg in *args {
                command.arg(arg.replace("{in}", input));
            }
            command.arg(&path);
            if args[0] != "schema" {
                command.arg("-q");
            }
            let out = command.output().unwrap();
            assert!(
                matches!(out.status.code(), Some(0 | 1)),
                "{args:?} {name}{ending}: {}",
                stderr(&out)
            );
            let what = format!("{args:?} {name}{ending}");
            let bytes = decompressed(&std::fs::read(&path).unwrap(), stored, &what);
            assert!(
                is(*format, &bytes),
                "{what}: not {format:?}: {:?}",
                String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
            );
        }
    }
    // Parquet takes its name in any letter case, and refuses to be compressed whole whatever
    // the case of the ending that asks for it.
    for name in ["x.parquet", "x.PARQUET", "x.Parquet"] {
        let path = dir.join(name);
        let out = bin()
            .args(["export", "-q", input, "-o"])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{name}: {}", stderr(&out));
        assert!(
            is(Format::Parquet, &std::fs::read(&path).unwrap()),
            "{name}"
        );
    }
    for name in ["x.parquet.zst", "x.parquet.ZST", "x.PARQUET.Gz"] {
        let path = dir.join(name);
        let out = bin()
            .args(["export", "-q", input, "-o"])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{name}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("cannot also be compressed whole"),
            "{name}: {}",
            stderr(&out)
        );
        assert!(!path.exists(), "{name}");
    }
    // A JSON Lines output named for another format is refused in any letter case.
    for name in ["dead.CSV", "dead.Csv.GZ", "dead.PARQUET.ZST", "dead.HTML"] {
        let out = bin()
            .args(["filter", "-q", input, "-o"])
            .arg(dir.join(name))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{name}");
        assert!(
            stderr(&out).contains("-o writes JSON Lines"),
            "{name}: {}",
            stderr(&out)
        );
    }
    // --format against the name: the same in any letter case.
    let out = bin()
        .args(["stats", "-q", "--format", "html", input, "-o"])
        .arg(dir.join("s.JSON.ZST"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--format html does not go with the name's .json"),
        "{}",
        stderr(&out)
    );
}

/// batch's shards are told by their endings in any letter case, and their outputs are named
/// (in lower case) and compressed as the shard's own ending says.
#[test]
fn batch_takes_shards_by_their_endings_in_any_letter_case() {
    let dir = scratch("names-batch");
    let lines = crate::common::gen_lines(30, 4, Some(2), 0.0);
    let shards = dir.join("in");
    std::fs::create_dir_all(&shards).unwrap();
    std::fs::write(shards.join("A.JSONL"), &lines).unwrap();
    std::fs::write(
        shards.join("B.Jsonl.ZST"),
        zstd::encode_all(&lines[..], 3).unwrap(),
    )
    .unwrap();
    std::fs::write(shards.join("c.json"), &lines).unwrap();
    let out = bin()
        .args(["batch", "validate", "in", "--list"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "A.JSONL\nB.Jsonl.ZST\n",
        "{}",
        stderr(&out)
    );
    let out = bin()
        .args(["batch", "validate", "-q", "in", "--out", "out"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let a = std::fs::read(dir.join("out/A.jsonl")).unwrap();
    assert_eq!(decompressed(&a, Stored::Plain, "A.jsonl"), lines);
    let b = std::fs::read(dir.join("out/B.jsonl.zst")).unwrap();
    assert_eq!(decompressed(&b, Stored::Zstd, "B.jsonl.zst"), lines);
}
