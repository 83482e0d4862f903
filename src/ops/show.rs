//! `show`: the envelope with one ID, pretty, and its decoded payload (docs/cli.md#show).
//!
//! Lines are looked at cheaply first: a line that holds neither the ID's bytes nor a `\u`
//! escape (the only way JSON can spell an ID's letters otherwise) cannot be it, and is passed
//! over unparsed. Only candidates are judged; invalid lines are skipped silently.

use memchr::memmem;

use super::output::{self, MESSAGES, PRIMARY};
use crate::envelope::{Checker, EnvelopeRules};
use crate::json::{pretty, Value};
use crate::pipeline::{Action, ChunkOutput, LineOperation, SourceLine};

/// What `show` prints of a matching envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShowPayload {
    /// The envelope, pretty.
    No,
    /// The envelope, then its decoded payload (`--payload`).
    Also,
    /// Only the decoded payload's bytes, as they are (`--payload-only`).
    Only,
}

/// The `show` operation: matches go to the primary output; the run stops after the first one
/// unless `all`. The run's total counts the matches whose payload [`ShowPayload::Only`] could
/// not print (a v2 claim-check envelope's payload is by reference); each was explained in the
/// messages.
#[derive(Debug, Clone)]
pub struct ShowOp {
    rules: EnvelopeRules,
    id: String,
    all: bool,
    payload: ShowPayload,
    escape_controls: bool,
    /// The ID's bytes and `\u`, searched for in every line: built once, not per line.
    id_finder: memmem::Finder<'static>,
    escape_finder: memmem::Finder<'static>,
}

impl ShowOp {
    /// Looks for `id`, judging candidates by `rules`; with `all`, every copy is printed.
    pub fn new(rules: EnvelopeRules, id: String, all: bool, payload: ShowPayload) -> Self {
        ShowOp {
            id_finder: memmem::Finder::new(id.as_bytes()).into_owned(),
            escape_finder: memmem::Finder::new(b"\\u").into_owned(),
            rules,
            id,
            all,
            payload,
            escape_controls: false,
        }
    }

    /// With `on`, what is printed has its control characters made visible
    /// (`escape_controls`): for a terminal, which would act on them (the CLI turns it on
    /// when standard output is one). Off by default: bytes pass as they are.
    pub fn escaping_controls(mut self, on: bool) -> Self {
        self.escape_controls = on;
        self
    }

    /// The ID looked for.
    pub fn id(&self) -> &str {
        &self.id
    }
}

/// A worker's reusable state.
#[derive(Debug)]
pub struct ShowWorker {
    checker: Checker,
    payload: Vec<u8>,
    shown: Vec<u8>,
}

impl LineOperation for ShowOp {
    // The envelopes shown, what is said of them on standard error.
    const OUTPUTS: usize = output::MESSAGES + 1;
    type Worker = ShowWorker;
    /// Matches whose payload is by reference, under [`ShowPayload::Only`].
    type Tally = u64;
    /// The run's, in the chunks written.
    type Total = u64;

    fn worker(&self) -> ShowWorker {
        ShowWorker {
            checker: Checker::new(self.rules.clone()),
            payload: Vec::new(),
            shown: Vec::new(),
        }
    }

    fn total(&self) -> u64 {
        0
    }

