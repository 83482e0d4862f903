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
use rdq_envelope::report::thousands;

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
    // The ETA is the bar's own: indicatif's estimate reads 0s while a run is under way when
    // the position moves in large steps, and the position is what is done, not what was read.
    let template = if total.is_some() {
        "{bar:30} {percent:>3}% {msg}"
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
        let (bytes, lines) = (progress.done_bytes(), progress.lines());
        let rates = format!(
            "{:.1} MB, {:.0} MB/s, {} lines, {} lines/s",
            bytes as f64 / 1e6,
            bytes as f64 / 1e6 / seconds,
            thousands(lines),
            thousands((lines as f64 / seconds) as u64)
        );
        // The ETA first: a narrow terminal cuts the end of the line.
        match total {
            Some(total) => {
                let done = progress.raw_bytes_done();
                bar.set_position(done);
                bar.set_message(format!("ETA {}  {rates}", eta(done, total, seconds)));
            }
            None => {
                bar.set_position(bytes);
                bar.set_message(rates);
            }
        }
        match stopped.recv_timeout(TICK) {
            Err(RecvTimeoutError::Timeout) => {}
            _ => break,
        }
    }
    bar.finish_and_clear();
}

/// The time left at the average rate so far, `1m05s` or `12s` (`?` before anything is done):
/// `done` of `total` stored bytes in `seconds`. An average, not a recent rate, so the estimate
/// does not swing with each chunk, and `0s` exactly when everything is done.
fn eta(done: u64, total: u64, seconds: f64) -> String {
    if done == 0 {
        return "?".to_owned();
    }
    let left = total.saturating_sub(done) as f64 * seconds / done as f64;
    let left = left.ceil() as u64;
    match left {
        0..=59 => format!("{left}s"),
        60..=3599 => format!("{}m{:02}s", left / 60, left % 60),
        _ => format!("{}h{:02}m", left / 3600, left % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::eta;

    #[test]
    fn eta_is_the_average_rate_over_what_is_left() {
        assert_eq!(eta(0, 100, 5.0), "?");
        assert_eq!(eta(50, 100, 5.0), "5s");
        assert_eq!(eta(10, 100, 10.0), "1m30s");
        assert_eq!(eta(1, 10_000, 1.0), "2h46m");
        assert_eq!(eta(100, 100, 7.0), "0s");
        // More done than the stored size said (a file that grew while read): nothing left.
        assert_eq!(eta(120, 100, 7.0), "0s");
    }
}
