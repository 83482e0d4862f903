//! The reference storage plugins of `contrib/storage-plugins/` (docs/plugins.md) held to the
//! compliance kit: the SQLite plugin and the PostgreSQL one with a lossless residual pass
//! `compliance run --exact`; the PostgreSQL one with a `jsonb` residual fails, and the kit's
//! report names what jsonb changed. Each PostgreSQL test starts its own server (Debian's
//! `postgresql` package) on 127.0.0.1 in a scratch folder, and stops it when the test ends,
//! panics included.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::common;
use common::{need_or_skip, scratch, stderr, stdout, tool_or_skip};

/// A shell word for a path: single-quoted, so that a folder with spaces still runs.
fn quoted(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

/// A reference plugin's script: `contrib/storage-plugins/STORE/store.py`.
fn plugin(store: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("contrib/storage-plugins/{store}/store.py"))
}

/// `rdq-envelope compliance run` of a plugin whose commands are `python3 STORE ARGS write` and
/// `... read`, with `extra` flags and `environment` added.
fn run_kit(store: &str, args: &str, extra: &[&str], environment: &[(&str, String)]) -> Output {
    let command = |verb: &str| format!("python3 {} {args} {verb}", quoted(&plugin(store)));
    let mut kit = common::bin();
    kit.args([
        "compliance",
        "run",
        "--write",
        &command("write"),
        "--read",
        &command("read"),
    ])
    .args(["--timeout", "300"])
    .args(extra);
    for (name, value) in environment {
        kit.env(name, value);
    }
    kit.output().expect("rdq-envelope runs")
}

/// Whether `python3` runs and imports `module`, by [`need_or_skip`]'s rule (psycopg is a pip
/// install away outside CI).
fn python_or_skip(module: &str, what_for: &str) -> bool {
    if tool_or_skip(&["python3"], what_for).is_none() {
        return false;
    }
    let found = Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output()
        .map_err(|e| e.to_string())
        .and_then(|o| {
            if o.status.success() {
                Ok(())
            } else {
                Err(format!(
                    "python3 cannot import {module} (pip install '{}')",
                    match module {
                        "psycopg" => "psycopg[binary]>=3.1,<4",
                        other => other,
                    }
                ))
            }
        });
    need_or_skip(found, what_for).is_some()
}

#[test]
fn the_sqlite_plugin_passes_the_kit_byte_for_byte() {
    if !python_or_skip("sqlite3", "the SQLite reference plugin") {
        return;
    }
    for extra in [&[][..], &["--exact"][..]] {
        let out = run_kit("sqlite", "", extra, &[]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{extra:?}\n{}\n{}",
            stdout(&out),
            stderr(&out)
        );
    }
}

/// A PostgreSQL server of its own in a scratch folder, listening on 127.0.0.1 only; stopped,
/// and its folder removed, when dropped (a test that panics included).
struct Postgres {
    folder: PathBuf,
    bin: PathBuf,
    port: u16,
    /// How a command runs as the server's user: PostgreSQL refuses to run as root, and CI
    /// runs as root.
    as_user: Vec<String>,
}

impl Postgres {
    /// The newest server under /usr/lib/postgresql/*/bin (Debian's layout), started; `None`
    /// when there is none (skipped outside CI, a failure under CI).
    fn start() -> Option<Postgres> {
        let bin = need_or_skip(server_binaries(), "the PostgreSQL reference plugin")?;
        let folder = scratch("postgres");
        let as_user = unprivileged(&folder);
        let server = Postgres {
            port: free_port(),
            folder,
            bin,
            as_user,
        };
        let data = server.folder.join("data");
        server.pg(
            "initdb",
            &[
                "-D",
                &data.display().to_string(),
                "-U",
                "rdq",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-locale",
                "--no-sync",
            ],
        );
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {} -k {} -c fsync=off",
            server.port,
            server.folder.display()
        );
        server.pg(
            "pg_ctl",
            &[
                "-D",
                &data.display().to_string(),
                "-o",
                &options,
                "-l",
                &server.folder.join("server.log").display().to_string(),
                "-w",
                "-t",
                "60",
                "start",
            ],
        );
        Some(server)
    }

    /// One of the server's programs, to be run as its user.
    fn command(&self, program: &str) -> Command {
        let program = self.bin.join(program);
        match self.as_user.split_first() {
            Some((runner, rest)) => {
                let mut command = Command::new(runner);
                command.args(rest).arg(program);
                command
            }
            None => Command::new(program),
        }
    }

    /// Runs one of the server's programs as its user; panics, with its output and the
    /// server's log, when it fails.
    fn pg(&self, program: &str, args: &[&str]) {
        let out = self
            .command(program)
            .args(args)
            .output()
            .expect("the PostgreSQL program runs");
        let log = std::fs::read_to_string(self.folder.join("server.log")).unwrap_or_default();
        assert!(
            out.status.success(),
            "{program} {args:?}: {}\n{}\nserver log:\n{log}",
            stdout(&out),
            stderr(&out)
        );
    }

    /// The standard libpq variables that point a client (psycopg) at this server.
    fn environment(&self) -> Vec<(&'static str, String)> {
        vec![
            ("PGHOST", "127.0.0.1".to_owned()),
            ("PGPORT", self.port.to_string()),
            ("PGUSER", "rdq".to_owned()),
            ("PGDATABASE", "postgres".to_owned()),
        ]
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let data = self.folder.join("data").display().to_string();
        let _ = self
            .command("pg_ctl")
            .args(["-D", &data, "-m", "immediate", "-w", "stop"])
            .output();
        let _ = std::fs::remove_dir_all(&self.folder);
    }
}

