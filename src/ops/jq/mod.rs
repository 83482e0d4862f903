//! `filter --where EXPR`: a jq expression, run by jaq on an envelope, compiled once.
//!
//! An envelope is kept exactly when `jq 'select(EXPR)'` would output it: when the expression
//! yields a value other than `false` and `null` before it yields an error (see
//! [`Where::eval`]). What could make an expression end, abort or hang the run is dealt with
//! before any input is read: builtins that act beyond one envelope are refused
//! ([`REFUSED`]), an expression nested deeper than [`MAX_DEPTH`] is refused, and compiling
//! runs on a thread whose stack fits the expression. Evaluation runs on the pipeline's
//! workers, which the command line gives [`EVAL_STACK_BYTES`] of stack; [`EvalWatch`] lets
//! it see how long each worker has been on one line.

mod members;

use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::envelope::spans;
use crate::json::JsonParser;
use jaq_core::load::lex::StrPart;
use jaq_core::load::parse::{Def, Pattern, Term};
use jaq_core::load::{Arena, File, Loader};
use jaq_core::path::Part;
use jaq_core::{data, Compiler, Ctx, Vars};
use jaq_json::Val;

type Data = data::JustLut<Val>;

/// The deepest an expression may nest (its syntax tree's depth: each bracket, each
/// `if`/`try`/`reduce`, and each operator of a chain such as `a or b or c` is a level). jq 1.6
/// refuses brackets nested 10,000 deep.
pub const MAX_DEPTH: usize = 10_000;

/// The longest expression accepted, in bytes.
pub const MAX_EXPR_BYTES: usize = 256 * 1024;

/// The stack a thread that evaluates expressions needs for one nested `MAX_DEPTH` deep,
/// with room for recursion of the expression's own definitions (measured: about 6.5 KiB a
/// level in a release build, four times that in a debug build). Reserved, not used: a
/// thread's stack takes memory only as deep as it goes.
pub const EVAL_STACK_BYTES: usize = 256 << 20;

/// Builtins refused before any input is read, with why: each acts beyond the one envelope an
/// expression judges, or writes where the run's own messages go.
pub const REFUSED: &[(&str, &str)] = &[
    ("halt", "it ends the whole run"),
    ("halt_error", "it ends the whole run"),
    (
        "input",
        "it reads the next input, and an expression sees one envelope",
    ),
    (
        "inputs",
        "it reads the next inputs, and an expression sees one envelope",
    ),
    (
        "debug",
        "it writes to standard error, which carries the run's own messages",
    ),
    (
        "stderr",
        "it writes to standard error, which carries the run's own messages",
    ),
    (
        "input_filename",
        "an expression sees an envelope, not the file it came from",
    ),
    (
        "input_line_number",
        "an expression sees an envelope, not the line it came from",
    ),
    ("get_search_list", "modules are not loaded"),
    ("get_jq_origin", "modules are not loaded"),
    ("get_prog_origin", "modules are not loaded"),
    ("modulemeta", "modules are not loaded"),
];

/// A compiled jq expression that keeps an envelope as `jq 'select(EXPR)'` does.
///
/// ```
/// use rdq_envelope::ops::{Where, WhereVerdict};
/// let w = Where::new(r#".queue == "mail" and (.attempts | length) > 0"#)?;
/// assert_eq!(w.eval(br#"{"queue":"mail","attempts":[1]}"#), WhereVerdict::Keep);
/// assert_eq!(w.eval(br#"{"queue":"sms","attempts":[1]}"#), WhereVerdict::Drop);
/// assert_eq!(Where::new(".queue")?.eval(br#"{"queue":null}"#), WhereVerdict::Drop);
/// // Any true output keeps it, as `select` would output it.
/// assert_eq!(Where::new(".queue, true")?.eval(br#"{"queue":null}"#), WhereVerdict::Keep);
/// // A type error on one envelope drops it, and says so.
/// assert_eq!(Where::new(".queue + 1")?.eval(br#"{"queue":"mail"}"#), WhereVerdict::Error);
/// assert!(Where::new(".queue ==").is_err());
/// assert!(Where::new("halt").is_err());
/// # Ok::<(), rdq_envelope::ops::WhereError>(())
/// ```
#[derive(Clone)]
pub struct Where {
    expr: String,
    filter: Arc<jaq_core::Filter<Data>>,
    /// The top-level members the expression provably reads only through `.name` lookups
    /// (`members::members_read`): only those are built for it. `None`: the whole envelope.
    members: Option<Vec<String>>,
    /// `$ENV`, as jq gives it: the environment when the expression was compiled.
    env: Val,
}

