//! Which members of the envelope an expression reads, proven by construction.
//!
//! Building the whole envelope as a jq value costs far more than running most expressions,
//! so [`members_read`] looks for a proof that the expression observes the envelope only
//! through `.name` lookups of known names. When it has one, the expression runs on an object
//! of just those members (a *partial* envelope, [`partial`]) and does exactly what it
//! does on the whole one. When it has none, the whole envelope is built.
//!
//! The proof is an abstract interpretation over two values:
//!
//! - [`Abs::Clean`]: a value the expression made without looking at the envelope other than
//!   through the recorded lookups, so it is the same on the partial and the whole envelope
//!   (and so is every error it raises, message included);
//! - [`Abs::Root`]: a value that may be the envelope itself. The only things the analysis lets
//!   happen to such a value are those that cannot tell the partial envelope from the whole:
//!   a lookup `.name` of a literal name (recorded; its result is clean), passing it on
//!   (`select`, `first`, `if`, `//`, `as $x`, ...), and testing its truth or its type (an
//!   object is always true, and always an object).
//!
//! Anything else applied to a value that may be the envelope (`keys`, `length`, `.[]`, `..`,
//! `tojson`, `==`, a computed index, an unknown builtin, a user definition) ends the proof,
//! and the whole envelope is built. An error that carries the envelope (`error(.)`) marks the
//! `try` around it, whose `catch` then sees a value that may be the envelope.

use jaq_core::load::lex::StrPart;
use jaq_core::load::parse::{BinaryOp, Pattern, Term};
use jaq_core::path::Part;

/// What a term's outputs may be (see the module's documentation). `Clean` is the bottom:
/// a term with no outputs is clean.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Abs {
    Clean,
    Root,
}

impl Abs {
    fn join(self, other: Abs) -> Abs {
        self.max(other)
    }
}

/// The analysis could not prove which members are read.
struct Unproven;

type Proof<T = Abs> = Result<T, Unproven>;

/// Builtins that cannot tell a partial envelope from the whole when given one as their input
/// or as the input of their arguments, and how (see [`Analysis::call`]).
const CONSTANTS: &[&str] = &[
    "true", "false", "null", "empty", "not", "type", "now", "env", "builtins", "infinite", "nan",
];

/// Type selectors: an envelope is an object, so these pass it on or drop it, whole or not.
const PASS_OBJECTS: &[&str] = &["values", "objects", "iterables"];
const DROP_OBJECTS: &[&str] = &[
    "nulls", "booleans", "numbers", "strings", "arrays", "scalars",
];

/// Builtins that run an argument for its paths (see [`Analysis::no_root_variables`]).
const PATH_MODE: &[&str] = &["path", "paths", "del", "pick", "to_entries", "with_entries"];

struct Analysis {
    /// The names read by `.name` on a value that may be the envelope.
    names: Vec<String>,
    /// Variables in scope, innermost last.
    vars: Vec<(String, Abs)>,
    /// Whether the innermost `try` may catch an error whose value may be the envelope.
    raises_root: bool,
}

/// The top-level members `term` reads, when it provably reads the envelope only through
/// `.name` lookups (sorted, without repeats); `None` when that cannot be proven.
pub(super) fn members_read(term: &Term<&str>) -> Option<Vec<String>> {
    let mut analysis = Analysis {
        names: Vec::new(),
        vars: Vec::new(),
        raises_root: false,
    };
    // Whatever the expression outputs, only its truth counts, and an envelope is always true:
    // the output itself may be the envelope.
    analysis.term(term, Abs::Root).ok()?;
    let mut names = analysis.names;
    names.sort_unstable();
    names.dedup();
    Some(names)
}

/// A literal string (`."name"`, `.name`, `"name"`): its text.
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

/// Fails unless `abs` is clean.
fn clean(abs: Abs) -> Proof<()> {
    match abs {
        Abs::Clean => Ok(()),
        Abs::Root => Err(Unproven),
    }
}

