//! Not part of the API: hooks for the crate's fuzz targets (`fuzz/`) and its own tests. Nothing
//! here is covered by semver; it may change or go away in any release. It is public only so
//! that a fuzz target, which is another crate, can reach checks that need the crate's
//! internals.

use crate::envelope::SinglePass;
use crate::json::stage1::{Classifier, Index};
use crate::migrate::Migrator;
use crate::{EnvelopeRules, JsonParser, RuleOptions, Verdict};

/// What the tape path and the single pass concluded of one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Agreement {
    /// The tape path ([`EnvelopeRules::check_line`]) found the line valid with no warning.
    pub tape_clean: bool,
    /// The single pass accepted the line (with every classifier: they agree, or this panics).
    pub accepted: bool,
}

/// The tape path and the single pass under one set of options, reused from line to line as a
/// worker reuses them: one single pass per stage-1 classifier this CPU runs.
#[derive(Debug)]
pub struct SinglePassCheck {
    rules: EnvelopeRules,
    parser: JsonParser,
    verdict: Verdict,
    passes: Vec<(Classifier, SinglePass)>,
    migrator: Migrator,
}

impl SinglePassCheck {
    /// A check under `options` (which must be consistent: see [`RuleOptions::validate`]).
    pub fn new(options: &RuleOptions) -> Self {
        // The one `RDQ_ENVELOPE_SIMD` picks first, then every other one this CPU runs.
        let mut classifiers = vec![Classifier::detect()];
        for other in Classifier::all() {
            if !classifiers.contains(&other) {
                classifiers.push(other);
            }
        }
        SinglePassCheck {
            rules: EnvelopeRules::new(options.clone()).expect("consistent options"),
            parser: JsonParser::new(),
            verdict: Verdict::default(),
            passes: classifiers
                .into_iter()
                .enumerate()
                .map(|(i, c)| {
                    let mut single = SinglePass::with_classifier(c);
                    // The first also records what a migration edits (which must not change
                    // its verdicts), the others not.
                    if i == 0 {
                        single.record_shape();
                    }
                    (c, single)
                })
                .collect(),
            migrator: Migrator::new(),
        }
    }

    /// Judges `line` both ways. Panics when the single pass accepts a line the tape path does
    /// not find valid with no warning and the same version (a false accept), when the
    /// classifiers disagree, or when a line it accepts migrates to the other version
    /// differently from the shape it recorded than from the tape.
    pub fn compare(&mut self, line: &[u8]) -> Agreement {
        let doc = self
            .rules
            .check_line(&mut self.parser, line, &mut self.verdict);
        let verdict = &self.verdict;
        let tape_clean = verdict.is_valid() && verdict.warnings.is_empty();
        let mut accepted: Option<bool> = None;
        for (classifier, single) in &mut self.passes {
            let fast = self.rules.clean_version(single, line);
            if let Some(version) = fast {
                assert!(
                    tape_clean && verdict.version == Some(version),
                    "false accept: the single pass ({classifier:?}) accepts as version {version} \
                     a line the tape path judges {verdict:?}:\n{}",
                    String::from_utf8_lossy(line)
                );
            }
            assert!(
                accepted.is_none_or(|a| a == fast.is_some()),
                "the classifiers disagree ({classifier:?} {}) on:\n{}",
                if fast.is_some() {
                    "accepts"
                } else {
                    "declines"
                },
                String::from_utf8_lossy(line)
            );
            accepted = Some(fast.is_some());
            if let (Some(version), Some(shape), Some(doc)) = (fast, single.shape(), &doc) {
                for to in [1, 2].into_iter().filter(|&to| to != version) {
                    let (mut tape_out, mut fast_out, mut errors) = (Vec::new(), Vec::new(), vec![]);
                    let tape =
                        self.migrator
                            .migrate(line, doc, version, to, &mut tape_out, &mut errors);
                    let from_shape =
                        self.migrator
                            .migrate_shape(line, shape, version, to, &mut fast_out);
                    assert!(
                        from_shape == tape && fast_out == tape_out,
                        "{version} -> {to} from the shape ({from_shape:?}) differs from the tape's \
                         ({tape:?}) on:\n{}\nshape: {}\ntape:  {}",
                        String::from_utf8_lossy(line),
                        String::from_utf8_lossy(&fast_out),
                        String::from_utf8_lossy(&tape_out),
                    );
                }
            }
        }
        Agreement {
            tape_clean,
            accepted: accepted.unwrap_or(false),
        }
    }
}

