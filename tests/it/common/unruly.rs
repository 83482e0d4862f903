//! A store that misbehaves on purpose: an HTTP/1.1 server on a free port of 127.0.0.1 that a
//! test points the tool at (`AWS_ENDPOINT_URL`, or an `http://` input), either in front of the
//! local S3 server ([`Unruly::in_front_of`], a proxy) or serving one body itself
//! ([`Unruly::serving`]). Plain std: threads and a `TcpListener`.
//!
//! A test says, per request [`Kind`], what to do to the next requests of that kind ([`Act`]):
//! hold the request or its answer, answer a status, cut the body short, send it chunked,
//! redirect, close the connection before forwarding or lose the answer after the store acted,
//! or die. It can wait until a request of a kind has arrived
//! and is being held ([`Unruly::wait_held`]), to send the tool a signal exactly while that
//! request is in flight (held by [`Act::DelayRequest`], the store has not seen it; by
//! [`Act::DelayAnswer`], the store has acted):
//!
//! ```ignore
//! let proxy = Unruly::in_front_of(&s3.endpoint());
//! // The store creates the upload at once; its answer (the upload's ID) is held 30 s.
//! proxy.on(Kind::CreateMultipartUpload, Act::DelayAnswer(Duration::from_secs(30)));
//! let child = s3.bin().env("AWS_ENDPOINT_URL", proxy.endpoint()).args([...]).spawn()?;
//! assert!(proxy.wait_held(Kind::CreateMultipartUpload, Duration::from_secs(30)));
//! kill(child, SIGTERM); // the upload exists on the store; the tool does not know its ID yet
//! ```
//!
//! What every act means is on [`Act`]. A rule applies to requests that arrive after it is set;
//! several rules may apply to one request (a delay and a chunked body); of the acts that end
//! the request (a status, a redirect, a close, a death), the first rule's wins. A held request
//! is still forwarded when its hold ends, even if the tool has gone (a real store acts on a
//! request it received), unless the server died meanwhile. Requests are forwarded byte for byte (the `Host` header too, so that
//! signatures hold), each over a connection of its own to the store.
//!
//! Dropping the `Unruly` kills it ([`Unruly::die`]); a dead one can come back on its port
//! ([`Unruly::revive`]).

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// What an S3 request asks for, told from its method and query string (path-style addressing,
/// as the tool uses with an endpoint). A served body's GET and HEAD are `GetObject` and
/// `HeadObject`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `POST /bucket/key?uploads`
    CreateMultipartUpload,
    /// `PUT /bucket/key?partNumber=N&uploadId=ID`
    UploadPart,
    /// `POST /bucket/key?uploadId=ID`
    CompleteMultipartUpload,
    /// `DELETE /bucket/key?uploadId=ID`
    AbortMultipartUpload,
    /// `GET /bucket/key` (ranged or not)
    GetObject,
    /// `HEAD /bucket/key`
    HeadObject,
    /// `PUT /bucket/key` (conditional or not)
    PutObject,
    /// `GET /bucket?list-type=2...`
    ListObjectsV2,
    /// `DELETE /bucket/key`
    DeleteObject,
    /// `POST /bucket?delete`: how `object_store` deletes, even one object.
    DeleteObjects,
    /// Anything else (a bucket's uploads listed, a batch delete...).
    Other,
}

impl Kind {
    /// The kind of a request, from its method and target (`/bucket/key?query`).
    pub fn of(method: &str, target: &str) -> Kind {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let has = |name: &str| {
            query
                .split('&')
                .any(|pair| pair.split('=').next() == Some(name))
        };
        // "/bucket" or "/bucket/": no key.
        let bucket_only = path
            .trim_start_matches('/')
            .trim_end_matches('/')
            .find('/')
            .is_none();
        match method {
            "POST" if has("uploads") => Kind::CreateMultipartUpload,
            "POST" if has("delete") => Kind::DeleteObjects,
            "POST" if has("uploadId") => Kind::CompleteMultipartUpload,
            "PUT" if has("uploadId") && has("partNumber") => Kind::UploadPart,
            "PUT" if !bucket_only => Kind::PutObject,
            "DELETE" if has("uploadId") => Kind::AbortMultipartUpload,
            "DELETE" if !bucket_only => Kind::DeleteObject,
            "GET" if has("list-type") => Kind::ListObjectsV2,
            "GET" if !bucket_only => Kind::GetObject,
            "HEAD" if !bucket_only => Kind::HeadObject,
            _ => Kind::Other,
        }
    }
}

