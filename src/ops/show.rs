//! `show`: the envelope with one ID, pretty, and its decoded payload (CLI.md).
//!
//! Lines are looked at cheaply first: a line that holds neither the ID's bytes nor a `\u`
//! escape (the only way JSON can spell an ID's letters otherwise) cannot be it, and is passed
//! over unparsed. Only candidates are judged; invalid lines are skipped silently.

use memchr::memmem;

use crate::envelope::{EnvelopeRules, Verdict};
use crate::json::{pretty, JsonParser, Value};
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
/// unless `all`.
#[derive(Debug, Clone)]
pub struct ShowOp {
    rules: EnvelopeRules,
    id: String,
    all: bool,
    payload: ShowPayload,
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
        }
    }

    /// The ID looked for.
    pub fn id(&self) -> &str {
        &self.id
    }
}

/// A worker's reusable state.
#[derive(Debug, Default)]
pub struct ShowWorker {
    parser: JsonParser,
    verdict: Verdict,
    payload: Vec<u8>,
}

impl LineOperation for ShowOp {
    type Worker = ShowWorker;
    type Tally = ();

    fn worker(&self) -> ShowWorker {
        ShowWorker::default()
    }

    fn apply(&self, w: &mut ShowWorker, line: SourceLine<'_>, out: &mut ChunkOutput) -> Action {
        let content = line.line.content;
        let candidate =
            self.id_finder.find(content).is_some() || self.escape_finder.find(content).is_some();
        // Once a chunk has its first match, the rest of it is not wanted (without --all).
        if !candidate || out.stop || line.line.kind != crate::framing::LineKind::Content {
            return Action::FilterOut;
        }
        let Some(doc) = self
            .rules
            .check_line(&mut w.parser, content, &mut w.verdict)
        else {
            return Action::FilterOut;
        };
        let root = doc.root();
        if !w.verdict.is_valid() || root.get("id").and_then(|v| v.as_str()) != Some(&self.id) {
            return Action::FilterOut;
        }
        if self.payload != ShowPayload::Only {
            pretty(content, &mut out.primary);
            out.primary.push(b'\n');
        }
        if self.payload != ShowPayload::No {
            write_payload(root, self.payload, &mut w.payload, &mut out.primary);
        }
        out.stop = !self.all;
        Action::Emit
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
/// line naming its content type and size; with [`ShowPayload::Only`], the bytes alone.
fn write_payload(root: Value<'_>, mode: ShowPayload, bytes: &mut Vec<u8>, out: &mut Vec<u8>) {
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
        return;
    };
    // A valid envelope's payload is canonical base64 (the rules checked it).
    if base64_simd::STANDARD.decode_append(encoded, bytes).is_err() {
        return;
    }
    if mode == ShowPayload::Only {
        out.extend_from_slice(bytes);
        return;
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
