//! The top-level members the DLQ commands read (`filter`, `stats`), found in one walk over the
//! envelope instead of one [`Value::get`] scan each.

use crate::json::Value;

/// An envelope's members by name; `None` when absent (a valid envelope has the required ones).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Fields<'a> {
    pub id: Option<Value<'a>>,
    pub queue: Option<Value<'a>>,
    pub handler_ref: Option<Value<'a>>,
    pub payload: Option<Value<'a>>,
    pub headers: Option<Value<'a>>,
    pub origin: Option<Value<'a>>,
    pub status: Option<Value<'a>>,
    pub redrive_count: Option<Value<'a>>,
    pub created_at: Option<Value<'a>>,
    pub attempts: Option<Value<'a>>,
}

impl<'a> Fields<'a> {
    /// The members of `envelope` (a valid one has no duplicate keys, so each is found once).
    pub fn of(envelope: Value<'a>) -> Self {
        let mut fields = Fields::default();
        for (key, value) in envelope.members() {
            let slot = match key {
                "id" => &mut fields.id,
                "queue" => &mut fields.queue,
                "handler_ref" => &mut fields.handler_ref,
                "payload" => &mut fields.payload,
                "headers" => &mut fields.headers,
                "origin" => &mut fields.origin,
                "status" => &mut fields.status,
                "redrive_count" => &mut fields.redrive_count,
                "created_at" => &mut fields.created_at,
                "attempts" => &mut fields.attempts,
                _ => continue,
            };
            *slot = Some(value);
        }
        fields
    }
}

/// A string member's text, or `""`.
pub(crate) fn text(value: Option<Value<'_>>) -> &str {
    value.and_then(|v| v.as_str()).unwrap_or_default()
}

/// An attempt's `error.type`.
pub(crate) fn error_type(attempt: Value<'_>) -> Option<&str> {
    attempt.get("error")?.get("type")?.as_str()
}
