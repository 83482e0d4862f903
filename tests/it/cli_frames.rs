//! Inputs the workers read in pieces (docs/performance.md#reading-in-parallel) at the command
//! line: every command that writes gives the same bytes, standard output and standard error
//! as with the single reader (`RDQ_ENVELOPE_READER=stream`), at `-j2` and `-j3`, over a plain file, a
//! seekable `.zst`, `pzstd`'s frames and concatenated frames; a damaged seek table or frame is
//! exit 2 with its offset, and no line of it is written.

use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::cli_conventions::{output, plain, with_env};
use crate::common::writers::{comparable, fill, outputs_of, WRITERS};
use crate::common::{bin, gen_lines, scratch, stderr, tool_or_skip, without_timings};
use crate::pieces::{write_frames, Frames};

/// Runs `args` on `command`; with the single reader when `stream`.
fn run_on(mut command: Command, args: &[String], stream: bool) -> Output {
    if stream {
        command.env("RDQ_ENVELOPE_READER", "stream");
    }
    command
        .args(args)
        .env("SOURCE_DATE_EPOCH", "1796320800")
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

/// Standard error without the closing line's timing.
fn untimed(err: &[u8]) -> String {
    without_timings(&String::from_utf8_lossy(err))
}

/// Every command of [`WRITERS`] over `input`, in pieces and streamed, at `-j2` and `-j3`, into
/// the same folder (outputs are named in standard error).
fn every_writer_agrees(make: impl Fn() -> Command, input: &Path, dir: &Path) {
    let input = input.to_str().unwrap();
    // `gen` reads nothing; `show` (which stops at its match, here in the middle of the input)
    // and `convert` write too.
    let others: &[&[&str]] = &[
        &["show", MIDDLE_ID, "{in}"],
        &["convert", "--to", "proto", "{in}", "-o", "{out}/x.pb"],
    ];
    let commands = WRITERS.iter().chain(others).filter(|a| a[0] != "gen");
    for (n, args) in commands.enumerate() {
        let out = dir.join(format!("out{n}"));
        fs::create_dir_all(&out).unwrap();
        // Pieces are read with two workers or more (with one, both runs are the single reader).
        for jobs in ["2", "3"] {
            let mut full = vec!["-j".to_owned(), jobs.to_owned()];
            full.extend(fill(args, input, out.to_str().unwrap()));
            let mut runs = Vec::new();
            for stream in [false, true] {
                let output = run_on(make(), &full, stream);
                // Each run's own: an output the other wrote must not be taken for this one's.
                let files: Vec<(String, Option<Vec<u8>>)> = outputs_of(args)
                    .into_iter()
                    .map(|name| {
                        let bytes = fs::read(out.join(&name)).ok();
                        let _ = fs::remove_file(out.join(&name));
                        (name, bytes)
                    })
                    .collect();
                runs.push((output, files));
            }
            let [(pieces, got), (streamed, want)] = &runs[..] else {
                unreachable!()
            };
            let what = format!("{args:?} -j{jobs} over {input}");
            assert!(
                matches!(streamed.status.code(), Some(0 | 1)),
                "{what}: {}",
                stderr(streamed)
            );
            assert_eq!(
                pieces.status.code(),
                streamed.status.code(),
                "{what}: {}",
                stderr(pieces)
            );
            assert!(
                pieces.stdout == streamed.stdout,
                "{what}: standard output differs"
            );
            assert_eq!(untimed(&pieces.stderr), untimed(&streamed.stderr), "{what}");
            for ((name, got), (_, want)) in got.iter().zip(want) {
                let same = match (got, want) {
                    (Some(got), Some(want)) => {
                        comparable(name, got, "", "") == comparable(name, want, "", "")
                    }
                    (got, want) => got.is_none() && want.is_none(),
                };
                assert!(same, "{what}: {name} differs");
            }
        }
    }
}

/// The ID of line 600 of [`lines`], for `show`.
const MIDDLE_ID: &str = "01HWT2Q4WA3SSTP8QTWEV0DQJF";

/// Lines with rejects among them, a BOM, a blank line and no LF at the end: every part of
/// framing that crosses a piece's edge.
fn lines() -> Vec<u8> {
    let mut data = b"\xEF\xBB\xBF".to_vec();
    data.extend(gen_lines(1200, 11, None, 0.1));
    data.extend_from_slice(b"\r\n \n");
    data.extend(gen_lines(3, 12, Some(1), 0.0).trim_ascii_end());
    data
}

/// Cuts every `step` bytes, most of them inside a line.
fn cuts(len: usize, step: usize) -> Vec<usize> {
    (1..len / step + 1).map(|i| i * step + i % 7).collect()
}

#[test]
fn every_command_reads_files_in_pieces_as_the_single_reader_does() {
    let dir = scratch("frames-every-command");
    let data = lines();
    let plain = dir.join("in.jsonl");
    fs::write(&plain, &data).unwrap();
    let mut inputs = vec![plain];
    for (kind, name) in [
        (Frames::Table, "seekable.jsonl.zst"),
        (Frames::Marked, "marked.jsonl.zst"),
        (Frames::Concatenated, "concatenated.jsonl.zst"),
    ] {
        let path = dir.join(name);
        write_frames(&path, &data, &cuts(data.len(), 150_000), kind);
        inputs.push(path);
    }
    if let Some(pzstd) = tool_or_skip(&["pzstd"], "pzstd's files read frame by frame") {
        let path = dir.join("pzstd.jsonl.zst");
        let status = Command::new(pzstd)
            .args(["-q", "-p", "2", "-1"])
            .arg(&inputs[0])
            .arg("-o")
            .arg(&path)
            .status()
            .unwrap();
        assert!(status.success());
        inputs.push(path);
    }
    for input in &inputs {
        every_writer_agrees(bin, input, &dir);
    }
}

/// The seek table's entry `i` of a seekable file: where its compressed size is (the
/// decompressed size follows).
fn entry_at(bytes: &[u8], i: usize) -> usize {
    let footer = bytes.len() - 9;
    let frames = u32::from_le_bytes(bytes[footer..footer + 4].try_into().unwrap()) as usize;
    let entry = if bytes[footer + 4] & 0x80 != 0 { 12 } else { 8 };
    bytes.len() - (8 + frames * entry + 9) + 8 + i * entry
}

/// Adds `delta` to the 4-byte little-endian number at `at`.
fn add_at(bytes: &mut [u8], at: usize, delta: i64) {
    let n = i64::from(u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())) + delta;
    bytes[at..at + 4].copy_from_slice(&(n as u32).to_le_bytes());
}

