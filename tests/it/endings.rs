//! Every way a run ends removes what it began (docs/guarantees.md#every-ending-cleans-up): the
//! matrix of each fatal ending × each resource a run holds, asserting afterwards that no
//! temporary file, no multipart upload and no lock is left, and that every output is as it was.
//!
//! The endings: SIGTERM, SIGINT and SIGHUP; `--where-timeout` and `--where-max-memory` (the
//! watchdog); a stack overflow in `--where`; an error in the reader thread (a zstd stream that
//! breaks off into garbage); a failed commit; a panic (the test builds' hook). The resources:
//! the temporary files of local outputs, the multipart uploads of `s3://` outputs, the lock
//! file of `batch` into a folder and the lock object of `batch` into a prefix; and, for the
//! signals, an upload or a lock object whose creation the store is still answering (the unruly
//! store holds its answer). A run's outputs
//! are opened before any line is read, so each run is held at its second line (the marked
//! one) until the test has seen the resource, and then ended there.
//!
//! Before this matrix, only signals aborted uploads and removed the `batch` lock: the
//! watchdog and a stack overflow left a 126 MB upload open and a lock that refused every rerun
//! for a minute.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{self, scratch};
use crate::hostile::outputs::{names, temporaries};

/// A valid line.
const VALID: &str = include_str!("../data/dlq_line.json");

/// The queue of the line each run is ended at.
const MARK: &str = "marked.here";

fn marked() -> String {
    VALID.replacen(
        "\"queue\":\"billing.invoices\"",
        &format!("\"queue\":\"{MARK}\""),
        1,
    )
}

/// How a run is ended.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ending {
    Signal(&'static str, i32),
    WhereTimeout,
    WhereMaxMemory,
    StackOverflow,
    ReaderError,
    FailedCommit,
    Panic,
}

const ENDINGS: [Ending; 9] = [
    Ending::Signal("TERM", 143),
    Ending::Signal("INT", 130),
    Ending::Signal("HUP", 129),
    Ending::WhereTimeout,
    Ending::WhereMaxMemory,
    Ending::StackOverflow,
    Ending::ReaderError,
    Ending::FailedCommit,
    Ending::Panic,
];

impl Ending {
    /// The `--where` expression and its limits: what the marked line does.
    fn where_args(self) -> Vec<String> {
        let on_mark = |then: &str| format!("if .queue == \"{MARK}\" then {then} else true end");
        let (expr, limits): (String, &[&str]) = match self {
            // Held on the marked line until the signal comes.
            Ending::Signal(..) => (on_mark("last(range(1e15)) > 0"), &["--where-timeout", "0"]),
            Ending::WhereTimeout => (
                on_mark("last(range(1e15)) > 0"),
                &["--where-timeout", "0.5"],
            ),
            Ending::WhereMaxMemory => (
                on_mark("[.queue | repeat(.)] | length > 0"),
                &["--where-max-memory", "200"],
            ),
            Ending::StackOverflow => (on_mark("(def f: 1 + f; f) > 0"), &[]),
            Ending::ReaderError | Ending::FailedCommit | Ending::Panic => ("true".into(), &[]),
        };
        let mut args = vec!["--where".to_owned(), expr];
        args.extend(limits.iter().map(|s| s.to_string()));
        args
    }

    fn env(self, command: &mut Command) {
        if self == Ending::Panic {
            command.env("RDQ_ENVELOPE_TEST_PANIC_ON", MARK);
        }
    }

    /// What the run's input holds after its first line: the marked line, or for a reader
    /// error a zstd frame that breaks off into garbage.
    fn rest(self) -> Vec<u8> {
        match self {
            Ending::ReaderError => {
                let mut frame = zstd(format!("{}\n", marked()).as_bytes());
                let keep = frame.len() / 2;
                frame.truncate(keep);
                frame.extend_from_slice(&[0xff; 64]);
                frame
            }
            _ => zstd(format!("{}\n", marked()).as_bytes()),
        }
    }

    /// The exit status the ending gives.
    fn status(self) -> i32 {
        match self {
            Ending::Signal(_, status) => status,
            _ => 2,
        }
    }
}

fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::encode_all(bytes, 3).unwrap()
}

/// Waits up to 60 s for `seen`.
fn wait_for(what: &str, mut seen: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !seen() {
        assert!(Instant::now() < deadline, "never saw {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(child: &Child, name: &str) {
    let sent = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}

/// The status, waiting at most 60 s (a run that does not end is a failure, and is killed).
fn status_of(mut child: Child, what: &str) -> (i32, String) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            if let Some(mut stderr) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut stderr, &mut err);
            }
            return (status.code().unwrap_or(-1), err);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{what}: the run did not end");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A single run (`filter`) reading a zstd stream on standard input: its first line, then,
