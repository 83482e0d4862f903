//! Hostile cases: object storage as a whole. A store that misbehaves on purpose
//! (`common::unruly`, in front of the local S3 server or serving a body itself): slow answers
//! to each request kind, errors then success, bodies cut short or chunked, redirects, a server
//! that dies, and configuration the store client must never be handed unchecked.

use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::s3::{server, S3};
use crate::common::unruly::{Act, Kind, Unruly};
use crate::common::{gen_lines, stderr};

/// Runs the binary configured for `s3`, through `proxy`, with `args`.
fn through(s3: &S3, proxy: &Unruly, args: &[&str]) -> Output {
    s3.bin()
        .env("AWS_ENDPOINT_URL", proxy.endpoint())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

/// The helper itself: requests are told apart by kind and forwarded; a held answer can be
/// waited for while the store has already acted on the request.
#[test]
fn the_unruly_store_tells_request_kinds_apart_and_holds_answers() {
    let Some(s3) = server() else { return };
    let bucket = s3.bucket("unruly");
    let lines = gen_lines(20, 1, None, 0.0);
    s3.put(&bucket, "in.jsonl", &lines);
    let proxy = Unruly::in_front_of(&s3.endpoint());
    proxy.on(
        Kind::CreateMultipartUpload,
        Act::DelayAnswer(Duration::from_secs(60)),
    );
    let input = format!("s3://{bucket}/in.jsonl");
    let output = format!("s3://{bucket}/out.jsonl");
    let child = s3
        .bin()
        .env("AWS_ENDPOINT_URL", proxy.endpoint())
        .args(["validate", "-q", &input, "--valid-out", &output])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(proxy.wait_held(Kind::CreateMultipartUpload, Duration::from_secs(30)));
    // The store has created the upload; the tool has not heard of it yet.
    assert_eq!(s3.open_uploads(&bucket), ["out.jsonl"]);
    let started = Instant::now();
    proxy.release();
    let out = child.wait_with_output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(s3.get(&bucket, "out.jsonl").unwrap(), lines);
    // The input is asked for before any output is opened, then again when it is read.
    for (kind, n) in [
        (Kind::HeadObject, 2),
        (Kind::GetObject, 1),
        (Kind::CreateMultipartUpload, 1),
        (Kind::UploadPart, 1),
        (Kind::CompleteMultipartUpload, 1),
    ] {
        assert_eq!(proxy.arrived(kind), n, "{kind:?}: {:?}", proxy.log());
    }
    assert!(s3.open_uploads(&bucket).is_empty());
    // A status the first time, then the request passes: retried.
    proxy.clear();
    proxy.on_first(Kind::GetObject, 1, Act::Status(503));
    let out = through(s3, &proxy, &["validate", "-q", &input]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(proxy.arrived(Kind::GetObject), 3, "{:?}", proxy.log());
    // Dead: the port refuses connections.
    proxy.die();
    assert!(std::net::TcpStream::connect(proxy.endpoint().trim_start_matches("http://")).is_err());
}

/// One raw request to `proxy` (`Connection: close`): the answer's head and body as sent.
fn raw(proxy: &Unruly, head: &str) -> (String, Vec<u8>) {
    use std::io::{Read, Write};
    let mut stream =
        std::net::TcpStream::connect(proxy.endpoint().trim_start_matches("http://")).unwrap();
    write!(stream, "{head}Connection: close\r\n\r\n").unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(answer.len(), |at| at + 4);
    (
        String::from_utf8_lossy(&answer[..split]).into_owned(),
        answer[split..].to_vec(),
    )
}

/// The helper serving a body itself: ranges or not, a length or chunked, cut short.
#[test]
fn the_unruly_store_serves_bodies_as_told() {
    use crate::common::unruly::Served;
    let proxy = Unruly::serving(Served {
        body: b"0123456789".to_vec(),
        e_tag: Some("\"v1\"".to_owned()),
        ranges: true,
        length: false,
    });
    let (head, body) = raw(&proxy, "GET /x HTTP/1.1\r\nHost: h\r\nRange: bytes=2-4\r\n");
    assert!(head.starts_with("HTTP/1.1 206"), "{head}");
    assert!(head.contains("Transfer-Encoding: chunked") && !head.contains("Content-Length"));
    assert_eq!(body, b"3\r\n234\r\n0\r\n\r\n");
    let (head, _) = raw(&proxy, "GET /x HTTP/1.1\r\nHost: h\r\nIf-Match: \"v0\"\r\n");
    assert!(head.starts_with("HTTP/1.1 412"), "{head}");
    proxy.serve(Served {
        body: b"0123456789".to_vec(),
        e_tag: None,
        ranges: false,
        length: true,
    });
    proxy.on_first(Kind::GetObject, 1, Act::CutBody(4));
    let (head, body) = raw(&proxy, "GET /x HTTP/1.1\r\nHost: h\r\nRange: bytes=2-4\r\n");
    assert!(head.starts_with("HTTP/1.1 200") && head.contains("Content-Length: 10"));
    assert_eq!(body, b"0123");
    let (_, body) = raw(&proxy, "GET /x HTTP/1.1\r\nHost: h\r\n");
    assert_eq!(body, b"0123456789");
    proxy.on_first(Kind::GetObject, 1, Act::Redirect(307));
    let (head, _) = raw(&proxy, "GET /x?a=1 HTTP/1.1\r\nHost: h\r\n");
    assert!(
        head.starts_with("HTTP/1.1 307")
            && head.contains(&format!("Location: {}/x?a=1", proxy.endpoint())),
        "{head}"
    );
    proxy.on_first(Kind::HeadObject, 1, Act::Close);
    let (head, _) = raw(&proxy, "HEAD /x HTTP/1.1\r\nHost: h\r\n");
    assert!(head.is_empty(), "{head}");
}

/// What the store tests run: a bucket with an input (three segments of 64 KiB and an output of
/// about 200 KB: parts of 8 MiB make it one part), shards for `batch`, a corrupt input, and an
/// output object from before.
struct Scene {
    bucket: String,
    lines: Vec<u8>,
}

fn scene(s3: &S3, hint: &str) -> Scene {
    let bucket = s3.bucket(hint);
    let lines = gen_lines(300, 4, None, 0.0);
    s3.put(&bucket, "in.jsonl", &lines);
    s3.put(&bucket, "shards/a.jsonl", &gen_lines(20, 5, None, 0.0));
    s3.put(&bucket, "shards/b.jsonl", &gen_lines(20, 6, None, 0.0));
    let mut corrupt = zstd::stream::encode_all(&lines[..], 3).unwrap();
    corrupt.truncate(corrupt.len() - 5);
    s3.put(&bucket, "corrupt.jsonl.zst", &corrupt);
    s3.put(&bucket, "out.jsonl", b"previous\n");
    Scene { bucket, lines }
}

/// The runs that between them make every kind of request: an object read and written
/// (HEAD, GET, CreateMultipartUpload, UploadPart, CompleteMultipartUpload), a run that fails
/// (AbortMultipartUpload), and `batch` over prefixes (ListObjectsV2, PutObject, DeleteObjects).
/// Each run's status, standard error and how long it took.
fn every_kind(s3: &S3, proxy: &Unruly, scene: &Scene, env: &[(&str, &str)]) -> Vec<Ran> {
    let b = &scene.bucket;
    let runs: [(&str, Vec<String>); 3] = [
        (
            "read and write",
            vec![
                "validate".into(),
                "-q".into(),
                format!("s3://{b}/in.jsonl"),
                "--valid-out".into(),
                format!("s3://{b}/out.jsonl"),
                "-o".into(),
                "/dev/null".into(),
            ],
        ),
        (
            "a failed run",
            vec![
                "validate".into(),
                "-q".into(),
                format!("s3://{b}/corrupt.jsonl.zst"),
                "--valid-out".into(),
                format!("s3://{b}/out.jsonl"),
            ],
        ),
        (
            "batch",
            vec![
                "batch".into(),
                "validate".into(),
                format!("s3://{b}/shards/"),
                "--out".into(),
                format!("s3://{b}/batch/"),
            ],
        ),
    ];
    runs.into_iter()
        .map(|(what, args)| {
            let started = Instant::now();
            let out = s3
                .bin()
                .env("AWS_ENDPOINT_URL", proxy.endpoint())
                .env("RDQ_ENVELOPE_TEST_SEGMENT_BYTES", (64 << 10).to_string())
                .envs(env.iter().copied())
                .args(&args)
                .stdin(Stdio::null())
                .output()
                .expect("the binary runs");
            Ran {
                what,
                code: out.status.code(),
                err: stderr(&out),
                took: started.elapsed(),
            }
        })
        .collect()
}

#[derive(Debug)]
struct Ran {
    what: &'static str,
    code: Option<i32>,
    err: String,
    took: Duration,
}

/// Every kind of request a run makes.
const KINDS: [Kind; 9] = [
    Kind::HeadObject,
    Kind::GetObject,
    Kind::CreateMultipartUpload,
    Kind::UploadPart,
    Kind::CompleteMultipartUpload,
    Kind::AbortMultipartUpload,
    Kind::ListObjectsV2,
    Kind::PutObject,
    Kind::DeleteObjects,
];

/// What a run through a misbehaving store that recovers must end with: the output written as
/// a store that behaves writes it, the failed run's status 2 (its upload aborted), `batch` done,
/// and no upload left open.
fn as_if_well(s3: &S3, scene: &Scene, ran: &[Ran], why: &str) {
    let codes: Vec<_> = ran.iter().map(|r| r.code).collect();
    assert_eq!(codes, [Some(0), Some(2), Some(0)], "{why}: {ran:#?}");
    assert!(ran[1].err.contains("corrupt"), "{why}: {ran:#?}");
    assert!(
        s3.get(&scene.bucket, "out.jsonl").unwrap() == scene.lines,
        "{why}: the output"
    );
    assert!(
        s3.open_uploads(&scene.bucket).is_empty(),
        "{why}: {:?}",
        s3.open_uploads(&scene.bucket)
    );
    let batch = s3.keys(&scene.bucket, "batch/");
    assert!(
        batch.iter().any(|k| k.ends_with("manifest.json"))
            && !batch.iter().any(|k| k.contains("lock")),
        "{why}: {batch:?}"
    );
}

/// Each kind of request answered slowly (a second, every time): every run still finishes as
/// it would with a store that answers at once.
#[test]
fn each_request_kind_answered_slowly_still_finishes() {
    let Some(s3) = server() else { return };
    for kind in KINDS {
        let scene = scene(s3, "slow");
        let proxy = Unruly::in_front_of(&s3.endpoint());
        proxy.on(kind, Act::DelayAnswer(Duration::from_millis(1000)));
        let ran = every_kind(s3, &proxy, &scene, &[]);
        as_if_well(s3, &scene, &ran, &format!("{kind:?} slow"));
        assert!(proxy.arrived(kind) > 0, "{kind:?}: never asked for");
    }
}

/// Each kind of request slower than the timeout (shortened by the test builds' hook to 500 ms,
/// 60 s otherwise), every time, the store having acted on it: each run ends within the retries'
/// bounds, either as with a store that answers (a conditional write or a delete whose answer
/// was lost is found done) or with status 2 naming the URL and the timeout. The output is the
/// previous object or the whole new one, no upload is left open and no lock stays behind.
#[test]
fn each_request_kind_slower_than_the_timeout_ends_naming_the_url() {
    let Some(s3) = server() else { return };
    let env = [
        ("RDQ_ENVELOPE_TEST_TIMEOUT_MS", "500"),
        ("AWS_MAX_ATTEMPTS", "2"),
    ];
    for kind in KINDS {
        let scene = scene(s3, "timeout");
        let proxy = Unruly::in_front_of(&s3.endpoint());
        proxy.on(kind, Act::DelayAnswer(Duration::from_secs(3)));
        let ran = every_kind(s3, &proxy, &scene, &env);
        let b = &scene.bucket;
        for run in &ran {
            let well = match run.what {
                "a failed run" => run.code == Some(2) && run.err.contains("corrupt"),
                _ => run.code == Some(0),
            };
            let named = run.code == Some(2)
                && run.err.contains(&format!("s3://{b}/"))
                && run.err.contains("timed out");
            assert!(well || named, "{kind:?}, {}: {run:#?}", run.what);
            assert!(run.took < Duration::from_secs(30), "{kind:?}: {run:#?}");
        }
        // The lost answers that are found done: the run goes on as if they had come.
        if matches!(
            kind,
            Kind::PutObject | Kind::DeleteObjects | Kind::AbortMultipartUpload
        ) {
            as_if_well(s3, &scene, &ran, &format!("{kind:?} lost"));
        }
        let out = s3.get(b, "out.jsonl").unwrap();
        assert!(
            out == b"previous\n" || out == scene.lines,
            "{kind:?}: the output"
        );
        if kind == Kind::CompleteMultipartUpload {
            // The store completed it; the run cannot know, and says so.
            assert!(out == scene.lines);
            assert!(ran[0].err.contains("may have completed"), "{ran:#?}");
        }
        // A CreateMultipartUpload whose answer never came leaves an upload the run never
        // heard of: issue 40, point 1's to close.
        if kind != Kind::CreateMultipartUpload {
            assert!(
                s3.open_uploads(b).is_empty(),
                "{kind:?}: {:?}",
                s3.open_uploads(b)
            );
        }
        assert!(
            !s3.keys(b, "batch/").iter().any(|k| k.contains("lock")),
            "{kind:?}: the lock stays"
        );
    }
}

/// Each kind of request answered 503 (or 500) twice, then as it should: retried, every run
/// ends as with a store that answers at once.
#[test]
fn each_request_kind_failing_twice_then_answering_is_retried() {
    let Some(s3) = server() else { return };
    for (kind, status) in KINDS.iter().zip([503, 500].into_iter().cycle()) {
        let scene = scene(s3, "5xx");
        let proxy = Unruly::in_front_of(&s3.endpoint());
        proxy.on_first(*kind, 2, Act::Status(status));
        let ran = every_kind(s3, &proxy, &scene, &[]);
        as_if_well(s3, &scene, &ran, &format!("{kind:?} {status} twice"));
        assert!(proxy.arrived(*kind) > 2, "{kind:?}: {:?}", proxy.log());
    }
}

/// Bodies cut short: the first two GETs (of an object, a segment, a manifest) or listings cut at
/// their 100th byte: a segment is resumed where it stopped under the ETag the read began with
/// (the same lines, none twice); a listing or a small object cut is asked again.
#[test]
fn bodies_cut_short_are_resumed_under_the_same_etag() {
    let Some(s3) = server() else { return };
    for kind in [Kind::GetObject, Kind::ListObjectsV2] {
        let scene = scene(s3, "cut");
        let proxy = Unruly::in_front_of(&s3.endpoint());
        proxy.on_first(kind, 2, Act::CutBody(100));
        let ran = every_kind(s3, &proxy, &scene, &[]);
        as_if_well(s3, &scene, &ran, &format!("{kind:?} cut"));
    }
}

/// Each kind of answer sent chunked, without `Content-Length`, and each request redirected
/// (307 to the store itself; 301 for reads). What the S3 client cannot take (a HEAD or GET
/// without the object's size, a write redirected: its body cannot be sent again) ends the run
/// with status 2 naming the URL and why; everything else is read or followed as if the store
/// had answered straight.
#[test]
fn chunked_answers_and_redirects_from_the_store() {
    let Some(s3) = server() else { return };
    let cases = KINDS
        .iter()
        .map(|k| (*k, Act::Chunked))
        .chain(KINDS.iter().map(|k| (*k, Act::Redirect(307))))
        .chain(
            [Kind::HeadObject, Kind::GetObject, Kind::ListObjectsV2]
                .into_iter()
                .map(|k| (k, Act::Redirect(301))),
        );
    for (kind, act) in cases {
        let scene = scene(s3, "chunked");
        let proxy = Unruly::in_front_of(&s3.endpoint());
        proxy.on(kind, act.clone());
        let ran = every_kind(s3, &proxy, &scene, &[("AWS_MAX_ATTEMPTS", "2")]);
        let refused = match (&act, kind) {
            (Act::Chunked, Kind::HeadObject | Kind::GetObject) => Some("no Content-Length"),
            (Act::Redirect(_), Kind::UploadPart | Kind::PutObject) => Some("redirect"),
            _ => None,
        };
        let Some(why) = refused else {
            as_if_well(s3, &scene, &ran, &format!("{kind:?} {act:?}"));
            continue;
        };
        let b = &scene.bucket;
        for run in ran.iter().filter(|r| r.code != Some(0)) {
            assert!(
                run.code == Some(2)
                    && ((run.err.contains(&format!("s3://{b}/")) && run.err.contains(why))
                        || run.err.contains("corrupt")),
                "{kind:?} {act:?}: {run:#?}"
            );
        }
        assert!(
            ran.iter().any(|r| r.err.contains(why)),
            "{kind:?} {act:?}: {ran:#?}"
        );
        let out = s3.get(b, "out.jsonl").unwrap();
        assert!(
            out == b"previous\n" || out == scene.lines,
            "{kind:?} {act:?}"
        );
        assert!(s3.open_uploads(b).is_empty(), "{kind:?} {act:?}");
        assert!(!s3.keys(b, "batch/").iter().any(|k| k.contains("lock")));
    }
}

/// A store that dies. Its connections closed unanswered on every part uploaded: status 2
/// naming the URL, the previous object kept, the upload aborted. The whole server gone in the
/// middle of a read (a segment's GET): back a second later, the retries carry the run through;
/// gone for good, status 2 naming the URL within the retries' bounds, the previous object kept,
/// and the upload begun left for the bucket's lifecycle rule (docs/cli.md#object-storage): the
/// store cannot be reached to abort it.
#[test]
fn a_store_that_dies() {
    let Some(s3) = server() else { return };
    let scene_ = scene(s3, "dies");
    let b = &scene_.bucket;
    let proxy = Unruly::in_front_of(&s3.endpoint());
    proxy.on(Kind::UploadPart, Act::Close);
    let ran = every_kind(s3, &proxy, &scene_, &[("AWS_MAX_ATTEMPTS", "3")]);
    assert_eq!(ran[0].code, Some(2), "{ran:#?}");
    assert!(
        ran[0].err.contains(&format!("s3://{b}/out.jsonl")),
        "{ran:#?}"
    );
    assert_eq!(s3.get(b, "out.jsonl").unwrap(), b"previous\n");
    assert!(s3.open_uploads(b).is_empty(), "{:?}", s3.open_uploads(b));
    assert!(!s3.keys(b, "batch/").iter().any(|k| k.contains("lock")));

    // Down for a second in the middle of a read.
    let scene_ = scene(s3, "dies");
    let proxy = Unruly::in_front_of(&s3.endpoint());
    proxy.on_after(Kind::GetObject, 2, 1, Act::Die);
    let ran = std::thread::scope(|scope| {
        scope.spawn(|| {
            assert!(proxy.wait_dead(Duration::from_secs(30)));
            std::thread::sleep(Duration::from_secs(1));
            proxy.revive();
        });
        every_kind(s3, &proxy, &scene_, &[])
    });
    as_if_well(s3, &scene_, &ran, "down for a second");

    // Gone for good.
    let scene_ = scene(s3, "dies");
    let b = &scene_.bucket;
    let proxy = Unruly::in_front_of(&s3.endpoint());
    proxy.on_after(Kind::GetObject, 2, 1, Act::Die);
    let started = Instant::now();
    let out = s3
        .bin()
        .env("AWS_ENDPOINT_URL", proxy.endpoint())
        .env("RDQ_ENVELOPE_TEST_SEGMENT_BYTES", (64 << 10).to_string())
        .env("AWS_MAX_ATTEMPTS", "3")
        .args(["validate", "-q", &format!("s3://{b}/in.jsonl")])
        .args(["--valid-out", &format!("s3://{b}/out.jsonl")])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("s3://{b}/in.jsonl")) && err.contains("onnection refused"),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(120), "{err}");
    assert_eq!(s3.get(b, "out.jsonl").unwrap(), b"previous\n");
    assert_eq!(s3.open_uploads(b), ["out.jsonl"]);
}

