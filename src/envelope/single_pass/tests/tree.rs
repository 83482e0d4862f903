//! A JSON tree that keeps every scalar and key as written (escapes, number spellings), for
//! mutating envelopes member by member and writing them back byte for byte.

/// A JSON value: scalars and keys are kept as their raw text (a string with its quotes).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum J {
    Raw(String),
    /// Members: the key's text between its quotes, as written, and the value.
    Obj(Vec<(String, J)>),
    Arr(Vec<J>),
}

impl J {
    /// Parses JSON text (compact or not; white space between tokens is dropped). `None` when it
    /// is not JSON this small parser understands.
    pub fn parse(text: &str) -> Option<J> {
        let mut p = Parser {
            s: text.as_bytes(),
            at: 0,
        };
        let value = p.value()?;
        p.white();
        (p.at == p.s.len()).then_some(value)
    }

    /// The compact text.
    pub fn text(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            J::Raw(raw) => out.push_str(raw),
            J::Obj(members) => {
                out.push('{');
                for (i, (key, value)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push('"');
                    out.push_str(key);
                    out.push_str("\":");
                    value.write(out);
                }
                out.push('}');
            }
            J::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
        }
    }

    /// The value of member `key` of this object.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut J> {
        match self {
            J::Obj(members) => members.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Sets member `key` (replacing it, or appending it).
    pub fn set(&mut self, key: &str, value: J) -> &mut Self {
        if let J::Obj(members) = self {
            match members.iter_mut().find(|(k, _)| k == key) {
                Some((_, v)) => *v = value,
                None => members.push((key.to_owned(), value)),
            }
        }
        self
    }

    /// Sets member `key` to the raw text `raw`.
    pub fn set_raw(&mut self, key: &str, raw: &str) -> &mut Self {
        self.set(key, J::Raw(raw.to_owned()))
    }

    /// The `i`th element of this array.
    pub fn item_mut(&mut self, i: usize) -> Option<&mut J> {
        match self {
            J::Arr(items) => items.get_mut(i),
            _ => None,
        }
    }
}

struct Parser<'s> {
    s: &'s [u8],
    at: usize,
}

impl Parser<'_> {
    fn white(&mut self) {
        while self
            .s
            .get(self.at)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        self.white();
        (self.s.get(self.at) == Some(&byte)).then(|| self.at += 1)
    }

    /// A string's raw text without its quotes.
    fn string(&mut self) -> Option<String> {
        self.eat(b'"')?;
        let start = self.at;
        loop {
            match self.s.get(self.at)? {
                b'"' => break,
                b'\\' => self.at += 2,
                _ => self.at += 1,
            }
        }
        let text = std::str::from_utf8(&self.s[start..self.at])
            .ok()?
            .to_owned();
        self.at += 1;
        Some(text)
    }

    fn value(&mut self) -> Option<J> {
        self.white();
        match *self.s.get(self.at)? {
            b'{' => {
                self.at += 1;
                let mut members = Vec::new();
                if self.eat(b'}').is_some() {
                    return Some(J::Obj(members));
                }
                loop {
                    let key = self.string()?;
                    self.eat(b':')?;
                    members.push((key, self.value()?));
                    if self.eat(b'}').is_some() {
                        return Some(J::Obj(members));
                    }
                    self.eat(b',')?;
                }
            }
            b'[' => {
                self.at += 1;
                let mut items = Vec::new();
                if self.eat(b']').is_some() {
                    return Some(J::Arr(items));
                }
                loop {
                    items.push(self.value()?);
                    if self.eat(b']').is_some() {
                        return Some(J::Arr(items));
                    }
                    self.eat(b',')?;
                }
            }
            b'"' => Some(J::Raw(format!("\"{}\"", self.string()?))),
            _ => {
                let start = self.at;
                while self.s.get(self.at).is_some_and(|b| {
                    !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n')
                }) {
                    self.at += 1;
                }
                (self.at > start)
                    .then(|| J::Raw(String::from_utf8_lossy(&self.s[start..self.at]).into_owned()))
            }
        }
    }
}