/// The bin folder of the newest PostgreSQL server installed the Debian way.
fn server_binaries() -> Result<PathBuf, String> {
    let root = Path::new("/usr/lib/postgresql");
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir(root)
        .map_err(|_| {
            format!(
                "no PostgreSQL server in {} (Debian: apt-get install postgresql)",
                root.display()
            )
        })?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin).ok_or_else(|| {
        format!(
            "no {}/*/bin/initdb (Debian: apt-get install postgresql)",
            root.display()
        )
    })
}

/// What runs a command as an unprivileged user when this process is root (PostgreSQL refuses
/// root), with `folder` given to that user; nothing when it is not root.
fn unprivileged(folder: &Path) -> Vec<String> {
    let uid = Command::new("id").arg("-u").output().expect("id runs");
    if stdout(&uid).trim() != "0" {
        return Vec::new();
    }
    // Debian's package makes a `postgres` user; without one, nobody (65534).
    let (owner, runner): (&str, &[&str]) = if Command::new("id")
        .args(["-u", "postgres"])
        .output()
        .is_ok_and(|o| o.status.success())
    {
        ("postgres:", &["runuser", "-u", "postgres", "--"])
    } else {
        (
            "65534:65534",
            &[
                "setpriv",
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "--",
            ],
        )
    };
    let chown = Command::new("chown")
        .args([owner, &folder.display().to_string()])
        .output()
        .expect("chown runs");
    assert!(chown.status.success(), "chown: {}", stderr(&chown));
    runner.iter().map(|s| (*s).to_owned()).collect()
}

/// A port nothing listens on now (the server takes it a moment later).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port on 127.0.0.1")
        .port()
}

#[test]
fn the_postgres_plugin_with_a_text_or_json_residual_passes_the_kit_byte_for_byte() {
    if !python_or_skip("psycopg", "the PostgreSQL reference plugin (psycopg 3)") {
        return;
    }
    let Some(server) = Postgres::start() else {
        return;
    };
    for residual in ["--residual text", "--residual json"] {
        let out = run_kit("postgres", residual, &["--exact"], &server.environment());
        assert_eq!(
            out.status.code(),
            Some(0),
            "{residual}\n{}\n{}",
            stdout(&out),
            stderr(&out)
        );
    }
}

/// One row of the JSON report's `differences`: (fixture, pointer, class, sent, found).
type Difference = (String, String, String, String, String);

/// The report (`--format json`) of a run of the jsonb variant, which must fail (status 1);
/// its differences, and the write command's standard error.
fn jsonb_report(server: &Postgres, extra: &[&str]) -> (Vec<Difference>, String) {
    let mut flags = vec!["--format", "json"];
    flags.extend(extra);
    let out = run_kit(
        "postgres",
        "--residual jsonb",
        &flags,
        &server.environment(),
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(&out), stderr(&out)));
    let text = |value: &Value, key: &str| value[key].as_str().unwrap_or_default().to_owned();
    let differences = report["differences"]
        .as_array()
        .expect("the report lists its differences")
        .iter()
        .map(|d| {
            let row = |key| text(d, key);
            (
                row("fixture"),
                row("pointer"),
                row("class"),
                row("sent"),
                row("found"),
            )
        })
        .collect();
    assert_eq!(report["differences_left_out"], 0, "{report:#}");
    (differences, text(&report["write"], "stderr"))
}

