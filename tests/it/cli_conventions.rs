//! The conventions of the tools people already use (ripgrep, fd, bat, zstd), at the command
//! line: `-V`/`--version`, `--color` with NO_COLOR/CLICOLOR/CLICOLOR_FORCE, global flags before
//! the subcommand, enumerated values in any letter case, `RDQ_ENVELOPE_JOBS`, `--queue-limits
//! FILE`, and the completions and man pages the wheel installs.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::common;
use common::{bin, scratch, stderr, stdout};

pub(crate) const SAMPLE: &str = "samples/dlq-sample.jsonl.zst";

/// The binary with none of the colour variables of the environment the tests run in.
pub(crate) fn plain() -> Command {
    let mut command = bin();
    for var in [
        "NO_COLOR",
        "CLICOLOR",
        "CLICOLOR_FORCE",
        "RDQ_ENVELOPE_JOBS",
        "RDQ_ENVELOPE_SIMD",
        "RDQ_ENVELOPE_READER",
    ] {
        command.env_remove(var);
    }
    command
}

pub(crate) fn output(mut command: Command, args: &[&str]) -> Output {
    command.args(args).output().expect("the binary runs")
}

/// The binary run with `args` and these environment variables (none of the others of
/// [`plain`]).
pub(crate) fn with_env(vars: &[(&str, &str)], args: &[&str]) -> Output {
    let mut command = plain();
    command.envs(vars.iter().copied());
    output(command, args)
}

pub(crate) fn has_ansi(bytes: &[u8]) -> bool {
    bytes.windows(2).any(|w| w == b"\x1b[")
}

#[test]
fn short_version_is_one_line_with_the_commit_when_built_from_git() {
    let out = output(plain(), &["-V"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        text.starts_with(&format!("rdq-envelope {version}")),
        "{text}"
    );
    assert_eq!(text.lines().count(), 1, "{text}");
    // Built from this checkout when git knows it (CI clones it): the short commit follows.
    let head = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|h| h.status.success());
    if let Some(head) = head {
        let head = String::from_utf8_lossy(&head.stdout).trim().to_owned();
        let rev = text.split("(rev ").nth(1).expect("a commit");
        // build.rs runs again when HEAD moves, so the binary under test names HEAD.
        assert_eq!(rev.trim_end().trim_end_matches(')'), head, "{text}");
    }
}

#[test]
fn long_version_names_the_target_and_the_simd_paths_this_cpu_runs() {
    let out = output(plain(), &["--version"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("rdq-envelope "), "{text}");
    assert_eq!(lines[1], "", "{text}");
    let target = lines[2].strip_prefix("target: ").expect("a target line");
    assert!(target.starts_with(std::env::consts::ARCH), "{text}");
    assert!(target.contains(std::env::consts::OS), "{text}");
    let simd = lines[3].strip_prefix("simd: ").expect("a simd line");
    let paths = rdq_envelope::json::simd_paths();
    let fastest = paths[0];
    assert!(simd.starts_with(fastest.name), "{simd}");
    for feature in fastest.features {
        assert!(simd.contains(&format!("+{feature}")), "{simd}");
    }
    for other in &paths[1..] {
        assert!(simd.contains(other.name), "{simd}");
    }
    // The optional features this build has: the test build's own.
    let features = lines[4]
        .strip_prefix("features: ")
        .expect("a features line");
    assert_eq!(
        features.starts_with("parquet"),
        cfg!(feature = "parquet"),
        "{text}"
    );
    assert_eq!(
        features
            .split(" (")
            .next()
            .unwrap()
            .split(' ')
            .any(|f| f == "s3"),
        cfg!(feature = "s3"),
        "{text}"
    );
    // A `cfg` attribute, not `cfg!`: the detection macro does not exist on other targets.
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        assert!(simd.starts_with("avx2 (+avx2 "), "{simd}");
        assert!(simd.ends_with("also sse4.2, portable)"), "{simd}");
    }
    if cfg!(target_arch = "aarch64") {
        assert_eq!(simd, "neon (+neon; also portable)", "{text}");
    }

    // RDQ_ENVELOPE_SIMD picks the portable classifier: --version says so.
    let text = stdout(&with_env(
        &[("RDQ_ENVELOPE_SIMD", "portable")],
        &["--version"],
    ));
    let simd = text.lines().nth(3).unwrap();
    assert!(simd.starts_with("simd: portable"), "{simd}");
    if paths.len() > 1 {
        assert!(simd.contains("RDQ_ENVELOPE_SIMD"), "{simd}");
    }
}