/// What an expression made of one envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhereVerdict {
    /// It output a value other than `false` and `null` before any error.
    Keep,
    /// It output only `false` and `null`, or nothing.
    Drop,
    /// It failed on this envelope (a type error, `error(...)`) before any true output: not
    /// kept, and counted.
    Error,
}

/// An expression that is refused: what is wrong, for people.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--where {expr:?}: {message}")]
pub struct WhereError {
    /// The expression (its first 200 bytes when longer).
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
    /// Compiles `expr` with jq's standard library (jaq's `jaq-std` and `jaq-json`), on a
    /// thread whose stack fits an expression of its length, and refuses what could end,
    /// abort or leave the run (see the module's documentation).
    pub fn new(expr: &str) -> Result<Self, WhereError> {
        let fail = |message: String| WhereError {
            expr: crate::diagnostic::cut_text(expr, 200).into_owned(),
            message,
        };
        if expr.trim().is_empty() {
            return Err(fail(
                "the expression is empty (`.` keeps every envelope, `false` none)".into(),
            ));
        }
        if expr.len() > MAX_EXPR_BYTES {
            return Err(fail(format!(
                "the expression is {} bytes long; at most {MAX_EXPR_BYTES} are accepted",
                expr.len()
            )));
        }
        // Parsing recurses about once per token, and a token is at least a byte: this stack
        // holds any expression of this length (measured: under 7 KiB a byte in a debug build).
        let stack = (64 << 20) + expr.len() * (16 << 10);
        let owned = expr.to_owned();
        let compiled = std::thread::Builder::new()
            .name("rdq-where-compile".into())
            .stack_size(stack)
            .spawn(move || compile(&owned))
            .map_err(|e| {
                fail(format!(
                    "cannot start a thread with {} MiB of stack to compile it: {e}",
                    stack >> 20
                ))
            })?
            .join()
            .map_err(|_| fail("compiling it failed (a bug, please report it)".into()))?;
        let (filter, members) = compiled.map_err(fail)?;
        let env = std::env::vars_os()
            .map(|(k, v)| {
                let text = |s: std::ffi::OsString| Val::from(s.to_string_lossy().into_owned());
                (text(k), text(v))
            })
            .collect::<jaq_json::Map>();
        Ok(Where {
            expr: expr.to_owned(),
            filter: Arc::new(filter),
            members,
            env: Val::obj(env),
        })
    }

    /// The expression as given.
    pub fn expr(&self) -> &str {
        &self.expr
    }

    /// Whether the expression runs on only the members it reads (`Some`, their names) or on
    /// the whole envelope (`None`).
    pub fn members_read(&self) -> Option<&[String]> {
        self.members.as_deref()
    }

    /// Runs the expression on a JSON text (a valid envelope's line): kept when it outputs a
    /// value other than `false` and `null` before it outputs an error, as `jq
    /// 'select(EXPR)'` outputs the envelope then. Once it has, the rest of its outputs are
    /// not asked for. The members are found with the crate's parser ([`Where::eval_members`]
    /// takes them from a caller that has them already).
    pub fn eval(&self, json: &[u8]) -> WhereVerdict {
        if self.members.is_none() {
            return self.eval_whole(json);
        }
        let mut parser = JsonParser::new();
        let Some(doc) = parser.parse(json, &mut Vec::new()) else {
            return self.eval_whole(json);
        };
        let mut nodes = Vec::new();
        self.eval_members(json, spans::member_texts(&doc, json, &mut nodes))
    }

