//! A folder given as an input stands for the JSON Lines files in it and below, in name order,
//! for every command that reads envelopes: the same bytes as the files named one by one. What
//! it holds besides (hidden names, other files, rejects files, links to folders, FIFOs) is
//! left out and named in the books.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{bin, scratch, stderr, stdout};

/// A folder of three JSON Lines files at three depths, and five entries to leave out; returns
/// the folder and its files in the order it is read.
fn archive(name: &str) -> (PathBuf, Vec<String>) {
    let dir = scratch(name);
    let root = dir.join("in");
    for sub in ["b", "c/d", ".git"] {
        std::fs::create_dir_all(root.join(sub)).unwrap();
    }
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/dlq-sample.jsonl.zst");
    std::fs::copy(sample, root.join("a.jsonl.zst")).unwrap();
    let gen = |seed: &str, path: &str| {
        let out = bin()
            .args([
                "gen",
                "-q",
                "--count",
                "40",
                "--invalid-rate",
                "0.1",
                "--seed",
                seed,
            ])
            .arg("-o")
            .arg(root.join(path))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    };
    gen("1", "b/2.jsonl");
    gen("2", "c/d/3.NDJSON");
    gen("3", ".hidden.jsonl");
    gen("4", ".git/x.jsonl");
    gen("5", "z.rejects.jsonl");
    std::fs::write(root.join("notes.md"), "not envelopes\n").unwrap();
    std::fs::write(root.join("manifest.json"), "{}\n").unwrap();
    let files = ["in/a.jsonl.zst", "in/b/2.jsonl", "in/c/d/3.NDJSON"];
    (dir, files.map(str::to_owned).to_vec())
}

#[test]
fn every_command_reads_a_folder_as_its_files_in_name_order() {
    let (dir, files) = archive("folders");
    let commands: [&[&str]; 10] = [
        &["validate"],
        &["migrate", "--to", "2"],
        &["filter", "--status", "DEAD"],
        &["stats", "--format", "json"],
        &["export", "--fields", "id,queue"],
        &["sample", "5", "--seed", "7"],
        &["dedupe"],
        &["show", "01HWT0DZKCQ7J900G1BS222Z6A"],
        &["convert", "--to", "proto"],
        &["redrive", "--dry-run", "--at", "2026-12-03T18:00:00.000Z"],
    ];
    for args in commands {
        let by_folder = bin()
            .args(args)
            .arg("in")
            .current_dir(&dir)
            .output()
            .unwrap();
        let by_name = bin()
            .args(args)
            .args(&files)
            .current_dir(&dir)
            .output()
            .unwrap();
        let at = args.join(" ");
        assert_eq!(by_folder.status.code(), by_name.status.code(), "{at}");
        assert!(
            by_folder.stdout == by_name.stdout,
            "{at}: {}",
            stderr(&by_folder)
        );
        assert!(
            !by_folder.stdout.is_empty() || args[0] == "validate",
            "{at}"
        );
    }
}

#[test]
fn what_a_folder_holds_besides_is_named_in_the_books() {
    let (dir, _) = archive("folders-books");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(dir.join("in/b"), dir.join("in/link")).unwrap();
        let fifo = std::ffi::CString::new(dir.join("in/f.jsonl").to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    }
    let out = bin()
        .args(["validate", "-q", "in", "--summary", "books.json"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let books: Value =
        serde_json::from_slice(&std::fs::read(dir.join("books.json")).unwrap()).unwrap();
    assert_eq!(books["lines"], 380);
    let skipped: Vec<(String, String)> = books["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["path"].as_str().unwrap().into(),
                s["why"].as_str().unwrap().into(),
            )
        })
        .collect();
    let names: Vec<&str> = skipped.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        names,
        [
            "in/.git",
            "in/.hidden.jsonl",
            "in/f.jsonl",
            "in/link",
            "in/manifest.json",
            "in/notes.md",
            "in/z.rejects.jsonl"
        ]
    );
    let why = |path: &str| skipped.iter().find(|(p, _)| p == path).unwrap().1.clone();
    assert_eq!(why("in/.git"), "hidden");
    assert_eq!(why("in/f.jsonl"), "not a regular file");
    assert!(why("in/link").contains("symbolic link to a folder"));
    assert!(why("in/z.rejects.jsonl").starts_with("a rejects file"));
    // The closing line names the first few and counts the rest.
    let out = bin()
        .args(["validate", "in"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let closing = stderr(&out);
    assert!(
        closing.contains("left out 7 entries of the folders: in/.git (hidden), in/.hidden.jsonl (hidden), in/f.jsonl (not a file) and 4 more (--summary lists them)"),
        "{closing}"
    );
}

#[test]
fn a_folder_with_nothing_to_read_is_an_error() {
    let dir = scratch("folders-empty");
    std::fs::create_dir_all(dir.join("empty")).unwrap();
    std::fs::create_dir_all(dir.join("other/.cache")).unwrap();
    std::fs::write(dir.join("other/rows.csv"), "id\n").unwrap();
    for (folder, says) in [
        ("empty", "empty: no .jsonl or .ndjson file in this folder or below (it is empty)"),
        (
            "other",
            "other: no .jsonl or .ndjson file in this folder or below; left out: other/.cache (hidden), other/rows.csv (other name)",
        ),
    ] {
        let out = bin().args(["validate", folder]).current_dir(&dir).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(stderr(&out).trim_end(), format!("rdq-envelope: {says}"));
        assert_eq!(stdout(&out), "");
    }
}

/// Thousands of files in a folder are read one after the other: a low limit of open files
/// (`ulimit -n 64`) is no matter, and every line is in the books.
#[test]
fn thousands_of_files_under_a_low_limit_of_open_files() {
    let dir = scratch("folders-many");
    let line = crate::common::gen_lines(1, 1, None, 0.0);
    std::fs::create_dir_all(dir.join("many")).unwrap();
    for i in 0..2000 {
        std::fs::write(dir.join(format!("many/{i:04}.jsonl")), &line).unwrap();
    }
    let out = std::process::Command::new("sh")
        .args(["-c", "ulimit -n 64 && exec \"$0\" validate -j2 many"])
        .arg(env!("CARGO_BIN_EXE_rdq-envelope"))
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("2,000 lines: 2,000 valid"),
        "{}",
        stderr(&out)
    );
}
