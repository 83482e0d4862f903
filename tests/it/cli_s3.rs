//! Object storage at the command line (docs/cli.md#object-storage), against a real
//! S3-compatible server on 127.0.0.1 (moto's server mode, `common::s3`): every command that
//! writes writes the same bytes to `s3://` as to files; a failed run, a missing input and a
//! signal each leave the previous object; errors name the URL and the cause.

use std::fs;
use std::io::Write;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::s3::{server, S3};
use crate::common::writers::{comparable, fill, outputs_of, WRITERS};
use crate::common::{gen_lines, scratch, stderr};

/// Runs the configured binary with `args` (standard input empty).
fn run(s3: &S3, args: &[&str]) -> Output {
    s3.bin()
        .args(args)
        // The HTML report's "made" time, the same for both runs.
        .env("SOURCE_DATE_EPOCH", "1796320800")
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::stream::encode_all(bytes, 3).unwrap()
}

#[test]
fn every_command_that_writes_writes_the_same_bytes_to_s3_as_to_files() {
    let Some(s3) = server() else { return };
    let bucket = s3.bucket("same-bytes");
    let dir = scratch("s3-same-bytes");
    let lines = gen_lines(400, 11, Some(1), 0.1);
    // Compressed, under a name that does not say so: read by its magic bytes, as files are.
    // The same last name as the object's, which the HTML report shows beside its examples.
    let input = zstd(&lines);
    fs::write(dir.join("export.data"), &input).unwrap();
    s3.put(&bucket, "in/export.data", &input);
    for (n, args) in WRITERS.iter().enumerate() {
        let local_out = dir.join(format!("out{n}"));
        fs::create_dir_all(&local_out).unwrap();
        let local = run(
            s3,
            &fill(
                args,
                dir.join("export.data").to_str().unwrap(),
                local_out.to_str().unwrap(),
            )
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        );
        let remote_in = format!("s3://{bucket}/in/export.data");
        let remote_out = format!("s3://{bucket}/out{n}");
        let remote = run(
            s3,
            &fill(args, &remote_in, &remote_out)
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        );
        assert_eq!(
            local.status.code(),
            remote.status.code(),
            "{args:?}: {}",
            stderr(&remote)
        );
        assert!(
            matches!(local.status.code(), Some(0 | 1)),
            "{args:?}: {}",
            stderr(&local)
        );
        assert_eq!(local.stdout, remote.stdout, "{args:?}");
        for name in outputs_of(args) {
            let want = fs::read(local_out.join(&name)).unwrap();
            let got = s3
                .get(&bucket, &format!("out{n}/{name}"))
                .unwrap_or_else(|| panic!("{args:?}: no object {name}"));
            let local_in = dir.join("export.data");
            let local_in = local_in.to_str().unwrap();
            assert!(
                comparable(&name, &want, &remote_in, local_in)
                    == comparable(&name, &got, &remote_in, local_in),
                "{args:?}: {name} differs ({} bytes on disk, {} in S3)",
                want.len(),
                got.len()
            );
        }
    }
    assert!(
        s3.open_uploads(&bucket).is_empty(),
        "{:?}",
        s3.open_uploads(&bucket)
    );
}