/// A step from a container to one of its values.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step {
    Member(usize),
    Element(usize),
}

/// The value at `path` under `node`.
pub(crate) fn follow<'t>(node: &'t mut J, path: &[Step]) -> &'t mut J {
    path.iter().fold(node, |node, step| match (node, step) {
        (J::Obj(members), Step::Member(i)) => &mut members[*i].1,
        (J::Arr(items), Step::Element(i)) => &mut items[*i],
        _ => unreachable!("the path was taken from this tree"),
    })
}

/// The paths of every object and array under `node`, `node` first.
pub(crate) fn containers(node: &J) -> Vec<Vec<Step>> {
    fn walk(node: &J, path: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
        let steps: Vec<(Step, &J)> = match node {
            J::Raw(_) => return,
            J::Obj(members) => members
                .iter()
                .enumerate()
                .map(|(i, (_, v))| (Step::Member(i), v))
                .collect(),
            J::Arr(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| (Step::Element(i), v))
                .collect(),
        };
        out.push(path.clone());
        for (step, value) in steps {
            path.push(step);
            walk(value, path, out);
            path.pop();
        }
    }
    let mut out = Vec::new();
    walk(node, &mut Vec::new(), &mut out);
    out
}

/// Calls `f` with every tree one mutation away from `root`: for each object, a member deleted,
/// duplicated (right after itself, and at the object's end), moved to the front, swapped with
/// the next one, its key spelled with an escape or changed, its value replaced by each of
/// `alternatives(key, value)`; for each array, an element deleted, duplicated or swapped. Each
/// mutation is made in place and undone after `f` (no tree is copied).
pub(crate) fn for_each_mutation(
    root: &mut J,
    alternatives: &dyn Fn(&str, &J) -> Vec<String>,
    f: &mut dyn FnMut(&J),
) {
    // Applies `edit` to the container at `path`, shows the tree to `f`, and applies `undo`.
    fn with<C>(
        root: &mut J,
        path: &[Step],
        f: &mut dyn FnMut(&J),
        edit: impl FnOnce(&mut Vec<C>) -> C,
        undo: impl FnOnce(&mut Vec<C>, C),
    ) where
        J: AsVec<C>,
    {
        let saved = edit(follow(root, path).as_vec());
        f(root);
        undo(follow(root, path).as_vec(), saved);
    }
    for path in containers(root) {
        match follow(root, &path) {
            J::Obj(members) => {
                let n = members.len();
                for i in 0..n {
                    let (key, value) = {
                        let J::Obj(m) = follow(root, &path) else {
                            unreachable!()
                        };
                        m[i].clone()
                    };
                    type M = (String, J);
                    for raw in alternatives(&key, &value) {
                        let raw = J::Raw(raw);
                        with::<M>(
                            root,
                            &path,
                            f,
                            |m| (String::new(), std::mem::replace(&mut m[i].1, raw)),
                            |m, (_, old)| m[i].1 = old,
                        );
                    }
                    for new_key in key_variants(&key) {
                        with::<M>(
                            root,
                            &path,
                            f,
                            |m| {
                                (
                                    std::mem::replace(&mut m[i].0, new_key),
                                    J::Raw(String::new()),
                                )
                            },
                            |m, (old, _)| m[i].0 = old,
                        );
                    }
                    with::<M>(
                        root,
                        &path,
                        f,
                        |m| m.remove(i),
                        |m, member| m.insert(i, member),
                    );
                    with::<M>(
                        root,
                        &path,
                        f,
                        |m| {
                            m.insert(i + 1, m[i].clone());
                            Default::default()
                        },
                        |m, _| {
                            m.remove(i + 1);
                        },
                    );
                    if i + 1 < n {
                        with::<M>(
                            root,
                            &path,
                            f,
                            |m| {
                                m.push(m[i].clone());
                                Default::default()
                            },
                            |m, _| {
                                m.pop();
                            },
                        );
                        with::<M>(
                            root,
                            &path,
                            f,
                            |m| {
                                m.swap(i, i + 1);
                                Default::default()
                            },
                            |m, _| m.swap(i, i + 1),
                        );
                    }
                    if i > 0 {
                        with::<M>(
                            root,
                            &path,
                            f,
                            |m| {
                                let member = m.remove(i);
                                m.insert(0, member);
                                Default::default()
                            },
                            |m, _| {
                                let member = m.remove(0);
                                m.insert(i, member);
                            },
                        );
                    }
                }
            }
            J::Arr(items) => {
                let n = items.len();
                for i in 0..n {
                    with::<J>(root, &path, f, |m| m.remove(i), |m, item| m.insert(i, item));
                    with::<J>(
                        root,
                        &path,
                        f,
                        |m| {
                            m.insert(i + 1, m[i].clone());
                            J::Raw(String::new())
                        },
                        |m, _| {
                            m.remove(i + 1);
                        },
                    );
                    if i + 1 < n {
                        with::<J>(
                            root,
                            &path,
                            f,
                            |m| {
                                m.swap(i, i + 1);
                                J::Raw(String::new())
                            },
                            |m, _| m.swap(i, i + 1),
                        );
                    }
                }
            }
            J::Raw(_) => {}
        }
    }
}

