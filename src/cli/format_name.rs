//! The format an output's name asks for (`-o r.json`, `-o x.csv.gz`), held against `--format`.

use std::path::Path;

/// The format `command` writes to `output`: the one its name's ending names (the ending before
/// any `.zst` or `.gz`), which a different `--format` (`given`) contradicts; else `given`, else
/// `default`. A name with no ending, and `-` (standard output), follow `--format` or the
/// default; an ending that names none of `endings` needs `--format`, so that `-o x.xlsx` never
/// quietly holds CSV. Formats are named by their `--format` values, as clap knows them.
pub fn pick<F: Copy + PartialEq + clap::ValueEnum>(
    command: &str,
    output: Option<&Path>,
    given: Option<F>,
    default: F,
    endings: &[(&str, F)],
) -> anyhow::Result<F> {
    let name = |format: F| {
        format
            .to_possible_value()
            .map_or_else(String::new, |v| v.get_name().to_owned())
    };
    let Some(ending) = output.and_then(ending) else {
        return Ok(given.unwrap_or(default));
    };
    let shown = output.map_or_else(String::new, |p| p.display().to_string());
    match (endings.iter().find(|(e, _)| *e == ending), given) {
        (Some(&(_, named)), Some(given)) if given != named => anyhow::bail!(
            "{shown}: --format {} does not go with the name's .{ending}, which is {}: \
             give one or the other",
            name(given),
            name(named)
        ),
        (Some(&(_, named)), _) => Ok(named),
        (None, Some(given)) => Ok(given),
        (None, None) => {
            let mut formats: Vec<String> = Vec::new();
            for (_, format) in endings {
                if !formats.contains(&name(*format)) {
                    formats.push(name(*format));
                }
            }
            let names: Vec<String> = endings.iter().map(|(e, _)| format!(".{e}")).collect();
            anyhow::bail!(
                "{shown}: {command} writes {}: name the file {} or give --format",
                or_list(&formats),
                names.join("/")
            )
        }
    }
}

/// `a, b or c`.
fn or_list(items: &[String]) -> String {
    match items.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => items.join(""),
    }
}

/// The ending of a file name that says its format, lower-cased: `json` of `r.JSON.zst`; none
/// for `-`, or a name without a dot after its compression ending is set aside. Read by
/// [`Endings`](rdq_envelope::io::Endings), as the compression is: one rule for every output.
fn ending(path: &Path) -> Option<String> {
    rdq_envelope::io::Endings::of(path).format
}

/// Endings that name a format other than JSON Lines: a file so named that holds JSON Lines
/// would be read by the next tool as that format, or fail there. Other endings (`out.dat`,
/// `part-0001`) are names, not formats, and pass.
const NOT_JSON_LINES: [&str; 15] = [
    "csv", "tsv", "parquet", "html", "htm", "xlsx", "xls", "xml", "yaml", "yml", "avro", "orc",
    "arrow", "pdf", "md",
];

/// Refuses an output of JSON Lines (given with `flag`) whose name's ending names another
/// format (`filter -o dead.csv`, `--rejects r.parquet`): the format follows the name or the run
/// refuses, for the outputs without a `--format` as for those with one.
pub fn refuse_other_than_json_lines(flag: &str, output: Option<&Path>) -> anyhow::Result<()> {
    // `--summary` writes one JSON object, the rest JSON Lines; the same endings fit both.
    let (writes, named) = match flag {
        "--summary" => ("JSON", ".json (another ending or none)"),
        _ => (
            "JSON Lines",
            ".jsonl (or .ndjson, .json, another ending or none)",
        ),
    };
    let Some(path) = output else {
        return Ok(());
    };
    match ending(path) {
        Some(ending) if NOT_JSON_LINES.contains(&ending.as_str()) => anyhow::bail!(
            "{}: {flag} writes {writes}, but the name's .{ending} says otherwise: name it \
             {named}{}",
            path.display(),
            match ending.as_str() {
                "csv" | "tsv" | "parquet" => "; for rows, rdq-envelope export",
                "html" | "htm" => "; for a report, rdq-envelope stats --format html",
                _ => "",
            }
        ),
        _ => Ok(()),
    }
}