#[test]
fn large_objects_are_read_in_segments_and_written_in_parts_to_the_same_bytes() {
    let Some(s3) = server() else { return };
    let bucket = s3.bucket("large");
    let dir = scratch("s3-large");
    // About 20 MB: three parts to write, and (segments of 1 MiB by the test builds' hook)
    // twenty segments to read, three at once, handed on in order.
    let lines = gen_lines(6000, 5, None, 0.02);
    assert!(lines.len() > 17 << 20, "{} bytes", lines.len());
    fs::write(dir.join("in.jsonl"), &lines).unwrap();
    s3.put(&bucket, "big.jsonl", &lines);
    let out = s3
        .bin()
        .env("RDQ_ENVELOPE_TEST_SEGMENT_BYTES", (1 << 20).to_string())
        .args([
            "validate",
            "-q",
            &format!("s3://{bucket}/big.jsonl"),
            "--valid-out",
            &format!("s3://{bucket}/valid.jsonl"),
            "-o",
            "/dev/null",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let local = run(
        s3,
        &[
            "validate",
            "-q",
            dir.join("in.jsonl").to_str().unwrap(),
            "--valid-out",
            "-",
            "-o",
            "/dev/null",
        ],
    );
    let got = s3.get(&bucket, "valid.jsonl").unwrap();
    assert!(got.len() > 16 << 20);
    assert!(
        got == local.stdout,
        "{} bytes against {}",
        got.len(),
        local.stdout.len()
    );
    assert!(s3.open_uploads(&bucket).is_empty());
}

#[test]
fn an_empty_object_is_an_empty_input_and_an_empty_output() {
    let Some(s3) = server() else { return };
    let bucket = s3.bucket("empty");
    s3.put(&bucket, "empty.jsonl", b"");
    let out = run(
        s3,
        &[
            "validate",
            &format!("s3://{bucket}/empty.jsonl"),
            "--valid-out",
            &format!("s3://{bucket}/valid.jsonl"),
            "-o",
            "/dev/null",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(s3.get(&bucket, "valid.jsonl").unwrap(), b"");
}

#[test]
fn keys_are_taken_byte_for_byte() {
    let Some(s3) = server() else { return };
    let bucket = s3.bucket("keys");
    let lines = gen_lines(5, 1, None, 0.0);
    for key in ["a b/c+d.jsonl", "100%/é~#[x].jsonl"] {
        s3.put(&bucket, key, &lines);
        let out_key = format!("out/{key}");
        let out = run(
            s3,
            &[
                "validate",
                "-q",
                &format!("s3://{bucket}/{key}"),
                "--valid-out",
                &format!("s3://{bucket}/{out_key}"),
                "-o",
                "/dev/null",
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{key}: {}", stderr(&out));
        assert_eq!(
            s3.get(&bucket, &out_key).as_deref(),
            Some(&lines[..]),
            "{key}"
        );
    }
}

#[test]
fn a_failed_run_leaves_every_previous_object_and_no_upload() {
    let Some(s3) = server() else { return };
    let bucket = s3.bucket("failed");
    let mut corrupt = zstd(&gen_lines(300, 2, None, 0.0));
    let cut = corrupt.len() - 5;
    corrupt.truncate(cut);
    s3.put(&bucket, "in/corrupt.jsonl.zst", &corrupt);
    for key in ["out/report.txt", "out/valid.jsonl", "out/summary.json"] {
        s3.put(&bucket, key, b"previous\n");
    }
    let url = |k: &str| format!("s3://{bucket}/{k}");
    let out = run(
        s3,
        &[
            "validate",
            &url("in/corrupt.jsonl.zst"),
            "-o",
            &url("out/report.txt"),
            "--valid-out",
            &url("out/valid.jsonl"),
            "--summary",
            &url("out/summary.json"),
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    for key in ["out/report.txt", "out/valid.jsonl", "out/summary.json"] {
        assert_eq!(s3.get(&bucket, key).unwrap(), b"previous\n", "{key}");
    }
    assert!(
        s3.open_uploads(&bucket).is_empty(),
        "{:?}",
        s3.open_uploads(&bucket)
    );
    // A local output failing in the commit's first phase leaves the objects too.
    s3.put(&bucket, "in/good.jsonl", &gen_lines(10, 2, None, 0.0));
    let out = run(
        s3,
        &[
            "validate",
            &url("in/good.jsonl"),
            "--valid-out",
            &url("out/valid.jsonl"),
            "--summary",
            "/dev/full",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(s3.get(&bucket, "out/valid.jsonl").unwrap(), b"previous\n");
    assert!(s3.open_uploads(&bucket).is_empty());
}

#[test]
fn missing_inputs_buckets_and_bad_urls_are_exit_2_naming_the_url_before_any_output() {
    let Some(s3) = server() else { return };
    let bucket = s3.bucket("errors");
    s3.put(&bucket, "out/valid.jsonl", b"previous\n");
    s3.put(&bucket, "in/good.jsonl", &gen_lines(3, 2, None, 0.0));
    let valid_out = format!("s3://{bucket}/out/valid.jsonl");
    let cases: &[(&str, &str)] = &[
        (&format!("s3://{bucket}/in/missing.jsonl"), "no such object"),
        ("s3://no-such-bucket-here/in/x.jsonl", "no such bucket"),
        ("s3://Bad_Bucket/x", "bad URL"),
        ("s3://", "no bucket"),
    ];
    for (input, why) in cases {
        let out = run(
            s3,
            &[
                "validate",
                &format!("s3://{bucket}/in/good.jsonl"),
                input,
                "--valid-out",
                &valid_out,
            ],
        );
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{input}: {err}");
        assert!(
            err.contains(input.trim_end_matches('/')) && err.contains(why),
            "{input}: {err}"
        );
        assert_eq!(
            s3.get(&bucket, "out/valid.jsonl").unwrap(),
            b"previous\n",
            "{input}"
        );
        assert!(
            out.stdout.is_empty(),
            "{input}: nothing read before the check"
        );
    }
    // Outputs: a missing bucket, an http URL, a prefix.
    let input = format!("s3://{bucket}/in/good.jsonl");
    for (output, why) in [
        ("s3://no-such-bucket-here/out.jsonl", "no such bucket"),
        ("http://127.0.0.1:9/out.jsonl", "read-only"),
        ("s3://x/", "bad URL"),
    ] {
        let out = run(
            s3,
            &["validate", &input, "--valid-out", output, "-o", &valid_out],
        );
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{output}: {err}");
        assert!(err.contains(why), "{output}: {err}");
        assert_eq!(s3.get(&bucket, "out/valid.jsonl").unwrap(), b"previous\n");
    }
    // An endpoint nothing listens on: the cause, after the retries AWS_MAX_ATTEMPTS allows.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let started = Instant::now();
    let out = s3
        .bin()
        .env("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{port}"))
        .env("AWS_MAX_ATTEMPTS", "2")
        .args(["validate", &input])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&input) && err.contains("onnection refused"),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    // Plain http without AWS_ALLOW_HTTP: the way out is named.
    let out = s3
        .bin()
        .env_remove("AWS_ALLOW_HTTP")
        .args(["validate", &input])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("AWS_ALLOW_HTTP=true"),
        "{}",
        stderr(&out)
    );
    // Without credentials and with the instance metadata service forbidden.
    let out = s3
        .bin()
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .args(["validate", &input])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no AWS credentials"),
        "{}",
        stderr(&out)
    );
    assert!(s3.open_uploads(&bucket).is_empty());
}

#[test]
fn an_output_object_that_is_an_input_is_refused() {
    let Some(s3) = server() else { return };
    let bucket = s3.bucket("alias");
    s3.put(&bucket, "a.jsonl", &gen_lines(3, 2, None, 0.0));
    let a = format!("s3://{bucket}/a.jsonl");
    let out = run(s3, &["validate", &a, "--valid-out", &a]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("input file is output file"),
        "{}",
        stderr(&out)
    );
    let b = format!("s3://{bucket}/b.jsonl");
    let out = run(s3, &["validate", &a, "--valid-out", &b, "--rejects", &b]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("two outputs are the same file"),
        "{}",
        stderr(&out)
    );
    assert_eq!(s3.keys(&bucket, ""), ["a.jsonl"]);
}

#[test]
fn signals_abort_the_uploads_and_leave_the_previous_objects() {
    let Some(s3) = server() else { return };
    let lines = gen_lines(50, 3, None, 0.0);
    for (signal, code) in [("-INT", 130), ("-TERM", 143), ("-HUP", 129)] {
        let bucket = s3.bucket("signals");
        s3.put(&bucket, "out/valid.jsonl", b"previous\n");
        let mut child = s3
            .bin()
            .args([
                "validate",
                "--valid-out",
                &format!("s3://{bucket}/out/valid.jsonl"),
                "-o",
                &format!("s3://{bucket}/out/report.txt"),
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&lines).unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while s3.open_uploads(&bucket).len() < 2 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(s3.open_uploads(&bucket).len(), 2, "{signal}");
        let sent = std::process::Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let status = child.wait().unwrap();
        drop(stdin);
        assert_eq!(status.code(), Some(code), "{signal}");
        assert_eq!(
            s3.get(&bucket, "out/valid.jsonl").unwrap(),
            b"previous\n",
            "{signal}"
        );
        assert_eq!(s3.keys(&bucket, ""), ["out/valid.jsonl"], "{signal}");
        assert!(
            s3.open_uploads(&bucket).is_empty(),
            "{signal}: {:?}",
            s3.open_uploads(&bucket)
        );
    }
}

#[test]
fn http_urls_are_read_only_inputs_with_their_query_strings() {
    let Some(s3) = server() else { return };
    let bucket = s3.bucket("http");
    let lines = gen_lines(30, 4, None, 0.1);
    s3.put(&bucket, "export.jsonl.zst", &zstd(&lines));
    // moto serves objects to unsigned GETs: an HTTP URL as a console or a presigned URL gives.
    let url = format!("{}/{bucket}/export.jsonl.zst?x-id=GetObject", s3.endpoint());
    let remote = run(
        s3,
        &[
            "validate",
            "-q",
            &url,
            "--valid-out",
            "-",
            "-o",
            "/dev/null",
        ],
    );
    let local = crate::common::run(
        &["validate", "-q", "--valid-out", "-", "-o", "/dev/null"],
        &lines,
    );
    assert_eq!(
        remote.status.code(),
        local.status.code(),
        "{}",
        stderr(&remote)
    );
    assert_eq!(remote.stdout, local.stdout);
    let missing = format!("{}/{bucket}/missing.jsonl", s3.endpoint());
    let out = run(s3, &["validate", &missing]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains(&missing), "{}", stderr(&out));
}

#[test]
fn an_object_replaced_between_two_reads_is_told() {
    let Some(s3) = server() else { return };
    let bucket = s3.bucket("reread");
    let lines = gen_lines(40, 8, None, 0.0);
    s3.put(&bucket, "a.jsonl", &lines);
    let a = format!("s3://{bucket}/a.jsonl");
    // Unchanged: the two reads agree with a local run.
    let out = run(s3, &["dedupe", "-q", "--keep", "newest", &a]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let local = crate::common::run(&["dedupe", "-q", "--keep", "newest"], &lines);
    assert_eq!(out.stdout, local.stdout);
    // Replaced between the reads (the test hook runs between them).
    let replace = s3.put_command(&bucket, "a.jsonl", b"{}\n");
    let out = s3
        .bin()
        .env("RDQ_ENVELOPE_TEST_BETWEEN_READS", &replace)
        .args([
            "dedupe",
            "--keep",
            "newest",
            &a,
            "-o",
            &format!("s3://{bucket}/out.jsonl"),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&a) && stderr(&out).contains("changed"),
        "{}",
        stderr(&out)
    );
    assert!(s3.get(&bucket, "out.jsonl").is_none());
    assert!(s3.open_uploads(&bucket).is_empty());
}

#[test]
fn the_aws_variables_at_their_edges() {
    let Some(s3) = server() else { return };
    let bucket = s3.bucket("env");
    let lines = gen_lines(3, 9, None, 0.0);
    s3.put(&bucket, "a.jsonl", &lines);
    let a = format!("s3://{bucket}/a.jsonl");
    let dir = scratch("s3-env");
    let validate = |command: &mut std::process::Command| {
        command.args(["validate", "-q", &a]).output().unwrap()
    };
    // Set but empty is unset, as for AWS's own tools.
    let out = validate(
        s3.bin()
            .env("AWS_SESSION_TOKEN", "")
            .env("AWS_PROFILE", "")
            .env("AWS_MAX_ATTEMPTS", "")
            .env("AWS_ENDPOINT_URL_S3", "")
            .env("AWS_DEFAULT_REGION", ""),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // AWS_ENDPOINT_URL_S3 wins over AWS_ENDPOINT_URL.
    let out = validate(
        s3.bin()
            .env("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
            .env("AWS_ENDPOINT_URL_S3", s3.endpoint()),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for attempts in ["0", "-1", "1e30", "two"] {
        let out = validate(s3.bin().env("AWS_MAX_ATTEMPTS", attempts));
        assert_eq!(out.status.code(), Some(2), "{attempts}");
        assert!(
            stderr(&out).contains("AWS_MAX_ATTEMPTS"),
            "{}",
            stderr(&out)
        );
    }
    // A profile's static keys, from the shared credentials file.
    let credentials = dir.join("credentials");
    fs::write(
        &credentials,
        "[default]\naws_access_key_id = wrong\n[ops]\naws_access_key_id = testing\n\
         aws_secret_access_key = testing\n",
    )
    .unwrap();
    let out = validate(
        s3.bin()
            .env_remove("AWS_ACCESS_KEY_ID")
            .env_remove("AWS_SECRET_ACCESS_KEY")
            .env("AWS_PROFILE", "ops")
            .env("AWS_SHARED_CREDENTIALS_FILE", &credentials),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for (profile, why) in [("nope", "no such profile"), ("default", "only static keys")] {
        let out = validate(
            s3.bin()
                .env_remove("AWS_ACCESS_KEY_ID")
                .env_remove("AWS_SECRET_ACCESS_KEY")
                .env("AWS_PROFILE", profile)
                .env("AWS_SHARED_CREDENTIALS_FILE", &credentials),
        );
        assert_eq!(out.status.code(), Some(2), "{profile}");
        assert!(stderr(&out).contains(why), "{profile}: {}", stderr(&out));
    }
}

/// SeaweedFS, a second server whose identities are enforced: denied access, for reading and
/// for writing, is status 2 naming the URL before any output is touched; and a round trip
/// there writes the same bytes and leaves no upload open.
#[test]
fn on_seaweedfs_denied_access_is_exit_2_and_a_round_trip_is_the_same_bytes() {
    let Some(weed) = crate::common::s3::seaweed() else {
        return;
    };
    let bucket = weed.bucket("denied");
    let lines = gen_lines(200, 12, None, 0.05);
    weed.put(&bucket, "in/a.jsonl.zst", &zstd(&lines));
    weed.put(&bucket, "out/valid.jsonl", b"previous\n");
    let input = format!("s3://{bucket}/in/a.jsonl.zst");
    let valid_out = format!("s3://{bucket}/out/valid.jsonl");
    // A reader may read, not write: the upload is refused when the output is opened.
    let reader = |command: &mut std::process::Command| {
        command
            .env("AWS_ACCESS_KEY_ID", "reader")
            .env("AWS_SECRET_ACCESS_KEY", "readersecret");
    };
    let mut command = weed.bin();
    reader(&mut command);
    let out = command
        .args(["validate", "-q", &input, "--valid-out", &valid_out])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&valid_out) && stderr(&out).contains("access denied"),
        "{}",
        stderr(&out)
    );
    assert_eq!(weed.get(&bucket, "out/valid.jsonl").unwrap(), b"previous\n");
    let mut command = weed.bin();
    reader(&mut command);
    let out = command.args(["validate", "-q", &input]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // A key the server does not know cannot even read.
    let out = weed
        .bin()
        .env("AWS_ACCESS_KEY_ID", "stranger")
        .args(["validate", "-q", &input, "--valid-out", &valid_out])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains(&input), "{}", stderr(&out));
    // The round trip: the same bytes as a local run, the previous object replaced.
    let out = weed
        .bin()
        .args([
            "validate",
            "-q",
            &input,
            "--valid-out",
            &valid_out,
            "-o",
            "/dev/null",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let local = crate::common::run(
        &["validate", "-q", "--valid-out", "-", "-o", "/dev/null"],
        &lines,
    );
    assert!(weed.get(&bucket, "out/valid.jsonl").unwrap() == local.stdout);
    assert!(weed.open_uploads(&bucket).is_empty());
}

/// Issue 40, point 2: a setting the store client is handed is checked first. Before, an
/// endpoint typed without its scheme, a port over 65535, a space at an end or a line break in
/// a key made the S3 client panic ("internal error (a bug, please report it)"); now each is
/// status 2 naming the variable and its value (a secret's value is never shown), for inputs,
/// outputs and `batch` alike, and nothing is touched.
#[test]
fn a_bad_aws_setting_is_exit_2_naming_it_for_inputs_outputs_and_batch() {
    let Some(s3) = server() else { return };
    let bucket = s3.bucket("settings");
    let lines = gen_lines(3, 9, None, 0.0);
    s3.put(&bucket, "a.jsonl", &lines);
    s3.put(&bucket, "in/a.jsonl", &lines);
    s3.put(&bucket, "out.jsonl", b"previous\n");
    let dir = scratch("s3-settings");
    fs::write(dir.join("a.jsonl"), &lines).unwrap();
    fs::create_dir_all(dir.join("shards")).unwrap();
    fs::write(dir.join("shards/a.jsonl"), &lines).unwrap();
    let endpoint = s3.endpoint();
    let port = endpoint.rsplit(':').next().unwrap().to_owned();
    let cases: &[(&str, String, &str)] = &[
        (
            "AWS_ENDPOINT_URL",
            format!("localhost:{port}"),
            "has no scheme",
        ),
        (
            "AWS_ENDPOINT_URL",
            format!("127.0.0.1:{port}"),
            "has no scheme",
        ),
        (
            "AWS_ENDPOINT_URL",
            format!("{endpoint} "),
            "ends with a space",
        ),
        (
            "AWS_ENDPOINT_URL",
            "http://127.0.0.1:99999".into(),
            "1 to 65535",
        ),
        ("AWS_ENDPOINT_URL", "http://".into(), "has no host"),
        (
            "AWS_ENDPOINT_URL_S3",
            "http://[::1:9000".into(),
            "no closing ]",
        ),
        (
            "AWS_ENDPOINT_URL_S3",
            format!("{endpoint}/a b"),
            "which a URL cannot",
        ),
        ("AWS_REGION", "us-east-1\n".into(), "control character"),
        ("AWS_REGION", "us east".into(), "is not a region"),
        ("AWS_REGION", "us-east-1 ".into(), "ends with a space"),
        ("AWS_ACCESS_KEY_ID", "test\ning".into(), "control character"),
        ("AWS_ACCESS_KEY_ID", "test ing".into(), "no space"),
        ("AWS_SESSION_TOKEN", "t\u{f8}ken".into(), "visible ASCII"),
        ("AWS_ALLOW_HTTP", "maybe".into(), "neither true nor false"),
        (
            "AWS_SKIP_SIGNATURE",
            "sometimes".into(),
            "neither true nor false",
        ),
        ("AWS_MAX_ATTEMPTS", "3 ".into(), "ends with a space"),
        ("HTTPS_PROXY", "socks5://127.0.0.1:1".into(), "SOCKS"),
        ("HTTP_PROXY", "http://127.0.0.1:99999".into(), "1 to 65535"),
    ];
    let runs: &[(&str, Vec<String>)] = &[
        (
            "input",
            vec![
                "validate".into(),
                "-q".into(),
                format!("s3://{bucket}/a.jsonl"),
            ],
        ),
        (
            "output",
            vec![
                "validate".into(),
                "-q".into(),
                dir.join("a.jsonl").display().to_string(),
                "--valid-out".into(),
                format!("s3://{bucket}/out.jsonl"),
            ],
        ),
        (
            "batch in",
            vec![
                "batch".into(),
                "validate".into(),
                format!("s3://{bucket}/in/"),
                "--out".into(),
                dir.join("batch-out").display().to_string(),
            ],
        ),
        (
            "batch out",
            vec![
                "batch".into(),
                "validate".into(),
                dir.join("shards").display().to_string(),
                "--out".into(),
                format!("s3://{bucket}/batch/"),
            ],
        ),
    ];
    for (var, value, why) in cases {
        for (what, args) in runs {
            let out = s3
                .bin()
                .env(var, value)
                .args(args)
                .stdin(Stdio::null())
                .output()
                .unwrap();
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{var}={value:?}, {what}: {err}");
            assert!(
                err.contains(var) && err.contains(why) && !err.contains("internal error"),
                "{var}={value:?}, {what}: {err}"
            );
            if var.contains("SECRET") || var.contains("TOKEN") {
                assert!(!err.contains(value.as_str()), "{var} shown: {err}");
            } else {
                assert!(err.contains(&format!("{value:?}")), "{var}, {what}: {err}");
            }
        }
    }
    // Only the variable in effect is read: one it wins over may hold anything.
    let out = s3
        .bin()
        .env("AWS_ENDPOINT", "localhost:1 ")
        .env("AWS_DEFAULT_REGION", "nowhere at all")
        .env("AWS_TOKEN", "\n")
        .args(["validate", "-q", &format!("s3://{bucket}/a.jsonl")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("AWS_TOKEN"), "{}", stderr(&out));
    let out = s3
        .bin()
        .env("AWS_ENDPOINT", "localhost:1 ")
        .env("AWS_DEFAULT_REGION", "nowhere at all")
        .env("AWS_SESSION_TOKEN", "token")
        .env("AWS_TOKEN", "\n")
        .args(["validate", "-q", &format!("s3://{bucket}/a.jsonl")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Not UTF-8: named, not passed over.
    {
        use std::os::unix::ffi::OsStrExt;
        let out = s3
            .bin()
            .env("AWS_REGION", std::ffi::OsStr::from_bytes(b"us-\xffast-1"))
            .args(["validate", "-q", &format!("s3://{bucket}/a.jsonl")])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(
            stderr(&out).contains("AWS_REGION: its value is not UTF-8"),
            "{}",
            stderr(&out)
        );
    }
    // A profile's name and keys are checked as the variables are.
    let credentials = dir.join("credentials");
    fs::write(
        &credentials,
        "[ops]\naws_access_key_id = test ing\naws_secret_access_key = testing\n",
    )
    .unwrap();
    for (profile, why) in [
        ("ops ", "AWS_PROFILE=\"ops \": ends with a space"),
        (
            "ops",
            "aws_access_key_id of the profile ops=\"test ing\": holds ' '",
        ),
    ] {
        let out = s3
            .bin()
            .env_remove("AWS_ACCESS_KEY_ID")
            .env_remove("AWS_SECRET_ACCESS_KEY")
            .env("AWS_PROFILE", profile)
            .env("AWS_SHARED_CREDENTIALS_FILE", &credentials)
            .args(["validate", "-q", &format!("s3://{bucket}/a.jsonl")])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{profile:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(why), "{profile:?}: {}", stderr(&out));
    }
    // A secret is named, never shown.
    let out = s3
        .bin()
        .env("AWS_SECRET_ACCESS_KEY", "hunter2 ")
        .args(["validate", "-q", &format!("s3://{bucket}/a.jsonl")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("AWS_SECRET_ACCESS_KEY") && !stderr(&out).contains("hunter2"),
        "{}",
        stderr(&out)
    );
    assert_eq!(s3.get(&bucket, "out.jsonl").unwrap(), b"previous\n");
    assert!(s3.keys(&bucket, "batch/").is_empty());
    assert!(s3.open_uploads(&bucket).is_empty());
    assert!(!dir.join("batch-out").join("a.jsonl").exists());
}

/// Issue 40, point 4: an `http(s)://` input as servers really send it. A body without
/// `Content-Length`, sent chunked (as consoles stream an export), was refused ("Content-Length
/// Header missing from response"); it is read as a stream. A body cut short is resumed under
/// the first answer's ETag where the server honours ranges; where it cannot be (no ETag, a
/// server that answers a range with the whole body, a new ETag), the run is status 2 naming
/// the URL and the byte reached, and no output is written: never a line twice or a mix.
#[test]
fn http_inputs_are_read_chunked_and_resumed_only_under_the_same_etag() {
    use crate::common::unruly::{Act, Kind, Served, Unruly};
    let lines = gen_lines(400, 21, None, 0.05);
    let local = crate::common::run(
        &["validate", "-q", "--valid-out", "-", "-o", "/dev/null"],
        &lines,
    );
    let dir = scratch("s3-http-bodies");
    let served = |e_tag: Option<&str>, ranges: bool, length: bool| Served {
        body: lines.clone(),
        e_tag: e_tag.map(str::to_owned),
        ranges,
        length,
    };
    let read = |proxy: &Unruly, name: &str| {
        let url = format!("{}/exports/{name}.jsonl?token=abc", proxy.endpoint());
        let valid = dir.join(format!("{name}.valid.jsonl"));
        let out = crate::common::bin()
            .env("AWS_MAX_ATTEMPTS", "3")
            .args(["validate", "-q", &url, "--valid-out"])
            .arg(&valid)
            .args(["-o", "/dev/null"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (url, out, fs::read(&valid).ok())
    };
    let whole = |what: &str, (url, out, valid): (String, Output, Option<Vec<u8>>)| {
        assert_eq!(
            out.status.code(),
            local.status.code(),
            "{what}: {url}: {}",
            stderr(&out)
        );
        assert!(valid.as_deref() == Some(&local.stdout[..]), "{what}: {url}");
    };
    // Chunked, no length, no ETag, no ranges: read to its end.
    let proxy = Unruly::serving(served(None, false, false));
    whole("chunked", read(&proxy, "chunked"));
    // Chunked with an ETag and ranges, cut twice: resumed where it stopped, under that ETag.
    let proxy = Unruly::serving(served(Some("\"v1\""), true, false));
    proxy.on_first(Kind::GetObject, 2, Act::CutBody(100_000));
    whole("chunked, cut, resumed", read(&proxy, "resumed"));
    assert_eq!(proxy.arrived(Kind::GetObject), 3);
    // With a length, cut: resumed too.
    let proxy = Unruly::serving(served(Some("\"v1\""), true, true));
    proxy.on_first(Kind::GetObject, 1, Act::CutBody(123_457));
    whole("a length, cut, resumed", read(&proxy, "length"));
    // Redirected, then answered: followed.
    let proxy = Unruly::serving(served(None, false, true));
    proxy.on_first(Kind::GetObject, 1, Act::Redirect(307));
    proxy.on_after(Kind::GetObject, 1, 1, Act::Redirect(301));
    whole("redirected", read(&proxy, "redirected"));
    // 503 twice, then the body: retried.
    let proxy = Unruly::serving(served(None, false, false));
    proxy.on_first(Kind::GetObject, 2, Act::Status(503));
    whole("503 then 200", read(&proxy, "busy"));
    // Cut where it cannot resume: status 2 naming the URL and the byte, no output.
    for (name, e_tag, ranges, length, why) in [
        ("no-etag", None, true, false, "without a strong ETag"),
        ("no-ranges", Some("\"v1\""), false, true, "does not resume"),
        (
            "weak-etag",
            Some("W/\"v1\""),
            true,
            true,
            "without a strong ETag",
        ),
    ] {
        let proxy = Unruly::serving(served(e_tag, ranges, length));
        proxy.on_first(Kind::GetObject, 1, Act::CutBody(100_000));
        let (url, out, valid) = read(&proxy, name);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains(&url) && err.contains("cut at byte 100000") && err.contains(why),
            "{name}: {err}"
        );
        assert!(valid.is_none(), "{name}: an output was written");
    }
    // Replaced between the cut and the resumption: told, not mixed.
    let proxy = Unruly::serving(served(Some("\"v1\""), true, true));
    proxy.on_first(Kind::GetObject, 1, Act::CutBody(100_000));
    proxy.on_first(
        Kind::GetObject,
        1,
        Act::DelayAnswer(Duration::from_millis(300)),
    );
    let replacing = {
        let proxy_body = served(Some("\"v2\""), true, true);
        let proxy = &proxy;
        std::thread::scope(|scope| {
            scope.spawn(|| {
                assert!(proxy.wait_held(Kind::GetObject, Duration::from_secs(30)));
                proxy.serve(proxy_body);
            });
            read(proxy, "replaced")
        })
    };
    let (url, out, valid) = replacing;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&url) && stderr(&out).contains("changed"),
        "{}",
        stderr(&out)
    );
    assert!(valid.is_none());
}

/// An `http(s)://` input the HTTP client cannot take, or the settings it is read with, is status
/// 2 naming it before any output is created; before, a space at the URL's end was dropped and
/// `http:///x` was read as the host `x`.
#[test]
fn http_inputs_and_their_settings_are_checked_before_any_output() {
    let Some(s3) = server() else { return };
    let bucket = s3.bucket("http-check");
    s3.put(&bucket, "out.jsonl", b"previous\n");
    let output = format!("s3://{bucket}/out.jsonl");
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str);
    let cases: &[Case] = &[
        ("http://127.0.0.1:9/x.jsonl ", &[], "ends with a space"),
        ("http://127.0.0.1:9/x.jsonl\t", &[], "control character"),
        ("http:///x.jsonl", &[], "no host"),
        ("http://127.0.0.1:99999/x.jsonl", &[], "invalid port"),
        ("https://[::1/x.jsonl", &[], "invalid IPv6"),
        (
            "http://127.0.0.1:9/x.jsonl",
            &[("AWS_MAX_ATTEMPTS", "0")],
            "AWS_MAX_ATTEMPTS",
        ),
        (
            "http://127.0.0.1:9/x.jsonl",
            &[("HTTP_PROXY", "socks5h://127.0.0.1:1")],
            "HTTP_PROXY",
        ),
        (
            "http://127.0.0.1:9/x.jsonl",
            &[("ALL_PROXY", "http://proxy:0")],
            "ALL_PROXY",
        ),
    ];
    for (url, env, why) in cases {
        let out = s3
            .bin()
            .envs(env.iter().copied())
            .args(["validate", "-q", url, "--valid-out", &output])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{url:?} {env:?}: {err}");
        assert!(
            err.contains(why) && !err.contains("internal error"),
            "{url:?} {env:?}: {err}"
        );
        assert!(
            s3.open_uploads(&bucket).is_empty(),
            "{url:?}: an upload was begun"
        );
    }
    assert_eq!(s3.get(&bucket, "out.jsonl").unwrap(), b"previous\n");
}

/// An `s3://` prefix given as an input is read as a folder is: the objects under it at any
/// depth, in key order, hidden keys (a segment that starts with a dot), other names and
/// rejects files left out and named in the books; the same bytes as the objects named one by
/// one. A prefix with nothing to read is status 2.
#[test]
fn a_prefix_is_read_as_a_folder_of_its_objects() {
    let Some(s3) = server() else { return };
    let bucket = s3.bucket("prefix-folder");
    let dir = scratch("s3-prefix-folder");
    s3.put(&bucket, "in/b/2.jsonl", &gen_lines(40, 2, None, 0.1));
    s3.put(
        &bucket,
        "in/a.jsonl.zst",
        &zstd(&gen_lines(30, 1, None, 0.1)),
    );
    s3.put(&bucket, "in/.staging/x.jsonl", &gen_lines(3, 3, None, 0.0));
    s3.put(&bucket, "in/.staging/y.jsonl", &gen_lines(3, 4, None, 0.0));
    s3.put(&bucket, "in/manifest.json", b"{}\n");
    s3.put(&bucket, "in/a.rejects.jsonl", b"{}\n");
    s3.put(&bucket, "inside/c.jsonl", &gen_lines(3, 5, None, 0.0));
    let summary = dir.join("books.json");
    let by_prefix = run(
        s3,
        &[
            "migrate",
            "--to",
            "2",
            &format!("s3://{bucket}/in/"),
            "--summary",
            summary.to_str().unwrap(),
        ],
    );
    let by_name = run(
        s3,
        &[
            "migrate",
            "--to",
            "2",
            &format!("s3://{bucket}/in/a.jsonl.zst"),
            &format!("s3://{bucket}/in/b/2.jsonl"),
        ],
    );
    assert_eq!(by_prefix.status.code(), Some(1), "{}", stderr(&by_prefix));
    assert_eq!(by_prefix.status.code(), by_name.status.code());
    assert!(by_prefix.stdout == by_name.stdout);
    let books: serde_json::Value = serde_json::from_slice(&fs::read(&summary).unwrap()).unwrap();
    assert_eq!(books["lines"], 70);
    let skipped: Vec<String> = books["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            format!(
                "{} {}",
                s["path"].as_str().unwrap(),
                s["why"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(skipped.len(), 3, "{skipped:?}");
    assert_eq!(skipped[0], format!("s3://{bucket}/in/.staging hidden"));
    assert!(skipped[1].starts_with(&format!("s3://{bucket}/in/a.rejects.jsonl a rejects file")));
    assert!(skipped[2].starts_with(&format!("s3://{bucket}/in/manifest.json not named")));
    // Nothing to read under it, or no object at all.
    s3.put(&bucket, "other/notes.md", b"not envelopes\n");
    for prefix in ["empty/", "other/"] {
        let out = run(s3, &["validate", &format!("s3://{bucket}/{prefix}")]);
        assert_eq!(out.status.code(), Some(2), "{prefix}");
        assert!(
            stderr(&out).contains("no .jsonl or .ndjson file in this folder or below"),
            "{prefix}: {}",
            stderr(&out)
        );
    }
}
