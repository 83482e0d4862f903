//! Inputs the workers read in pieces (plain files in ranges, zstd files frame group by frame
//! group) give every line exactly as the single reader thread gives it: the same numbers,
//! offsets, lengths, kinds and bytes, and the same books, whatever the pieces' size, the
//! frames' edges and the number of workers.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use rdq_envelope::pipeline::{
    self, Action, ChunkOutput, LineOperation, Outputs, PipelineOptions, Source, SourceLine, Summary,
};

use crate::common::scratch;
use crate::reader_splits::{long_case, short_stream};

/// Writes every line as the pipeline gave it, blank ones aside (the pipeline counts those).
struct Record;

impl LineOperation for Record {
    type Worker = ();
    type Tally = ();
    type Total = ();
    fn worker(&self) {}
    fn total(&self) {}
    fn apply(&self, _: &mut (), line: SourceLine<'_>, out: &mut ChunkOutput) -> Action {
        let l = line.line;
        let record = format!(
            "{} {} {} {:?} {:?} {}\n",
            line.source,
            l.number,
            l.offset,
            l.len,
            l.kind,
            l.content.escape_ascii()
        );
        out.buffer(0).extend_from_slice(record.as_bytes());
        Action::Emit
    }
}

/// What a run gives: its output and books, or its error.
fn run(
    source: Source,
    cap: usize,
    chunk_bytes: usize,
    jobs: usize,
) -> Result<(Vec<u8>, Summary), String> {
    let mut options = PipelineOptions::default();
    (options.max_line_bytes, options.chunk_bytes, options.jobs) = (cap, chunk_bytes, jobs);
    let mut out = Vec::new();
    let outputs = Outputs::none().to(0, &mut out);
    match pipeline::run(vec![source], &Record, options, outputs, None) {
        Ok((books, ())) => Ok((out, books)),
        Err(e) => Err(e.to_string()),
    }
}

/// The single reader's run over the stream, under the file's name.
fn streamed(
    path: &Path,
    data: &[u8],
    cap: usize,
    chunk_bytes: usize,
) -> Result<(Vec<u8>, Summary), String> {
    let name = path.display().to_string();
    let reader = Box::new(std::io::Cursor::new(data.to_vec()));
    run(Source::Reader { name, reader }, cap, chunk_bytes, 1)
}

/// Compares the run over `path` in pieces with the single reader's over `data`.
fn same_as_streamed(path: &Path, data: &[u8], cap: usize, chunk_bytes: usize, jobs: usize) {
    let expected = streamed(path, data, cap, chunk_bytes).expect("the stream reads");
    let (out, mut books) =
        run(Source::Path(path.into()), cap, chunk_bytes, jobs).expect("the pieces read");
    books.seconds = expected.1.seconds;
    let (got, want) = (
        String::from_utf8_lossy(&out),
        String::from_utf8_lossy(&expected.0),
    );
    if let Some((g, w)) = got.lines().zip(want.lines()).find(|(g, w)| g != w) {
        let short = |s: &str| s.chars().take(300).collect::<String>();
        panic!(
            "chunk {chunk_bytes}, -j{jobs}: got {}, want {}",
            short(g),
            short(w)
        );
    }
    assert_eq!(
        got.lines().count(),
        want.lines().count(),
        "chunk {chunk_bytes}, -j{jobs}"
    );
    assert_eq!(books, expected.1);
}

/// `data` cut into zstd frames at `cuts`, written to `path`: concatenated, with `pzstd`'s size
/// marks before each frame, or with a seek table at the end.
pub(crate) fn write_frames(path: &Path, data: &[u8], cuts: &[usize], kind: Frames) {
    let mut edges: Vec<usize> = cuts.iter().map(|&c| c % (data.len() + 1)).collect();
    edges.extend([0, data.len()]);
    edges.sort_unstable();
    edges.dedup();
    let mut file = Vec::new();
    let mut table = zeekstd::SeekTable::new();
    for part in edges.windows(2).map(|w| &data[w[0]..w[1]]) {
        // With its checksum, as the zstd command and this tool write frames: damage shows.
        let mut compressor = zstd::bulk::Compressor::new(1).unwrap();
        compressor
            .set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(true))
            .unwrap();
        let frame = compressor.compress(part).unwrap();
        if kind == Frames::Marked {
            file.extend_from_slice(&[0x50, 0x2A, 0x4D, 0x18, 4, 0, 0, 0]);
            file.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        }
        table
            .log_frame(frame.len() as u32, part.len() as u32)
            .unwrap();
        file.extend_from_slice(&frame);
    }
    if kind == Frames::Table {
        let mut serializer = table.into_serializer();
        let mut bytes = vec![0u8; serializer.encoded_len()];
        let n = serializer.write_into(&mut bytes);
        file.extend_from_slice(&bytes[..n]);
    }
    std::fs::write(path, file).unwrap();
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Frames {
    Concatenated,
    Marked,
    Table,
}

fn case_file(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}

fn frames_kind() -> impl Strategy<Value = Frames> {
    prop::sample::select(vec![Frames::Concatenated, Frames::Marked, Frames::Table])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn a_plain_file_in_pieces_frames_as_the_stream(data in short_stream(), chunk in 1usize..24, jobs in 2usize..5) {
        let dir = scratch("pieces-plain");
        let path = case_file(&dir, "in.jsonl");
        std::fs::write(&path, &data).unwrap();
        // An empty file is read as a stream: nothing to compare but that it reads.
        same_as_streamed(&path, &data, 4, chunk, jobs);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn zstd_frames_in_groups_frame_as_the_stream(
        data in short_stream(),
        cuts in prop::collection::vec(any::<usize>(), 1..6),
        kind in frames_kind(),
        chunk in 1usize..24,
        jobs in 2usize..5,
    ) {
        let dir = scratch("pieces-frames");
        let path = case_file(&dir, "in.jsonl.zst");
        write_frames(&path, &data, &cuts, kind);
        same_as_streamed(&path, &data, 4, chunk, jobs);
        std::fs::remove_dir_all(dir).unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn long_lines_across_pieces_keep_their_prefix((data, cap) in long_case(), chunk in prop::sample::select(vec![1usize, 7, 4096, 65_536]), jobs in 2usize..4) {
        let dir = scratch("pieces-long");
        let path = case_file(&dir, "in.jsonl");
        std::fs::write(&path, &data).unwrap();
        same_as_streamed(&path, &data, cap, chunk, jobs);
        let zst = case_file(&dir, "in.jsonl.zst");
        write_frames(&zst, &data, &[data.len() / 3, data.len() / 2], Frames::Table);
        same_as_streamed(&zst, &data, cap, chunk, jobs);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