impl Analysis {
    /// What `term`'s outputs may be when its input is `input`.
    fn term(&mut self, term: &Term<&str>, input: Abs) -> Proof {
        match term {
            Term::Id => Ok(input),
            Term::Recurse => clean(input).map(|()| Abs::Clean),
            Term::Num(_) | Term::Break(_) => Ok(Abs::Clean),
            Term::Var(name) => Ok(self.var(name)),
            Term::Str(_, parts) => {
                // A format (`@base64 "\(.x)"`) applies to the interpolated values only.
                for part in parts {
                    if let StrPart::Term(t) = part {
                        clean(self.term(t, input)?)?;
                    }
                }
                Ok(Abs::Clean)
            }
            Term::Arr(items) => {
                if let Some(items) = items {
                    clean(self.term(items, input)?)?;
                }
                Ok(Abs::Clean)
            }
            Term::Obj(entries) => {
                for (key, value) in entries {
                    match value {
                        Some(value) => {
                            clean(self.term(key, input)?)?;
                            clean(self.term(value, input)?)?;
                        }
                        // `{$x}` is `{"x": $x}`.
                        None if matches!(key, Term::Var(_)) => clean(self.term(key, input)?)?,
                        // `{name}` and `{"name"}` are `{"name": .name}`.
                        None => self.lookup(key, input, input).map(|_| ())?,
                    }
                }
                Ok(Abs::Clean)
            }
            Term::Neg(t) => clean(self.term(t, input)?).map(|()| Abs::Clean),
            Term::Label(_, t) => self.term(t, input),
            Term::Def(..) => Err(Unproven),
            Term::IfThenElse(branches, otherwise) => {
                let mut out = match otherwise {
                    Some(t) => self.term(t, input)?,
                    // `if c then t end` passes its input on when `c` is false.
                    None => input,
                };
                for (condition, then) in branches {
                    // Only the condition's truth counts.
                    self.term(condition, input)?;
                    out = out.join(self.term(then, input)?);
                }
                Ok(out)
            }
            Term::TryCatch(body, handler) => {
                let outer = std::mem::replace(&mut self.raises_root, false);
                let out = self.term(body, input);
                let caught = std::mem::replace(&mut self.raises_root, outer);
                let out = out?;
                match handler {
                    None => Ok(out),
                    Some(handler) => {
                        let error = if caught { Abs::Root } else { Abs::Clean };
                        Ok(out.join(self.term(handler, error)?))
                    }
                }
            }
            Term::Fold(_, source, pattern, args) => {
                let value = self.term(source, input)?;
                // The start runs before the first value is bound; whether it sees the
                // pattern's variables or not, both readings are checked.
                let start = match args.first() {
                    Some(init) => self.term(init, input)?,
                    None => return Err(Unproven),
                };
                let bound = self.vars.len();
                let out = self
                    .bind(pattern, value, input)
                    .and_then(|()| self.fold(args, start, input));
                self.vars.truncate(bound);
                out
            }
            Term::BinOp(l, op, r) => self.binop(l, op, r, input),
            Term::Call(name, args) => self.call(name, args, input),
            Term::Path(head, path) => {
                let mut value = self.term(head, input)?;
                for (part, _) in &path.0 {
                    value = match part {
                        Part::Index(index) => self.lookup(index, value, input)?,
                        Part::Range(from, to) => {
                            clean(value)?;
                            for bound in [from, to].into_iter().flatten() {
                                clean(self.term(bound, input)?)?;
                            }
                            Abs::Clean
                        }
                    };
                }
                Ok(value)
            }
        }
    }

    /// `value[key]`, where the key is computed from `input` (a path's index terms read the
    /// path's input): on a value that may be the envelope, only a literal name is proven.
    fn lookup(&mut self, key: &Term<&str>, value: Abs, input: Abs) -> Proof {
        match (value, literal(key)) {
            (Abs::Root, Some(name)) => {
                self.names.push(name);
                Ok(Abs::Clean)
            }
            (Abs::Root, None) => Err(Unproven),
            (Abs::Clean, _) => {
                clean(self.term(key, input)?)?;
                Ok(Abs::Clean)
            }
        }
    }

    /// Fails when a variable in scope may hold the envelope. A filter run for its paths
    /// (`path(f)`, `del(f)`, the left of `|=`) fails on a variable with a message that shows
    /// the variable's value, and a `catch` could read that message.
    fn no_root_variables(&self) -> Proof<()> {
        match self.vars.iter().all(|(_, abs)| *abs == Abs::Clean) {
            true => Ok(()),
            false => Err(Unproven),
        }
    }

    fn var(&self, name: &str) -> Abs {
        // Variables the expression did not bind (`$ENV`, `$__loc__`) never hold the envelope.
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map_or(Abs::Clean, |(_, abs)| *abs)
    }

    /// Binds the variables of `pattern` to parts of `value`; the keys of an object pattern
    /// are computed from `input`.
    fn bind(&mut self, pattern: &Pattern<&str>, value: Abs, input: Abs) -> Proof<()> {
        match pattern {
            Pattern::Var(name) => self.vars.push(((*name).to_owned(), value)),
            Pattern::Arr(items) => {
                clean(value)?;
                for item in items {
                    self.bind(item, Abs::Clean, input)?;
                }
            }
            Pattern::Obj(entries) => {
                for (key, item) in entries {
                    let member = self.lookup(key, value, input)?;
                    self.bind(item, member, input)?;
                }
            }
        }
        Ok(())
    }