fn difference(fixture: &str, pointer: &str, class: &str, sent: &str, found: &str) -> Difference {
    (
        fixture.into(),
        pointer.into(),
        class.into(),
        sent.into(),
        found.into(),
    )
}

/// The fixtures that carry `\u0000` in an unknown member or `detail`, in the set's order: jsonb
/// refuses them, the plugin says so on its standard error, and the kit reports them missing.
const REFUSED_BY_JSONB: [&str; 3] = [
    "v1_unknown_string_escapes",
    "v2_unknown_string_escapes",
    "v1_nul_in_unknown_and_detail",
];

#[test]
fn the_postgres_plugin_with_a_jsonb_residual_fails_and_the_kit_names_what_jsonb_changed() {
    if !python_or_skip("psycopg", "the PostgreSQL reference plugin (psycopg 3)") {
        return;
    }
    let Some(server) = Postgres::start() else {
        return;
    };

    // The contract's equality: jsonb keeps every value, so what it loses is only the
    // envelopes it refused to store.
    let (differences, write_errors) = jsonb_report(&server, &[]);
    let missing: Vec<Difference> = REFUSED_BY_JSONB
        .iter()
        .map(|fixture| difference(fixture, "", "envelope_missing", "", ""))
        .collect();
    assert_eq!(differences, missing);
    assert_eq!(
        write_errors
            .matches("refused: unsupported Unicode escape sequence")
            .count(),
        REFUSED_BY_JSONB.len(),
        "{write_errors}"
    );

    // The same bytes: jsonb's own spelling of each value shows, with the exact pointers.
    let junit = server.folder.join("junit.xml");
    let junit_flag = junit.display().to_string();
    let (differences, _) = jsonb_report(&server, &["--exact", "--junit", &junit_flag]);
    for expected in [
        difference(
            "v1_number_1e2",
            "/n",
            "number_spelling_changed",
            "1e2",
            "100",
        ),
        difference(
            "v1_number_1e2",
            "/in_array/0",
            "number_spelling_changed",
            "1e2",
            "100",
        ),
        difference(
            "v1_number_minus_0",
            "/n",
            "number_spelling_changed",
            "-0",
            "0",
        ),
        difference(
            "v1_number_minus_0_0",
            "/n",
            "number_spelling_changed",
            "-0.0",
            "0.0",
        ),
        difference(
            "v1_number_exponent_leading_zeros",
            "/n",
            "number_spelling_changed",
            "1e002",
            "100",
        ),
        difference(
            "v1_number_negative_exponent_fraction",
            "/n",
            "number_spelling_changed",
            "-1.5E-7",
            "-0.00000015",
        ),
        difference(
            "v1_numbers_in_detail",
            "/attempts/0/error/detail/1",
            "number_spelling_changed",
            "1e2",
            "100",
        ),
        difference(
            "v1_unknown_member_order",
            "/m",
            "member_order_changed",
            r#""z","a","aa","b""#,
            r#""a","b","z","aa""#,
        ),
        difference(
            "v1_unknown_key_escapes",
            "/A",
            "string_spelling_changed",
            r#""\u0041""#,
            r#""A""#,
        ),
        difference(
            "v1_astral_surrogate_escapes",
            "/pair_upper",
            "string_spelling_changed",
            r#""\uD83D\uDE00""#,
            "\"\u{1F600}\"",
        ),
    ] {
        assert!(
            differences.contains(&expected),
            "{expected:?} not in {differences:#?}"
        );
    }
    // A `1.0` comes back as `1.0`: jsonb's numeric keeps the scale, and only the white space
    // jsonb writes after `:` and `,` differs.
    assert!(differences
        .iter()
        .any(|(fixture, pointer, class, ..)| fixture == "v1_number_1_0"
            && pointer.is_empty()
            && class == "white_space_changed"));
    for fixture in REFUSED_BY_JSONB {
        assert!(differences.contains(&difference(fixture, "", "envelope_missing", "", "")));
    }
    // Nothing else: no value changed, no unknown member lost.
    let classes: std::collections::BTreeSet<&str> = differences
        .iter()
        .map(|(_, _, class, ..)| class.as_str())
        .collect();
    assert_eq!(
        classes,
        [
            "envelope_missing",
            "member_order_changed",
            "number_spelling_changed",
            "string_spelling_changed",
            "white_space_changed",
        ]
        .into_iter()
        .collect(),
    );
    let junit = std::fs::read_to_string(&junit).expect("the JUnit report is written");
    assert!(junit.contains(r#"name="v1_number_1e2""#), "{junit}");
    assert!(
        junit.contains("unsupported Unicode escape sequence"),
        "{junit}"
    );
}