/// [`SinglePassCheck::compare`] of `line` under `options` with fresh state, and again with
/// state warmed by other lines first (a worker's single pass has seen lines before): panics on
/// a false accept, on classifiers that disagree, or on warm and fresh state that disagree.
pub fn single_pass_agrees(options: &RuleOptions, line: &[u8]) -> Agreement {
    let fresh = SinglePassCheck::new(options).compare(line);
    let mut warm = SinglePassCheck::new(options);
    for before in WARM_UP {
        warm.compare(before.as_bytes());
    }
    assert_eq!(
        warm.compare(line),
        fresh,
        "a warm single pass differs from a fresh one on:\n{}",
        String::from_utf8_lossy(line)
    );
    fresh
}

/// Lines that leave state behind: a long valid one, one that stops deep in nested objects, and
/// one that stops in a string with escapes.
const WARM_UP: [&str; 3] = [
    crate::catalogue::VALID_V2,
    r#"{"a":{"b":{"c":{"d":[{"e":{"f":1,"g":2,"h":3}}]}}},"x":"#,
    r#"{"envelope_version":1,"id":"\u0030","q":"a\\\"b\ud83d\ude00"#,
];

/// Stage 1's structural index of `line` against simd-json's, with every classifier, on a line
/// simd-json parses: equal once the closing quotes (which simd-json does not index) are left
/// out. Panics when they differ; returns whether the line was compared. (The same check as the
/// unit tests' `json::stage1::against_simd_json`, for the fuzz targets.)
pub fn stage1_agrees_with_simd_json(line: &[u8]) -> bool {
    let mut input = line.to_vec();
    input.resize(line.len() + simd_json::INPUT_PADDING, 0);
    let mut buffers = simd_json::Buffers::new(line.len());
    let mut tape = simd_json::Tape::null().reset();
    if simd_json::fill_tape_padded(&mut input, line.len(), &mut buffers, &mut tape).is_err() {
        return false;
    }
    let theirs = buffers.structural_indexes();
    for classifier in Classifier::all() {
        let mut index = Index::default();
        if !index.build(line, classifier) {
            // Stage 1 declines what simd-json may accept: lone surrogates and the like.
            continue;
        }
        let mut ours = Vec::new();
        let mut open = false;
        for &at in index.positions() {
            let quote = line[at as usize] == b'"';
            if quote && open {
                open = false;
                continue;
            }
            open = quote;
            ours.push(at);
        }
        assert_eq!(
            ours,
            theirs,
            "stage 1 ({classifier:?}) indexes differently from simd-json:\n{}",
            String::from_utf8_lossy(line)
        );
    }
    true
}

/// The single pass alone, as `validate` runs it on every line: for the benches.
#[derive(Debug)]
pub struct SinglePassAlone {
    rules: EnvelopeRules,
    single: SinglePass,
}

impl SinglePassAlone {
    /// The single pass under `options` (which must be consistent), with the classifier
    /// `RDQ_ENVELOPE_SIMD` and the CPU choose.
    pub fn new(options: &RuleOptions) -> Self {
        SinglePassAlone {
            rules: EnvelopeRules::new(options.clone()).expect("consistent options"),
            single: SinglePass::default(),
        }
    }

    /// Whether the single pass settles `line` (valid, nothing to warn about) without a tape.
    pub fn accepts(&mut self, line: &[u8]) -> bool {
        self.rules.clean_version(&mut self.single, line).is_some()
    }
}

/// What replaces a byte: JSON's structural and escape bytes, white space, the first bytes of
/// numbers and literals, control characters, a byte that is never UTF-8, and a 2-byte character.
const REPLACEMENTS: &[&[u8]] = &[
    b"\"",
    b"\\",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b" ",
    b"0",
    b"-",
    b"e",
    b".",
    b"n",
    b"\x01",
    b"\x7f",
    b"\xff",
    "é".as_bytes(),
];

/// The number of mutations at one position: delete, duplicate, and each replacement.
pub const BYTE_MUTATIONS: usize = 2 + REPLACEMENTS.len();

/// `line` with mutation `kind` (below [`BYTE_MUTATIONS`]) at byte `at`: the single pass's
/// byte-mutation tests and its fuzz target both use it.
pub fn byte_mutation(line: &[u8], at: usize, kind: usize) -> Vec<u8> {
    let mut out = line.to_vec();
    match kind {
        0 => {
            out.remove(at);
        }
        1 => out.insert(at, line[at]),
        k => {
            out.splice(at..=at, REPLACEMENTS[k - 2].iter().copied());
        }
    }
    out
}