/// once the test has seen the resource, the rest the ending asks for.
struct Piped {
    child: Child,
    stdin: Option<std::process::ChildStdin>,
}

impl Piped {
    fn start(mut command: Command, ending: Ending, outputs: &[&str]) -> Piped {
        command.arg("filter").arg("-q").args(ending.where_args());
        for (flag, out) in ["-o", "--rejects"].iter().zip(outputs) {
            command.args([flag, out]);
        }
        ending.env(&mut command);
        let mut child = command
            .arg("-")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(&zstd(format!("{VALID}\n").as_bytes()))
            .unwrap();
        Piped {
            child,
            stdin: Some(stdin),
        }
    }

    /// Ends the run as `ending` does, once `sabotage` has made its commit fail (for that
    /// ending); returns its status and standard error.
    fn end(mut self, ending: Ending, sabotage: impl FnOnce()) -> (i32, String) {
        let mut stdin = self.stdin.take().unwrap();
        match ending {
            Ending::FailedCommit => {
                sabotage();
                stdin.write_all(&ending.rest()).unwrap();
                drop(stdin);
            }
            Ending::Signal(name, _) => {
                stdin.write_all(&ending.rest()).unwrap();
                drop(stdin);
                // The marked line is read at the input's end; give the worker a moment on it.
                std::thread::sleep(Duration::from_millis(300));
                signal(&self.child, name);
            }
            _ => {
                let _ = stdin.write_all(&ending.rest());
                drop(stdin);
            }
        }
        status_of(self.child, &format!("{ending:?}"))
    }
}

fn expect_status(ending: Ending, status: i32, err: &str, what: &str) {
    assert_eq!(status, ending.status(), "{what}: {err}");
    // Only a panic is a bug, and says so.
    if ending != Ending::Panic {
        assert!(!err.contains("a bug, please report it"), "{what}: {err}");
    }
}

#[test]
fn every_ending_removes_the_temporary_files_of_local_outputs() {
    for ending in ENDINGS {
        let what = format!("{ending:?} × temporary files");
        let dir = scratch("ending-temp");
        fs::write(dir.join("out.jsonl"), "previous\n").unwrap();
        fs::create_dir(dir.join("sub")).unwrap();
        let mut command = common::bin();
        command.current_dir(&dir);
        // The primary output in a folder of its own, which a failed commit loses.
        let run = Piped::start(command, ending, &["sub/out.jsonl", "rejects.jsonl"]);
        let sub = dir.join("sub");
        let held = || temporaries(&dir).len() + temporaries(&sub).len();
        wait_for("the temporary files", || held() == 2);
        let (status, err) = run.end(ending, || fs::remove_dir_all(&sub).unwrap());
        expect_status(ending, status, &err, &what);
        let mut left = names(&dir);
        left.retain(|n| n != "sub");
        assert_eq!(left, ["out.jsonl"], "{what}: {err}");
        assert_eq!(
            fs::read_to_string(dir.join("out.jsonl")).unwrap(),
            "previous\n"
        );
        // Nothing in the primary's folder either, where it is still there.
        let in_sub = match sub.exists() {
            true => names(&sub),
            false => Vec::new(),
        };
        assert!(in_sub.is_empty(), "{what}: {in_sub:?}");
        fs::remove_dir_all(&dir).unwrap();
    }
}

