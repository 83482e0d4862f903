//! The baseline of `benches/throughput.sh`: simd-json's bare tape parse of every line of a
//! file, with nothing else. It is what a worker of the pipeline does before any of our own
//! work (copy the line beside padding, fill a reused tape), so `validate`'s throughput over
//! this one's, at the same thread count, is what reading, checking and writing cost on top.
//!
//! ```text
//! cargo run --release --example bare_parse -- FILE [THREADS]
//! ```
//!
//! The file is read into memory first and only the parse is timed, so the baseline is the
//! parser's own speed: a stricter bar than a run that also reads. Prints one line:
//! `bare_parse threads=N bytes=B lines=L seconds=S mb_per_s=M`.

use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(path), threads) = (args.next(), args.next()) else {
        eprintln!("usage: bare_parse FILE [THREADS]");
        std::process::exit(2);
    };
    let threads: usize = threads.map_or(1, |t| t.parse().expect("THREADS is a count"));
    let data = std::fs::read(&path).unwrap_or_else(|e| {
        eprintln!("bare_parse: {path}: {e}");
        std::process::exit(2);
    });

    let started = Instant::now();
    let parts = split_at_lines(&data, threads.max(1));
    let (lines, refused) = std::thread::scope(|scope| {
        let workers: Vec<_> = parts
            .iter()
            .map(|part| scope.spawn(move || parse_lines(part)))
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("a parsing thread"))
            .fold((0, 0), |(l, r), (wl, wr)| (l + wl, r + wr))
    });
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "bare_parse threads={threads} bytes={} lines={lines} refused={refused} seconds={seconds:.4} mb_per_s={:.1}",
        data.len(),
        data.len() as f64 / 1e6 / seconds
    );
}

/// `threads` slices of `data`, each ending at a line end.
fn split_at_lines(data: &[u8], threads: usize) -> Vec<&[u8]> {
    let mut parts = Vec::with_capacity(threads);
    let mut start = 0;
    for i in 1..=threads {
        let mut end = data.len() * i / threads;
        if i < threads {
            end = memchr::memchr(b'\n', &data[end.max(start)..])
                .map_or(data.len(), |at| end.max(start) + at + 1);
        }
        parts.push(&data[start..end.max(start)]);
        start = end.max(start);
    }
    parts
}

/// Parses every line with reused buffers; returns (lines, lines simd-json refused).
fn parse_lines(part: &[u8]) -> (u64, u64) {
    let mut input = Vec::new();
    let mut buffers = simd_json::Buffers::with_max_depth(4096, 128);
    let mut tape = simd_json::Tape(Vec::new());
    let (mut lines, mut refused) = (0, 0);
    let mut start = 0;
    // memchr, as the pipeline's reader does: a byte-by-byte split would slow the baseline.
    for end in memchr::memchr_iter(b'\n', part).chain(std::iter::once(part.len())) {
        let line = &part[start..end];
        start = end + 1;
        if line.is_empty() {
            continue;
        }
        lines += 1;
        input.clear();
        input.extend_from_slice(line);
        input.resize(line.len() + simd_json::INPUT_PADDING, 0);
        let mut t = std::mem::replace(&mut tape, simd_json::Tape(Vec::new())).reset();
        if simd_json::fill_tape_padded(&mut input, line.len(), &mut buffers, &mut t).is_err() {
            refused += 1;
        }
        tape = t.reset();
    }
    (lines, refused)
}