/// Whether this run is CI's: the variable `CI` set to anything but empty, `0` or `false`
/// (`.ci/run` runs with `CI=true`). The one definition every test asks.
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// The one rule for what a test needs from outside the crate (a program, a Python module, a
/// corpus folder): `found` is what the caller found, or what is absent. Found, it is returned.
/// Absent outside CI, this prints `skipped: ...` (on the process's standard error, past the test
/// harness's capture, so `cargo test` shows it) and returns `None`, and the test returns.
/// Absent under CI ([`in_ci`]), it panics: `.ci/run` installs every tool a test needs, and a
/// test that checks nothing must not pass there.
pub fn need_or_skip<T>(found: Result<T, String>, what_for: &str) -> Option<T> {
    match found {
        Ok(found) => Some(found),
        Err(absent) if in_ci() => panic!("CI must run {what_for} (.ci/run installs it): {absent}"),
        Err(absent) => {
            // One line: what is missing and how to install it, never a tool's own output (a
            // Python traceback) after it.
            let absent = absent.lines().next().unwrap_or_default();
            let line = format!("skipped: {what_for}: {absent}");
            // Straight to the process's standard error, not through `eprintln!`: the test
            // harness captures the macros' output of a test that passes, and a suite that ran
            // nothing must be seen where `cargo test` is run.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "{line}");
            skipped::note(line);
            None
        }
    }
}