/// `batch filter` over a folder of one shard (a line, then the marked one), with `hook` run
/// between the shard's two reads (a failed commit's sabotage).
fn batch_command(base: Command, ending: Ending, input: &Path, out: &str, hook: &str) -> Child {
    let mut command = base;
    command
        .args(["batch", "filter", "-q"])
        .args(ending.where_args());
    ending.env(&mut command);
    if !hook.is_empty() {
        command.env("RDQ_ENVELOPE_TEST_BETWEEN_READS", hook);
    }
    let shard = input.join("a.jsonl.zst");
    let mut bytes = zstd(format!("{VALID}\n").as_bytes());
    bytes.extend(ending.rest());
    fs::write(shard, bytes).unwrap();
    command
        .arg(input)
        .args(["--out", out])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn every_ending_removes_the_lock_file_of_a_batch_into_a_folder() {
    for ending in ENDINGS {
        let what = format!("{ending:?} × lock file");
        let dir = scratch("ending-lock-file");
        let (input, out) = (dir.join("in"), dir.join("out"));
        fs::create_dir_all(&input).unwrap();
        fs::create_dir_all(&out).unwrap();
        fs::write(out.join("earlier.txt"), "previous\n").unwrap();
        let hook = match ending {
            // The shard's output path taken by a folder: its rename fails at the commit.
            Ending::FailedCommit => format!("mkdir -p {}/a.jsonl.zst/x", out.display()),
            _ => String::new(),
        };
        let child = batch_command(common::bin(), ending, &input, out.to_str().unwrap(), &hook);
        if let Ending::Signal(name, _) = ending {
            wait_for("the lock file and the shard's temporary files", || {
                out.join(".rdq-batch.lock").exists() && !temporaries(&out).is_empty()
            });
            std::thread::sleep(Duration::from_millis(300));
            signal(&child, name);
        }
        let (status, err) = status_of(child, &what);
        expect_status(ending, status, &err, &what);
        let left = names(&out);
        assert!(
            !left.iter().any(|n| n.contains(".rdq-batch.lock")),
            "{what}: {left:?}"
        );
        assert!(temporaries(&out).is_empty(), "{what}: {left:?}");
        // (A failed commit's sabotage is a folder at the shard's output path.)
        assert!(
            !out.join("a.jsonl.zst").is_file() && !out.join("a.rejects.jsonl.zst").exists(),
            "{what}: {left:?}"
        );
        assert_eq!(
            fs::read_to_string(out.join("earlier.txt")).unwrap(),
            "previous\n"
        );
        // The next run goes at once.
        let rerun = common::bin()
            .args(["batch", "validate", "-q"])
            .arg(&input)
            .args(["--out", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(
            !String::from_utf8_lossy(&rerun.stderr).contains("another batch run"),
            "{what}"
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}

#[cfg(feature = "s3")]
mod on_object_storage {
    use super::*;
    use common::s3::{server, S3};
    use common::unruly::{Act, Kind, Unruly};

    fn nothing_left(s3: &S3, bucket: &str, what: &str) {
        assert!(
            s3.open_uploads(bucket).is_empty(),
            "{what}: uploads left open: {:?}",
            s3.open_uploads(bucket)
        );
        let keys = s3.keys(bucket, "");
        assert!(
            !keys.iter().any(|k| k.ends_with(".rdq-batch.lock")),
            "{what}: a lock left: {keys:?}"
        );
    }

    #[test]
    fn every_ending_aborts_the_uploads_of_s3_outputs() {
        let Some(s3) = server() else { return };
        for ending in ENDINGS {
            let what = format!("{ending:?} × multipart uploads");
            let bucket = s3.bucket("ending-up");
            s3.put(&bucket, "out.jsonl", b"previous\n");
            let (out, rejects) = (
                format!("s3://{bucket}/out.jsonl"),
                format!("s3://{bucket}/rejects.jsonl"),
            );
            let run = Piped::start(s3.bin(), ending, &[&out, &rejects]);
            wait_for("the uploads", || s3.open_uploads(&bucket).len() == 2);
            let (status, err) = run.end(ending, || {
                // The primary's upload aborted behind the run's back: its commit fails.
                for (key, id) in s3.uploads(&bucket) {
                    if key == "out.jsonl" {
                        s3.abort_upload(&bucket, &key, &id);
                    }
                }
            });
            expect_status(ending, status, &err, &what);
            nothing_left(s3, &bucket, &what);
            assert_eq!(s3.keys(&bucket, ""), ["out.jsonl"], "{what}");
            assert_eq!(
                s3.get(&bucket, "out.jsonl").unwrap(),
                b"previous\n",
                "{what}"
            );
        }
    }

    #[test]
    fn every_ending_removes_the_lock_object_of_a_batch_into_a_prefix() {
        let Some(s3) = server() else { return };
        for ending in ENDINGS {
            let what = format!("{ending:?} × lock object");
            let bucket = s3.bucket("ending-lock");
            s3.put(&bucket, "out/earlier.txt", b"previous\n");
            let dir = scratch("ending-lock-object");
            let input = dir.join("in");
            fs::create_dir_all(&input).unwrap();
            let out = format!("s3://{bucket}/out/");
            let hook = match ending {
                // Another writer's manifest appears: the run's conditional write of its own
                // fails, and the batch stops there.
                Ending::FailedCommit => s3.put_command(&bucket, "out/manifest.json", b"{}"),
                _ => String::new(),
            };
            let child = batch_command(s3.bin(), ending, &input, &out, &hook);
            if let Ending::Signal(name, _) = ending {
                wait_for("the lock object and the shard's uploads", || {
                    s3.get(&bucket, "out/.rdq-batch.lock").is_some()
                        && !s3.open_uploads(&bucket).is_empty()
                });
                std::thread::sleep(Duration::from_millis(300));
                signal(&child, name);
            }
            let (status, err) = status_of(child, &what);
            expect_status(ending, status, &err, &what);
            nothing_left(s3, &bucket, &what);
            let keys = s3.keys(&bucket, "out/");
            // A shard's outputs are committed before the manifest records them (a rerun
            // redoes a shard the manifest lacks): the manifest's failed write comes after.
            assert!(
                ending == Ending::FailedCommit
                    || !keys
                        .iter()
                        .any(|k| k == "out/a.jsonl.zst" || k == "out/a.rejects.jsonl.zst"),
                "{what}: {keys:?}"
            );
            assert_eq!(s3.get(&bucket, "out/earlier.txt").unwrap(), b"previous\n");
            fs::remove_dir_all(&dir).unwrap();
        }
    }

    /// The column of things being created: a signal that arrives while the store is still
    /// answering the request that creates an output's upload, or a `batch` lock object. The
    /// store has made it; the run does not know it yet. The run waits for the answer (the
    /// unruly store holds it 2 s) and removes what it made.
    #[test]
    fn a_signal_while_the_store_is_still_creating_an_upload_or_a_lock_removes_it() {
        let Some(s3) = server() else { return };
        for (name, status) in [("TERM", 143), ("INT", 130), ("HUP", 129)] {
            for creating in [Kind::CreateMultipartUpload, Kind::PutObject] {
                let what = format!("SIG{name} × {creating:?} in flight");
                let bucket = s3.bucket("ending-creating");
                s3.put(&bucket, "out.jsonl", b"previous\n");
                let proxy = Unruly::in_front_of(&s3.endpoint());
                proxy.on(creating, Act::DelayAnswer(Duration::from_secs(2)));
                let mut command = s3.bin();
                command.env("AWS_ENDPOINT_URL", proxy.endpoint());
                let dir = scratch("ending-creating");
                let child = if creating == Kind::PutObject {
                    // batch's lock is the first object it writes.
                    let input = dir.join("in");
                    fs::create_dir_all(&input).unwrap();
                    let out = format!("s3://{bucket}/out/");
                    batch_command(command, Ending::Signal(name, status), &input, &out, "")
                } else {
                    let out = format!("s3://{bucket}/out.jsonl");
                    Piped::start(command, Ending::Signal(name, status), &[&out]).child
                };
                assert!(
                    proxy.wait_held(creating, Duration::from_secs(60)),
                    "{what}: never asked"
                );
                signal(&child, name);
                let (got, err) = status_of(child, &what);
                assert_eq!(got, status, "{what}: {err}");
                nothing_left(s3, &bucket, &what);
                assert_eq!(s3.keys(&bucket, ""), ["out.jsonl"], "{what}");
                assert_eq!(s3.get(&bucket, "out.jsonl").unwrap(), b"previous\n");
                fs::remove_dir_all(&dir).unwrap();
            }
        }
    }

    /// The ending waits for the store (at most 30 s); a second signal meanwhile ends the run
    /// at once, with its own status.
    #[test]
    fn a_second_signal_ends_a_run_whose_ending_waits_for_a_slow_store() {
        let Some(s3) = server() else { return };
        let bucket = s3.bucket("ending-twice");
        let proxy = Unruly::in_front_of(&s3.endpoint());
        proxy.on(
            Kind::AbortMultipartUpload,
            Act::DelayAnswer(Duration::from_secs(60)),
        );
        let mut command = s3.bin();
        command.env("AWS_ENDPOINT_URL", proxy.endpoint());
        let out = format!("s3://{bucket}/out.jsonl");
        let run = Piped::start(command, Ending::Signal("TERM", 143), &[&out]);
        wait_for("the upload", || s3.open_uploads(&bucket).len() == 1);
        signal(&run.child, "TERM");
        assert!(proxy.wait_held(Kind::AbortMultipartUpload, Duration::from_secs(60)));
        let second = Instant::now();
        signal(&run.child, "INT");
        let (status, err) = status_of(run.child, "a second signal");
        assert_eq!(status, 130, "{err}");
        assert!(
            second.elapsed() < Duration::from_secs(10),
            "the second signal waited {:?}",
            second.elapsed()
        );
        proxy.release();
    }
}
