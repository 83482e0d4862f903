//! A plugin's command, run as the kit's protocol says (docs/plugins.md#the-protocol): through
//! `sh -c`, in a process group of its own, with the run's folder and token in its environment,
//! its standard input fed from a thread and its outputs read by two more, under a time limit.
//!
//! A plugin may hang, crash, print without end or leave a child behind that holds its outputs
//! open: each ends here as a [`Finished`] that says so, never as a kit that waits forever. On a
//! signal the run's ending (`ending.rs`) kills the groups still alive and removes the folder.

use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What a command's standard error keeps: its last bytes, where the reason for a failure is.
const STDERR_KEPT: usize = 16 * 1024;

/// Process groups of commands still running, and the run's folder: what a signal's ending
/// releases ([`release`]).
static LIVE_GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());
static RUN_FOLDER: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Kills every command still running (its whole process group) and removes the run's folder.
/// For the run's one way out, from any thread.
pub fn release() {
    let groups = std::mem::take(&mut *LIVE_GROUPS.lock().unwrap_or_else(|e| e.into_inner()));
    for group in groups {
        kill_group(group);
    }
    if let Some(folder) = RUN_FOLDER.lock().unwrap_or_else(|e| e.into_inner()).take() {
        let _ = std::fs::remove_dir_all(folder);
    }
}

fn kill_group(group: i32) {
    // SAFETY: kill(2) takes plain integers and touches no memory of this process; a negative
    // pid names the process group the kit made for the command (`process_group(0)`).
    unsafe {
        libc::kill(-group, libc::SIGKILL);
    }
}

/// The run's folder, given to the commands as `RDQ_COMPLIANCE_DIR`: new and empty, only the
/// user's, removed when the run ends however it ends.
pub struct RunFolder {
    path: PathBuf,
}

