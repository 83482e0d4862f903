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
