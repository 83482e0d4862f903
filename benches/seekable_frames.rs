//! What the zstd seekable format of `.zst` outputs costs against one zstd frame, by frame size
//! (docs/performance.md#seekable-zstd-outputs): the compressed size and the compression speed on
//! one thread of the frames this tool writes (zeekstd's encoder at level 3, a content checksum
//! per frame, a frame ended every SIZE bytes, 8 bytes of seek table a frame and 17 more), beside
//! one frame at the same level as the tool wrote before (zstd's streaming encoder, single
//! threaded, and on one worker thread, its `-j1`).
//!
//! ```text
//! cargo run --release --example seekable_frames -- FILE [RUNS]
//! ```
//!
//! The file is read into memory first and only compression is timed (the best of RUNS, default
//! 3). Prints a Markdown table.

use std::io::Write;
use std::time::Instant;

use zeekstd::{EncodeOptions, FrameSizePolicy};

const LEVEL: i32 = 3;

/// One zstd frame of `input`, on `workers` threads of zstd's own (0: on this thread).
fn one_frame(input: &[u8], workers: u32) -> usize {
    let mut encoder = zstd::stream::raw::Encoder::new(LEVEL).expect("a zstd encoder");
    if workers > 0 {
        encoder
            .set_parameter(zstd::zstd_safe::CParameter::NbWorkers(workers))
            .expect("zstd with workers");
    }
    let mut writer = zstd::stream::zio::Writer::new(Vec::with_capacity(input.len() / 4), encoder);
    for block in input.chunks(256 << 10) {
        writer.write_all(block).expect("in memory");
    }
    writer.finish().expect("in memory");
    writer.into_inner().0.len()
}

/// The seekable format's bytes for `input` in frames of `frame` bytes.
fn seekable(input: &[u8], frame: usize) -> usize {
    let mut encoder = EncodeOptions::new()
        .compression_level(LEVEL)
        .checksum_flag(true)
        .frame_size_policy(FrameSizePolicy::Uncompressed(1 << 30))
        .into_raw_encoder()
        .expect("a zeekstd encoder");
    let mut out = vec![0u8; zstd::zstd_safe::compress_bound(frame) + 64];
    let (mut total, mut frames) = (0, 0);
    for piece in input.chunks(frame) {
        let (mut read, mut written) = (0, 0);
        while read < piece.len() {
            let progress = encoder
                .compress(&piece[read..], &mut out[written..])
                .expect("room for the bound");
            read += progress.in_progress();
            written += progress.out_progress();
        }
        loop {
            let progress = encoder.end_frame(&mut out[written..]).expect("room");
            written += progress.out_progress();
            if progress.data_left() == 0 {
                break;
            }
        }
        encoder.reset_seek_table();
        total += written;
        frames += 1;
    }
    total + 8 * frames + 17
}

/// The best time of `runs` calls of `f`, and what it returned.
fn best(runs: usize, mut f: impl FnMut() -> usize) -> (usize, f64) {
    let (mut size, mut seconds) = (0, f64::MAX);
    for _ in 0..runs {
        let started = Instant::now();
        size = f();
        seconds = seconds.min(started.elapsed().as_secs_f64());
    }
    (size, seconds)
}

fn main() {
    // `cargo bench` would pass `--bench`: only the other arguments count.
    let mut args = std::env::args().skip(1).filter(|a| !a.starts_with("--"));
    let Some(path) = args.next() else {
        eprintln!("usage: seekable_frames FILE [RUNS]");
        std::process::exit(2);
    };
    let runs = args.next().map_or(3, |r| r.parse().unwrap_or(3)).max(1);
    let input = match std::fs::read(&path) {
        Ok(input) => input,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    };
    let mb = input.len() as f64 / 1e6;
    println!("{path}: {mb:.1} MB, level {LEVEL}, the best of {runs} runs\n");
    println!("| encoder | bytes | against one frame on 1 worker | MB/s |");
    println!("|---|---:|---:|---:|");
    let (today, seconds) = best(runs, || one_frame(&input, 1));
    let against = |bytes: usize| (bytes as f64 / today as f64 - 1.0) * 100.0;
    let (here, here_seconds) = best(runs, || one_frame(&input, 0));
    println!(
        "| one frame, on this thread | {here} | {:+.2}% | {:.0} |",
        against(here),
        mb / here_seconds
    );
    println!(
        "| one frame, on 1 worker (before: `-j1`) | {today} | 0 | {:.0} |",
        mb / seconds
    );
    for kib in [256usize, 1024, 2048, 4096, 8192] {
        let (bytes, seconds) = best(runs, || seekable(&input, kib << 10));
        let size = match kib {
            kib if kib < 1024 => format!("{kib} KiB"),
            kib => format!("{} MiB", kib / 1024),
        };
        println!(
            "| seekable, {size} frames, on this thread | {bytes} | {:+.2}% | {:.0} |",
            against(bytes),
            mb / seconds
        );
    }
}
