//! The kit's report: rows for people, one JSON object, JUnit XML for a CI system.

use std::io::{self, Write};
use std::time::Duration;

use rdq_envelope::compliance::{excerpt, Class, Equality, Fixture, FixtureResult, Judgement};

use super::plugin::Finished;

/// How many lines of a command's standard error the human report quotes.
const STDERR_LINES: usize = 20;

pub struct Report<'a> {
    pub set: &'a [Fixture],
    pub judgement: &'a Judgement,
    pub equality: Equality,
    pub write: &'a Finished,
    pub read: &'a Finished,
    pub timeout: Duration,
}

impl Report<'_> {
    pub fn passed(&self) -> bool {
        self.write.succeeded() && self.read.succeeded() && self.judgement.passed()
    }

    fn commands(&self) -> [(&'static str, &Finished); 2] {
        [("write", self.write), ("read", self.read)]
    }

    fn equality_name(&self) -> &'static str {
        match self.equality {
            Equality::Value => "value",
            Equality::Exact => "exact",
        }
    }

    /// One row per difference (`ID NAME POINTER: CLASS: sent X, found Y`), the strays, the
    /// commands that failed with their standard error, and a closing line.
    pub fn human(&self, out: &mut impl Write) -> io::Result<()> {
        for (role, finished) in self.commands() {
            if let Some(failure) = finished.failure(role, self.timeout) {
                writeln!(out, "{failure}")?;
                write_stderr(out, finished)?;
            }
        }
        for result in &self.judgement.fixtures {
            let FixtureResult { name, id, .. } = result;
            if result.missing {
                writeln!(out, "{id} {name}: <line>: {}", Class::EnvelopeMissing)?;
            }
            for difference in &result.differences.kept {
                writeln!(out, "{id} {name}: {difference}")?;
            }
            let more = result.differences.total - result.differences.kept.len();
            if more > 0 {
                writeln!(out, "{id} {name}: ... and {more} more differences")?;
            }
        }
        for stray in &self.judgement.strays {
            // An id from the store's output is its text, control characters and all.
            let id = stray
                .id
                .as_deref()
                .map_or("-".into(), |id| excerpt(id.as_bytes()));
            writeln!(
                out,
                "read output line {}: {id}: {}: {}: {}",
                stray.line, stray.class, stray.reason, stray.excerpt
            )?;
        }
        let total = self.set.len();
        let failed = self.judgement.failed_fixtures();
        let verdict = match self.passed() {
            true => "PASS",
            false => "FAIL",
        };
        write!(
            out,
            "{verdict}: {} of {total} fixtures round-trip ({} equality)",
            total - failed,
            self.equality_name()
        )?;
        let by_class = self.judgement.by_class();
        if !by_class.is_empty() {
            let counts: Vec<String> = by_class.iter().map(|(c, n)| format!("{c} {n}")).collect();
            write!(out, "; {}", counts.join(", "))?;
        }
        writeln!(out)
    }

    /// The report as one JSON object (docs/plugins.md#reports).
    pub fn json(&self, out: &mut impl Write) -> io::Result<()> {
        use serde_json::{json, Map, Value};
        let command = |role: &str, f: &Finished| {
            let (status, signal) = match f.ending {
                super::plugin::Ending::Exited(code)
                | super::plugin::Ending::OutputHeldOpen(code) => (Value::from(code), Value::Null),
                super::plugin::Ending::Signalled(signal) => (Value::Null, Value::from(signal)),
                _ => (Value::Null, Value::Null),
            };
            json!({
                "command": f.command,
                "succeeded": f.succeeded(),
                "status": status,
                "signal": signal,
                "failure": f.failure(role, self.timeout),
                "seconds": (f.seconds * 1000.0).round() / 1000.0,
                "stderr": String::from_utf8_lossy(&f.stderr),
                "stderr_bytes_left_out": f.stderr_cut,
            })
        };
        let mut differences = Vec::new();
        for result in &self.judgement.fixtures {
            let row = |pointer: &str, class: Class, sent: Option<&str>, found: Option<&str>| {
                json!({
                    "id": result.id, "fixture": result.name, "line": result.line,
                    "pointer": pointer, "class": class.name(), "sent": sent, "found": found,
                })
            };
            if result.missing {
                differences.push(row("", Class::EnvelopeMissing, None, None));
            }
            for d in &result.differences.kept {
                differences.push(row(
                    &d.pointer,
                    d.class,
                    d.sent.as_deref(),
                    d.found.as_deref(),
                ));
            }
        }
        let strays: Vec<Value> = self
            .judgement
            .strays
            .iter()
            .map(|s| {
                json!({"line": s.line, "class": s.class.name(), "id": s.id,
                       "reason": s.reason, "excerpt": s.excerpt})
            })
            .collect();
        let by_class: Map<String, Value> = self
            .judgement
            .by_class()
            .into_iter()
            .map(|(class, n)| (class.name().to_string(), Value::from(n)))
            .collect();
        let failed = self.judgement.failed_fixtures();
        let report = json!({
            "passed": self.passed(),
            "equality": self.equality_name(),
            "fixtures": self.set.len(),
            "failed": failed,
            "differences_left_out": self.judgement.fixtures.iter()
                .map(|r| r.differences.total - r.differences.kept.len()).sum::<usize>(),
            "write": command("write", self.write),
            "read": command("read", self.read),
            "differences": differences,
            "strays": strays,
            "by_class": by_class,
        });
        serde_json::to_writer(&mut *out, &report)?;
        writeln!(out)
    }

    /// JUnit XML: a test case per command and per fixture, and one for the lines that match no
    /// fixture.
    pub fn junit(&self, out: &mut impl Write) -> io::Result<()> {
        let fixtures = self.judgement.fixtures.len();
        let failures =
            self.judgement.failed_fixtures() + usize::from(!self.judgement.strays.is_empty());
        let errors = self
            .commands()
            .iter()
            .filter(|(_, f)| !f.succeeded())
            .count();
        let seconds = self.write.seconds + self.read.seconds;
        let suite = format!(
            "rdq-envelope compliance ({} equality)",
            self.equality_name()
        );
        writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
        writeln!(
            out,
            r#"<testsuites name="{suite}" tests="{}" failures="{failures}" errors="{errors}" time="{seconds:.3}">"#,
            fixtures + 3
        )?;
        writeln!(
            out,
            r#"  <testsuite name="{suite}" tests="{}" failures="{failures}" errors="{errors}" time="{seconds:.3}">"#,
            fixtures + 3
        )?;
        for (role, finished) in self.commands() {
            write!(
                out,
                r#"    <testcase classname="compliance.commands" name="{role} command" time="{:.3}">"#,
                finished.seconds
            )?;
            if let Some(failure) = finished.failure(role, self.timeout) {
                write!(
                    out,
                    r#"<error message="{}" type="command failed">{}</error>"#,
                    xml(&failure),
                    xml(&String::from_utf8_lossy(&finished.stderr))
                )?;
            }
            writeln!(out, "</testcase>")?;
        }
        for result in &self.judgement.fixtures {
            write!(
                out,
                r#"    <testcase classname="compliance.fixtures" name="{}">"#,
                xml(result.name)
            )?;
            if !result.passed() {
                let mut rows = String::new();
                if result.missing {
                    rows.push_str(&format!(
                        "{}: <line>: {}\n",
                        result.id,
                        Class::EnvelopeMissing
                    ));
                }
                for d in &result.differences.kept {
                    rows.push_str(&format!("{}: {d}\n", result.id));
                }
                let total = result.differences.total + usize::from(result.missing);
                write!(
                    out,
                    r#"<failure message="{} ({total} differences)" type="round trip">{}</failure>"#,
                    xml(&result.id),
                    xml(&rows)
                )?;
            }
            writeln!(out, "</testcase>")?;
        }
        write!(
            out,
            r#"    <testcase classname="compliance.output" name="read output">"#
        )?;
        if !self.judgement.strays.is_empty() {
            let mut rows = String::new();
            for s in &self.judgement.strays {
                rows.push_str(&format!(
                    "line {}: {}: {}: {}\n",
                    s.line, s.class, s.reason, s.excerpt
                ));
            }
            write!(
                out,
                r#"<failure message="{} lines match no fixture" type="stray lines">{}</failure>"#,
                self.judgement.strays.len(),
                xml(&rows)
            )?;
        }
        writeln!(out, "</testcase>")?;
        writeln!(out, "  </testsuite>\n</testsuites>")
    }
}

