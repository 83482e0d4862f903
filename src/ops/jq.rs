//! `filter --where EXPR`: a jq expression, run by jaq on an envelope, compiled once.

use std::fmt;
use std::sync::Arc;

use jaq_core::load::lex::StrPart;
use jaq_core::load::parse::{BinaryOp, Pattern, Term};
use jaq_core::load::{Arena, File, Loader};
use jaq_core::path::Part;
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
    /// The top-level members the expression can read, when it reads the envelope only
    /// through `.name` paths ([`members_read`]): only those are built for it. `None`: the
    /// whole envelope.
    members: Option<Vec<String>>,
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
        let mut names = Vec::new();
        let term = jaq_core::load::parse(expr, |p| p.term());
        let members = term.filter(|t| members_read(t, true, &mut names)).map(|_| {
            names.sort_unstable();
            names.dedup();
            names
        });
        Ok(Where {
            expr: expr.to_owned(),
            filter: Arc::new(filter),
            members,
        })
    }

    /// The expression as given.
    pub fn expr(&self) -> &str {
        &self.expr
    }

    /// Runs the expression on a JSON text (a valid envelope's line).
    pub fn eval(&self, json: &[u8]) -> WhereVerdict {
        // Building the whole envelope costs far more than running most expressions: build
        // only the members the expression can read, when that is known.
        let input = match &self.members {
            Some(names) => top_members(json, names),
            None => None,
        };
        let Some(input) = input.or_else(|| jaq_json::read::parse_single(json).ok()) else {
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

/// Functions that read their input only through their arguments, or that fail on every
/// object or treat every object alike: on an envelope of only some of its members they do
/// what they do on the whole one. (By name and arity.)
const BLIND_TO_MEMBERS: &[(&str, usize)] = &[
    ("select", 1),
    ("not", 0),
    ("empty", 0),
    ("error", 0),
    ("error", 1),
    ("true", 0),
    ("false", 0),
    ("null", 0),
    ("any", 2),
    ("all", 2),
    ("first", 1),
    ("last", 1),
    ("limit", 2),
    ("isempty", 1),
    ("range", 1),
    ("range", 2),
    ("type", 0),
    ("values", 0),
    ("objects", 0),
    ("strings", 0),
    ("numbers", 0),
    ("test", 1),
    ("test", 2),
    ("startswith", 1),
    ("endswith", 1),
    ("ascii_downcase", 0),
    ("ascii_upcase", 0),
    ("ltrimstr", 1),
    ("rtrimstr", 1),
    ("tonumber", 0),
    ("split", 1),
    ("fromdateiso8601", 0),
    ("fromdate", 0),
    ("now", 0),
];

/// A literal string (`."name"`, or `.name`): its text.
fn literal(term: &Term<&str>) -> Option<String> {
    let Term::Str(None, parts) = term else {
        return None;
    };
    let mut text = String::new();
    for part in parts {
        match part {
            StrPart::Str(s) => text.push_str(s),
            StrPart::Char(c) => text.push(*c),
            StrPart::Term(_) => return None,
        }
    }
    Some(text)
}

/// A term whose outputs are never the envelope itself (so what reads them reads no member).
fn never_root(term: &Term<&str>) -> bool {
    match term {
        Term::Path(head, path) => {
            matches!(**head, Term::Id)
                && path
                    .0
                    .first()
                    .is_some_and(|(part, _)| matches!(part, Part::Index(t) if literal(t).is_some()))
        }
        Term::Num(_) | Term::Str(None, _) | Term::Arr(_) | Term::Obj(_) => true,
        Term::BinOp(_, op, _) => matches!(
            op,
            BinaryOp::Cmp(_) | BinaryOp::Math(_) | BinaryOp::And | BinaryOp::Or
        ),
        _ => false,
    }
}

/// Whether `term`, run with the envelope as its input when `root`, reads the envelope only
/// through `.name` paths; the names go to `names`. Conservative: anything it cannot tell
/// (a bare `.`, `..`, a definition, a function not in [`BLIND_TO_MEMBERS`]) is `false`, and
/// the whole envelope is built.
fn members_read(term: &Term<&str>, root: bool, names: &mut Vec<String>) -> bool {
    if !root {
        // Its input is a value the expression made, or a member read whole: only a variable
        // could bring the envelope back, and binding it takes a bare `.`, refused above.
        return true;
    }
    match term {
        Term::Id | Term::Recurse | Term::Def(..) => false,
        Term::Num(_) | Term::Var(_) | Term::Break(_) => true,
        Term::Str(Some(_), _) => false,
        Term::Str(None, parts) => parts.iter().all(|p| match p {
            StrPart::Term(t) => members_read(t, true, names),
            _ => true,
        }),
        Term::Arr(t) => t.iter().all(|t| members_read(t, true, names)),
        Term::Obj(pairs) => pairs.iter().all(|(key, value)| match value {
            // `{name}` reads `.name`; `{$x}` reads nothing.
            None => match (key, literal(key)) {
                (Term::Var(_), _) => true,
                (_, Some(name)) => {
                    names.push(name);
                    true
                }
                _ => false,
            },
            Some(value) => members_read(key, true, names) && members_read(value, true, names),
        }),
        Term::Neg(t) | Term::Label(_, t) => members_read(t, true, names),
        Term::BinOp(l, op, r) => {
            let pattern_keys = |names: &mut Vec<String>| match op {
                BinaryOp::Pipe(Some(p)) => pattern_read(p, names),
                _ => true,
            };
            let right_root = !matches!(op, BinaryOp::Pipe(None)) || !never_root(l);
            members_read(l, true, names)
                && pattern_keys(names)
                && members_read(r, right_root, names)
        }
        Term::Fold(_, source, _, rest) => {
            // The source and the first argument (the start) read the input; the others read
            // the accumulator.
            members_read(source, true, names)
                && rest
                    .first()
                    .is_none_or(|init| members_read(init, true, names))
        }
        Term::TryCatch(t, _) => members_read(t, true, names),
        Term::IfThenElse(branches, otherwise) => {
            branches.iter().all(|(cond, then)| {
                members_read(cond, true, names) && members_read(then, true, names)
            }) && otherwise.iter().all(|t| members_read(t, true, names))
        }
        Term::Call(name, args) => {
            BLIND_TO_MEMBERS.contains(&(*name, args.len()))
                && args.iter().all(|a| members_read(a, true, names))
        }
        Term::Path(head, path) => {
            let mut parts = path.0.iter().peekable();
            if matches!(**head, Term::Id) {
                let first = parts.next().and_then(|(part, _)| match part {
                    Part::Index(t) => literal(t),
                    Part::Range(..) => None,
                });
                match first {
                    Some(name) => names.push(name),
                    None => return false,
                }
            } else if !members_read(head, true, names) {
                return false;
            }
            // A path's index terms read the path's input, here the envelope.
            parts.all(|(part, _)| match part {
                Part::Index(t) => members_read(t, true, names),
                Part::Range(from, to) => [from, to]
                    .into_iter()
                    .flatten()
                    .all(|t| members_read(t, true, names)),
            })
        }
    }
}

/// The keys of an object pattern (`. as {(f): $x}`) read the input.
fn pattern_read(pattern: &Pattern<&str>, names: &mut Vec<String>) -> bool {
    match pattern {
        Pattern::Var(_) => true,
        Pattern::Arr(items) => items.iter().all(|p| pattern_read(p, names)),
        Pattern::Obj(pairs) => pairs
            .iter()
            .all(|(key, p)| members_read(key, true, names) && pattern_read(p, names)),
    }
}

/// An object of the members named `names` (distinct) of a valid JSON object `json`, each built from its
/// own bytes; `None` when the text is not as expected (the caller builds the whole).
fn top_members(json: &[u8], names: &[String]) -> Option<Val> {
    let mut map = jaq_json::Map::default();
    let mut key = String::new();
    let mut found = 0;
    let mut at = skip_ws(json, 0);
    (json.get(at) == Some(&b'{')).then_some(())?;
    at = skip_ws(json, at + 1);
    if json.get(at) == Some(&b'}') {
        return Some(Val::obj(map));
    }
    loop {
        (json.get(at) == Some(&b'"')).then_some(())?;
        let key_end = string_end(json, at)?;
        let raw = std::str::from_utf8(&json[at + 1..key_end - 1]).ok()?;
        let name = match raw.contains('\\') {
            true => {
                super::fields::Text::Escaped(raw).decode(&mut key);
                key.as_str()
            }
            false => raw,
        };
        at = skip_ws(json, key_end);
        (json.get(at) == Some(&b':')).then_some(())?;
        let start = skip_ws(json, at + 1);
        let end = value_end(json, start)?;
        if names.iter().any(|n| n == name) {
            let value = jaq_json::read::parse_single(&json[start..end]).ok()?;
            map.insert(Val::from(name.to_owned()), value);
            found += 1;
            // A valid envelope has no duplicate keys: the rest is not needed.
            if found == names.len() {
                return Some(Val::obj(map));
            }
        }
        at = skip_ws(json, end);
        match json.get(at)? {
            b',' => at = skip_ws(json, at + 1),
            b'}' => return Some(Val::obj(map)),
            _ => return None,
        }
    }
}

fn skip_ws(json: &[u8], mut at: usize) -> usize {
    while json
        .get(at)
        .is_some_and(|&b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
    {
        at += 1;
    }
    at
}

/// The index after the string whose opening quote is at `at`.
fn string_end(json: &[u8], at: usize) -> Option<usize> {
    let mut i = at + 1;
    loop {
        i += memchr::memchr2(b'"', b'\\', json.get(i..)?)?;
        if json[i] == b'"' {
            return Some(i + 1);
        }
        i += 2;
    }
}

/// The index after the value that starts at `at`.
fn value_end(json: &[u8], at: usize) -> Option<usize> {
    match *json.get(at)? {
        b'"' => string_end(json, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            loop {
                match *json.get(i)? {
                    b'"' => {
                        i = string_end(json, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => Some(
            at + json[at..]
                .iter()
                .take_while(|&&b| !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n'))
                .count(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(expr: &str) -> Option<Vec<String>> {
        Where::new(expr).unwrap().members
    }

    #[test]
    fn which_members_an_expression_reads() {
        let some = |names: &[&str]| Some(names.iter().map(|n| n.to_string()).collect::<Vec<_>>());
        assert_eq!(read(r#".queue == "x""#), some(&["queue"]));
        assert_eq!(
            read(r#".status == "DEAD" and .redrive_count > 0"#),
            some(&["redrive_count", "status"])
        );
        assert_eq!(read(".attempts[-1].error.type"), some(&["attempts"]));
        assert_eq!(read(".headers | has(\"x\")"), some(&["headers"]));
        assert_eq!(read("(.attempts | length) >= 3"), some(&["attempts"]));
        assert_eq!(
            read(r#"any(.attempts[]; .outcome == "X")"#),
            some(&["attempts", "outcome"])
        );
        assert_eq!(read(r#"{queue} | .queue"#), some(&["queue"]));
        for whole in [
            ".",
            "keys | length > 3",
            "length",
            "tojson | test(\"x\")",
            ". as $e | $e.queue",
            "[.[]] | length",
            "..",
            "def f: .queue; f",
            ".[\"que\" + \"ue\"]",
            "has(\"queue\")",
            "to_entries | length",
            "select(.a) | keys",
            "@json",
            "reduce .attempts[] as $a (0; . + 1) > 2 and (.|length) > 1",
        ] {
            assert_eq!(read(whole), None, "{whole}");
        }
    }

    #[test]
    fn a_partial_envelope_keeps_what_the_whole_keeps() {
        let line = br#"{"queue":"a,b}","q\u0075ota":[1,{"x":"]"}],"n":-1.5e3 ,"s":"\"x\\"}"#;
        let names: Vec<String> = ["quota", "n", "s", "absent"].map(String::from).to_vec();
        let partial = top_members(line, &names).unwrap();
        let whole = jaq_json::read::parse_single(line).unwrap();
        for key in ["quota", "n", "s"] {
            let key = Val::from(key.to_owned());
            let (Val::Obj(p), Val::Obj(w)) = (&partial, &whole) else {
                panic!("objects");
            };
            assert_eq!(
                p.get(&key).map(|v| v.to_string()),
                w.get(&key).map(|v| v.to_string())
            );
        }
        assert_eq!(
            top_members(b"{}", &names).map(|v| v.to_string()),
            Some("{}".into())
        );
        assert_eq!(top_members(b"[1]", &names), None);
        assert_eq!(top_members(br#"{"a":"#, &names), None);
    }
}