impl RunFolder {
    pub fn create() -> std::io::Result<RunFolder> {
        use std::os::unix::fs::DirBuilderExt;
        let base = rdq_envelope::io::temporary_folder();
        let mut attempt = 0u32;
        loop {
            let path = base.join(format!("rdq-compliance.{}.{attempt}", std::process::id()));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => {
                    *RUN_FOLDER.lock().unwrap_or_else(|e| e.into_inner()) = Some(path.clone());
                    return Ok(RunFolder { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 1000 => {
                    attempt += 1
                }
                Err(e) => {
                    return Err(std::io::Error::new(
                        e.kind(),
                        format!("{}: cannot create the run's folder: {e}", path.display()),
                    ))
                }
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for RunFolder {
    fn drop(&mut self) {
        let mut held = RUN_FOLDER.lock().unwrap_or_else(|e| e.into_inner());
        if held.as_deref() == Some(self.path.as_path()) {
            *held = None;
        }
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// It exited with this status.
    Exited(i32),
    /// A signal ended it.
    Signalled(i32),
    /// It ran past the time limit and was killed.
    TimedOut,
    /// It exited, but something it started still held its output open at the time limit.
    OutputHeldOpen(i32),
    /// It printed more than the kit reads; it was killed.
    TooMuchOutput,
    /// It could not be started.
    NotStarted(String),
}

/// What a command did.
#[derive(Debug, Clone)]
pub struct Finished {
    pub command: String,
    pub ending: Ending,
    pub seconds: f64,
    pub stdout: Vec<u8>,
    /// The last [`STDERR_KEPT`] bytes of its standard error.
    pub stderr: Vec<u8>,
    /// Bytes of its standard error left out before those.
    pub stderr_cut: usize,
    /// Bytes of its standard input it took before it closed it, when it did not take all.
    pub stdin_taken: Option<usize>,
}

impl Finished {
    pub fn succeeded(&self) -> bool {
        self.ending == Ending::Exited(0) && self.stdin_taken.is_none()
    }

    /// What went wrong, in a sentence; `None` when it succeeded.
    pub fn failure(&self, role: &str, timeout: Duration) -> Option<String> {
        let limit = timeout.as_secs_f64();
        let what = match &self.ending {
            Ending::Exited(0) => match self.stdin_taken {
                None => return None,
                Some(taken) => format!(
                    "exited with status 0 but stopped reading its standard input after {taken} bytes"
                ),
            },
            Ending::Exited(status) => format!("exited with status {status}"),
            Ending::Signalled(signal) => format!("was ended by signal {signal}"),
            Ending::TimedOut => format!("did not finish within {limit} s (--timeout) and was killed"),
            Ending::OutputHeldOpen(status) => format!(
                "exited with status {status}, but a process it started still held its outputs open after {limit} s (--timeout); killed"
            ),
            Ending::TooMuchOutput => "printed more than the kit reads (1 GiB) and was killed".to_string(),
            Ending::NotStarted(why) => format!("could not be started: {why}"),
        };
        Some(format!("the {role} command ({}) {what}", self.command))
    }
}

/// The environment a command gets besides the kit's own.
pub struct Protocol<'a> {
    pub folder: &'a Path,
    pub token: &'a str,
    pub timeout: Duration,
    /// What the read command may print before the kit stops reading.
    pub max_output: usize,
}

/// Runs `command` through `sh -c`, feeding it `input`, and waits for it (and for its outputs
/// to close) at most the protocol's time limit.
pub fn run(command: &str, input: Option<&[u8]>, protocol: &Protocol<'_>) -> Finished {
    let started = Instant::now();
    let finished = |ending, stdout, stderr: Tail, stdin_taken| Finished {
        command: command.to_string(),
        ending,
        seconds: started.elapsed().as_secs_f64(),
        stdout,
        stderr: stderr.bytes,
        stderr_cut: stderr.cut,
        stdin_taken,
    };
    let mut child = match Command::new("sh")
        .arg("-c")
        .arg(command)
        .env("RDQ_COMPLIANCE_DIR", protocol.folder)
        .env("RDQ_COMPLIANCE_RUN", protocol.token)
        .current_dir(std::env::current_dir().unwrap_or_else(|_| protocol.folder.to_path_buf()))
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group: a time limit kills the shell and everything it started, and a
        // terminal's Ctrl-C reaches the kit, whose ending kills the group.
        .process_group(0)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            return finished(
                Ending::NotStarted(format!("sh: {e}")),
                Vec::new(),
                Tail::default(),
                None,
            )
        }
    };
    let group = child.id() as i32;
    LIVE_GROUPS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(group);

    let (sender, outputs) = mpsc::channel::<Output>();
    let feeder = child.stdin.take().zip(input).map(|(mut stdin, input)| {
        let input = input.to_vec();
        std::thread::spawn(move || {
            // A command that closes its input early: how far it read is reported, and the
            // pipe's error is not the kit's (SIGPIPE is not fatal in this process).
            let mut taken = 0;
            for piece in input.chunks(64 * 1024) {
                if stdin.write_all(piece).is_err() {
                    return Some(taken);
                }
                taken += piece.len();
            }
            None
        })
    });
    if let Some(stdout) = child.stdout.take() {
        let sender = sender.clone();
        let max = protocol.max_output;
        std::thread::spawn(move || {
            let _ = sender.send(Output::Stdout(read_capped(stdout, max)));
        });
    }
    if let Some(stderr) = child.stderr.take() {
        let sender = sender.clone();
        std::thread::spawn(move || {
            let _ = sender.send(Output::Stderr(read_tail(stderr)));
        });
    }
    drop(sender);

    let deadline = started + protocol.timeout;
    let (ending, stdout, stderr) = wait(&mut child, group, &outputs, deadline);
    LIVE_GROUPS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|&g| g != group);
    // The feeder ends once the command is gone: its pipe's reader is closed.
    let stdin_taken = feeder.and_then(|f| f.join().ok().flatten());
    finished(
        ending,
        stdout.unwrap_or_default(),
        stderr.unwrap_or_default(),
        stdin_taken,
    )
}

enum Output {
    /// What it printed, and whether it printed more than that.
    Stdout((Vec<u8>, bool)),
    Stderr(Tail),
}

#[derive(Default)]
struct Tail {
    bytes: Vec<u8>,
    cut: usize,
}

/// Waits for the command to exit and both its outputs to close, until `deadline`; past it, or
/// when it prints too much, kills its group.
fn wait(
    child: &mut Child,
    group: i32,
    outputs: &mpsc::Receiver<Output>,
    deadline: Instant,
) -> (Ending, Option<Vec<u8>>, Option<Tail>) {
    let mut stdout = None;
    let mut stderr = None;
    let mut status: Option<ExitStatus> = None;
    let mut too_much = false;
    loop {
        if status.is_none() {
            status = child.try_wait().ok().flatten();
        }
        if status.is_some() && stdout.is_some() && stderr.is_some() {
            break;
        }
        if too_much || Instant::now() >= deadline {
            kill_group(group);
            let status = child.wait().ok();
            // Its outputs close with the group; a grandchild that left the group may keep
            // them open, and is not waited for.
            let grace = Instant::now() + Duration::from_millis(500);
            while stdout.is_none() || stderr.is_none() {
                match outputs.recv_timeout(grace.saturating_duration_since(Instant::now())) {
                    Ok(Output::Stdout(out)) => stdout = Some(out.0),
                    Ok(Output::Stderr(tail)) => stderr = Some(tail),
                    Err(_) => break,
                }
            }
            // A status with a code is the command's own exit, not the kill's signal.
            let ending = match (too_much, status.and_then(|s| s.code())) {
                (true, _) => Ending::TooMuchOutput,
                (false, Some(code)) => Ending::OutputHeldOpen(code),
                (false, None) => Ending::TimedOut,
            };
            return (ending, stdout, stderr);
        }
        match outputs.recv_timeout(Duration::from_millis(20)) {
            Ok(Output::Stdout((out, more))) => {
                too_much = more;
                stdout = Some(out);
            }
            Ok(Output::Stderr(tail)) => stderr = Some(tail),
            Err(_) => {}
        }
    }
    let status = status.expect("checked above");
    let ending = match (status.code(), status.signal()) {
        (Some(code), _) => Ending::Exited(code),
        (None, Some(signal)) => Ending::Signalled(signal),
        (None, None) => Ending::Exited(-1),
    };
    (ending, stdout, stderr)
}

/// Reads to the end, keeping at most `max` bytes; says whether there was more.
fn read_capped(mut from: impl Read, max: usize) -> (Vec<u8>, bool) {
    let mut kept = Vec::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        match from.read(&mut buffer) {
            Ok(0) => return (kept, false),
            Ok(n) if kept.len() + n > max => return (kept, true),
            Ok(n) => kept.extend_from_slice(&buffer[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return (kept, false),
        }
    }
}

/// Reads to the end, keeping the last [`STDERR_KEPT`] bytes.
fn read_tail(mut from: impl Read) -> Tail {
    let mut tail = Tail::default();
    let mut buffer = vec![0u8; 16 * 1024];
    loop {
        match from.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                tail.bytes.extend_from_slice(&buffer[..n]);
                if tail.bytes.len() > 2 * STDERR_KEPT {
                    let drop = tail.bytes.len() - STDERR_KEPT;
                    tail.bytes.drain(..drop);
                    tail.cut += drop;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    let drop = tail.bytes.len().saturating_sub(STDERR_KEPT);
    tail.bytes.drain(..drop);
    tail.cut += drop;
    tail
}
