//! The wrong kind of input gets one hint, not only a diagnostic per line: a JSON array (pretty
//! or on one line), a pretty-printed document, CSV. The hint's command line, pasted into a
//! shell, reads the file as meant.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::{bin, scratch, stderr, stdout, tool_or_skip};

/// Valid envelopes, one per line.
fn envelopes(count: &str) -> Vec<u8> {
    let out = bin()
        .args(["gen", "-q", "--count", count])
        .output()
        .unwrap();
    assert!(out.status.success());
    out.stdout
}

/// `lines` as one JSON array, pretty (a line per element, `[` alone first) or on one line.
/// Made from the bytes: the generated lines hold numbers no f64 holds.
fn array(lines: &[u8], pretty: bool) -> Vec<u8> {
    let elements: Vec<&[u8]> = lines
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let (open, between, close): (&[u8], &[u8], &[u8]) = match pretty {
        true => (b"[\n  ", b",\n  ", b"\n]\n"),
        false => (b"[", b",", b"]\n"),
    };
    let mut out = open.to_vec();
    out.extend_from_slice(&elements.join(between));
    out.extend_from_slice(close);
    out
}

fn hints(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("not JSON Lines"))
        .collect()
}

/// Runs the hint's suggested command line (after `try: `) in `dir` with sh.
fn run_suggestion(hint: &str, dir: &Path) -> std::process::Output {
    let (_, command) = hint.split_once("try: ").expect("a command line");
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_rdq-envelope"))
        .parent()
        .unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    Command::new("sh")
        .args(["-c", command])
        .current_dir(dir)
        .env("PATH", path)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn an_array_or_a_document_gets_one_hint_whose_command_reads_it() {
    let Some(_jq) = tool_or_skip(&["jq"], "the input-kind hint test") else {
        return;
    };
    let dir = scratch("input-kinds");
    let lines = envelopes("40");
    let one = lines.split(|&b| b == b'\n').next().unwrap();
    let document =
        serde_json::to_vec_pretty(&serde_json::from_slice::<serde_json::Value>(one).unwrap())
            .unwrap();
    let cases: [(&str, Vec<u8>, &str); 4] = [
        (
            "pretty array.json",
            array(&lines, true),
            "jq -c '.[]' 'pretty array.json' | ",
        ),
        (
            "-one-line.json",
            array(&lines, false),
            "jq -c '.[]' ./-one-line.json | ",
        ),
        ("doc.json", document, "jq -c . doc.json | "),
        (
            "it's.json",
            array(&lines, true),
            r"jq -c '.[]' 'it'\''s.json' | ",
        ),
    ];
    for (name, bytes, jq) in cases {
        std::fs::write(dir.join(name), &bytes).unwrap();
        for command in ["validate", "stats", "filter"] {
            let out = bin()
                .args([command, "--", name])
                .current_dir(&dir)
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(1), "{command} {name}");
            let err = stderr(&out);
            let said = hints(&err);
            assert_eq!(said.len(), 1, "{command} {name}: {err}");
            assert!(said[0].contains(jq), "{command} {name}: {}", said[0]);
            assert!(
                said[0].ends_with(&format!("| rdq-envelope {command} -- -")),
                "{}",
                said[0]
            );
            // The usual diagnostics are still there (validate writes one per line).
            if command == "validate" {
                assert!(stdout(&out).lines().count() >= 1);
            }
            // A pretty array's last element (no comma after it) is a valid line and counts.
            if command == "stats" && !name.contains("pretty") && !name.starts_with("it") {
                assert!(
                    stdout(&out).contains("Nothing counted: every line"),
                    "{}",
                    stdout(&out)
                );
            }
            let fixed = run_suggestion(said[0], &dir);
            assert_eq!(
                fixed.status.code(),
                Some(0),
                "{}: {}",
                said[0],
                stderr(&fixed)
            );
            assert!(hints(&stderr(&fixed)).is_empty());
            if command == "stats" {
                let envelopes = if name == "doc.json" {
                    "1 envelope in"
                } else {
                    "40 envelopes in"
                };
                assert!(stdout(&fixed).starts_with(envelopes), "{}", stdout(&fixed));
            }
        }
        // Quiet means quiet.
        let out = bin()
            .args(["validate", "-q", "--", name])
            .current_dir(&dir)
            .output()
            .unwrap();
        assert_eq!(stderr(&out), "");
    }

    // Among other inputs: only that one is named, and the command keeps the others.
    std::fs::write(dir.join("good.jsonl"), &lines).unwrap();
    let out = bin()
        .args(["validate", "good.jsonl", "doc.json", "good.jsonl"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(hints(&err).len(), 1, "{err}");
    assert!(
        hints(&err)[0].ends_with("| rdq-envelope validate good.jsonl - good.jsonl"),
        "{err}"
    );
    assert_eq!(run_suggestion(hints(&err)[0], &dir).status.code(), Some(0));

    // Standard input: jq reads it too.
    let out = crate::common::run(&["filter", "--status", "DEAD"], &array(&lines, true));
    let err = stderr(&out);
    assert_eq!(hints(&err).len(), 1, "{err}");
    assert!(
        hints(&err)[0].starts_with("rdq-envelope: <stdin> looks like a JSON array")
            && hints(&err)[0].ends_with("try: jq -c '.[]' | rdq-envelope filter --status DEAD"),
        "{err}"
    );
}

/// A stream given by name (`/dev/stdin`, `<(...)`) cannot be read again by that name: the hint
/// puts jq after what made it.
#[test]
fn a_stream_named_as_a_file_is_piped_through_jq() {
    let out = crate::common::run(&["validate", "/dev/stdin"], &array(&envelopes("5"), false));
    let err = stderr(&out);
    assert_eq!(hints(&err).len(), 1, "{err}");
    assert!(
        hints(&err)[0]
            .ends_with("try: (what made /dev/stdin) | jq -c '.[]' | rdq-envelope validate -"),
        "{err}"
    );
}

#[test]
fn csv_gets_one_hint_and_json_lines_get_none() {
    let dir = scratch("input-kinds-csv");
    let lines = envelopes("25");
    std::fs::write(dir.join("good.jsonl"), &lines).unwrap();
    let out = bin()
        .args(["export", "-q", "good.jsonl", "-o", "rows.csv"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let out = bin()
        .args(["validate", "rows.csv"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(hints(&err).len(), 1, "{err}");
    assert!(hints(&err)[0].contains("rows.csv looks like CSV"), "{err}");
    assert!(
        hints(&err)[0].contains("read the JSON Lines they came from"),
        "{err}"
    );

    // JSON Lines, valid, broken, or with blank lines first: the diagnostics say enough.
    let mut broken = b"\n\n{\"id\": 1,\n\"just a string, with a comma\"\n42\n".to_vec();
    broken.extend_from_slice(&lines);
    for (name, bytes) in [("good.jsonl", lines.clone()), ("broken.jsonl", broken)] {
        std::fs::write(dir.join(name), &bytes).unwrap();
        let out = bin()
            .args(["validate", name])
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(hints(&stderr(&out)).is_empty(), "{name}: {}", stderr(&out));
    }
    // A blank first line does not hide an array after it.
    let mut late = b"\n\n".to_vec();
    late.extend_from_slice(&array(&lines, true));
    std::fs::write(dir.join("late.json"), late).unwrap();
    let out = bin()
        .args(["validate", "-j1", "late.json"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(hints(&stderr(&out)).len(), 1, "{}", stderr(&out));
}

/// `text` in UTF-16 or UTF-32 (`unit` bytes), in either byte order, with or without a
/// byte-order mark.
fn encoded(text: &str, unit: usize, big_endian: bool, bom: bool) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut push = |code: u32| {
        let be = code.to_be_bytes();
        let be = &be[4 - unit..];
        match big_endian {
            true => bytes.extend_from_slice(be),
            false => bytes.extend(be.iter().rev()),
        }
    };
    let chars = bom.then_some('\u{feff}').into_iter().chain(text.chars());
    for c in chars {
        match unit {
            2 => {
                let mut buf = [0u16; 2];
                for u in c.encode_utf16(&mut buf) {
                    push(u32::from(*u));
                }
            }
            _ => push(u32::from(c)),
        }
    }
    bytes
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// UTF-16 (PowerShell's `>` writes it, with a BOM) and UTF-32, in either byte order, with and
/// without a byte-order mark: named as what they are, with iconv's command line, which reads
/// them as meant; a compressed one is decompressed first; standard input alike. They were
/// told they looked like CSV.
#[test]
fn utf16_and_utf32_are_named_with_the_iconv_that_reads_them() {
    let dir = scratch("input-kinds-utf16");
    let iconv = tool_or_skip(&["iconv"], "running the hint's iconv command line");
    let lines = String::from_utf8(envelopes("12")).unwrap();
    for unit in [2, 4] {
        for big_endian in [false, true] {
            for bom in [true, false] {
                let bits = unit * 8;
                let order = if big_endian {
                    "big-endian"
                } else {
                    "little-endian"
                };
                let marked = if bom { "with" } else { "without" };
                let looks = format!(
                    "looks like UTF-{bits} text ({order}, {marked} a byte-order mark), not JSON \
                     Lines, which are UTF-8; try: "
                );
                let from = match (bom, big_endian) {
                    (true, _) => format!("UTF-{bits}"),
                    (false, true) => format!("UTF-{bits}BE"),
                    (false, false) => format!("UTF-{bits}LE"),
                };
                let bytes = encoded(&lines, unit, big_endian, bom);
                let name = format!("u{bits}-{order}-{marked}.jsonl");
                std::fs::write(dir.join(&name), &bytes).unwrap();
                std::fs::write(dir.join(format!("{name}.gz")), gzip(&bytes)).unwrap();
                let zst = zstd::encode_all(&bytes[..], 3).unwrap();
                std::fs::write(dir.join(format!("{name}.zst")), zst).unwrap();
                let cases = [
                    (name.clone(), format!("iconv -f {from} -t UTF-8 {name} | ")),
                    (
                        format!("{name}.gz"),
                        format!("gzip -dc {name}.gz | iconv -f {from} -t UTF-8 | "),
                    ),
                    (
                        format!("{name}.zst"),
                        format!("zstd -dc {name}.zst | iconv -f {from} -t UTF-8 | "),
                    ),
                ];
                for (file, command) in cases {
                    let out = bin()
                        .args(["validate", "-o", "/dev/null", &file])
                        .current_dir(&dir)
                        .output()
                        .unwrap();
                    assert_eq!(out.status.code(), Some(1), "{file}");
                    let err = stderr(&out);
                    let said = hints(&err);
                    assert_eq!(said.len(), 1, "{file}: {err}");
                    assert!(
                        said[0].starts_with(&format!("rdq-envelope: {file} {looks}{command}")),
                        "{file}: {}",
                        said[0]
                    );
                    assert!(
                        said[0].ends_with("| rdq-envelope validate -o /dev/null -"),
                        "{}",
                        said[0]
                    );
                    let needs = match file.rsplit('.').next() {
                        Some("gz") => "gzip",
                        Some("zst") => "zstd",
                        _ => "iconv",
                    };
                    if iconv.is_some()
                        && crate::common::tool_or_skip(&[needs], "the hint").is_some()
                    {
                        let fixed = run_suggestion(said[0], &dir);
                        assert_eq!(
                            fixed.status.code(),
                            Some(0),
                            "{}: {}",
                            said[0],
                            stderr(&fixed)
                        );
                        assert!(hints(&stderr(&fixed)).is_empty());
                    }
                }
                // Standard input: iconv reads it.
                let out = crate::common::run(&["stats", "--format", "json"], &bytes);
                let err = stderr(&out);
                assert_eq!(hints(&err).len(), 1, "{err}");
                assert!(
                    hints(&err)[0].starts_with(&format!("rdq-envelope: <stdin> {looks}"))
                        && hints(&err)[0].ends_with(&format!(
                            "try: iconv -f {from} -t UTF-8 | rdq-envelope stats --format json"
                        )),
                    "{err}"
                );
                // Over `-`, and compressed on standard input: named all the same.
                let out = crate::common::run(&["validate", "-"], &gzip(&bytes));
                assert!(
                    hints(&stderr(&out))
                        .first()
                        .is_some_and(|h| h.contains(&format!("<stdin> {looks}"))),
                    "{}",
                    stderr(&out)
                );
            }
        }
    }
}

/// Binary data (NUL and control bytes; gzip and zstd are undone first, xz, bzip2 and lz4
/// refused) is said not to be text; a UTF-8 file with a NUL-free CSV first line keeps its CSV
/// hint and a JSON array its array hint (above), and JSON Lines get none.
#[test]
fn binary_data_is_said_not_to_be_text() {
    let dir = scratch("input-kinds-binary");
    let lines = envelopes("30");
    std::fs::write(dir.join("good.jsonl"), &lines).unwrap();
    let out = bin()
        .args(["export", "-q", "good.jsonl", "-o", "rows.parquet"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // Bytes from a fixed generator: the same file on every run.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let noise: Vec<u8> = (0..4096)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect();
    std::fs::write(dir.join("noise.bin"), &noise).unwrap();
    std::fs::write(dir.join("noise.bin.gz"), gzip(&noise)).unwrap();
    let png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01".to_vec();
    std::fs::write(dir.join("image.png"), &png).unwrap();
    let zip = b"PK\x03\x04\x14\x00\x00\x00\x08\x00\x21\x00lines.jsonl\n".to_vec();
    std::fs::write(dir.join("lines.zip"), &zip).unwrap();
    for file in [
        "rows.parquet",
        "noise.bin",
        "noise.bin.gz",
        "image.png",
        "lines.zip",
    ] {
        let out = bin()
            .args(["validate", "-o", "/dev/null", file])
            .current_dir(&dir)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{file}: {}", stderr(&out));
        let err = stderr(&out);
        let said = hints(&err);
        assert_eq!(said.len(), 1, "{file}: {err}");
        assert!(
            said[0].starts_with(&format!(
                "rdq-envelope: {file} looks like binary data, not text (NUL or control bytes), so \
                 not JSON Lines: name the JSON Lines file itself"
            )),
            "{file}: {}",
            said[0]
        );
    }
    let out = crate::common::run(&["validate", "-o", "/dev/null"], &noise);
    assert!(
        hints(&stderr(&out))
            .first()
            .is_some_and(|h| h.starts_with("rdq-envelope: <stdin> looks like binary data")),
        "{}",
        stderr(&out)
    );
    // Text that is not UTF-8 (Latin-1) is not binary: its first line is CSV, or nothing.
    std::fs::write(dir.join("latin1.csv"), b"caf\xe9,cr\xe8me\n1,2\n").unwrap();
    let out = bin()
        .args(["validate", "latin1.csv"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(
        hints(&stderr(&out))[0].contains("latin1.csv looks like CSV"),
        "{}",
        stderr(&out)
    );
    let out = bin()
        .args(["validate", "good.jsonl"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(hints(&stderr(&out)).is_empty(), "{}", stderr(&out));
}

/// A FILE argument that names no file but looks like a flag's value gets the flag, on every
/// command that reads envelopes (status 2 as for any missing input); a missing path does not.
#[test]
fn an_expression_or_a_predicate_given_as_a_file_gets_its_flag() {
    let dir = scratch("flag-hint");
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/dlq-sample.jsonl.zst");
    let sample = sample.to_str().unwrap();
    let cases: [(&[&str], &str); 5] = [
        (
            &["filter", ".status == \"DEAD\""],
            "rdq-envelope: '.status == \"DEAD\"' names no file and looks like a jq expression: to keep the envelopes it matches, give it to --where: rdq-envelope filter --where '.status == \"DEAD\"' FILE",
        ),
        (
            &["filter", "-q", "status=DEAD", sample],
            "rdq-envelope: status=DEAD names no file and looks like a predicate: filter takes it as --status: rdq-envelope filter --status DEAD FILE",
        ),
        (
            &["-j", "2", "stats", "queue=billing.*", sample],
            "rdq-envelope: 'queue=billing.*' names no file and looks like a predicate: filter takes it as --queue: rdq-envelope filter --queue 'billing.*' FILE | rdq-envelope stats",
        ),
        (
            &["validate", ".attempt_count > 3"],
            "rdq-envelope filter --where '.attempt_count > 3' FILE | rdq-envelope validate",
        ),
        (
            &["export", "--format", "csv", "select(.queue == \"x\")"],
            "rdq-envelope filter --where 'select(.queue == \"x\")' FILE | rdq-envelope export",
        ),
    ];
    for (args, hint) in cases {
        let out = bin().current_dir(&dir).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        assert!(err.contains("cannot open: No such file"), "{args:?}: {err}");
        assert!(err.lines().any(|l| l.ends_with(hint)), "{args:?}: {err}");
    }
    let out = bin()
        .current_dir(&dir)
        .args(["filter", "missing.jsonl"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
}

/// The hint comes before any diagnostic of the input, and the input's diagnostics for people
/// are its codes counted, not a row per line; the books still count every line. Diagnostics
/// for programs (`--format json`) stay one per line. Whatever the workers and chunk sizes.
#[test]
fn the_hint_comes_first_and_the_diagnostics_are_counted_by_code() {
    let dir = scratch("input-kinds-first");
    let lines = envelopes("30");
    let mut broken = b"{\"id\": 1\n".to_vec();
    broken.extend_from_slice(&lines);
    std::fs::write(dir.join("broken.jsonl"), &broken).unwrap();
    std::fs::write(dir.join("array.json"), array(&lines, true)).unwrap();
    for jobs in ["1", "2", "4"] {
        // Both streams in one, to see their order as a terminal shows it.
        let out = Command::new("sh")
            .args([
                "-c",
                "\"$0\" validate -j \"$1\" broken.jsonl array.json broken.jsonl 2>&1",
            ])
            .arg(env!("CARGO_BIN_EXE_rdq-envelope"))
            .arg(jobs)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let text = stdout(&out);
        let rows: Vec<&str> = text.lines().collect();
        let hint = rows
            .iter()
            .position(|r| r.contains("array.json looks like a JSON array"))
            .expect("the hint");
        // The array's 30 elements, "[" and "]": 32 lines, each rejected but the last element
        // (an envelope without a comma after it); no row of its own.
        let counted = "array.json: MALFORMED_JSON: 31 lines rejected, not listed one by one: \
                       the input looks like a JSON array, not JSON Lines";
        assert_eq!(rows[hint + 1], counted, "-j{jobs}:\n{text}");
        assert!(!rows
            .iter()
            .any(|r| r.starts_with("array.json:") && r != &counted));
        // The input before it is listed in full, before the hint; the one after, after.
        assert_eq!(rows[hint - 1].split(':').next(), Some("broken.jsonl"));
        assert!(rows[hint + 2].starts_with("broken.jsonl:1: "), "{text}");
        assert!(
            rows.last()
                .unwrap()
                .contains("94 lines: 61 valid, 33 rejected"),
            "{text}"
        );
    }
    // For programs: a JSON object per rejected line, as ever.
    let out = bin()
        .args(["validate", "-q", "--format", "json", "array.json"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(stdout(&out).lines().count(), 31);
    // Quiet: no hint, and the count still stands for the rows.
    let out = bin()
        .args(["validate", "-q", "array.json"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(stderr(&out), "");
    assert_eq!(stdout(&out).lines().count(), 1, "{}", stdout(&out));
}