    fn apply(
        &self,
        w: &mut ShowWorker,
        line: SourceLine<'_>,
        out: &mut ChunkOutput<u64>,
    ) -> Action {
        let content = line.line.content;
        let candidate =
            self.id_finder.find(content).is_some() || self.escape_finder.find(content).is_some();
        // Once a chunk has its first match, the rest of it is not wanted (without --all).
        if !candidate || out.stop || line.line.kind != crate::framing::LineKind::Content {
            return Action::FilterOut;
        }
        // On the tape: the payload's reference and the pretty form read the whole line.
        let checked = w.checker.check_on_tape(content);
        let Some(doc) = checked.document() else {
            return Action::FilterOut;
        };
        let root = doc.root();
        if !checked.is_valid() || root.get("id").and_then(|v| v.as_str()) != Some(&self.id) {
            return Action::FilterOut;
        }
        let start = out.buffer(PRIMARY).len();
        if self.payload != ShowPayload::Only {
            pretty(content, out.buffer(PRIMARY));
            out.buffer(PRIMARY).push(b'\n');
        }
        if self.payload != ShowPayload::No
            && !write_payload(root, self.payload, &mut w.payload, out.buffer(PRIMARY))
            && self.payload == ShowPayload::Only
        {
            // Printing nothing and succeeding would pass for an empty payload.
            out.tally += 1;
            let uri = root
                .get("payload_ref")
                .and_then(|r| r.get("uri"))
                .and_then(|u| u.as_str())
                .unwrap_or("?");
            let message = format!(
                "rdq-envelope: {}:{}: the envelope {} has no inline payload to print: \
                 its payload is by reference, at {uri} (payload_ref)\n",
                line.source, line.line.number, self.id
            );
            out.buffer(MESSAGES).extend_from_slice(message.as_bytes());
        }
        if self.escape_controls {
            w.shown.clear();
            w.shown.extend_from_slice(&out.buffer(PRIMARY)[start..]);
            out.buffer(PRIMARY).truncate(start);
            escape_controls(&w.shown, out.buffer(PRIMARY));
        }
        out.stop = !self.all;
        Action::Emit
    }

    fn merge(&self, total: &mut u64, tally: &mut u64) {
        *total += std::mem::take(tally);
    }
}

/// Appends `bytes` with what a terminal would act on made visible, for people to read: C0
/// controls (but tab and line feed) and DEL as `\xNN` (`\x1b` for ESC), C1 controls
/// (U+0080 to U+009F) as `\u{NN}` (`\u{9b}`), and bytes that are not UTF-8 as `\xNN`.
/// Everything else, backslashes included, passes as it is: the form is for reading, not
/// reversible.
pub(crate) fn escape_controls(bytes: &[u8], out: &mut Vec<u8>) {
    use std::io::Write as _;
    for chunk in bytes.utf8_chunks() {
        let text = chunk.valid();
        let mut plain = 0;
        for (at, c) in text.char_indices() {
            let control =
                matches!(c, '\0'..='\x08' | '\x0b'..='\x1f' | '\x7f' | '\u{80}'..='\u{9f}');
            if !control {
                continue;
            }
            out.extend_from_slice(&text.as_bytes()[plain..at]);
            plain = at + c.len_utf8();
            // Writing into a Vec cannot fail.
            let _ = if c < '\u{80}' {
                write!(out, "\\x{:02x}", c as u32)
            } else {
                write!(out, "\\u{{{:x}}}", c as u32)
            };
        }
        out.extend_from_slice(&text.as_bytes()[plain..]);
        for &byte in chunk.invalid() {
            let _ = write!(out, "\\x{byte:02x}");
        }
    }
}

/// How a payload's bytes are shown, from its content type and what the bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rendering {
    Json,
    Text,
    Hex,
}

fn rendering(content_type: &str, bytes: &[u8]) -> Rendering {
    let media = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let is_json = media == "application/json" || media.ends_with("+json");
    let is_text = is_json || media.starts_with("text/");
    if !is_text || std::str::from_utf8(bytes).is_err() {
        return Rendering::Hex;
    }
    if is_json && serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok() {
        return Rendering::Json;
    }
    Rendering::Text
}

