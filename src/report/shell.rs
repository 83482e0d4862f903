//! Words for a POSIX shell, for the command lines the tool shows people to copy (the HTML
//! report's, the hint for an input that is not JSON Lines): each pasted as written runs as
//! meant, whatever the file names hold.

/// A word for a shell, quoted when it needs to be (for the command lines shown).
pub fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./:=@%+,-".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// A file name for a shell: [`shell_word`], and `./` before a relative name that starts with
/// `-` (which a command would read as an option). `-` stays: it is standard input.
pub fn shell_path(path: &str) -> String {
    if path.starts_with('-') && path != "-" {
        shell_word(&format!("./{path}"))
    } else {
        shell_word(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words() {
        assert_eq!(shell_word("samples/dlq.jsonl.zst"), "samples/dlq.jsonl.zst");
        assert_eq!(shell_word("my file"), "'my file'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_path("-x.jsonl"), "./-x.jsonl");
        assert_eq!(shell_path("-"), "-");
        assert_eq!(shell_path("/tmp/a b"), "'/tmp/a b'");
    }
}
