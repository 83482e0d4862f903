//! `-V` and `--version`, as ripgrep prints them: `-V` the version and the commit it was built
//! from; `--version` also the target and the SIMD paths this CPU runs, which is what a bug
//! report about speed (or about a result only one machine gets) needs first.

use rdq_envelope::json::{simd_paths, SimdPath};

/// `0.1.0 (rev 6cf5943)`, or `0.1.0` when the build knew no commit (build.rs).
pub fn short() -> String {
    let version = env!("CARGO_PKG_VERSION");
    match option_env!("RDQ_ENVELOPE_COMMIT") {
        Some(commit) => format!("{version} (rev {commit})"),
        None => version.to_owned(),
    }
}

/// [`short`], a blank line, then `target: TRIPLE`, `simd: ...` and `features: ...`.
pub fn long() -> String {
    format!(
        "{}\n\ntarget: {}\nsimd: {}\nfeatures: {}",
        short(),
        env!("RDQ_ENVELOPE_TARGET"),
        simd_line(
            &simd_paths(),
            std::env::var("RDQ_ENVELOPE_SIMD").ok().as_deref()
        ),
        features_line()
    )
}

/// The optional cargo features built in, each with what it adds, and those left out: whether
/// this binary writes Parquet and reads `s3://` is a question a user must be able to ask it.
fn features_line() -> String {
    let features = [
        ("parquet", cfg!(feature = "parquet")),
        ("s3", cfg!(feature = "s3")),
    ];
    let with: Vec<&str> = features.iter().filter(|f| f.1).map(|f| f.0).collect();
    let without: Vec<&str> = features.iter().filter(|f| !f.1).map(|f| f.0).collect();
    match (with.is_empty(), without.is_empty()) {
        (_, true) => with.join(" "),
        (true, false) => format!("none (without {})", without.join(", ")),
        (false, false) => format!("{} (without {})", with.join(" "), without.join(", ")),
    }
}

/// `avx2 (+avx2 +bmi1 +pclmulqdq +popcnt; also sse4.2, portable)`: the classifier in use with
/// the CPU features it runs on, then the others this CPU could run (`RDQ_ENVELOPE_SIMD` picks
/// among them); `portable` alone on a CPU with none of them. `wanted` is `RDQ_ENVELOPE_SIMD`
/// (already checked to be a name, or empty): a classifier this CPU lacks is passed over by
/// every command, and said to be here (`RDQ_ENVELOPE_SIMD=neon: not on this CPU`).
fn simd_line(paths: &[SimdPath], wanted: Option<&str>) -> String {
    let passed_over = wanted
        .filter(|w| !w.is_empty() && !paths.iter().any(|p| p.name == *w))
        .map(|w| format!("RDQ_ENVELOPE_SIMD={w}: not on this CPU"));
    let Some(used) = paths.iter().find(|p| p.in_use) else {
        return match passed_over {
            Some(note) => format!("portable ({note})"),
            None => "portable".to_owned(),
        };
    };
    let mut notes: Vec<String> = Vec::new();
    if !used.features.is_empty() {
        let features: Vec<String> = used.features.iter().map(|f| format!("+{f}")).collect();
        notes.push(features.join(" "));
    }
    // Not the fastest: only RDQ_ENVELOPE_SIMD makes it so.
    if paths.first().is_some_and(|p| p.name != used.name) {
        notes.push("RDQ_ENVELOPE_SIMD".to_owned());
    }
    notes.extend(passed_over);
    let others: Vec<&str> = paths.iter().filter(|p| !p.in_use).map(|p| p.name).collect();
    if !others.is_empty() {
        notes.push(format!("also {}", others.join(", ")));
    }
    match notes.is_empty() {
        true => used.name.to_owned(),
        false => format!("{} ({})", used.name, notes.join("; ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(name: &'static str, features: &'static [&'static str], in_use: bool) -> SimdPath {
        let mut path = simd_paths()[0];
        path.name = name;
        path.features = features;
        path.in_use = in_use;
        path
    }

    /// What a command does with `RDQ_ENVELOPE_SIMD`, on CPUs this one is not: a name the CPU
    /// lacks is passed over for the fastest it has, and the line says so.
    #[test]
    fn the_simd_line_says_what_a_command_would_use() {
        let x86 = |used: &str| {
            vec![
                path("avx2", &["avx2"], used == "avx2"),
                path("sse4.2", &["sse4.2"], used == "sse4.2"),
                path("portable", &[], used == "portable"),
            ]
        };
        assert_eq!(
            simd_line(&x86("avx2"), None),
            "avx2 (+avx2; also sse4.2, portable)"
        );
        assert_eq!(
            simd_line(&x86("avx2"), Some("")),
            simd_line(&x86("avx2"), None)
        );
        assert_eq!(
            simd_line(&x86("avx2"), Some("neon")),
            "avx2 (+avx2; RDQ_ENVELOPE_SIMD=neon: not on this CPU; also sse4.2, portable)"
        );
        assert_eq!(
            simd_line(&x86("sse4.2"), Some("sse4.2")),
            "sse4.2 (+sse4.2; RDQ_ENVELOPE_SIMD; also avx2, portable)"
        );
        // A CPU without AVX2, asked for it.
        let old = vec![
            path("sse4.2", &["sse4.2"], true),
            path("portable", &[], false),
        ];
        assert_eq!(
            simd_line(&old, Some("avx2")),
            "sse4.2 (+sse4.2; RDQ_ENVELOPE_SIMD=avx2: not on this CPU; also portable)"
        );
        let none = vec![path("portable", &[], true)];
        assert_eq!(simd_line(&none, None), "portable");
        assert_eq!(
            simd_line(&none, Some("avx2")),
            "portable (RDQ_ENVELOPE_SIMD=avx2: not on this CPU)"
        );
    }
}