/// The decoded payload: JSON re-indented, text as it is, anything else as a hex dump, after a
/// line naming its content type and size; with [`ShowPayload::Only`], the bytes alone. False
/// when the envelope has no inline payload (a v2 claim-check).
fn write_payload(
    root: Value<'_>,
    mode: ShowPayload,
    bytes: &mut Vec<u8>,
    out: &mut Vec<u8>,
) -> bool {
    let text = |key: &str| root.get(key).and_then(|v| v.as_str());
    bytes.clear();
    let Some(encoded) = text("payload") else {
        // v2 claim-check: the payload lives elsewhere.
        if mode == ShowPayload::Also {
            let uri = root
                .get("payload_ref")
                .and_then(|r| r.get("uri"))
                .and_then(|u| u.as_str())
                .unwrap_or("?");
            out.extend_from_slice(
                format!("--- no inline payload: payload_ref {uri} ---\n").as_bytes(),
            );
        }
        return false;
    };
    // A valid envelope's payload is canonical base64 (the rules checked it).
    if base64_simd::STANDARD.decode_append(encoded, bytes).is_err() {
        return true;
    }
    if mode == ShowPayload::Only {
        out.extend_from_slice(bytes);
        return true;
    }
    let content_type = text("payload_content_type").unwrap_or_default();
    let how = rendering(content_type, bytes);
    let heading = format!("--- payload: {content_type}, {} bytes ---\n", bytes.len());
    out.extend_from_slice(heading.as_bytes());
    match how {
        Rendering::Json => pretty(bytes, out),
        Rendering::Text => out.extend_from_slice(bytes),
        Rendering::Hex => hex_dump(bytes, out),
    }
    if out.last().is_some_and(|&b| b != b'\n') {
        out.push(b'\n');
    }
    true
}

/// `hexdump -C`'s layout: offset, 16 bytes in two groups of 8, and the printable ASCII.
///
/// ```text
/// 00000000  89 50 4e 47 0d 0a 1a 0a  00 00 00 0d 49 48 44 52  |.PNG........IHDR|
/// ```
fn hex_dump(bytes: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for (row, chunk) in bytes.chunks(16).enumerate() {
        out.extend_from_slice(format!("{:08x} ", row * 16).as_bytes());
        for i in 0..16 {
            if i == 8 {
                out.push(b' ');
            }
            match chunk.get(i) {
                Some(&b) => out.extend_from_slice(&[
                    b' ',
                    HEX[usize::from(b >> 4)],
                    HEX[usize::from(b & 15)],
                ]),
                None => out.extend_from_slice(b"   "),
            }
        }
        out.extend_from_slice(b"  |");
        out.extend(
            chunk
                .iter()
                .map(|&b| if (0x20..0x7f).contains(&b) { b } else { b'.' }),
        );
        out.extend_from_slice(b"|\n");
    }
    out.extend_from_slice(format!("{:08x}\n", bytes.len()).as_bytes());
}

#[cfg(test)]
mod tests {
    #[test]
    fn escape_controls_shows_what_a_terminal_would_act_on() {
        let mut out = Vec::new();
        super::escape_controls("a\x1b[31m\tb\r\n\u{9b}é\\".as_bytes(), &mut out);
        out.extend_from_slice(b" ");
        super::escape_controls(b"\xff\x7f", &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "a\\x1b[31m\tb\\x0d\n\\u{9b}é\\ \\xff\\x7f"
        );
    }

    use super::{hex_dump, rendering, Rendering};

    #[test]
    fn payloads_render_by_content_type_and_bytes() {
        let cases: [(&str, &[u8], Rendering); 8] = [
            (
                "application/json; charset=utf-8",
                b"{\"a\":1}",
                Rendering::Json,
            ),
            ("application/vnd.acme+json", b"[1]", Rendering::Json),
            ("Application/JSON", b"{\"a\":1}", Rendering::Json),
            ("application/json", b"{not json", Rendering::Text),
            ("text/plain", b"hello", Rendering::Text),
            ("text/plain", b"\xff\xfe", Rendering::Hex),
            ("application/octet-stream", b"hello", Rendering::Hex),
            ("image/png", b"\x89PNG", Rendering::Hex),
        ];
        for (content_type, bytes, want) in cases {
            assert_eq!(
                rendering(content_type, bytes),
                want,
                "{content_type} {bytes:?}"
            );
        }
    }

    #[test]
    fn hex_dumps_look_like_hexdump_c() {
        let mut out = Vec::new();
        hex_dump(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\x01", &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "00000000  89 50 4e 47 0d 0a 1a 0a  00 00 00 0d 49 48 44 52  |.PNG........IHDR|\n\
             00000010  01                                                |.|\n\
             00000011\n"
        );
        let mut empty = Vec::new();
        hex_dump(b"", &mut empty);
        assert_eq!(empty, b"00000000\n");
    }
}
