//! Every command that writes, as the tests that compare two ways of running them list them
//! (files against `s3://` objects, inputs read in pieces against the single reader).

use super::without_seconds;

/// Each command that writes, with `{in}` for its input and `{out}/NAME` for its outputs.
pub const WRITERS: &[&[&str]] = &[
    &[
        "validate",
        "{in}",
        "-o",
        "{out}/report.txt",
        "--rejects",
        "{out}/rejects.jsonl",
        "--valid-out",
        "{out}/valid.jsonl.zst",
        "--summary",
        "{out}/summary.json",
    ],
    &[
        "migrate",
        "--to",
        "2",
        "{in}",
        "-o",
        "{out}/v2.jsonl.gz",
        "--rejects",
        "{out}/rejects.jsonl",
        "--warnings-out",
        "{out}/warnings.jsonl",
    ],
    &[
        "filter",
        "--status",
        "DEAD",
        "{in}",
        "-o",
        "{out}/dead.jsonl",
        "--summary",
        "{out}/s.json",
    ],
    &["export", "{in}", "-o", "{out}/tasks.csv"],
    &["export", "{in}", "-o", "{out}/tasks.parquet"],
    &[
        "stats",
        "--format",
        "json",
        "{in}",
        "-o",
        "{out}/stats.json",
    ],
    &[
        "stats",
        "--format",
        "html",
        "{in}",
        "-o",
        "{out}/stats.html",
    ],
    &[
        "dedupe",
        "{in}",
        "{in}",
        "-o",
        "{out}/kept.jsonl",
        "--dropped",
        "{out}/dropped.jsonl",
    ],
    &[
        "dedupe",
        "--keep",
        "newest",
        "{in}",
        "{in}",
        "-o",
        "{out}/newest.jsonl",
    ],
    &[
        "sample",
        "20",
        "--seed",
        "7",
        "{in}",
        "-o",
        "{out}/sample.jsonl",
    ],
    &[
        "redrive",
        "--at",
        "2030-01-01T00:00:00.000Z",
        "{in}",
        "-o",
        "{out}/redrive.jsonl",
    ],
    &[
        "gen",
        "--count",
        "50",
        "--seed",
        "3",
        "-o",
        "{out}/gen.jsonl.zst",
    ],
];

pub fn outputs_of(args: &[&str]) -> Vec<String> {
    args.iter()
        .filter_map(|a| a.strip_prefix("{out}/"))
        .map(str::to_owned)
        .collect()
}

pub fn fill(args: &[&str], input: &str, out: &str) -> Vec<String> {
    args.iter()
        .map(|a| a.replace("{in}", input).replace("{out}", out))
        .collect()
}

/// An output's bytes as they compare across the two runs: the input's name (in diagnostics
/// and reject records) as the local run gives it.
pub fn comparable(name: &str, bytes: &[u8], remote_in: &str, local_in: &str) -> Vec<u8> {
    let text = String::from_utf8_lossy(bytes);
    let bytes = if text.contains(remote_in) {
        text.replace(remote_in, local_in).into_bytes()
    } else {
        bytes.to_vec()
    };
    let bytes = &bytes[..];
    match name {
        // Wall-clock time, and the report's "made at" line.
        "summary.json" | "s.json" => without_seconds(bytes).into_bytes(),
        "stats.html" => String::from_utf8_lossy(bytes)
            .lines()
            .filter(|l| !l.contains("generated") && !l.contains("seconds"))
            .collect::<Vec<_>>()
            .join("\n")
            .into_bytes(),
        _ => bytes.to_vec(),
    }
}
