//! Golden tests of `rdq-envelope export` (docs/cli.md#export): the files are read back by
//! Python's own readers (the csv module, pyarrow, DuckDB) and every value is compared with the
//! envelope it came from (tests/data/export_check.py).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common;
use common::{gen_lines, need_or_skip, run, stderr, stdout};

/// A valid DEAD v1 line, without its terminator.
const DEAD: &str = include_str!("../data/dlq_line.json");

/// Every field of the vocabulary, and two headers.
const ALL_FIELDS: &str = "id,envelope_version,queue,handler_ref,handler_version,status,\
attempt_count,redrive_count,created_at,next_attempt_at,lease_expires_at,payload_content_type,\
payload_bytes,source,header.traceparent,header.tenant,last.outcome,last.error.type,\
last.error.message,last.started_at,last.finished_at,fingerprint";

fn gen(version: u8, seed: u64) -> Vec<u8> {
    gen_lines(700, seed, Some(version), 0.05)
}

/// Envelopes whose values are hard to carry: quotes, commas, CR and LF, tabs, escaped and raw
/// non-ASCII text, nulls, empty texts, an absent handler_version.
fn handcrafted() -> String {
    let dead = DEAD.trim_end();
    let message = r#""template 'invoice-eu-v7' not found""#;
    let mut lines = vec![
        dead.to_owned(),
        dead.replacen(
            message,
            r#""say \"hi\", then\r\nbreak\tZo\u00eb é \ud83d\ude00 日本 ,;\"""#,
            1,
        ),
        dead.replacen(
            r#""handler_version":"2.3.1""#,
            r#""handler_version":null"#,
            1,
        )
        .replacen(r#""tenant":"acme-eu""#, r#""tenant":"a,b \"c\"\nd\re""#, 1),
        dead.replacen(r#""handler_version":"2.3.1","#, "", 1)
            .replacen(r#""tenant":"acme-eu""#, r#""tenant":"""#, 1)
            .replacen(message, r#""""#, 1),
        dead.replacen(r#""rdq.source":"billing-api","#, "", 1),
    ];
    // Not DEAD: waiting with no attempt at all (every last.* null, no fingerprint).
    let mut pending: Value = serde_json::from_str(dead).unwrap();
    pending["status"] = "PENDING".into();
    pending["attempt_count"] = 0.into();
    pending["attempts"] = Value::Array(vec![]);
    pending["next_attempt_at"] = "2024-05-02T00:00:00.000Z".into();
    lines.push(pending.to_string());
    lines.push(String::new());
    lines.push(r#"{"not":"an envelope"}"#.to_owned());
    lines.join("\n") + "\n"
}

/// Whether Python has `module`; without it a test is skipped with a note, except under CI
/// (`CI=true`), which installs it (.ci/run) and must run every test.
fn python_has(module: &str) -> bool {
    let found = Command::new("python3")
        .args(["-c", &format!("import {module}")])
        // Its traceback is kept, not printed: the skip line says what is missing.
        .output()
        .is_ok_and(|o| o.status.success())
        .then_some(())
        .ok_or_else(|| format!("Python has no {module} (pip install {module})"));
    need_or_skip(found, "Parquet read back").is_some()
}

/// Runs tests/data/export_check.py: its JSON report, or a failure with its message.
fn check(mode: &str, input: &Path, rejects: &Path, export: &Path, fields: &str) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/export_check.py");
    let out = Command::new("python3")
        .arg(script)
        .args([mode, path(input), path(rejects), path(export), fields])
        .output()
        .unwrap();
    assert!(out.status.success(), "{mode}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The fingerprints the export wrote are the library's for each row's last error.
fn fingerprints_agree(report: &Value) {
    for pair in report["fingerprints"].as_array().unwrap() {
        let want = match &pair[0] {
            Value::Null => Value::Null,
            error => {
                let kind = error[0].as_str().unwrap();
                let message = error[1].as_str().unwrap_or_default();
                rdq_envelope::ops::Fingerprint::of(kind, message)
                    .to_string()
                    .into()
            }
        };
        let got = match &pair[1] {
            Value::String(s) if s.is_empty() => Value::Null,
            other => other.clone(),
        };
        assert_eq!(got, want, "{pair}");
    }
}

/// The corpus (two gen inputs, v1 and v2, and the handcrafted lines) in a folder.
fn corpus(name: &str) -> (PathBuf, PathBuf) {
    let dir = common::scratch(name);
    let input = dir.join("in.jsonl");
    let mut bytes = gen(1, 5);
    bytes.extend(gen(2, 6));
    bytes.extend(handcrafted().as_bytes());
    std::fs::write(&input, bytes).unwrap();
    (dir, input)
}

/// Exports `input` with `args`; the run rejects some lines (status 1) and its books balance.
fn export(dir: &Path, input: &Path, output: &Path, args: &[&str]) -> PathBuf {
    let rejects = dir.join("rejects.jsonl");
    let summary = dir.join("summary.json");
    let mut all = vec![
        "export",
        path(input),
        "-o",
        path(output),
        "--rejects",
        path(&rejects),
        "--summary",
        path(&summary),
        "-q",
    ];
    all.extend(args);
    let out = run(&all, b"");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let books: Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    let n = |k: &str| books[k].as_u64().unwrap();
    assert_eq!(
        n("lines"),
        n("blank") + n("emitted") + n("rejected") + n("filtered_out")
    );
    assert_eq!(n("filtered_out"), 0);
    let records = std::fs::read_to_string(&rejects).unwrap();
    assert_eq!(records.lines().count() as u64, n("rejected"));
    rejects
}

#[test]
fn csv_and_tsv_hold_every_value_as_pythons_csv_module_reads_it() {
    let (dir, input) = corpus("export-csv");
    for (mode, name) in [("csv", "out.csv"), ("tsv", "out.tsv")] {
        let output = dir.join(name);
        // The format comes from the name.
        let rejects = export(&dir, &input, &output, &["--fields", ALL_FIELDS]);
        let report = check(mode, &input, &rejects, &output, ALL_FIELDS);
        assert!(
            report["rows"].as_u64().unwrap() > 1200,
            "{}",
            report["rows"]
        );
        fingerprints_agree(&report);
        // The handcrafted values went through, quoted.
        let values = report["values"].to_string();
        assert!(values.contains(r#"say \"hi\", then\r\nbreak\tZoë é 😀 日本 ,;\""#));
        assert!(values.contains(r#"a,b \"c\"\nd\re"#));
    }
    let default = dir.join("default.csv");
    let rejects = export(&dir, &input, &default, &[]);
    let fields = rdq_envelope::ops::DEFAULT_FIELDS.join(",");
    fingerprints_agree(&check("csv", &input, &rejects, &default, &fields));
}

#[test]
fn parquet_holds_typed_values_as_pyarrow_and_duckdb_read_them() {
    if !python_has("pyarrow") {
        return;
    }
    let (dir, input) = corpus("export-parquet");
    let output = dir.join("out.parquet");
    let rejects = export(&dir, &input, &output, &["--fields", ALL_FIELDS]);
    let report = check("parquet", &input, &rejects, &output, ALL_FIELDS);
    fingerprints_agree(&report);
    let rows = report["rows"].as_u64().unwrap();
    if python_has("duckdb") {
        let sql = format!(
            "import duckdb; print(duckdb.sql(\"select count(*), count(handler_version), \
             min(created_at)::varchar from '{}'\").fetchall()[0])",
            path(&output)
        );
        let out = Command::new("python3").args(["-c", &sql]).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stdout(&out);
        assert!(text.starts_with(&format!("({rows}, ")), "{text}");
        assert!(text.contains("+00"), "UTC timestamps: {text}");
    }
}

#[test]
fn the_rows_are_the_same_for_any_job_count() {
    let (dir, input) = corpus("export-jobs");
    let csv: Vec<Vec<u8>> = ["1", "2", "3", "8"]
        .iter()
        .map(|jobs| {
            let out = run(&["export", path(&input), "-q", "-j", jobs], b"");
            assert_eq!(out.status.code(), Some(1));
            out.stdout
        })
        .collect();
    assert!(csv.windows(2).all(|w| w[0] == w[1]), "CSV bytes for any -j");
    if !python_has("pyarrow") {
        return;
    }
    let reports: Vec<Value> = ["1", "3", "8"]
        .iter()
        .map(|jobs| {
            let output = dir.join(format!("j{jobs}.parquet"));
            let rejects = export(&dir, &input, &output, &["-j", jobs]);
            let fields = rdq_envelope::ops::DEFAULT_FIELDS.join(",");
            check("parquet", &input, &rejects, &output, &fields)
        })
        .collect();
    assert!(
        reports.windows(2).all(|w| w[0] == w[1]),
        "Parquet values for any -j"
    );
}

#[test]
fn bad_fields_and_formats_are_usage_errors_before_any_input() {
    let dir = common::scratch("export-usage");
    let cases: &[&[&str]] = &[
        &["export", "--fields", "id,priority"],
        &["export", "--fields", "header."],
        &["export", "--fields", "id,queue,id"],
        &[
            "export",
            "--format",
            "parquet",
            "--compress",
            "zstd",
            "-o",
            "x",
        ],
        &["export", "-o", "x.parquet.zst"],
        &[
            "export",
            "--format",
            "parquet",
            "--no-neutralize-formulas",
            "-o",
            "x",
        ],
        &[
            "export",
            "--format",
            "parquet",
            "--neutralize-formulas",
            "-o",
            "x",
        ],
        &["export", "--fields", " id"],
        &["export", "--fields", "id, queue"],
        &["export", "--fields", "id,"],
        &["export", "--fields", ""],
        &["export", "--fields", "id,,queue"],
        &[
            "export",
            "--format",
            "parquet",
            "--line-buffered",
            "-o",
            "x",
        ],
    ];
    for args in cases {
        let mut args = args.to_vec();
        let x = dir.join("x");
        let zst = dir.join("x.parquet.zst");
        for arg in args.iter_mut() {
            match *arg {
                "x" => *arg = path(&x),
                "x.parquet.zst" => *arg = path(&zst),
                _ => {}
            }
        }
        // Standard input is never read: a usage error comes first.
        let out = run(&args, b"not json\n");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(!x.exists() && !zst.exists(), "{args:?}: nothing written");
    }
    let out = run(&["export", "--fields", "priority"], b"");
    assert!(
        stderr(&out).contains("the fields are id, envelope_version, queue"),
        "{}",
        stderr(&out)
    );
    // Each mistake is named, with what to write instead.
    for (fields, hint) in [
        (
            "id, queue",
            r#"" queue" has spaces around it: the names are separated by commas alone"#,
        ),
        (" id", r#"" id" has spaces around it"#),
        (
            "id,",
            r#"an empty name in "id," (two commas, or a comma at an end)"#,
        ),
        ("", r#"an empty name in """#),
        ("id,queue,id", "id is given twice: give each field once"),
        ("id,staus", r#"unknown field "staus"; did you mean status?"#),
        ("last.eror.type", "did you mean last.error.type?"),
    ] {
        let out = run(&["export", "--fields", fields], b"");
        assert_eq!(out.status.code(), Some(2), "{fields:?}");
        assert!(stderr(&out).contains(hint), "{fields:?}: {}", stderr(&out));
    }
    // A suggestion only when a name is close to one.
    let out = run(&["export", "--fields", "priority"], b"");
    assert!(!stderr(&out).contains("did you mean"), "{}", stderr(&out));
}

#[test]
fn empty_input_gives_the_header_alone_and_tsv_and_parquet_follow_the_name() {
    let out = run(&["export", "-q", "--fields", "id,header.a\"b"], b"");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "id,\"header.a\"\"b\"\r\n");
    let dir = common::scratch("export-names");
    let line = format!("{}\n", DEAD.trim_end());
    let tsv = dir.join("x.tsv");
    let out = run(
        &["export", "-q", "--fields", "id,queue", "-o", path(&tsv)],
        line.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&tsv).unwrap(),
        "id\tqueue\n01HWT0D7G0Q8V9W2R4T6Y8A0B2\tbilling.invoices\n"
    );
    if cfg!(feature = "parquet") {
        let parquet = dir.join("x.parquet");
        let out = run(&["export", "-q", "-o", path(&parquet)], line.as_bytes());
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let bytes = std::fs::read(&parquet).unwrap();
        assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"));
        // Parquet needs no seekable file: standard output that is not a terminal will do.
        let out = run(&["export", "-q", "--format", "PARQUET"], line.as_bytes());
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(out.stdout, bytes);
    }
}

#[test]
fn a_run_that_fails_leaves_no_file() {
    let dir = common::scratch("export-atomic");
    let input = dir.join("in.jsonl");
    std::fs::write(&input, format!("{}\n", DEAD.trim_end())).unwrap();
    let missing = dir.join("missing.jsonl");
    for name in ["out.csv", "out.parquet"] {
        let output = dir.join(name);
        let out = run(
            &[
                "export",
                "-q",
                path(&input),
                path(&missing),
                "-o",
                path(&output),
            ],
            b"",
        );
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(!output.exists(), "{name}: no partial file");
        assert!(
            std::fs::read_dir(&dir).unwrap().count() == 1,
            "no temporary file left"
        );
    }
}

/// The characters a spreadsheet reads as the start of a formula (OWASP, "CSV Injection").
const TRIGGERS: [&str; 6] = ["=", "+", "-", "@", "\t", "\r"];

/// The DEAD line with its last error message and its `tenant` header set to `text` (a JSON
/// string's content).
fn dead_with(text: &str) -> String {
    let mut line: Value = serde_json::from_str(DEAD.trim_end()).unwrap();
    line["attempts"][2]["error"]["message"] = text.into();
    line["headers"]["tenant"] = text.into();
    line.to_string()
}

/// The rows of a CSV (`,`) or TSV (`\t`) file as Python's csv module reads them.
fn python_rows(file: &Path, delimiter: &str) -> Vec<Vec<String>> {
    let script = "import csv, json, sys\n\
                  rows = list(csv.reader(open(sys.argv[1], newline='', encoding='utf-8'), \
                  delimiter=sys.argv[2]))\n\
                  print(json.dumps(rows))";
    let out = Command::new("python3")
        .args(["-c", script, path(file), delimiter])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The count the closing warning gives, or None without a warning.
fn formula_count(stderr: &str) -> Option<u64> {
    let at = stderr.find("export: ")? + "export: ".len();
    stderr[at..].split(' ').next()?.parse().ok()
}

#[test]
fn cells_that_would_start_a_formula_are_neutralised_unless_asked_not_to() {
    let dir = common::scratch("export-formulas");
    for trigger in TRIGGERS {
        let value = format!("{trigger}HYPERLINK(\"http://x\",\"a,b;c\")");
        // Two cells per line at risk (the message and the header), on two lines; a plain line
        // between them, and a value that only holds a formula after a separator.
        let input = [
            dead_with(&value),
            dead_with("plain"),
            dead_with("a;=1+1"),
            dead_with(&value),
        ]
        .join("\n")
            + "\n";
        let input_path = dir.join("in.jsonl");
        std::fs::write(&input_path, &input).unwrap();
        for (name, delimiter) in [("out.csv", ","), ("out.tsv", "\t")] {
            let output = dir.join(name);
            for neutralize in [true, false] {
                let fields = "attempt_count,last.error.message,header.tenant,id";
                let mut args = vec!["export", path(&input_path), "-o", path(&output)];
                args.extend(["--fields", fields]);
                if !neutralize {
                    args.push("--no-neutralize-formulas");
                }
                let out = run(&args, b"");
                let what = format!("{trigger:?} {name} neutralize={neutralize}");
                assert_eq!(out.status.code(), Some(0), "{what}: {}", stderr(&out));
                let err = stderr(&out);
                assert_eq!(formula_count(&err), Some(4), "{what}: {err}");
                let hint = match neutralize {
                    true => {
                        "export: 4 cells begin with = + - @ tab or CR and could run as \
                             formulas in a spreadsheet: prefixed with ' \
                             (--no-neutralize-formulas writes them as they are)"
                    }
                    false => {
                        "export: 4 cells begin with = + - @ tab or CR and may run as \
                              formulas in a spreadsheet; --neutralize-formulas neutralises them"
                    }
                };
                assert!(err.contains(hint), "{what}: {err}");
                let rows = python_rows(&output, delimiter);
                assert_eq!(rows.len(), 5, "{what}: {rows:?}");
                let want = match neutralize {
                    true => format!("'{value}"),
                    false => value.clone(),
                };
                for row in [&rows[1], &rows[4]] {
                    // An integer is data, never prefixed; the ID cannot start a formula.
                    assert_eq!(row[0], "3", "{what}");
                    assert_eq!((&row[1], &row[2]), (&want, &want), "{what}");
                }
                assert_eq!(rows[2][1], "plain", "{what}");
                assert_eq!(rows[3][1], "a;=1+1", "{what}");
                // A neutralised cell, and one holding a separator, are quoted in the file.
                let text = std::fs::read_to_string(&output).unwrap();
                if neutralize {
                    assert!(text.contains(&format!("\"'{trigger}HYPERLINK")), "{what}");
                    assert!(text.contains("\"a;=1+1\""), "{what}");
                }
            }
        }
    }
}

#[test]
fn the_formula_count_is_the_same_for_any_job_count_and_quiet_hides_it() {
    let dir = common::scratch("export-formulas-jobs");
    // Over a MiB, so that the run has several chunks: the risky lines spread among them.
    let mut input = gen(1, 9);
    input.extend(gen(2, 10));
    let lines: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    let mut mixed = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        mixed.extend_from_slice(line);
        mixed.push(b'\n');
        if i % 50 == 0 {
            mixed.extend(dead_with(TRIGGERS[i / 50 % TRIGGERS.len()]).as_bytes());
            mixed.push(b'\n');
        }
    }
    let input_path = dir.join("in.jsonl");
    std::fs::write(&input_path, &mixed).unwrap();
    let risky = (lines.len() as u64).div_ceil(50);
    let mut outputs = Vec::new();
    for jobs in ["1", "2", "3", "8"] {
        for flag in ["--neutralize-formulas", "--no-neutralize-formulas"] {
            let args = ["export", path(&input_path), "-j", jobs, flag];
            let out = run(&args, b"");
            assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
            // Default fields: the message is the one cell per risky line.
            assert_eq!(
                formula_count(&stderr(&out)),
                Some(risky),
                "-j {jobs} {flag}"
            );
            outputs.push((flag, out.stdout));
        }
    }
    for flag in ["--neutralize-formulas", "--no-neutralize-formulas"] {
        let bytes: Vec<&Vec<u8>> = outputs
            .iter()
            .filter(|o| o.0 == flag)
            .map(|o| &o.1)
            .collect();
        assert!(bytes.windows(2).all(|w| w[0] == w[1]), "{flag}: same bytes");
    }
    let out = run(&["export", path(&input_path), "-q"], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    // No cell at risk: no word of formulas.
    let out = run(&["export"], format!("{}\n", DEAD.trim_end()).as_bytes());
    assert!(!stderr(&out).contains("formula"), "{}", stderr(&out));
}

/// `-o`'s name picks the format (.csv, .tsv, .parquet, before any .zst or .gz); a different
/// --format is status 2, as is an ending that names no format without --format (`x.xlsx` once
/// held CSV); no ending and `-` follow --format or CSV.
#[test]
fn the_output_name_picks_the_format_or_is_refused() {
    let lines = gen_lines(10, 2, None, 0.0);
    let dir = common::scratch("export-format-names");
    let at = |name: &str| dir.join(name).to_str().unwrap().to_owned();
    for (name, format, separator) in [
        ("x.csv", None, ','),
        ("x.TSV", None, '\t'),
        ("rows", None, ','),
        ("rows2", Some("tsv"), '\t'),
        ("x.dat", Some("tsv"), '\t'),
    ] {
        let path = at(name);
        let mut args = vec!["export", "-q", "--fields", "id,queue", "-o", &path];
        args.extend(format.iter().flat_map(|f| ["--format", f]));
        let out = run(&args, &lines);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        let text = std::fs::read_to_string(&path).unwrap();
        let header = format!("id{separator}queue");
        assert_eq!(text.lines().next(), Some(header.as_str()), "{name}");
    }
    let out = run(&["export", "-q", "-o", "-", "--fields", "id,queue"], &lines);
    assert_eq!(stdout(&out).lines().next(), Some("id,queue"));
    let out = run(
        &[
            "export", "-q", "-o", "-", "--fields", "id,queue", "--format", "tsv",
        ],
        &lines,
    );
    assert_eq!(stdout(&out).lines().next(), Some("id\tqueue"));
    let out = run(&["export", "-q", "-o", &at("x.tsv.gz")], &lines);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    for (name, format, says) in [
        ("bad.csv", Some("tsv"), "--format tsv does not go with the name's .csv"),
        ("x.tsv.zst", Some("csv"), "--format csv does not go with the name's .tsv"),
        (
            "x.xlsx",
            None,
            "x.xlsx: export writes csv, tsv or parquet: name the file .csv/.tsv/.parquet or give --format",
        ),
        ("x.json.gz", None, "export writes csv, tsv or parquet"),
    ] {
        let path = at(name);
        let mut args = vec!["export", "-q", "-o", &path];
        args.extend(format.iter().flat_map(|f| ["--format", f]));
        let out = run(&args, &lines);
        assert_eq!(out.status.code(), Some(2), "{name}");
        assert!(stderr(&out).contains(says), "{name}: {}", stderr(&out));
        assert!(!std::path::Path::new(&path).exists(), "{name} was written");
    }
}