/// What to do to a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Act {
    /// Hold the request this long before the store sees it (a slow network on the way in).
    DelayRequest(Duration),
    /// Forward the request at once and hold the store's answer this long (the store has acted:
    /// an upload created, a part stored; the tool has not heard).
    DelayAnswer(Duration),
    /// Answer this status (with an S3 error body, `<Code>Unruly</Code>`), without forwarding.
    Status(u16),
    /// Send the answer's head (its `Content-Length` as the store gave it) and only the first
    /// `n` bytes of its body, then close the connection.
    CutBody(usize),
    /// Send the answer's body chunked (`Transfer-Encoding: chunked`, chunks of 1000 bytes),
    /// without `Content-Length`.
    Chunked,
    /// Answer this redirect status (301, 302, 307, 308) with a `Location` that is the same
    /// target on the store itself (in front of a store), or on this server again (serving a
    /// body: give it a count, or it redirects forever).
    Redirect(u16),
    /// Read the request and close the connection without an answer (nothing forwarded).
    Close,
    /// Forward the request, then close the connection without its answer: the store acted,
    /// the tool never hears of it (and may send the request again).
    LoseAnswer,
    /// Die: stop listening and close every connection, this one unanswered ([`Unruly::die`]).
    Die,
}

/// The body an [`Unruly::serving`] server serves to `GET` (any path) and `HEAD`.
#[derive(Debug, Clone)]
pub struct Served {
    /// The bytes.
    pub body: Vec<u8>,
    /// The `ETag` it sends (and `If-Match` is checked against), if any.
    pub e_tag: Option<String>,
    /// Whether `Range` is honoured (`206`, `Accept-Ranges: bytes`); otherwise a ranged `GET`
    /// gets `200` and the whole body, as servers that ignore ranges do.
    pub ranges: bool,
    /// Whether the answer carries `Content-Length`; otherwise it is chunked.
    pub length: bool,
}

struct Rule {
    kind: Kind,
    act: Act,
    /// Requests of the kind to let pass before acting.
    skip: usize,
    /// How many to act on (`usize::MAX`: every one).
    times: usize,
    seen: usize,
    acted: usize,
}

#[derive(Default)]
struct State {
    rules: Vec<Rule>,
    arrived: HashMap<Kind, usize>,
    held: HashMap<Kind, usize>,
    log: Vec<(Kind, String, String)>,
    /// Bumped by `release`: every hold ends.
    releases: u64,
    dead: bool,
    /// The listener is closed.
    stopped: bool,
    connections: HashMap<u64, TcpStream>,
    next_connection: u64,
    served: Option<Served>,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    /// `127.0.0.1:PORT` of the store behind, when a proxy.
    upstream: Option<String>,
    port: u16,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The misbehaving server: see the module's documentation.
pub struct Unruly {
    shared: Arc<Shared>,
}

impl Unruly {
    /// A proxy in front of the S3 server at `endpoint` (`http://127.0.0.1:PORT`, as
    /// `S3::endpoint` gives it).
    pub fn in_front_of(endpoint: &str) -> Unruly {
        let upstream = endpoint
            .strip_prefix("http://")
            .expect("an http:// endpoint")
            .trim_end_matches('/')
            .to_owned();
        Unruly::start(Some(upstream), None)
    }

    /// A server of its own, serving `served` at every path.
    pub fn serving(served: Served) -> Unruly {
        Unruly::start(None, Some(served))
    }