/// `filter` (no predicate: every valid line) over `path`: exit 2 and an error that names what
/// is damaged and its byte offset, and on standard output only lines the input holds, in order.
fn damaged_is_exit_2(path: &Path, data: &[u8], says: &str) {
    let valid: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    // Pieces are read with two workers or more; the single reader skips a seek table, as
    // every zstd decoder does.
    for jobs in ["2", "3"] {
        let args = ["-j", jobs, "filter", path.to_str().unwrap()].map(str::to_owned);
        let out = run_on(bin(), &args, false);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{path:?}: {err}");
        assert!(
            err.contains(says) && err.contains("offset"),
            "{path:?}: {err}"
        );
        let mut rest = valid.iter();
        for line in out.stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            assert!(
                rest.any(|l| l.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(l) == line),
                "{path:?}: a line that is not the input's, or out of order"
            );
        }
    }
}

#[test]
fn damaged_seek_tables_and_frames_are_exit_2_naming_the_offset() {
    let dir = scratch("frames-damaged");
    let data = lines();
    let seekable = dir.join("in.jsonl.zst");
    write_frames(&seekable, &data, &cuts(data.len(), 150_000), Frames::Table);
    let good = fs::read(&seekable).unwrap();

    // A footer that names more frames than the file could hold.
    let mut bytes = good.clone();
    let footer = bytes.len() - 9;
    bytes[footer..footer + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let path = dir.join("footer.jsonl.zst");
    fs::write(&path, &bytes).unwrap();
    damaged_is_exit_2(&path, &data, "damaged zstd seek table at byte offset");

    // The first frame said to end 5 bytes later, the last to start there: the first group is
    // no longer whole frames.
    let mut bytes = good.clone();
    let frames = u32::from_le_bytes(bytes[bytes.len() - 9..bytes.len() - 5].try_into().unwrap());
    let (first, last) = (entry_at(&bytes, 0), entry_at(&bytes, frames as usize - 1));
    add_at(&mut bytes, first, 5);
    add_at(&mut bytes, last, -5);
    let path = dir.join("edges.jsonl.zst");
    fs::write(&path, &bytes).unwrap();
    damaged_is_exit_2(
        &path,
        &data,
        "damaged zstd frame in the stored bytes from offset 0",
    );

    // A frame said to decode to 5 bytes more than it does.
    let mut bytes = good.clone();
    let second = entry_at(&bytes, 1);
    add_at(&mut bytes, second + 4, 5);
    let path = dir.join("sizes.jsonl.zst");
    fs::write(&path, &bytes).unwrap();
    damaged_is_exit_2(&path, &data, "where the seek table says");

    // A frame's bytes damaged: its checksum, or its blocks, fail.
    for (name, file) in [
        ("frame.jsonl.zst", &good),
        ("walked.jsonl.zst", &{
            let walked = dir.join("walked-src.jsonl.zst");
            write_frames(
                &walked,
                &data,
                &cuts(data.len(), 150_000),
                Frames::Concatenated,
            );
            fs::read(&walked).unwrap()
        }),
    ] {
        let mut bytes = file.clone();
        let at = bytes.len() / 2;
        for b in &mut bytes[at..at + 16] {
            *b ^= 0x5A;
        }
        let path = dir.join(name);
        fs::write(&path, &bytes).unwrap();
        damaged_is_exit_2(&path, &data, "zstd");
    }

    // Cut short: the table is gone, and the last frame is not whole.
    let path = dir.join("truncated.jsonl.zst");
    fs::write(&path, &good[..good.len() * 2 / 3]).unwrap();
    damaged_is_exit_2(&path, &data, "zstd");
}

#[cfg(feature = "s3")]
#[test]
fn s3_objects_with_a_seek_table_are_read_by_ranges_as_the_single_reader_does() {
    use crate::common::s3::server;
    let Some(s3) = server() else { return };
    let bucket = s3.bucket("frames");
    let dir = scratch("frames-s3");
    let data = lines();
    let path = dir.join("in.jsonl.zst");
    write_frames(&path, &data, &cuts(data.len(), 150_000), Frames::Table);
    let bytes = fs::read(&path).unwrap();
    s3.put(&bucket, "in.jsonl.zst", &bytes);
    let url = format!("s3://{bucket}/in.jsonl.zst");
    every_writer_agrees(|| s3.bin(), Path::new(&url), &dir);

    // A damaged table is as much an error from object storage.
    let mut damaged = bytes.clone();
    let footer = damaged.len() - 9;
    damaged[footer..footer + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    s3.put(&bucket, "damaged.jsonl.zst", &damaged);
    let args = ["validate", &format!("s3://{bucket}/damaged.jsonl.zst")].map(|s| s.to_owned());
    let out = run_on(s3.bin(), &args, false);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("damaged zstd seek table at byte offset"),
        "{}",
        stderr(&out)
    );
}

/// `validate -j2` over `path`, in pieces and streamed: the same status, standard output and
/// standard error (without the timing).
fn validate_agrees(path: &Path) -> Output {
    let args = ["-j", "2", "validate", path.to_str().unwrap()].map(str::to_owned);
    let (pieces, streamed) = (run_on(bin(), &args, false), run_on(bin(), &args, true));
    assert_eq!(
        pieces.status.code(),
        streamed.status.code(),
        "{path:?}: {}",
        stderr(&pieces)
    );
    assert!(pieces.stdout == streamed.stdout, "{path:?}");
    // Where the decoder was, each says in its own words after the cause.
    let said = |out: &Output| {
        let text = untimed(&out.stderr);
        text.split(" (the ").next().unwrap_or_default().to_owned()
    };
    assert_eq!(said(&pieces), said(&streamed), "{path:?}");
    pieces
}

#[test]
fn trailing_bytes_and_runs_of_skippable_frames_read_as_the_single_reader_reads_them() {
    let dir = scratch("frames-trailing");
    let data = lines();
    let frames = dir.join("frames.jsonl.zst");
    write_frames(
        &frames,
        &data,
        &cuts(data.len(), 150_000),
        Frames::Concatenated,
    );
    let good = fs::read(&frames).unwrap();
    for (name, tail) in [
        ("garbage.jsonl.zst", &b"trailing garbage"[..]),
        ("zeros.jsonl.zst", &[0u8; 100][..]),
    ] {
        let path = dir.join(name);
        fs::write(&path, [&good[..], tail].concat()).unwrap();
        let out = validate_agrees(&path);
        assert_eq!(out.status.code(), Some(2), "{name}: {}", stderr(&out));
    }
    // 100,000 empty skippable frames between two frames of data, and at the end.
    let skippable: Vec<u8> = (0..100_000)
        .flat_map(|_| [0x5E, 0x2A, 0x4D, 0x18, 0, 0, 0, 0])
        .collect();
    let half = good.len() / 2;
    let at = (0..good.len() - 4)
        .filter(|&i| good[i..i + 4] == [0x28, 0xB5, 0x2F, 0xFD])
        .find(|&i| i >= half)
        .unwrap();
    let path = dir.join("skippable.jsonl.zst");
    fs::write(
        &path,
        [&good[..at], &skippable, &good[at..], &skippable].concat(),
    )
    .unwrap();
    let out = validate_agrees(&path);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

#[test]
fn rdq_envelope_reader_is_pieces_or_stream_and_anything_else_is_named() {
    let dir = scratch("frames-reader-variable");
    let input = dir.join("in.jsonl");
    fs::write(&input, lines()).unwrap();
    let input = input.to_str().unwrap();
    let reference = output(plain(), &["-j", "2", "validate", "-q", input]);
    assert_eq!(reference.status.code(), Some(1), "{}", stderr(&reference));
    // Set but empty is unset.
    for good in ["", "pieces", "stream"] {
        let out = with_env(
            &[("RDQ_ENVELOPE_READER", good)],
            &["-j", "2", "validate", "-q", input],
        );
        assert_eq!(out.status.code(), Some(1), "{good:?}: {}", stderr(&out));
        assert!(out.stdout == reference.stdout, "{good:?}");
    }
    // Checked before any input is opened, under -j too; a command that reads no envelopes
    // never reads it.
    for bad in ["junk", "Stream", " stream", "0"] {
        let args = ["-j", "2", "validate", "-q", "/nonexistent/input.jsonl"];
        let out = with_env(&[("RDQ_ENVELOPE_READER", bad)], &args);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        let err = stderr(&out);
        assert!(
            err.contains("RDQ_ENVELOPE_READER") && err.contains(bad),
            "{err}"
        );
        assert!(!err.contains("nonexistent"), "{err}");
    }
    let gen = with_env(&[("RDQ_ENVELOPE_READER", "junk")], &["gen", "--count", "1"]);
    assert_eq!(gen.status.code(), Some(0), "{}", stderr(&gen));
}

#[test]
fn a_frame_larger_than_a_group_and_the_rest_of_the_file_are_read_as_a_stream() {
    let dir = scratch("frames-large");
    // Over 5 MiB of lines: at -j 256 a group holds 4 MiB, so the third frame, all the rest,
    // is decoded by the reader thread into the chunks, after two frames the workers decode.
    let mut data = Vec::new();
    while data.len() < 6 << 20 {
        data.extend(lines());
        data.push(b'\n');
    }
    let path = dir.join("large.jsonl.zst");
    write_frames(&path, &data, &[100_001, 200_003], Frames::Concatenated);
    let args = ["-j", "256", "validate", path.to_str().unwrap()].map(str::to_owned);
    let (pieces, streamed) = (run_on(bin(), &args, false), run_on(bin(), &args, true));
    assert_eq!(pieces.status.code(), Some(1), "{}", stderr(&pieces));
    assert_eq!(pieces.status.code(), streamed.status.code());
    assert!(pieces.stdout == streamed.stdout);
    assert_eq!(untimed(&pieces.stderr), untimed(&streamed.stderr));
}
