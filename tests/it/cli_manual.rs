//! Golden tests of `completions` and `man`: generated from the argument definitions, they name
//! every subcommand and flag, and the bash script is valid bash.

use crate::common;
use common::{run, scratch, stderr, stdout, tool_or_skip};

const SUBCOMMANDS: [&str; 11] = [
    "validate",
    "gen",
    "migrate",
    "redrive",
    "filter",
    "stats",
    "show",
    "schema",
    "completions",
    "man",
    "explain",
];

#[test]
fn completions_name_every_subcommand_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = run(&["completions", shell], b"");
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", stderr(&out));
        let script = stdout(&out);
        for sub in SUBCOMMANDS {
            assert!(script.contains(sub), "{shell} completes {sub}");
        }
        assert!(
            script.contains("payload-contains"),
            "{shell} completes flags"
        );
    }
    let out = run(&["completions", "tcsh"], b"");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_bash_script_is_valid_bash() {
    let dir = scratch("completions");
    let path = dir.join("rdq-envelope.bash");
    std::fs::write(&path, run(&["completions", "bash"], b"").stdout).unwrap();
    let Some(bash) = tool_or_skip(&["bash"], "the bash completions checked by bash -n") else {
        return;
    };
    let status = std::process::Command::new(bash)
        .arg("-n")
        .arg(&path)
        .status()
        .unwrap();
    assert!(status.success(), "bash -n {}", path.display());
}

#[test]
fn the_man_page_is_roff_and_lists_every_subcommand() {
    let out = run(&["man"], b"");
    assert_eq!(out.status.code(), Some(0));
    let page = stdout(&out);
    assert!(
        page.starts_with(".ie"),
        "roff: {}",
        &page[..40.min(page.len())]
    );
    assert!(page.contains(".TH rdq-envelope 1"));
    for sub in SUBCOMMANDS {
        assert!(
            page.contains(&format!("rdq\\-envelope\\-{sub}(1)")),
            "{sub}"
        );
    }

    let dir = scratch("man");
    let out = run(&["man", "--dir", dir.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for sub in SUBCOMMANDS {
        let page = std::fs::read_to_string(dir.join(format!("rdq-envelope-{sub}.1"))).unwrap();
        assert!(page.contains(".SH OPTIONS") || sub == "man", "{sub}");
    }
    let filter = std::fs::read_to_string(dir.join("rdq-envelope-filter.1")).unwrap();
    assert!(filter.contains("payload\\-contains"));
}