    fn start(upstream: Option<String>, served: Option<Served>) -> Unruly {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free port on 127.0.0.1");
        let port = listener.local_addr().unwrap().port();
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                served,
                ..State::default()
            }),
            changed: Condvar::new(),
            upstream,
            port,
        });
        listen(&shared, listener);
        Unruly { shared }
    }

    /// `http://127.0.0.1:PORT`: an endpoint for `AWS_ENDPOINT_URL`, or a URL's base.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.shared.port)
    }

    /// Acts on every request of `kind` from now on.
    pub fn on(&self, kind: Kind, act: Act) -> &Self {
        self.on_after(kind, 0, usize::MAX, act)
    }

    /// Acts on the next `n` requests of `kind`, then lets them pass.
    pub fn on_first(&self, kind: Kind, n: usize, act: Act) -> &Self {
        self.on_after(kind, 0, n, act)
    }

    /// Lets the next `skip` requests of `kind` pass, then acts on `n` of them
    /// (`usize::MAX`: on all).
    pub fn on_after(&self, kind: Kind, skip: usize, n: usize, act: Act) -> &Self {
        self.shared.lock().rules.push(Rule {
            kind,
            act,
            skip,
            times: n,
            seen: 0,
            acted: 0,
        });
        self
    }

    /// Forgets every rule: requests pass from now on (holds already begun go on).
    pub fn clear(&self) {
        self.shared.lock().rules.clear();
    }

    /// Ends every hold now.
    pub fn release(&self) {
        self.shared.lock().releases += 1;
        self.shared.changed.notify_all();
    }

    /// Replaces the body a [`Unruly::serving`] server serves.
    pub fn serve(&self, served: Served) {
        self.shared.lock().served = Some(served);
    }

    /// How many requests of `kind` have arrived so far.
    pub fn arrived(&self, kind: Kind) -> usize {
        self.shared.lock().arrived.get(&kind).copied().unwrap_or(0)
    }

    /// Every request so far: its kind, method and target, in order of arrival.
    pub fn log(&self) -> Vec<(Kind, String, String)> {
        self.shared.lock().log.clone()
    }

    /// Waits until `n` requests of `kind` have arrived in all; false after `timeout`.
    pub fn wait_arrived(&self, kind: Kind, n: usize, timeout: Duration) -> bool {
        self.wait(timeout, |state| {
            state.arrived.get(&kind).copied().unwrap_or(0) >= n
        })
    }

    /// Waits until a request of `kind` is being held (by [`Act::DelayRequest`], before the
    /// store has seen it, or [`Act::DelayAnswer`], after the store answered); false after
    /// `timeout`.
    pub fn wait_held(&self, kind: Kind, timeout: Duration) -> bool {
        self.wait(timeout, |state| {
            state.held.get(&kind).copied().unwrap_or(0) > 0
        })
    }

    fn wait(&self, timeout: Duration, done: impl Fn(&State) -> bool) -> bool {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.lock();
        loop {
            if done(&state) {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            state = self
                .shared
                .changed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Comes back after [`Unruly::die`], on the same port, with its rules and counts: a store
    /// that was down for a while.
    pub fn revive(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        let listener = loop {
            match TcpListener::bind(("127.0.0.1", self.shared.port)) {
                Ok(listener) => break listener,
                Err(e) if Instant::now() > deadline => panic!("the port again: {e}"),
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        };
        {
            let mut state = self.shared.lock();
            state.dead = false;
            state.stopped = false;
        }
        listen(&self.shared, listener);
    }

    /// Waits until it has died (an [`Act::Die`]); false after `timeout`.
    pub fn wait_dead(&self, timeout: Duration) -> bool {
        self.wait(timeout, |state| state.stopped)
    }

    /// Dies: stops listening (a new connection is refused), closes every open connection
    /// (answers being sent are cut), ends every hold. It does not come back.
    pub fn die(&self) {
        die(&self.shared);
    }
}

impl Drop for Unruly {
    fn drop(&mut self) {
        self.die();
    }
}

/// Accepts connections on `listener` until a death, each served on a thread of its own.
fn listen(shared: &Arc<Shared>, listener: TcpListener) {
    let accepting = Arc::clone(shared);
    std::thread::spawn(move || loop {
        let stream = listener.accept().map(|(stream, _)| stream);
        let mut state = accepting.lock();
        if state.dead {
            // Connections are refused from now.
            drop(listener);
            state.stopped = true;
            drop(state);
            accepting.changed.notify_all();
            return;
        }
        let Ok(stream) = stream else { continue };
        let id = state.next_connection;
        state.next_connection += 1;
        if let Ok(clone) = stream.try_clone() {
            state.connections.insert(id, clone);
        }
        drop(state);
        let serving = Arc::clone(&accepting);
        std::thread::spawn(move || {
            let _ = serve(&serving, stream);
            serving.lock().connections.remove(&id);
        });
    });
}

fn die(shared: &Shared) {
    let connections: Vec<TcpStream> = {
        let mut state = shared.lock();
        if state.dead {
            return;
        }
        state.dead = true;
        state.releases += 1;
        state.connections.drain().map(|(_, s)| s).collect()
    };
    shared.changed.notify_all();
    for connection in connections {
        let _ = connection.shutdown(Shutdown::Both);
    }
    // Wakes the accepting thread, which sees `dead` and drops the listener; waits for that.
    let _ = TcpStream::connect(("127.0.0.1", shared.port));
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut state = shared.lock();
    while !state.stopped && Instant::now() < deadline {
        state = shared
            .changed
            .wait_timeout(state, Duration::from_millis(50))
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
}

/// A request or an answer as it came: its first line, its headers, its body (unchunked).
struct Message {
    first: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Message {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A message's headers, names and values as they came.
type Headers = Vec<(String, String)>;

/// Reads a message's head; `None` at a clean end of the stream.
fn read_head(reader: &mut impl BufRead) -> io::Result<Option<(String, Headers)>> {
    let mut first = String::new();
    if reader.read_line(&mut first)? == 0 {
        return Ok(None);
    }
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    Ok(Some((first.trim_end().to_owned(), headers)))
}

/// Reads a body framed by `Content-Length` or chunked; to the end of the stream when
/// `to_end` and neither is given.
fn read_body(
    reader: &mut impl BufRead,
    headers: &[(String, String)],
    to_end: bool,
) -> io::Result<Vec<u8>> {
    let get = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    let mut body = Vec::new();
    if get("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let size = usize::from_str_radix(size.trim().split(';').next().unwrap_or(""), 16)
                .map_err(|_| io::Error::from(io::ErrorKind::InvalidData))?;
            if size == 0 {
                // Trailers, then the blank line.
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
                        return Ok(body);
                    }
                }
            }
            let at = body.len();
            body.resize(at + size, 0);
            reader.read_exact(&mut body[at..])?;
            let mut crlf = [0u8; 2];
            reader.read_exact(&mut crlf)?;
        }
    } else if let Some(length) = get("content-length") {
        let length: usize = length
            .parse()
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidData))?;
        body.resize(length, 0);
        reader.read_exact(&mut body)?;
    } else if to_end {
        reader.read_to_end(&mut body)?;
    }
    Ok(body)
}

/// Serves one connection: request after request (keep-alive), until either side closes.
fn serve(shared: &Arc<Shared>, stream: TcpStream) -> io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut out = stream;
    loop {
        let Some((first, headers)) = read_head(&mut reader)? else {
            return Ok(());
        };
        let body = read_body(&mut reader, &headers, false)?;
        let request = Message {
            first,
            headers,
            body,
        };
        let mut parts = request.first.split(' ');
        let method = parts.next().unwrap_or("").to_owned();
        let target = parts.next().unwrap_or("").to_owned();
        let kind = match (&shared.upstream, method.as_str()) {
            (Some(_), _) => Kind::of(&method, &target),
            (None, "GET") => Kind::GetObject,
            (None, "HEAD") => Kind::HeadObject,
            (None, _) => Kind::Other,
        };
        let acts = {
            let mut state = shared.lock();
            if state.dead {
                return Ok(());
            }
            *state.arrived.entry(kind).or_default() += 1;
            state.log.push((kind, method.clone(), target.clone()));
            let mut acts = Vec::new();
            for rule in state.rules.iter_mut().filter(|r| r.kind == kind) {
                rule.seen += 1;
                if rule.seen > rule.skip && rule.acted < rule.times {
                    rule.acted += 1;
                    acts.push(rule.act.clone());
                }
            }
            acts
        };
        shared.changed.notify_all();
        // What ends the request before the store sees it: the first rule's.
        for act in &acts {
            match act {
                Act::DelayRequest(d) => {
                    hold(shared, kind, *d);
                    // Died meanwhile: the request never reaches the store.
                    if shared.lock().dead {
                        return Ok(());
                    }
                }
                Act::Status(status) => {
                    let body = format!(
                        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>Unruly</Code>\
                         <Message>an unruly {status} for {kind:?}</Message></Error>"
                    );
                    write!(
                        out,
                        "HTTP/1.1 {status} Unruly\r\nContent-Type: application/xml\r\n\
                         Content-Length: {}\r\n\r\n{}",
                        body.len(),
                        if method == "HEAD" { "" } else { &body }
                    )?;
                    out.flush()?;
                    break;
                }
                Act::Redirect(status) => {
                    let base = match &shared.upstream {
                        Some(upstream) => format!("http://{upstream}"),
                        None => format!("http://127.0.0.1:{}", shared.port),
                    };
                    write!(
                        out,
                        "HTTP/1.1 {status} Moved\r\nLocation: {base}{target}\r\n\
                         Content-Length: 0\r\n\r\n"
                    )?;
                    out.flush()?;
                    break;
                }
                Act::Close => {
                    let _ = out.shutdown(Shutdown::Both);
                    return Ok(());
                }
                Act::Die => {
                    die(shared);
                    return Ok(());
                }
                _ => continue,
            }
        }
        let close = |m: &Message| {
            m.header("connection")
                .is_some_and(|v| v.eq_ignore_ascii_case("close"))
        };
        if acts
            .iter()
            .any(|a| matches!(a, Act::Status(_) | Act::Redirect(_)))
        {
            if close(&request) {
                let _ = out.shutdown(Shutdown::Both);
                return Ok(());
            }
            continue;
        }
        let answer = match &shared.upstream {
            Some(upstream) => forward(upstream, &request, &method),
            None => Ok(serve_body(shared, &request, &method)),
        };
        let answer = match answer {
            Ok(answer) => answer,
            Err(e) => Message {
                first: "HTTP/1.1 502 Bad Gateway".to_owned(),
                headers: vec![("Content-Length".to_owned(), "0".to_owned())],
                body: format!("unruly: the store: {e}").into_bytes(),
            },
        };
        for act in &acts {
            if let Act::DelayAnswer(d) = act {
                hold(shared, kind, *d);
            }
        }
        if acts.contains(&Act::LoseAnswer) {
            let _ = out.shutdown(Shutdown::Both);
            return Ok(());
        }
        if shared.lock().dead {
            return Ok(());
        }
        // Chunked when told, or when the answer came so (a served body without a length).
        let chunked = acts.contains(&Act::Chunked)
            || answer
                .header("transfer-encoding")
                .is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
        let cut = acts.iter().find_map(|a| match a {
            Act::CutBody(n) => Some(*n),
            _ => None,
        });
        let no_body = method == "HEAD";
        let mut head = format!("{}\r\n", answer.first);
        for (name, value) in &answer.headers {
            let framing = name.eq_ignore_ascii_case("transfer-encoding")
                || name.eq_ignore_ascii_case("content-length");
            // A HEAD answer's length is the object's: kept unless chunked.
            if !framing || (no_body && !chunked && name.eq_ignore_ascii_case("content-length")) {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
        }
        if chunked {
            head.push_str("Transfer-Encoding: chunked\r\n");
        } else if !no_body {
            head.push_str(&format!("Content-Length: {}\r\n", answer.body.len()));
        }
        head.push_str("\r\n");
        out.write_all(head.as_bytes())?;
        let body: &[u8] = if no_body { &[] } else { &answer.body };
        let sent = &body[..cut.unwrap_or(body.len()).min(body.len())];
        if chunked {
            for chunk in sent.chunks(1000) {
                write!(out, "{:x}\r\n", chunk.len())?;
                out.write_all(chunk)?;
                out.write_all(b"\r\n")?;
            }
            if cut.is_none() && !no_body {
                out.write_all(b"0\r\n\r\n")?;
            }
        } else {
            out.write_all(sent)?;
        }
        out.flush()?;
        if cut.is_some() || close(&answer) || close(&request) {
            let _ = out.shutdown(Shutdown::Both);
            return Ok(());
        }
    }
}

/// Holds the request (counted as held) for `d`, or until a release or a death.
fn hold(shared: &Shared, kind: Kind, d: Duration) {
    let deadline = Instant::now() + d;
    let mut state = shared.lock();
    let releases = state.releases;
    *state.held.entry(kind).or_default() += 1;
    shared.changed.notify_all();
    while Instant::now() < deadline && state.releases == releases && !state.dead {
        let left = deadline - Instant::now();
        state = shared
            .changed
            .wait_timeout(state, left)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
    *state.held.entry(kind).or_default() -= 1;
    drop(state);
    shared.changed.notify_all();
}

/// The request sent to the store as it came, over a connection of its own; its answer.
fn forward(upstream: &str, request: &Message, method: &str) -> io::Result<Message> {
    let mut store = TcpStream::connect(upstream)?;
    let mut head = format!("{}\r\n", request.first);
    for (name, value) in &request.headers {
        // The body is sent whole, with its length.
        if !name.eq_ignore_ascii_case("transfer-encoding")
            && !name.eq_ignore_ascii_case("content-length")
        {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    if !request.body.is_empty() || request.header("content-length").is_some() {
        head.push_str(&format!("Content-Length: {}\r\n", request.body.len()));
    }
    head.push_str("\r\n");
    store.write_all(head.as_bytes())?;
    store.write_all(&request.body)?;
    store.flush()?;
    let mut reader = BufReader::new(store);
    let (first, headers) = read_head(&mut reader)?.ok_or(io::ErrorKind::UnexpectedEof)?;
    let status: u16 = first
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = if method == "HEAD" || status == 204 || status == 304 || status < 200 {
        Vec::new()
    } else {
        read_body(&mut reader, &headers, true)?
    };
    Ok(Message {
        first,
        headers,
        body,
    })
}

/// The answer of a serving server: its body, whole or a range.
fn serve_body(shared: &Shared, request: &Message, method: &str) -> Message {
    let served = shared.lock().served.clone().expect("a served body");
    let mut headers = Vec::new();
    if let Some(e_tag) = &served.e_tag {
        headers.push(("ETag".to_owned(), e_tag.clone()));
    }
    if served.ranges {
        headers.push(("Accept-Ranges".to_owned(), "bytes".to_owned()));
    }
    if !served.length {
        // Framed as chunked by the writer (the head is rewritten there).
        headers.push(("Transfer-Encoding".to_owned(), "chunked".to_owned()));
    }
    let status = |code: &str| format!("HTTP/1.1 {code}");
    if method != "GET" && method != "HEAD" {
        return Message {
            first: status("405 Method Not Allowed"),
            headers,
            body: Vec::new(),
        };
    }
    if let (Some(want), Some(have)) = (request.header("if-match"), &served.e_tag) {
        if want != have {
            return Message {
                first: status("412 Precondition Failed"),
                headers,
                body: Vec::new(),
            };
        }
    }
    let size = served.body.len();
    let range = request
        .header("range")
        .filter(|_| served.ranges)
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| {
            let (a, b) = r.split_once('-')?;
            let (start, end) = match (a.parse::<usize>().ok(), b.parse::<usize>().ok()) {
                (Some(a), Some(b)) => (a, b + 1),
                (Some(a), None) => (a, size),
                (None, Some(n)) => (size.saturating_sub(n), size),
                (None, None) => return None,
            };
            Some((start, end.min(size)))
        });
    match range {
        Some((start, end)) if start < end => {
            headers.push((
                "Content-Range".to_owned(),
                format!("bytes {start}-{}/{size}", end - 1),
            ));
            Message {
                first: status("206 Partial Content"),
                headers,
                body: served.body[start..end].to_vec(),
            }
        }
        Some(_) => {
            headers.push(("Content-Range".to_owned(), format!("bytes */{size}")));
            Message {
                first: status("416 Range Not Satisfiable"),
                headers,
                body: Vec::new(),
            }
        }
        None => Message {
            first: status("200 OK"),
            headers,
            body: served.body,
        },
    }
}