/// The members or elements of a container, for [`for_each_mutation`].
pub(crate) trait AsVec<C> {
    fn as_vec(&mut self) -> &mut Vec<C>;
}

impl AsVec<(String, J)> for J {
    fn as_vec(&mut self) -> &mut Vec<(String, J)> {
        match self {
            J::Obj(members) => members,
            _ => unreachable!("an object"),
        }
    }
}

impl AsVec<J> for J {
    fn as_vec(&mut self) -> &mut Vec<J> {
        match self {
            J::Arr(items) => items,
            _ => unreachable!("an array"),
        }
    }
}

impl Default for J {
    fn default() -> Self {
        J::Raw(String::new())
    }
}

/// The texts of every `every`th tree one mutation away from `root` (see [`for_each_mutation`]).
pub(crate) fn mutated_texts(
    root: &J,
    alternatives: &dyn Fn(&str, &J) -> Vec<String>,
    every: usize,
) -> Vec<String> {
    let mut root = root.clone();
    let mut out = Vec::new();
    let mut n = 0usize;
    for_each_mutation(&mut root, alternatives, &mut |tree| {
        if n.is_multiple_of(every) {
            out.push(tree.text());
        }
        n += 1;
    });
    out
}

/// Other spellings of a key: its first character as a `\u` escape (the same key after
/// unescaping), `\/` where it has a `/`, upper case, and an unknown name.
fn key_variants(key: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(first) = key.chars().next().filter(|c| c.is_ascii() && *c != '\\') {
        out.push(format!("\\u{:04x}{}", u32::from(first), &key[1..]));
    }
    if let Some(last) = key.chars().last().filter(|c| c.is_ascii_alphabetic()) {
        out.push(format!(
            "{}\\u{:04X}",
            &key[..key.len() - 1],
            u32::from(last)
        ));
    }
    if key.contains('/') {
        out.push(key.replace('/', "\\/"));
    }
    if key.chars().any(|c| c.is_ascii_lowercase()) {
        out.push(key.to_ascii_uppercase());
    }
    out.push(format!("{key}_x"));
    out
}

#[test]
fn the_tree_writes_back_what_it_read() {
    for text in [
        crate::catalogue::VALID_V1,
        crate::catalogue::VALID_V2,
        r#"{"a\"b":"c\\","n":-1.5e3,"x":[[],{},[{}]],"e":"\ud83d\ude00"}"#,
    ] {
        assert_eq!(J::parse(text).unwrap().text(), text);
    }
    assert!(J::parse(r#"{"a":1"#).is_none());
}