#[test]
fn validate_colours_code_and_pointer_only_when_asked() {
    let never = output(plain(), &["validate", "-q", "--color", "never", SAMPLE]);
    assert_eq!(never.status.code(), Some(1));
    assert!(!has_ansi(&never.stdout));
    // Into a pipe, auto is no colour: the bytes are those of --color never.
    let auto = output(plain(), &["validate", "-q", SAMPLE]);
    assert_eq!(auto.stdout, never.stdout);

    let always = output(plain(), &["validate", "-q", "--color", "always", SAMPLE]);
    assert_eq!(always.status.code(), Some(1));
    let text = stdout(&always);
    let first = text.lines().next().unwrap();
    assert_eq!(
        first,
        "samples/dlq-sample.jsonl.zst:21: \x1b[1m/attempts/0/error/message\x1b[0m: \
         \x1b[1;31mFIELD_TOO_LONG\x1b[0m: 5057 bytes: over the 4096-byte limit and not cut as \
         the truncation rule says"
    );
    // Without the escapes, the very bytes of the plain form.
    let stripped = text
        .replace("\x1b[1m", "")
        .replace("\x1b[1;31m", "")
        .replace("\x1b[0m", "");
    assert_eq!(stripped.as_bytes(), never.stdout);

    // CLICOLOR_FORCE colours even a pipe; NO_COLOR wins over it; --color wins over both.
    assert_eq!(
        with_env(&[("CLICOLOR_FORCE", "1")], &["validate", "-q", SAMPLE]).stdout,
        always.stdout
    );
    assert_eq!(
        with_env(
            &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")],
            &["validate", "-q", SAMPLE]
        )
        .stdout,
        never.stdout
    );
    let args = ["validate", "-q", "--color", "never", SAMPLE];
    assert_eq!(
        with_env(&[("CLICOLOR_FORCE", "1")], &args).stdout,
        never.stdout
    );
    let args = ["--color", "always", "validate", "-q", SAMPLE];
    assert_eq!(with_env(&[("NO_COLOR", "1")], &args).stdout, always.stdout);

    // An -o file: only --color always colours it, never CLICOLOR_FORCE.
    let dir = scratch("conventions-colour-o");
    let file = dir.join("diagnostics.txt");
    let file_arg = file.to_str().unwrap();
    with_env(
        &[("CLICOLOR_FORCE", "1")],
        &["validate", "-q", "-o", file_arg, SAMPLE],
    );
    assert_eq!(std::fs::read(&file).unwrap(), never.stdout);
    output(
        plain(),
        &[
            "validate", "-q", "--color", "always", "-o", file_arg, SAMPLE,
        ],
    );
    assert_eq!(std::fs::read(&file).unwrap(), always.stdout);

    // The JSON form and the rejects are data: never coloured.
    let json = output(
        plain(),
        &[
            "validate", "-q", "--color", "always", "--format", "json", SAMPLE,
        ],
    );
    assert!(!has_ansi(&json.stdout));

    // A warning is labelled in yellow (the line of `explain ID_TIME_MISMATCH`).
    let warned = r#"{"envelope_version":1,"id":"01HWT0D7G0Q8V9W2R4T6Y8A0B2","queue":"billing.invoices","handler_ref":"invoice.render","payload":"eyJuIjoxfQ==","payload_content_type":"application/json","headers":{"rdq.source":"api","traceparent":"00-abc"},"status":"DEAD","attempt_count":1,"redrive_count":0,"next_attempt_at":null,"lease_expires_at":null,"created_at":"2024-05-01T11:59:58.000Z","attempts":[{"attempt_no":1,"started_at":"2024-05-01T12:00:01.000Z","finished_at":"2024-05-01T12:00:01.250Z","outcome":"PERMANENT_FAILURE","error":{"type":"java.lang.IllegalStateException","message":"boom"}}]}"#;
    let args = ["validate", "-q", "--warnings", "--color", "always"];
    let out = common::run(&args, format!("{warned}\n").as_bytes());
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout(&out).starts_with(
            "<stdin>:1: \x1b[1m/id\x1b[0m: \x1b[1;33mwarning: ID_TIME_MISMATCH\x1b[0m: "
        ),
        "{:?}",
        stdout(&out)
    );
}

