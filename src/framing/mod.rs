//! Framing: a byte stream into JSON Lines lines (docs/envelope.md#framing).
//!
//! [`LineReader`] turns any [`std::io::Read`] into numbered lines with absolute byte offsets,
//! skipping a leading BOM, splitting on LF (a CR right before it belongs to the terminator),
//! marking blank lines, and flagging over-long lines without ever buffering them whole.

mod line_reader;
mod sniff;

// The pipeline's reader frames in pinned mode (the module's tests drive it in the core too).
#[cfg(feature = "stream")]
pub(crate) use line_reader::Pinned;
pub use line_reader::{Line, LineKind, LineReader, DEFAULT_MAX_LINE_BYTES, TOO_LONG_PREFIX_BYTES};
pub use sniff::InputKind;