    /// `reduce`'s and `foreach`'s arguments: the start reads the input, the update and the
    /// extraction read the accumulator.
    fn fold(&mut self, args: &[Term<&str>], start: Abs, input: Abs) -> Proof {
        let [init, update, extract @ ..] = args else {
            return Err(Unproven);
        };
        let mut acc = start.join(self.term(init, input)?);
        // Two values: at most two rounds reach the fixed point.
        loop {
            let next = acc.join(self.term(update, acc)?);
            if next == acc {
                break;
            }
            acc = next;
        }
        match extract {
            [] => Ok(acc),
            [extract] => Ok(acc.join(self.term(extract, acc)?)),
            _ => Err(Unproven),
        }
    }

    fn binop(&mut self, l: &Term<&str>, op: &BinaryOp<&str>, r: &Term<&str>, input: Abs) -> Proof {
        match op {
            BinaryOp::Pipe(None) => {
                let value = self.term(l, input)?;
                self.term(r, value)
            }
            BinaryOp::Pipe(Some(pattern)) => {
                let value = self.term(l, input)?;
                let bound = self.vars.len();
                let out = self
                    .bind(pattern, value, input)
                    .and_then(|()| self.term(r, input));
                self.vars.truncate(bound);
                out
            }
            BinaryOp::Comma | BinaryOp::Alt => Ok(self.term(l, input)?.join(self.term(r, input)?)),
            // Only the operands' truth counts.
            BinaryOp::And | BinaryOp::Or => {
                self.term(l, input)?;
                self.term(r, input)?;
                Ok(Abs::Clean)
            }
            BinaryOp::Math(_) | BinaryOp::Cmp(_) => {
                clean(self.term(l, input)?)?;
                clean(self.term(r, input)?)?;
                Ok(Abs::Clean)
            }
            // Updates rebuild their input: only a clean one.
            BinaryOp::Assign | BinaryOp::Update | BinaryOp::UpdateMath(_) | BinaryOp::UpdateAlt => {
                clean(input)?;
                self.no_root_variables()?;
                clean(self.term(l, input)?)?;
                clean(self.term(r, Abs::Clean)?)?;
                Ok(Abs::Clean)
            }
        }
    }

    fn call(&mut self, name: &str, args: &[Term<&str>], input: Abs) -> Proof {
        match (name, args) {
            ("select", [condition]) => {
                self.term(condition, input)?;
                Ok(input)
            }
            (name, []) if PASS_OBJECTS.contains(&name) => Ok(input),
            (name, []) if DROP_OBJECTS.contains(&name) || CONSTANTS.contains(&name) => {
                Ok(Abs::Clean)
            }
            ("error", []) => {
                self.raises_root |= input == Abs::Root;
                Ok(Abs::Clean)
            }
            ("error", [value]) => {
                self.raises_root |= self.term(value, input)? == Abs::Root;
                Ok(Abs::Clean)
            }
            ("first" | "last", [f]) => self.term(f, input),
            ("isempty", [f]) => self.term(f, input).map(|_| Abs::Clean),
            ("limit", [n, f]) => {
                clean(self.term(n, input)?)?;
                self.term(f, input)
            }
            ("any" | "all", [generator, condition]) => {
                let value = self.term(generator, input)?;
                self.term(condition, value)?;
                Ok(Abs::Clean)
            }
            ("has", [key]) if input == Abs::Root => {
                self.lookup(key, input, input).map(|_| Abs::Clean)
            }
            // Any other builtin may look at its input or its arguments' values in any way:
            // only clean ones. (Its arguments run on its input or on values made from it.)
            (name, args) => {
                clean(input)?;
                if PATH_MODE.contains(&name) {
                    self.no_root_variables()?;
                }
                for arg in args {
                    clean(self.term(arg, Abs::Clean)?)?;
                }
                Ok(Abs::Clean)
            }
        }
    }
}

/// An object of the members named `names` (distinct) among `members` (a valid envelope's
/// top-level members: each key, and its value's JSON text as the single pass or the parser
/// found it in the line), each built from its own bytes; `None` when a value is not JSON (the
/// caller then says the expression failed, as on the whole).
pub(super) fn partial<'m>(
    names: &[String],
    members: impl IntoIterator<Item = (&'m str, &'m [u8])>,
) -> Option<jaq_json::Val> {
    use jaq_json::Val;
    let mut map = jaq_json::Map::default();
    let mut found = 0;
    for (key, value) in members {
        if names.iter().any(|n| n == key) {
            map.insert(
                Val::from(key.to_owned()),
                jaq_json::read::parse_single(value).ok()?,
            );
            found += 1;
            // A valid envelope has no duplicate keys: the rest is not needed.
            if found == names.len() {
                break;
            }
        }
    }
    Some(Val::obj(map))
}