#[test]
fn stats_tables_are_coloured_only_when_asked() {
    let never = output(plain(), &["stats", "-q", SAMPLE]);
    assert!(!has_ansi(&never.stdout) && !never.stdout.is_empty());
    let always = output(plain(), &["stats", "-q", "--color", "always", SAMPLE]);
    assert!(has_ansi(&always.stdout));
    assert!(has_ansi(
        &with_env(&[("CLICOLOR_FORCE", "1")], &["stats", "-q", SAMPLE]).stdout
    ));
    assert_eq!(
        with_env(
            &[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")],
            &["stats", "-q", SAMPLE]
        )
        .stdout,
        never.stdout
    );
    assert_eq!(
        with_env(&[("CLICOLOR", "0")], &["stats", "-q", SAMPLE]).stdout,
        never.stdout
    );
    let json = output(
        plain(),
        &[
            "stats", "-q", "--color", "always", "--format", "json", SAMPLE,
        ],
    );
    assert!(!has_ansi(&json.stdout));
    let bad = output(plain(), &["--color", "sometimes", "stats", SAMPLE]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("--color"), "{}", stderr(&bad));
}

#[test]
fn quiet_jobs_and_color_go_before_the_subcommand_too() {
    let after = output(plain(), &["validate", "-q", "-j", "1", SAMPLE]);
    let before = output(
        plain(),
        &["-q", "-j", "1", "--color", "never", "validate", SAMPLE],
    );
    assert_eq!(before.status.code(), Some(1));
    assert_eq!(before.stdout, after.stdout);
    assert!(before.stderr.is_empty(), "{}", stderr(&before));
    let loud = output(plain(), &["-j", "2", "validate", SAMPLE]);
    assert!(stderr(&loud).contains("300 lines"), "{}", stderr(&loud));
    assert_eq!(loud.stdout, after.stdout);

    // A bad value before the subcommand is a usage error as after it.
    for args in [
        &["-j", "0", "validate", SAMPLE][..],
        &["validate", "-j", "0", SAMPLE],
    ] {
        let out = output(plain(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains("--jobs"), "{}", stderr(&out));
    }
    // Nested: batch's commands take them too.
    let dir = scratch("conventions-batch");
    let (input, out_dir) = (dir.join("in"), dir.join("out"));
    std::fs::create_dir_all(&input).unwrap();
    std::fs::copy(SAMPLE, input.join("a.jsonl.zst")).unwrap();
    let args = [
        "-q",
        "-j",
        "1",
        "batch",
        "validate",
        input.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ];
    let out = output(plain(), &args);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));

    // A command with no use for -q or -j refuses them, wherever they are given.
    for args in [
        &["-j", "2", "gen", "--count", "1"][..],
        &["gen", "-j", "2", "--count", "1"],
        &["-q", "schema"],
        &["explain", "-q", "BAD_ATTEMPT"],
    ] {
        let out = output(plain(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&out).contains("does nothing for"),
            "{}",
            stderr(&out)
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    // --color is a taste an alias may set: every command takes it.
    let out = output(plain(), &["--color", "always", "gen", "--count", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn status_and_outcome_values_take_any_letter_case_but_envelopes_do_not() {
    let count = |args: &[&str]| {
        let mut all = vec!["filter", "-q", "--count"];
        all.extend_from_slice(args);
        all.push(SAMPLE);
        let out = output(plain(), &all);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        stdout(&out).trim().parse::<u64>().unwrap()
    };
    let upper = count(&["--status", "DEAD", "--outcome", "PERMANENT_FAILURE"]);
    assert!(upper > 0);
    assert_eq!(
        count(&["--status", "dead", "--outcome", "permanent_failure"]),
        upper
    );
    assert_eq!(
        count(&["--status", "Dead", "--outcome", "Permanent_Failure"]),
        upper
    );
    let out = output(plain(), &["filter", "--status", "gone", SAMPLE]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("DEAD"), "{}", stderr(&out));

    // The envelope rules stay strict: a lower-case status in a line is an error.
    let line = output(plain(), &["gen", "--count", "1", "--seed", "3"]).stdout;
    let line = String::from_utf8(line).unwrap();
    let status = line.split("\"status\":\"").nth(1).unwrap();
    let status = &status[..status.find('"').unwrap()];
    let lower = line.replace(
        &format!("\"status\":\"{status}\""),
        &format!("\"status\":\"{}\"", status.to_lowercase()),
    );
    let out = common::run(&["validate", "-q"], lower.as_bytes());
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains("/status"), "{}", stdout(&out));
}

#[test]
fn rdq_envelope_jobs_is_the_default_of_j_and_a_bad_value_is_named() {
    let with = |value: &str, args: &[&str]| with_env(&[("RDQ_ENVELOPE_JOBS", value)], args);
    let reference = output(plain(), &["validate", "-q", SAMPLE]);
    let one = with("1", &["validate", "-q", SAMPLE]);
    assert_eq!(one.status.code(), Some(1));
    assert_eq!(one.stdout, reference.stdout);

    // Checked before any input is opened: the message is about the variable, not the file.
    for bad in ["0", "many", "257", "-1"] {
        let out = with(bad, &["validate", "-q", "/nonexistent/input.jsonl"]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = stderr(&out);
        assert!(
            err.contains("RDQ_ENVELOPE_JOBS") && err.contains(bad),
            "{err}"
        );
        assert!(!err.contains("nonexistent"), "{err}");
    }
    // A flag wins over the variable, before or after the subcommand.
    for args in [
        &["-j", "2", "validate", "-q", SAMPLE][..],
        &["validate", "-q", "-j2", SAMPLE],
    ] {
        let out = with("many", args);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert_eq!(out.stdout, reference.stdout);
    }
    // Set but empty is unset; a command without workers never reads it.
    assert_eq!(with("", &["validate", "-q", SAMPLE]).status.code(), Some(1));
    assert_eq!(
        with("many", &["gen", "--count", "1"]).status.code(),
        Some(0)
    );
}

#[test]
fn queue_limits_from_a_toml_or_json_file_and_flags_win_for_their_queue() {
    let dir = scratch("conventions-queue-limits");
    let toml = dir.join("limits.toml");
    let json = dir.join("limits.json");
    std::fs::write(
        &toml,
        "# the deployment's queues\n\"billing.invoices\" = 3000\n\"mail\" = 9\n",
    )
    .unwrap();
    std::fs::write(&json, "{\"billing.invoices\": 3000, \"mail\": 9}\n").unwrap();
    let validate = |extra: &[&str]| {
        let mut args = vec!["validate", "-q"];
        args.extend_from_slice(extra);
        args.push(SAMPLE);
        let out = output(plain(), &args);
        assert_eq!(out.status.code(), Some(1), "{extra:?}: {}", stderr(&out));
        stdout(&out)
    };
    let flags = validate(&[
        "--queue-limit",
        "billing.invoices=3000",
        "--queue-limit",
        "mail=9",
    ]);
    assert!(flags.contains("PAYLOAD_TOO_LARGE"), "{flags}");
    assert_eq!(validate(&["--queue-limits", toml.to_str().unwrap()]), flags);
    assert_eq!(validate(&["--queue-limits", json.to_str().unwrap()]), flags);

    // --queue-limit replaces the file's limit of its queue, and only that one.
    let raised = validate(&[
        "--queue-limits",
        toml.to_str().unwrap(),
        "--queue-limit",
        "billing.invoices=1048576",
    ]);
    let only_mail = validate(&["--queue-limit", "mail=9"]);
    assert_eq!(raised, only_mail);
    assert!(!raised.contains("queue \"billing.invoices\""), "{raised}");

    // A bad file: status 2 before the input is opened, naming the file, the line, the problem.
    let cases: [(&str, &str, &str); 6] = [
        (
            "neg.toml",
            "mail = 5\n\"billing.invoices\" = -1\n",
            ":2: -1 is not a limit",
        ),
        (
            "dots.toml",
            "mail = 5\nbilling.invoices = 7\n",
            ":2: a table",
        ),
        (
            "twice.json",
            "{\"mail\": 5,\n \"mail\": 6}",
            ":2: \"mail\": given twice",
        ),
        ("text.json", "{\"mail\": \"5 MB\"}", ":1: invalid type"),
        ("broken.toml", "mail = 5\n[oops\n", ":2:"),
        (
            "empty-name.toml",
            "\"\" = 5\n",
            ":1: the queue name is empty",
        ),
    ];
    for (name, text, want) in cases {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let path = path.to_str().unwrap();
        let out = output(
            plain(),
            &[
                "validate",
                "--queue-limits",
                path,
                "/nonexistent/input.jsonl",
            ],
        );
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = stderr(&out);
        assert!(err.contains(&format!("{path}{want}")), "{name}: {err}");
        assert!(!err.contains("input.jsonl"), "{name}: {err}");
    }
    let missing = output(
        plain(),
        &[
            "validate",
            "--queue-limits",
            "/nonexistent/limits.toml",
            SAMPLE,
        ],
    );
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("/nonexistent/limits.toml: cannot open"));
}

/// `command` run with `args` to its end, killed (and the test failed) if it runs past
/// `limit`: a sanity bound for the tests of large inputs, far above what a linear run takes,
/// far below what a quadratic one would. Its output goes through files in `dir` (no pipe to
/// fill while waiting).
pub(crate) fn output_within(
    mut command: Command,
    args: &[&str],
    dir: &Path,
    limit: Duration,
) -> Output {
    let (out_path, err_path) = (dir.join("stdout"), dir.join("stderr"));
    let mut child = command
        .args(args)
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .expect("the binary runs");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{:?} ran past {limit:?}", &args[..args.len().min(4)]);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: std::fs::read(out_path).unwrap(),
        stderr: std::fs::read(err_path).unwrap(),
    }
}

/// The completions and man pages under contrib/wheel/data/share are what the binary writes
/// (the wheel installs them; see pyproject.toml). After a change to the command line, rewrite
/// them with `RDQ_ENVELOPE_BLESS=1 cargo test --test it cli_conventions::`.
#[test]
fn the_wheel_installs_the_current_completions_and_man_pages() {
    let share = Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/wheel/data/share");
    let bless = std::env::var_os("RDQ_ENVELOPE_BLESS").is_some();
    let mut expected: Vec<(std::path::PathBuf, Vec<u8>)> = Vec::new();
    for (shell, file) in [
        ("bash", "bash-completion/completions/rdq-envelope"),
        ("zsh", "zsh/site-functions/_rdq-envelope"),
        ("fish", "fish/vendor_completions.d/rdq-envelope.fish"),
    ] {
        let out = output(plain(), &["completions", shell]);
        assert_eq!(out.status.code(), Some(0));
        expected.push((share.join(file), out.stdout));
    }
    let pages = scratch("conventions-man");
    let out = output(plain(), &["man", "--dir", pages.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let man1 = share.join("man/man1");
    let mut names: Vec<_> = std::fs::read_dir(&pages)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    for name in &names {
        expected.push((man1.join(name), std::fs::read(pages.join(name)).unwrap()));
    }
    if bless {
        let _ = std::fs::remove_dir_all(&man1);
        for (path, bytes) in &expected {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
    }
    let mut stale = Vec::new();
    for (path, bytes) in &expected {
        if std::fs::read(path).ok().as_ref() != Some(bytes) {
            stale.push(path.display().to_string());
        }
    }
    let mut kept: Vec<_> = std::fs::read_dir(&man1)
        .map(|dir| dir.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    kept.sort();
    assert!(
        stale.is_empty() && kept == names,
        "stale or missing: {stale:?}; pages kept {kept:?}, written {names:?}: \
         run `RDQ_ENVELOPE_BLESS=1 cargo test --test it cli_conventions::`"
    );
}
