//! Small readers of an envelope's members, shared by `filter` and `stats` (which find the
//! members themselves with [`Top::of`](crate::envelope::Top::of), the rules' one walk).

use crate::json::Value;

/// A string member's text, or `""`.
pub(crate) fn text(value: Option<Value<'_>>) -> &str {
    value.and_then(|v| v.as_str()).unwrap_or_default()
}

/// An attempt's `error.type`.
pub(crate) fn error_type(attempt: Value<'_>) -> Option<&str> {
    attempt.get("error")?.get("type")?.as_str()
}
