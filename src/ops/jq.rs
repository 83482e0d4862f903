//! `filter --where EXPR`: a jq expression, run by jaq on an envelope, compiled once.

use std::fmt;
use std::sync::Arc;

use jaq_core::load::{Arena, File, Loader};
use jaq_core::{data, unwrap_valr, Compiler, Ctx, Vars};
use jaq_json::Val;

type Data = data::JustLut<Val>;

/// A compiled jq expression that keeps an envelope when its first output is neither `false`
/// nor `null`, as `jq 'select(EXPR)'` does.
///
/// ```
/// use rdq_envelope::ops::{Where, WhereVerdict};
/// let w = Where::new(r#".queue == "mail" and (.attempts | length) > 0"#)?;
/// assert_eq!(w.eval(br#"{"queue":"mail","attempts":[1]}"#), WhereVerdict::Keep);
/// assert_eq!(w.eval(br#"{"queue":"sms","attempts":[1]}"#), WhereVerdict::Drop);
/// assert_eq!(Where::new(".queue")?.eval(br#"{"queue":null}"#), WhereVerdict::Drop);
/// // A type error on one envelope drops it, and says so.
/// assert_eq!(Where::new(".queue + 1")?.eval(br#"{"queue":"mail"}"#), WhereVerdict::Error);
/// assert!(Where::new(".queue ==").is_err());
/// # Ok::<(), rdq_envelope::ops::WhereError>(())
/// ```
#[derive(Clone)]
pub struct Where {
    expr: String,
    filter: Arc<jaq_core::Filter<Data>>,
}

/// What an expression made of one envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhereVerdict {
    /// Its first output is neither `false` nor `null`.
    Keep,
    /// Its first output is `false` or `null`, or it has none.
    Drop,
    /// It failed on this envelope (a type error, `error(...)`): not kept, and counted.
    Error,
}

/// An expression that does not compile: what is wrong, for people.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--where {expr:?}: {message}")]
pub struct WhereError {
    /// The expression.
    pub expr: String,
    /// What is wrong with it.
    pub message: String,
}

impl fmt::Debug for Where {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Where").field(&self.expr).finish()
    }
}

impl Where {
    /// Compiles `expr` with jq's standard library (jaq's `jaq-std` and `jaq-json`).
    pub fn new(expr: &str) -> Result<Self, WhereError> {
        let fail = |message: String| WhereError {
            expr: expr.to_owned(),
            message,
        };
        let program = File {
            code: expr,
            path: (),
        };
        let defs = jaq_core::defs()
            .chain(jaq_std::defs())
            .chain(jaq_json::defs());
        let funs = jaq_core::funs()
            .chain(jaq_std::funs())
            .chain(jaq_json::funs());
        let arena = Arena::default();
        let modules = Loader::new(defs).load(&arena, program).map_err(|errors| {
            let mut messages = Vec::new();
            for (_, error) in errors {
                match error {
                    jaq_core::load::Error::Io(e) => {
                        messages.extend(e.into_iter().map(|(_, m)| m));
                    }
                    jaq_core::load::Error::Lex(e) => messages.extend(
                        e.into_iter()
                            .map(|(want, found)| at(expr, want.as_str(), found)),
                    ),
                    jaq_core::load::Error::Parse(e) => messages.extend(
                        e.into_iter()
                            .map(|(want, found)| at(expr, want.as_str(), found)),
                    ),
                }
            }
            fail(messages.join("; "))
        })?;
        let filter = Compiler::default()
            .with_funs(funs)
            .compile(modules)
            .map_err(|errors| {
                let messages: Vec<String> = errors
                    .into_iter()
                    .flat_map(|(_, undefined)| undefined)
                    .map(|(name, kind)| format!("undefined {} {name}", kind.as_str()))
                    .collect();
                fail(messages.join("; "))
            })?;
        Ok(Where {
            expr: expr.to_owned(),
            filter: Arc::new(filter),
        })
    }

    /// The expression as given.
    pub fn expr(&self) -> &str {
        &self.expr
    }

    /// Runs the expression on a JSON text (a valid envelope's line).
    pub fn eval(&self, json: &[u8]) -> WhereVerdict {
        let Ok(input) = jaq_json::read::parse_single(json) else {
            return WhereVerdict::Error;
        };
        let ctx = Ctx::<Data>::new(&self.filter.lut, Vars::new([]));
        let first = self.filter.id.run((ctx, input)).map(unwrap_valr).next();
        match first {
            Some(Ok(Val::Null | Val::Bool(false))) | None => WhereVerdict::Drop,
            Some(Ok(_)) => WhereVerdict::Keep,
            Some(Err(_)) => WhereVerdict::Error,
        }
    }
}

/// "expected X at byte N" for an error at `found`, a slice of `expr`.
fn at(expr: &str, want: &str, found: &str) -> String {
    let offset = jaq_core::load::span(expr, found).start;
    match found.is_empty() {
        true => format!("expected {want} at the end"),
        false => format!("expected {want} at byte {offset} ({found:?})"),
    }
}