    /// [`Where::eval`] on a valid envelope whose top-level members the caller has found
    /// already: each key and its value's JSON text. When the expression reads only some
    /// members ([`Where::members_read`]), only those values are built; otherwise `json`, the
    /// whole line, is.
    pub fn eval_members<'m>(
        &self,
        json: &[u8],
        found: impl IntoIterator<Item = (&'m str, &'m [u8])>,
    ) -> WhereVerdict {
        let Some(names) = &self.members else {
            return self.eval_whole(json);
        };
        match members::partial(names, found) {
            Some(input) => self.eval_value(input),
            None => WhereVerdict::Error,
        }
    }

    /// Runs the expression on the whole envelope, never on only the members it reads: the
    /// reference [`Where::eval`] is held to.
    #[doc(hidden)]
    pub fn eval_whole(&self, json: &[u8]) -> WhereVerdict {
        match jaq_json::read::parse_single(json) {
            Ok(input) => self.eval_value(input),
            Err(_) => WhereVerdict::Error,
        }
    }

    fn eval_value(&self, input: Val) -> WhereVerdict {
        let ctx = Ctx::<Data>::new(&self.filter.lut, Vars::new([self.env.clone()]));
        for output in self.filter.id.run((ctx, input)) {
            match output {
                Ok(Val::Null | Val::Bool(false)) => {}
                Ok(_) => return WhereVerdict::Keep,
                // An error, or a halt (refused when compiling; never the process's exit).
                Err(_) => return WhereVerdict::Error,
            }
        }
        WhereVerdict::Drop
    }
}

/// jq 1.6's builtins that jaq lacks (`prelude.jq`).
fn prelude() -> impl Iterator<Item = Def<&'static str>> {
    jaq_core::load::parse(include_str!("prelude.jq"), |p| p.defs())
        .expect("the prelude parses (a unit test holds it)")
        .into_iter()
}

/// Parses, checks and compiles `expr`; the filter and the members it reads.
fn compile(expr: &str) -> Result<(jaq_core::Filter<Data>, Option<Vec<String>>), String> {
    let program = File {
        code: expr,
        path: (),
    };
    let defs = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs())
        .chain(prelude());
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
        messages.join("; ")
    })?;
    let term = jaq_core::load::parse(expr, |p| p.term());
    if let Some(term) = &term {
        let depth = depth(term);
        if depth > MAX_DEPTH {
            return Err(format!(
                "the expression is nested {depth} levels deep; at most {MAX_DEPTH} are supported"
            ));
        }
        if let Some((name, why)) = refused(term, &mut Vec::new()) {
            return Err(format!("`{name}` is not supported in --where: {why}"));
        }
    }
    let filter = Compiler::default()
        .with_funs(funs)
        .with_global_vars(["$ENV"])
        .compile(modules)
        .map_err(|errors| {
            let messages: Vec<String> = errors
                .into_iter()
                .flat_map(|(_, undefined)| undefined)
                .map(|(name, kind)| format!("undefined {} {name}", kind.as_str()))
                .collect();
            messages.join("; ")
        })?;
    let members = term.as_ref().and_then(members::members_read);
    Ok((filter, members))
}

/// "expected X at byte N" for an error at `found`, a slice of `expr`.
fn at(expr: &str, want: &str, found: &str) -> String {
    let offset = jaq_core::load::span(expr, found).start;
    match found.is_empty() {
        true => format!("expected {want} at the end"),
        false => format!("expected {want} at byte {offset} ({found:?})"),
    }
}

/// The terms directly inside `term`, in no particular order, and the definitions it makes.
fn children<'t, 's>(term: &'t Term<&'s str>, out: &mut Vec<&'t Term<&'s str>>) {
    fn pattern<'t, 's>(p: &'t Pattern<&'s str>, out: &mut Vec<&'t Term<&'s str>>) {
        match p {
            Pattern::Var(_) => {}
            Pattern::Arr(items) => items.iter().for_each(|p| pattern(p, out)),
            Pattern::Obj(entries) => entries.iter().for_each(|(k, p)| {
                out.push(k);
                pattern(p, out);
            }),
        }
    }
    match term {
        Term::Id | Term::Recurse | Term::Num(_) | Term::Break(_) | Term::Var(_) => {}
        Term::Str(_, parts) => out.extend(parts.iter().filter_map(|p| match p {
            StrPart::Term(t) => Some(t),
            _ => None,
        })),
        Term::Arr(items) => out.extend(items.as_deref()),
        Term::Obj(entries) => entries.iter().for_each(|(k, v)| {
            out.push(k);
            out.extend(v);
        }),
        Term::Neg(t) | Term::Label(_, t) => out.push(t),
        Term::BinOp(l, op, r) => {
            out.push(l);
            out.push(r);
            if let jaq_core::load::parse::BinaryOp::Pipe(Some(p)) = op {
                pattern(p, out);
            }
        }
        Term::Fold(_, source, p, args) => {
            out.push(source);
            pattern(p, out);
            out.extend(args);
        }
        Term::TryCatch(body, handler) => {
            out.push(body);
            out.extend(handler.as_deref());
        }
        Term::IfThenElse(branches, otherwise) => {
            branches.iter().for_each(|(c, t)| out.extend([c, t]));
            out.extend(otherwise.as_deref());
        }
        Term::Def(defs, body) => {
            out.extend(defs.iter().map(|d: &Def<&str, Term<&str>>| &d.body));
            out.push(body);
        }
        Term::Call(_, args) => out.extend(args),
        Term::Path(head, path) => {
            out.push(head);
            for (part, _) in &path.0 {
                match part {
                    Part::Index(t) => out.push(t),
                    Part::Range(from, to) => out.extend(from.iter().chain(to)),
                }
            }
        }
    }
}