/// The last [`STDERR_LINES`] lines of a command's standard error, indented.
fn write_stderr(out: &mut impl Write, finished: &Finished) -> io::Result<()> {
    let text = String::from_utf8_lossy(&finished.stderr);
    let lines: Vec<&str> = text.lines().collect();
    if lines.is_empty() {
        return writeln!(out, "  (nothing on its standard error)");
    }
    let from = lines.len().saturating_sub(STDERR_LINES);
    if from > 0 || finished.stderr_cut > 0 {
        writeln!(
            out,
            "  its standard error, the last {} lines:",
            lines.len() - from
        )?;
    } else {
        writeln!(out, "  its standard error:")?;
    }
    for line in &lines[from..] {
        // A plugin's text on a terminal: control characters shown, never obeyed.
        let shown: String = line
            .chars()
            .map(|c| {
                if c.is_control() && c != '\t' {
                    '\u{fffd}'
                } else {
                    c
                }
            })
            .collect();
        writeln!(out, "  | {shown}")?;
    }
    Ok(())
}

/// Text as XML 1.0 character data or an attribute value: the five markup characters escaped,
/// and the characters XML 1.0 cannot hold at all (most C0 controls, U+FFFE, U+FFFF) shown as
/// U+FFFD, since a plugin's standard error may hold anything.
fn xml(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&apos;"),
            '\t' | '\n' | '\r' => escaped.push(c),
            '\u{0}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}' => escaped.push('\u{fffd}'),
            c => escaped.push(c),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    #[test]
    fn xml_escapes_markup_and_replaces_what_xml_cannot_hold() {
        assert_eq!(
            super::xml("a<b>&\"'\u{1}\u{fffe}\n"),
            "a&lt;b&gt;&amp;&quot;&apos;\u{fffd}\u{fffd}\n"
        );
    }
}