/// The first of `names` (one program under the names distributions give it, e.g. `chromium`
/// and `chromium-browser`) that runs `--version` successfully, by [`need_or_skip`]'s rule; when
/// none does, the line says how Debian installs it.
pub fn tool_or_skip(names: &[&str], what_for: &str) -> Option<std::path::PathBuf> {
    let found = names
        .iter()
        .copied()
        .find(|name| {
            std::process::Command::new(name)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .map(std::path::PathBuf::from)
        .ok_or_else(|| {
            let install = debian_install(names[0]);
            format!("no {} on PATH (Debian: {install})", names.join(" or "))
        });
    need_or_skip(found, what_for)
}

/// The command that installs a tool on Debian (its package, where the name differs).
pub fn debian_install(tool: &str) -> String {
    let package = match tool {
        "pzstd" => "zstd",
        "script" => "bsdutils",
        "iconv" => "libc-bin",
        "chromium-browser" => "chromium",
        "java" => "openjdk-17-jre-headless",
        other => other,
    };
    format!("apt-get install {package}")
}

/// Where the test binaries of one `cargo test` note the suites they skipped, for the block
/// `tests/wrap_up.rs` prints at the end of the run: `target/<profile>/skipped-suites/`, a file
/// per binary named after the process that started them all (cargo) and the binary
/// (`4242-it.txt`), a line per suite. Named after cargo's process, a run never reads what an
/// earlier run (or a run of one binary alone) left.
pub mod skipped {
    use std::path::PathBuf;
    use std::sync::Mutex;

    static LINES: Mutex<Vec<String>> = Mutex::new(Vec::new());

    /// Notes a skip, and writes this binary's record again with it.
    pub(super) fn note(line: String) {
        let Ok(mut lines) = LINES.lock() else {
            return;
        };
        if !lines.contains(&line) {
            lines.push(line);
        }
        if let (Some(folder), Some(name)) = (folder(), record_name()) {
            let mut text = lines.join("\n");
            text.push('\n');
            let _ = std::fs::create_dir_all(&folder);
            let _ = std::fs::write(folder.join(name), text);
        }
    }

    /// The folder of the records: beside the test binaries' `deps` folder.
    pub fn folder() -> Option<PathBuf> {
        let exe = std::env::current_exe().ok()?;
        let profile = exe.parent()?.parent()?;
        Some(profile.join("skipped-suites"))
    }

    /// The prefix of the records of this run: the process that started this binary (cargo,
    /// which starts every test binary of one `cargo test`).
    pub fn run_prefix() -> Option<String> {
        parent_process().map(|pid| format!("{pid}-"))
    }

    /// This binary's record: the run's prefix and the binary's name without cargo's hash.
    fn record_name() -> Option<String> {
        let exe = std::env::current_exe().ok()?;
        let stem = exe.file_stem()?.to_string_lossy().into_owned();
        let name = match stem.rsplit_once('-') {
            Some((name, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => name,
            _ => &stem,
        };
        Some(format!("{}{name}.txt", run_prefix()?))
    }

    #[cfg(all(unix, feature = "stream"))]
    #[allow(unsafe_code)]
    fn parent_process() -> Option<u32> {
        // SAFETY: getppid takes nothing, cannot fail and touches no memory of ours.
        u32::try_from(unsafe { libc::getppid() }).ok()
    }

    #[cfg(not(all(unix, feature = "stream")))]
    fn parent_process() -> Option<u32> {
        // Without libc there is no record: each skip's own line is still printed.
        None
    }
}

/// What [`drive_lifecycle`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Drive {
    /// Calls that changed the envelope.
    pub applied: usize,
    /// Calls refused with an [`EnvelopeError`](crate::envelope::EnvelopeError).
    pub refused: usize,
}

/// Drives an owned envelope through the calls `data` spells (submit, then lease, finish and
/// the next status, redrive, cancel, migrate, setters, unknown members, with times that may
/// step back and texts over their limits), and after every call, applied or refused, checks
/// that the checker accepts the envelope as written and that reading it back gives the same
/// envelope and the same bytes. Panics when it does not: the lifecycle's promise is that no
/// sequence of calls makes an envelope the checker rejects.
pub fn drive_lifecycle(data: &[u8]) -> Drive {
    use crate::envelope::{
        AttemptError, Checker, Envelope, JsonText, Optional, Outcome, PayloadRef, Producer, Submit,
        Timestamp,
    };

    let mut bytes = data.iter().copied();
    let mut byte = move || bytes.next().unwrap_or(0);
    let mut checker = Checker::new(EnvelopeRules::new(RuleOptions::default()).expect("defaults"));
    let mut drive = Drive::default();

    // Times move forward mostly, and now and then back.
    let base = Timestamp::from_unix_ms(1_714_564_800_000).expect("in range");
    let step = |b: u8| -> i64 {
        match b % 8 {
            0 => -1_000,
            1 => 0,
            _ => i64::from(b) * 97,
        }
    };
    const NAMES: [&str; 6] = ["mail", "billing.invoices", "a", "x_export", "Queue", ""];
    const KEYS: [&str; 8] = [
        "traceparent",
        "rdq.source",
        "rdq.submitted_by",
        "",
        "x-\u{1F600}",
        "a\"b\\c\u{1}",
        "queue",
        "origin",
    ];
    const VALUES: [&str; 8] = [
        "null",
        "1.0",
        "-0",
        "123456789012345678901234567890",
        r#"{"a":[1,{"b":"\u00e9\n"}],"c":1e400}"#,
        r#""\ud83d\ude00""#,
        "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
        "true",
    ];
    let text = |b: u8, n: usize| -> String {
        let unit = ["x", "é", "\u{1F600}", "\"", "\n", "\u{0}"][usize::from(b) % 6];
        unit.repeat(n / unit.len().max(1) + 1)
    };

    let version = u32::from(byte() % 2) + 1;
    let mut now = base;
    let first = Submit::new("mail", "send", b"{}".to_vec(), "application/json")
        .and_then(|s| s.version(version))
        .and_then(|s| s.header("traceparent", "00-abc"))
        .map(|s| s.source("api"));
    let mut producer = Producer::with_clock(move || base).with_seed(u64::from(byte()));
    let Ok(mut envelope) = first.and_then(|s| producer.submit(s)) else {
        panic!("the first submission is valid");
    };

    let mut line = Vec::new();
    let mut verify = |envelope: &Envelope, checker: &mut Checker| {
        line.clear();
        envelope.write_vec(&mut line);
        let content = &line[..line.len() - 1];
        let checked = checker.check(content);
        assert!(
            checked.is_valid(),
            "the checker rejects {}: {:?}",
            String::from_utf8_lossy(content),
            checked.verdict().errors
        );
        let back = checked.envelope().expect("valid").to_owned();
        assert_eq!(&back, envelope, "read back differs");
        let mut again = Vec::new();
        back.write_vec(&mut again);
        assert_eq!(again, line, "written twice differs");
    };
    verify(&envelope, &mut checker);

    for _ in 0..64 {
        let op = byte();
        if op == 0 && byte() == 0 {
            break;
        }
        now = now.checked_add_ms(step(byte())).unwrap_or(now);
        let result: Result<(), crate::envelope::EnvelopeError> = match op % 16 {
            0..=2 => {
                let end = now.checked_add_ms(step(byte()) * 10).unwrap_or(now);
                envelope.lease(now, end).map(|_| ())
            }
            3..=5 => {
                let outcome = Outcome::ALL[usize::from(byte()) % 4];
                let error = match byte() % 4 {
                    0 => None,
                    1 => AttemptError::new("java.io.IOException", &text(byte(), 10)).ok(),
                    2 => AttemptError::new(
                        if byte() % 2 == 0 {
                            "rdq.LeaseExpired"
                        } else {
                            "E"
                        },
                        &text(byte(), 4000 + usize::from(byte()) * 4),
                    )
                    .ok()
                    .map(|e| e.with_stack(&text(byte(), 65_000 + usize::from(byte()) * 8))),
                    _ => AttemptError::new("E", "m").ok().and_then(|e| {
                        let detail = JsonText::parse(VALUES[usize::from(byte()) % 8]).ok()?;
                        e.with_detail(detail)
                            .ok()?
                            .with_unknown(KEYS[usize::from(byte()) % 8], JsonText::null())
                            .ok()
                    }),
                };
                let next = byte();
                let at = now.checked_add_ms(step(byte())).unwrap_or(now);
                envelope
                    .finish_attempt(now, outcome, error)
                    .and_then(|f| match next % 5 {
                        0 => f.retry_at(at),
                        1 => f.dead_letter(),
                        2 => f.succeed(),
                        3 => f.cancel(),
                        _ => Ok(()), // dropped: the envelope does not change
                    })
            }
            6 | 7 => envelope.redrive(now),
            8 => envelope.cancel(),
            9 => envelope.migrate(u32::from(byte() % 3) + 1),
            10 => envelope.set_queue(NAMES[usize::from(byte()) % 6]),
            11 => envelope.set_header(KEYS[usize::from(byte()) % 8], &text(byte(), 3)),
            12 => envelope.insert_unknown(
                KEYS[usize::from(byte()) % 8],
                JsonText::parse(VALUES[usize::from(byte()) % 8])
                    .unwrap_or_else(|_| JsonText::null()),
            ),
            13 => {
                let len = match byte() % 16 {
                    0 => 800_000,
                    _ => usize::from(byte()),
                };
                envelope.set_payload(vec![byte(); len])
            }
            14 => PayloadRef::new(
                "s3://bucket/key",
                "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
                u64::from(byte()),
            )
            .and_then(|r| envelope.set_payload_ref(r)),
            _ => match byte() % 3 {
                0 => envelope.set_handler_version(Optional::Null),
                1 => envelope.set_handler_version(Optional::Set(text(byte(), 250))),
                _ => envelope.set_handler_version(Optional::Set("1.2.3".into())),
            },
        };
        match result {
            Ok(()) => drive.applied += 1,
            Err(_) => drive.refused += 1,
        }
        verify(&envelope, &mut checker);
    }
    drive
}

/// The version 2 `DEAD` envelope the documentation's examples read, made with the builder
/// (`01HWT0D7G0Q8V9W2R4T6Y8A0B2` on `billing.invoices`, one `PERMANENT_FAILURE` attempt).
pub fn dead_v2_line() -> Vec<u8> {
    use crate::envelope::{AttemptError, Outcome, Producer, Submit, Timestamp};
    let at = |ms: i64| Timestamp::from_unix_ms(1_714_564_800_000 + ms).unwrap_or(Timestamp::MAX);
    let made = (|| {
        let submit = Submit::new(
            "billing.invoices",
            "invoice.render",
            br#"{"n":1}"#.to_vec(),
            "application/json",
        )?
        .version(2)?
        .handler_version("1.4.0")?
        .header("traceparent", "00-abc")?
        .source("api");
        let mut envelope = Producer::with_clock(move || at(0)).submit(submit)?;
        envelope.set_id(
            "01HWT0D7G0Q8V9W2R4T6Y8A0B2"
                .parse()
                .unwrap_or(envelope.id()),
        )?;
        envelope.lease(at(1000), at(31_000))?;
        let error = AttemptError::new("java.lang.IllegalStateException", "boom")?;
        envelope
            .finish_attempt(at(1250), Outcome::PermanentFailure, Some(error))?
            .dead_letter()?;
        Ok::<_, crate::envelope::EnvelopeError>(envelope.to_json().into_bytes())
    })();
    made.unwrap_or_default()
}