/// The depth of `term`'s syntax tree, without recursing (an over-deep tree must not overflow
/// the stack that measures it).
fn depth(term: &Term<&str>) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(term, 1)];
    let mut inner = Vec::new();
    while let Some((term, level)) = stack.pop() {
        deepest = deepest.max(level);
        inner.clear();
        children(term, &mut inner);
        stack.extend(inner.iter().map(|t| (*t, level + 1)));
    }
    deepest
}

/// The first call in `term` to a [`REFUSED`] builtin that no definition in scope shadows
/// (`scope`: the names defined around it, as name and arity, arity ignored here).
fn refused<'s>(
    term: &Term<&'s str>,
    scope: &mut Vec<&'s str>,
) -> Option<(&'static str, &'static str)> {
    match term {
        Term::Call(name, args) => {
            if !scope.contains(name) {
                if let Some(&(name, why)) = REFUSED.iter().find(|(n, _)| n == name) {
                    return Some((name, why));
                }
            }
            args.iter().find_map(|a| refused(a, scope))
        }
        Term::Def(defs, body) => {
            let outer = scope.len();
            let found = defs
                .iter()
                .find_map(|def| {
                    // A definition is in scope in its own body (recursion), as are its
                    // parameters (`def f(g; $x)`: `g` and `x` may be called).
                    scope.push(def.name);
                    let inner = scope.len();
                    scope.extend(def.args.iter().map(|a| a.trim_start_matches('$')));
                    let found = refused(&def.body, scope);
                    scope.truncate(inner);
                    found
                })
                .or_else(|| refused(body, scope));
            scope.truncate(outer);
            found
        }
        _ => {
            let mut inner = Vec::new();
            children(term, &mut inner);
            inner.into_iter().find_map(|t| refused(t, scope))
        }
    }
}

/// Where each worker is in its evaluations, so that a watchdog can tell a runaway expression
/// (jaq cannot be interrupted inside one evaluation, so the watchdog can only end the run).
#[derive(Debug)]
pub struct EvalWatch {
    epoch: Instant,
    slots: Mutex<Vec<Arc<EvalSlot>>>,
}

/// One worker's evaluation in progress.
#[derive(Debug)]
pub struct EvalSlot {
    epoch: Instant,
    /// Nanoseconds from the epoch to the start of the evaluation in progress, plus one; 0 when
    /// none is.
    started: AtomicU64,
    /// The line being evaluated.
    line: AtomicU64,
    /// The address of the source name last given: the name is copied (under the lock) only
    /// when it changes, once per source, not per line. Only the slot's worker writes it.
    source_at: AtomicUsize,
    /// The source's name.
    source: Mutex<String>,
}

/// The evaluation that has been running longest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Running {
    /// The source's name.
    pub source: String,
    /// The line number.
    pub line: u64,
    /// How long it has been running.
    pub elapsed: Duration,
}

impl Default for EvalWatch {
    fn default() -> Self {
        EvalWatch {
            epoch: Instant::now(),
            slots: Mutex::new(Vec::new()),
        }
    }
}

impl EvalWatch {
    /// A new slot, for one worker.
    pub fn slot(&self) -> Arc<EvalSlot> {
        let slot = Arc::new(EvalSlot {
            epoch: self.epoch,
            started: AtomicU64::new(0),
            line: AtomicU64::new(0),
            source_at: AtomicUsize::new(0),
            source: Mutex::new(String::new()),
        });
        lock(&self.slots).push(Arc::clone(&slot));
        slot
    }