/// An `http(s)://` input whose server answers slowly: a second is waited for; longer than the
/// timeout (60 s without a byte; 500 ms by the test builds' hook), every time, is status 2
/// naming the URL once the retries are spent.
#[test]
fn an_http_input_answered_slowly() {
    use crate::common::unruly::Served;
    let lines = gen_lines(50, 8, None, 0.0);
    let proxy = Unruly::serving(Served {
        body: lines.clone(),
        e_tag: Some("\"1\"".to_owned()),
        ranges: true,
        length: false,
    });
    let url = format!("{}/export.jsonl", proxy.endpoint());
    let validate = |env: &[(&str, &str)]| {
        crate::common::bin()
            .envs(env.iter().copied())
            .args([
                "validate",
                "-q",
                &url,
                "--valid-out",
                "-",
                "-o",
                "/dev/null",
            ])
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    proxy.on_first(Kind::GetObject, 1, Act::DelayAnswer(Duration::from_secs(1)));
    let out = validate(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stdout == lines);
    proxy.on(Kind::GetObject, Act::DelayAnswer(Duration::from_secs(3)));
    let started = Instant::now();
    let out = validate(&[
        ("RDQ_ENVELOPE_TEST_TIMEOUT_MS", "500"),
        ("AWS_MAX_ATTEMPTS", "2"),
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&url) && err.contains("timed out"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(20), "{err}");
}
