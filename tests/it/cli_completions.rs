//! `rdq-envelope completions SHELL` driven through each real shell's completion machinery:
//! what a person pressing TAB after a subcommand, a flag's prefix or a flag that takes an
//! enumerated value is offered. (cli_conventions only checks the committed scripts are the
//! binary's output, which cannot see a script that completes nothing.)

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::cli_conventions::{output, output_within, plain};
use crate::common::{scratch, stderr, stdout, tool_or_skip};

/// The line typed before TAB (after `rdq-envelope `), and everything the shell must offer.
const CASES: &[(&str, &[&str])] = &[
    ("val", &["validate"]),
    ("validate --col", &["--color"]),
    ("validate --color ", &["always", "auto", "never"]),
    ("stats --b", &["--by"]),
    (
        "stats --by ",
        &[
            "day",
            "error_type",
            "fingerprint",
            "handler",
            "outcome",
            "queue",
            "status",
        ],
    ),
    ("stats --format ", &["html", "json", "table"]),
    ("explain BAD_A", &["BAD_ATTEMPT"]),
    ("explain INVALID_B", &["INVALID_BASE64"]),
    (
        "export --fields last.e",
        &["last.error.message", "last.error.type"],
    ),
];

/// A shell that hangs waiting for input fails the test instead of the run.
const LIMIT: Duration = Duration::from_secs(30);

/// The binary's script for `shell`, written as `file` in a fresh folder.
fn script(shell: &str, file: &str) -> PathBuf {
    let dir = scratch(&format!("completions-{shell}"));
    let out = output(plain(), &["completions", shell]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let path = dir.join(file);
    std::fs::write(&path, &out.stdout).unwrap();
    path
}

/// Runs `shell args` and returns the candidates it printed, one a line, sorted.
fn candidates(shell: &Path, args: &[&str], line: &str) -> Vec<String> {
    let dir = scratch("completions-run");
    let out = output_within(Command::new(shell), args, &dir, LIMIT);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{} for {line:?}: {}",
        shell.display(),
        stderr(&out)
    );
    let mut found: Vec<String> = stdout(&out)
        .lines()
        // fish writes `candidate<TAB>description`.
        .map(|l| l.split('\t').next().unwrap_or_default().to_owned())
        .filter(|c| !c.is_empty())
        .collect();
    found.sort();
    found.dedup();
    found
}

fn check(shell: &str, line: &str, found: Vec<String>, expected: &[&str]) {
    assert_eq!(
        found, expected,
        "{shell}: TAB after `rdq-envelope {line}` offers {found:?}"
    );
}