    /// The evaluation in progress that started first, if any.
    pub fn longest(&self) -> Option<Running> {
        let now = self.epoch.elapsed();
        let slots = lock(&self.slots);
        let (slot, started) = slots
            .iter()
            .filter_map(|slot| match slot.started.load(Ordering::Acquire) {
                0 => None,
                n => Some((slot, Duration::from_nanos(n - 1))),
            })
            .min_by_key(|(_, started)| *started)?;
        let running = Running {
            source: lock(&slot.source).clone(),
            line: slot.line.load(Ordering::Relaxed),
            elapsed: now.saturating_sub(started),
        };
        Some(running)
    }
}

impl EvalSlot {
    /// Notes that the worker starts evaluating line `line` of `source`.
    pub fn begin(&self, source: &str, line: u64) {
        let at = source.as_ptr() as usize;
        if self.source_at.load(Ordering::Relaxed) != at {
            *lock(&self.source) = source.to_owned();
            self.source_at.store(at, Ordering::Relaxed);
        }
        self.line.store(line, Ordering::Relaxed);
        let started = u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX - 1);
        self.started.store(started + 1, Ordering::Release);
    }

    /// Notes that the evaluation ended.
    pub fn end(&self) {
        self.started.store(0, Ordering::Release);
    }
}

/// A lock whose holder cannot leave its data half-changed: a poisoned one is still good.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(expr: &str) -> Option<Vec<String>> {
        Where::new(expr).unwrap().members
    }

    #[test]
    fn an_empty_expression_is_named_so() {
        for expr in ["", " ", "\n\t"] {
            let message = Where::new(expr).unwrap_err().message;
            assert!(message.starts_with("the expression is empty"), "{message}");
        }
    }

    #[test]
    fn the_prelude_parses_and_compiles() {
        assert!(prelude().count() > 10);
        for expr in [
            "[1, \"a\"] | @csv",
            "[1, \"a\"] | @tsv",
            "IN(1, 2)",
            "[tostream]",
        ] {
            Where::new(expr).unwrap();
        }
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
        // `.outcome` reads an attempt, not the envelope.
        assert_eq!(
            read(r#"any(.attempts[]; .outcome == "X")"#),
            some(&["attempts"])
        );
        assert_eq!(read(r#"{queue} | .queue"#), some(&["queue"]));
        assert_eq!(read(". as $e | $e.queue"), some(&["queue"]));
        assert_eq!(read("has(\"queue\")"), some(&["queue"]));
        // The envelope passed on by select, first, if and //, then read.
        assert_eq!(
            read(r#"select(.status == "DEAD").queue | startswith("pay")"#),
            some(&["queue", "status"])
        );
        assert_eq!(read("first(select(.a), .) | .b"), some(&["a", "b"]));
        assert_eq!(read("if .a then . else {} end | .b"), some(&["a", "b"]));
        assert_eq!(read("(.a // .) | .b"), some(&["a", "b"]));
        assert_eq!(read("try error(.) catch .b"), some(&["b"]));
        assert_eq!(read("reduce .a[] as $x (.; .) | .b"), some(&["a", "b"]));
        // Only the truth of the output counts, and an object is always true.
        assert_eq!(read("."), some(&[]));
        for whole in [
            "keys | length > 3",
            "length",
            "tojson | test(\"x\")",
            "[.[]] | length",
            ". as $e | [$e] | length",
            "try error(.) catch length",
            "try error({e: .}) catch .e.queue",
            ". as $e | path($e.queue)",
            ". as $e | .x |= $e",
            "reduce .a[] as $x (.; . + {}) | .b",
            "{(.a): .} | .b",
            "..",
            "def f: .queue; f",
            ".[\"que\" + \"ue\"]",
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
        // The members as the parser finds them.
        let mut parser = JsonParser::new();
        let doc = parser.parse(line, &mut Vec::new()).unwrap();
        let mut nodes = Vec::new();
        let found = spans::member_texts(&doc, line, &mut nodes);
        let partial = members::partial(&names, found).unwrap();
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
        let none: [(&str, &[u8]); 0] = [];
        assert_eq!(
            members::partial(&names, none).map(|v| v.to_string()),
            Some("{}".into())
        );
        assert_eq!(members::partial(&names, [("n", &b"-"[..])]), None);
    }
}
