//! The progress bar: drawn on standard error from the pipeline's atomic counters by a thread of
//! its own, a few times a second, and only once the run has lasted more than a moment. Nothing
//! on the data path ever touches it.

use std::io::IsTerminal;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use indicatif::{ProgressDrawTarget, ProgressStyle};

use rdq_envelope::pipeline::Progress;

/// Runs shorter than this never show a bar.
const QUIET_START: Duration = Duration::from_millis(500);
const TICK: Duration = Duration::from_millis(200);

/// A drawing thread; [`finish`](Self::finish) clears the bar and ends it.
pub struct ProgressBar {
    stop: mpsc::Sender<()>,
    thread: JoinHandle<()>,
}

impl ProgressBar {
    /// Starts drawing when standard error is a terminal, or when `forced` (`--progress`).
    /// `total` is the inputs' stored size when known: then the bar shows percent and ETA.
    pub fn start(progress: Arc<Progress>, total: Option<u64>, forced: bool) -> Option<Self> {
        if !forced && !std::io::stderr().is_terminal() {
            return None;
        }
        let (stop, stopped) = mpsc::channel();
        let thread = thread::Builder::new()
            .name("rdq-progress".into())
            .spawn(move || draw(&progress, total, &stopped))
            .ok()?;
        Some(ProgressBar { stop, thread })
    }

    /// Clears the bar and waits for the drawing thread.
    pub fn finish(self) {
        drop(self.stop);
        let _ = self.thread.join();
    }
}

fn draw(progress: &Progress, total: Option<u64>, stopped: &mpsc::Receiver<()>) {
    let started = Instant::now();
    match stopped.recv_timeout(QUIET_START) {
        Err(RecvTimeoutError::Timeout) => {}
        _ => return,
    }
    let template = if total.is_some() {
        "{bar:30} {percent:>3}% {msg} ETA {eta}"
    } else {
        "{spinner} {msg}"
    };
    // A TermLike target draws whether or not standard error is a terminal (`--progress`);
    // indicatif's own stderr target would hide itself on a pipe.
    let target = ProgressDrawTarget::term_like(Box::new(console::Term::stderr()));
    let bar = indicatif::ProgressBar::with_draw_target(total, target);
    bar.set_style(
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    loop {
        let seconds = started.elapsed().as_secs_f64().max(1e-9);
        let (bytes, lines) = (progress.bytes(), progress.lines());
        bar.set_position(if total.is_some() {
            progress.raw_bytes()
        } else {
            bytes
        });
        bar.set_message(format!(
            "{:.1} MB, {:.0} MB/s, {} lines, {:.0} lines/s",
            bytes as f64 / 1e6,
            bytes as f64 / 1e6 / seconds,
            lines,
            lines as f64 / seconds
        ));
        match stopped.recv_timeout(TICK) {
            Err(RecvTimeoutError::Timeout) => {}
            _ => break,
        }
    }
    bar.finish_and_clear();
}