/// Splits the line into COMP_WORDS as bash would, sets the other COMP_ variables, calls the
/// function the script registered for rdq-envelope (as `complete -p` names it) the way
/// readline does (command, word being completed, word before it), and prints COMPREPLY.
const BASH_DRIVER: &str = r#"
source "$1" || exit 3
spec=$(complete -p rdq-envelope) || exit 4
fn=${spec#*-F }
fn=${fn%% *}
line="$2"
read -ra COMP_WORDS <<< "$line"
[[ "$line" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMP_LINE="$line"
COMP_POINT=${#line}
COMPREPLY=()
"$fn" rdq-envelope "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
"#;

#[test]
fn bash_completes_subcommands_flags_and_their_values() {
    let Some(bash) = tool_or_skip(&["bash"], "the bash completion test") else {
        return;
    };
    let script = script("bash", "rdq-envelope");
    for (typed, expected) in CASES {
        let line = format!("rdq-envelope {typed}");
        let args = [
            "--norc",
            "--noprofile",
            "-c",
            BASH_DRIVER,
            "driver",
            script.to_str().unwrap(),
            &line,
        ];
        check("bash", typed, candidates(&bash, &args, &line), expected);
    }
}

#[test]
fn fish_completes_subcommands_flags_and_their_values() {
    let Some(fish) = tool_or_skip(&["fish"], "the fish completion test") else {
        return;
    };
    let script = script("fish", "rdq-envelope.fish");
    for (typed, expected) in CASES {
        let line = format!("rdq-envelope {typed}");
        // fish's own `complete -C LINE` lists what TAB would offer, one `word<TAB>description`
        // a line.
        let args = [
            "--no-config",
            "-c",
            r#"source $argv[1]; and complete -C $argv[2]"#,
            script.to_str().unwrap(),
            &line,
        ];
        check("fish", typed, candidates(&fish, &args, &line), expected);
    }
}

/// zsh completes only inside its line editor, so the driver starts an interactive zsh on a
/// pseudo-terminal (zsh/zpty), loads compinit with the script's folder on fpath, wraps
/// compadd to print each candidate it is given that matches what was typed, types the line
/// and TAB, then a key bound to a widget that prints the end marker and exits. The markers
/// are written split (`"H""IT:"`) so the terminal's echo of the commands never matches them.
const ZSH_DRIVER: &str = r#"
zmodload zsh/zpty || exit 3
zpty z zsh -f -i
zpty -w z "PS1=''; fpath=(${(q)1} \$fpath); autoload -U compinit; compinit -u -D"
zpty -w z "zstyle ':completion:*' list-prompt ''; zstyle ':completion:*' select-prompt ''"
zpty -w z 'compadd () { local -a hits; builtin compadd -A hits "$@"; (( $#hits )) && print -rl -- "H""IT:"${^hits} >/dev/tty; builtin compadd "$@" }'
zpty -w z 'finished () { print -r -- "E""ND" >/dev/tty; exit }; zle -N finished; bindkey "^X" finished'
zpty -n -w z "$2"$'\t'$'\C-x'
out=
while zpty -r z chunk; do
  out+=$chunk
  [[ $out == *END* ]] && break
done
zpty -d z
[[ $out == *END* ]] || exit 5
print -r -- "$out" | tr -d '\r' | grep -ao 'HIT:[^[:space:]]*' | cut -c5-
"#;

#[test]
fn zsh_completes_subcommands_flags_and_their_values() {
    let Some(zsh) = tool_or_skip(&["zsh"], "the zsh completion test") else {
        return;
    };
    let script = script("zsh", "_rdq-envelope");
    let folder = script.parent().unwrap().to_str().unwrap();
    for (typed, expected) in CASES {
        let line = format!("rdq-envelope {typed}");
        let args = ["-f", "-c", ZSH_DRIVER, "driver", folder, &line];
        check("zsh", typed, candidates(&zsh, &args, &line), expected);
    }
}

/// docs/install.md's completion commands, run as written in a fresh home: they make their
/// folders and write each shell's script where it looks; `source <(...)` registers the bash
/// completion at once, without the bash-completion package.
#[test]
fn the_documented_completion_commands_work_as_written() {
    let Some(bash) = tool_or_skip(&["bash"], "the documented completion commands") else {
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/install.md")).unwrap();
    let section = &page[page.find("## Shell completions").unwrap()..];
    let block = &section[section.find("```sh\n").unwrap() + 6..];
    let block = &block[..block.find("```").unwrap()];
    let home = scratch("completions-home");
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_rdq-envelope"))
        .parent()
        .unwrap();
    let path = format!("{}:/usr/bin:/bin", bin_dir.display());
    for line in block.lines() {
        let command = line.split("  #").next().unwrap().trim();
        let shells = ["bash >", "zsh  >", "fish >", "mkdir -p", "source <("];
        if !shells.iter().any(|s| command.contains(s)) {
            continue;
        }
        let script = match command.starts_with("source") {
            true => format!("{command} && complete -p rdq-envelope"),
            false => command.to_owned(),
        };
        let out = Command::new(&bash)
            .args(["--norc", "--noprofile", "-c", &script])
            .env("HOME", &home)
            .env("PATH", &path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{command}: {}", stderr(&out));
        if command.starts_with("source") {
            assert!(
                stdout(&out).contains("rdq-envelope"),
                "{command}: {}",
                stdout(&out)
            );
        }
    }
    for file in [
        ".local/share/bash-completion/completions/rdq-envelope",
        ".zfunc/_rdq-envelope",
        ".config/fish/completions/rdq-envelope.fish",
    ] {
        let written = std::fs::metadata(home.join(file))
            .map(|m| m.len())
            .unwrap_or(0);
        assert!(written > 1000, "{file}: {written} bytes");
    }
}
