//! The commit `rdq-envelope --version` names, and the target it was built for.
//!
//! The commit comes from `git rev-parse --short HEAD` when the crate is built from its own
//! checkout; from `.cargo_vcs_info.json` (which `cargo package` writes) in a crate unpacked from
//! a registry; else there is none, and `--version` leaves it out. A build never fails for want
//! of git: a wheel built from an sdist, or a vendored copy, simply has no commit.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // Packagers who build outside the checkout can still say where the sources came from.
    println!("cargo:rerun-if-env-changed=RDQ_ENVELOPE_BUILD_COMMIT");
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let commit = std::env::var("RDQ_ENVELOPE_BUILD_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(|| git_commit(&manifest_dir))
        .or_else(|| packaged_commit(&manifest_dir));
    if let Some(commit) = commit {
        println!("cargo:rustc-env=RDQ_ENVELOPE_COMMIT={commit}");
    }
    // Cargo gives build scripts the target triple; the crate itself only sees `cfg`s.
    let target = std::env::var("TARGET").unwrap_or_default();
    println!("cargo:rustc-env=RDQ_ENVELOPE_TARGET={target}");
}

/// The short commit of the checkout this crate is the root of, and the files whose change
/// means another commit. `None` without git, outside a checkout, or when the crate is only a
/// folder inside someone else's checkout (whose commit says nothing about this code).
fn git_commit(manifest_dir: &Path) -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .args(args)
            .current_dir(manifest_dir)
            .output()
            .ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        out.status.success().then(|| text.trim().to_owned())
    };
    let top = git(&["rev-parse", "--show-toplevel"])?;
    let same_folder = match (Path::new(&top).canonicalize(), manifest_dir.canonicalize()) {
        (Ok(top), Ok(dir)) => top == dir,
        _ => false,
    };
    if !same_folder {
        return None;
    }
    let commit = git(&["rev-parse", "--short", "HEAD"])?;
    // HEAD moves when the branch does (a commit) or when another branch is checked out; a
    // worktree keeps its HEAD in its own git folder and its branches in the common one.
    let absolute = |p: String| {
        let p = PathBuf::from(p);
        if p.is_absolute() {
            p
        } else {
            manifest_dir.join(p)
        }
    };
    if let Some(dir) = git(&["rev-parse", "--git-dir"]).map(absolute) {
        println!("cargo:rerun-if-changed={}", dir.join("HEAD").display());
    }
    if let Some(common) = git(&["rev-parse", "--git-common-dir"]).map(absolute) {
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            let loose = common.join(branch);
            // A branch whose ref is packed (after `git gc`) gets a loose file again at its next
            // commit: without one, its folder is watched, where that file will appear.
            let watched = match loose.exists() {
                true => Some(loose.as_path()),
                false => loose.parent().filter(|folder| folder.exists()),
            };
            if let Some(path) = watched {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
        let packed = common.join("packed-refs");
        if packed.exists() {
            println!("cargo:rerun-if-changed={}", packed.display());
        }
    }
    Some(commit)
}

/// The commit `cargo package` recorded (`"sha1": "..."` in `.cargo_vcs_info.json`), shortened
/// as git shortens it by default.
fn packaged_commit(manifest_dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(manifest_dir.join(".cargo_vcs_info.json")).ok()?;
    let after = text.split_once("\"sha1\"")?.1;
    let sha: String = after
        .trim_start_matches([' ', ':', '"'])
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect();
    (sha.len() >= 7).then(|| sha[..7].to_owned())
}
