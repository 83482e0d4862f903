//! `batch` over `s3://` prefixes (docs/cli.md#batch), against moto's server on 127.0.0.1
//! (`common::s3`): the same bytes as over folders, resume by size and ETag, the lock object and
//! its stale take-over, the manifest's conditional writes, and errors naming the URL.

use std::fs;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::cli_batch_spark::names;
use crate::common::s3::{server, S3};
use crate::common::{gen_lines, scratch, stderr, stdout, without_seconds};

fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::stream::encode_all(bytes, 3).unwrap()
}

/// `batch validate INPUT --out OUT` with `hook` run before each shard is read (the test builds'
/// between-reads hook), and `env` beside it.
fn batch_with_hook(s3: &S3, input: &str, out: &str, hook: &str, env: &[(&str, &str)]) -> Output {
    s3.bin()
        .args(["batch", "validate", input, "--out", out])
        .env("RDQ_ENVELOPE_TEST_BETWEEN_READS", hook)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Runs the configured binary with `args` (standard input empty).
fn run(s3: &S3, args: &[&str]) -> Output {
    s3.bin()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

/// The shards (and a few objects that are not shards) as (name, bytes).
fn shards() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("a.jsonl.zst", zstd(&gen_lines(120, 1, None, 0.1))),
        ("b.jsonl", gen_lines(100, 2, None, 0.1)),
        ("c.jsonl.zst", zstd(&gen_lines(80, 3, None, 0.1))),
        // Not shards: hidden, another kind, deeper than the prefix.
        (".hidden.jsonl", b"not json\n".to_vec()),
        ("notes.txt", b"not json\n".to_vec()),
        ("sub/deeper.jsonl", b"not json\n".to_vec()),
    ]
}

/// The shards in a local folder `dir/in` and under `s3://BUCKET/in/`.
fn both(s3: &S3, name: &str) -> (std::path::PathBuf, String) {
    let dir = scratch(name);
    let bucket = s3.bucket(name);
    for (name, bytes) in shards() {
        let path = dir.join("in").join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, &bytes).unwrap();
        s3.put(&bucket, &format!("in/{name}"), &bytes);
    }
    (dir, bucket)
}

/// The manifest without what only an object's entry has (`"etag":"..."`).
fn without_etags(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(",\"etag\":\"") {
        out.push_str(&rest[..at]);
        let tail = &rest[at + ",\"etag\":\"".len()..];
        // An ETag holds quotes, escaped: `"\"abc\""`.
        let end = tail
            .find("\",\"state\"")
            .expect("the state follows the ETag");
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    out
}

/// Asserts that every output under `s3://bucket/prefix` is the local folder's, byte for byte
/// (`seconds` and ETags aside), and that the lock is gone.
pub(crate) fn assert_same_outputs(s3: &S3, bucket: &str, prefix: &str, local: &Path) {
    let keys = s3.keys(bucket, prefix);
    let remote: Vec<String> = keys
        .iter()
        .map(|k| k.strip_prefix(prefix).unwrap().to_owned())
        .collect();
    assert_eq!(
        remote,
        names(local),
        "the lock is removed, nothing else is written"
    );
    for name in names(local) {
        let a = fs::read(local.join(&name)).unwrap();
        let b = s3.get(bucket, &format!("{prefix}{name}")).unwrap();
        if name == "manifest.json" {
            let b = without_etags(&String::from_utf8(b).unwrap());
            assert_eq!(without_seconds(&a), without_seconds(b.as_bytes()), "{name}");
        } else if name.ends_with(".json") {
            assert_eq!(without_seconds(&a), without_seconds(&b), "{name}");
        } else {
            assert!(a == b, "{name} differs");
        }
    }
}

#[test]
fn batch_over_a_prefix_writes_what_batch_over_a_folder_writes() {
    let Some(s3) = server() else { return };
    let (dir, bucket) = both(s3, "same");
    let local = dir.join("out");
    let o = run(
        s3,
        &[
            "batch",
            "migrate",
            "--to",
            "2",
            dir.join("in").to_str().unwrap(),
            "--out",
            local.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // No final `/` on the input: the prefix `in/` all the same.
    let (input, out) = (format!("s3://{bucket}/in"), format!("s3://{bucket}/out/"));
    let o = run(
        s3,
        &["batch", "migrate", "--to", "2", &input, "--out", &out],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("3 shards: 3 run"), "{}", stderr(&o));
    assert_eq!(names(&local).len(), 3 * 3 + 2);
    assert_same_outputs(s3, &bucket, "out/", &local);
    // The manifest records each object's ETag, and its BLAKE3 as read.
    let manifest = String::from_utf8(s3.get(&bucket, "out/manifest.json").unwrap()).unwrap();
    assert_eq!(manifest.matches("\"etag\":").count(), 3, "{manifest}");

    // --list and --status read the prefixes as they read folders.
    let o = run(s3, &["batch", "validate", &input, "--list"]);
    assert_eq!(
        stdout(&o),
        "a.jsonl.zst\nb.jsonl\nc.jsonl.zst\n",
        "{}",
        stderr(&o)
    );
    let (a, b) = (
        run(s3, &["batch", "--status", local.to_str().unwrap()]),
        run(s3, &["batch", "--status", &format!("s3://{bucket}/out")]),
    );
    assert_eq!(b.status.code(), Some(0), "{}", stderr(&b));
    assert_eq!(stdout(&a), stdout(&b));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_rerun_over_a_prefix_redoes_only_what_changed() {
    let Some(s3) = server() else { return };
    let (dir, bucket) = both(s3, "resume");
    let (input, out) = (format!("s3://{bucket}/in/"), format!("s3://{bucket}/out"));
    let args = ["batch", "validate", &input, "--out", &out];
    let o = run(s3, &args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));

    let o = run(s3, &args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("every one done on the same input: nothing to run"),
        "{}",
        stderr(&o)
    );

    // b changes (another ETag), c vanishes: b is run again, c's outputs are removed.
    s3.put(&bucket, "in/b.jsonl", &gen_lines(90, 7, None, 0.1));
    s3.request("DELETE", &format!("/{bucket}/in/c.jsonl.zst"), b"");
    let o = run(s3, &args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let said = stderr(&o);
    assert!(said.contains("b.jsonl: "), "{said}");
    assert!(!said.contains("a.jsonl.zst: "), "{said}");
    assert!(said.contains("c.jsonl.zst: no longer in"), "{said}");
    assert!(said.contains("2 shards: 1 run, 1 unchanged"), "{said}");
    let keys = s3.keys(&bucket, "out/");
    assert!(!keys.iter().any(|k| k.starts_with("out/c.")), "{keys:?}");

    // The same as a fresh run over a folder with the shards as they are now.
    fs::remove_file(dir.join("in/c.jsonl.zst")).unwrap();
    fs::write(dir.join("in/b.jsonl"), gen_lines(90, 7, None, 0.1)).unwrap();
    let local = dir.join("out");
    let o = run(
        s3,
        &[
            "batch",
            "validate",
            dir.join("in").to_str().unwrap(),
            "--out",
            local.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_same_outputs(s3, &bucket, "out/", &local);
    fs::remove_dir_all(&dir).unwrap();
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[test]
fn a_held_lock_refuses_a_second_run_and_a_stale_one_is_taken_over() {
    let Some(s3) = server() else { return };
    let (dir, bucket) = both(s3, "lock");
    let (input, out) = (format!("s3://{bucket}/in/"), format!("s3://{bucket}/out/"));
    let args = ["batch", "validate", &input, "--out", &out];

    let fresh = format!(
        "{{\"host\":\"elsewhere\",\"pid\":42,\"heartbeat\":{}}}\n",
        unix_now()
    );
    s3.put(&bucket, "out/.rdq-batch.lock", fresh.as_bytes());
    let o = run(s3, &args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "{out}: another batch run is writing this prefix (host elsewhere, pid 42"
        )),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        s3.keys(&bucket, "out/"),
        ["out/.rdq-batch.lock"],
        "nothing written"
    );
    assert_eq!(
        s3.get(&bucket, "out/.rdq-batch.lock").unwrap(),
        fresh.as_bytes()
    );

    // A run SIGKILLed two minutes ago left its lock: taken over, and removed at the end.
    let stale = format!(
        "{{\"host\":\"elsewhere\",\"pid\":42,\"heartbeat\":{}}}\n",
        unix_now() - 120
    );
    s3.put(&bucket, "out/.rdq-batch.lock", stale.as_bytes());
    let o = run(s3, &args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("(host elsewhere, pid 42): taken over"),
        "{}",
        stderr(&o)
    );
    assert!(s3.get(&bucket, "out/.rdq-batch.lock").is_none());
    assert!(s3.get(&bucket, "out/summary.json").is_some());

    // Not a lock this tool writes: refused, with what to do.
    s3.put(&bucket, "out/.rdq-batch.lock", b"?");
    let o = run(s3, &args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("not a lock this rdq-envelope writes"),
        "{}",
        stderr(&o)
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_manifest_replaced_behind_the_runs_back_stops_it() {
    let Some(s3) = server() else { return };
    let (dir, bucket) = both(s3, "replaced");
    let (input, out) = (format!("s3://{bucket}/in/"), format!("s3://{bucket}/out/"));
    // The test hook runs before each shard is read, after the run wrote its first manifest:
    // another writer replaces it then.
    let other = b"{\"format_version\":2,\"other\":true}\n";
    let replace = s3.put_command(&bucket, "out/manifest.json", other);
    let o = batch_with_hook(s3, &input, &out, &replace, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "s3://{bucket}/out/manifest.json: created or replaced by another writer during this run"
        )),
        "{}",
        stderr(&o)
    );
    assert_eq!(s3.get(&bucket, "out/manifest.json").unwrap(), other);
    assert!(
        s3.get(&bucket, "out/.rdq-batch.lock").is_none(),
        "the lock is removed"
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn errors_over_prefixes_name_the_url() {
    let Some(s3) = server() else { return };
    let bucket = s3.bucket("errors");
    s3.put(&bucket, "in/a.jsonl", &gen_lines(5, 1, None, 0.0));
    for (args, said) in [
        (
            vec![
                "batch",
                "validate",
                "s3://no-such-bucket-rdq/in/",
                "--out",
                "s3://no-such-bucket-rdq/out/",
            ],
            "s3://no-such-bucket-rdq/in/".to_owned(),
        ),
        (
            vec![
                "batch",
                "validate",
                &format!("s3://{bucket}/empty"),
                "--out",
                &format!("s3://{bucket}/out/"),
            ],
            format!("s3://{bucket}/empty/: no shards (objects named *.jsonl"),
        ),
        (
            vec![
                "batch",
                "validate",
                &format!("s3://{bucket}/in"),
                "--out",
                &format!("s3://{bucket}/in/"),
            ],
            "--out must not be the input folder".to_owned(),
        ),
        (
            vec!["batch", "--status", &format!("s3://{bucket}/nothing/")],
            format!("s3://{bucket}/nothing/: no manifest"),
        ),
        (
            vec![
                "batch",
                "validate",
                &format!("s3://{bucket}/in"),
                "--out",
                "s3://no-such-bucket-rdq/out/",
            ],
            "s3://no-such-bucket-rdq/out/".to_owned(),
        ),
    ] {
        let o = run(s3, &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(&said), "{args:?}: {}", stderr(&o));
    }
    assert_eq!(s3.keys(&bucket, "out/"), Vec::<String>::new());
}

#[test]
fn a_run_whose_lock_is_taken_over_stops() {
    let Some(s3) = server() else { return };
    let (dir, bucket) = both(s3, "takeover");
    let (input, out) = (format!("s3://{bucket}/in/"), format!("s3://{bucket}/out/"));
    // Before each shard is read (the test hook), another run replaces the lock, and the
    // heartbeat (every 50 ms here, a test build's hook) has the time to find it.
    let taker = format!(
        "{{\"host\":\"taker\",\"pid\":7,\"heartbeat\":{}}}",
        unix_now()
    );
    let replace = format!(
        "{}; sleep 1",
        s3.put_command(&bucket, "out/.rdq-batch.lock", taker.as_bytes())
    );
    let o = batch_with_hook(
        s3,
        &input,
        &out,
        &replace,
        &[("RDQ_ENVELOPE_TEST_LOCK_HEARTBEAT_MS", "50")],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "{out}: this run's lock was taken over by another run"
        )),
        "{}",
        stderr(&o)
    );
    // The taker's lock is left alone.
    assert_eq!(
        s3.get(&bucket, "out/.rdq-batch.lock").unwrap(),
        taker.as_bytes()
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_signal_removes_the_lock_and_aborts_the_uploads() {
    let Some(s3) = server() else { return };
    let (dir, bucket) = both(s3, "signal");
    let (input, out) = (format!("s3://{bucket}/in/"), format!("s3://{bucket}/out/"));
    // The run waits before it reads each shard (the test hook), holding its lock.
    let mut child = s3
        .bin()
        .args(["batch", "validate", &input, "--out", &out])
        .env("RDQ_ENVELOPE_TEST_BETWEEN_READS", "sleep 30")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while s3.get(&bucket, "out/.rdq-batch.lock").is_none() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(
        s3.get(&bucket, "out/.rdq-batch.lock").is_some(),
        "the run took its lock"
    );
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    assert!(
        s3.get(&bucket, "out/.rdq-batch.lock").is_none(),
        "a stopped run leaves no lock to wait for"
    );
    assert!(
        s3.open_uploads(&bucket).is_empty(),
        "{:?}",
        s3.open_uploads(&bucket)
    );
    // So the next run goes at once.
    let o = run(s3, &["batch", "validate", &input, "--out", &out]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    fs::remove_dir_all(&dir).unwrap();
}

/// A conditional write whose answer was lost after the store acted (the lock's creation, the
/// manifest's first write: the connection closed before the answer, the client sends the
/// request again and its condition fails on the run's own write). Before, the run stopped as if
/// another run held the prefix (naming its own pid) and left its lock behind for a minute; now
/// the object holding exactly what the run wrote is the run's own, and the run goes on.
#[test]
fn a_conditional_write_whose_answer_was_lost_is_the_runs_own() {
    use crate::common::unruly::{Act, Kind, Unruly};
    let Some(s3) = server() else { return };
    let (dir, bucket) = both(s3, "lost-answer");
    let (input, out) = (format!("s3://{bucket}/in/"), format!("s3://{bucket}/out/"));
    let proxy = Unruly::in_front_of(&s3.endpoint());
    // The lock, then the manifest's first write.
    proxy.on_first(Kind::PutObject, 2, Act::LoseAnswer);
    proxy.on_first(Kind::DeleteObjects, 1, Act::LoseAnswer);
    let o = s3
        .bin()
        .env("AWS_ENDPOINT_URL", proxy.endpoint())
        .args(["batch", "validate", &input, "--out", &out])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(proxy.arrived(Kind::PutObject) > 2, "{:?}", proxy.log());
    assert!(
        s3.get(&bucket, "out/.rdq-batch.lock").is_none(),
        "the lock stays"
    );
    // Recorded done: a rerun has nothing to run.
    let again = run(s3, &["batch", "validate", &input, "--out", &out]);
    assert_eq!(again.status.code(), Some(1), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("every one done"),
        "{}",
        stderr(&again)
    );
    fs::remove_dir_all(&dir).unwrap();
}
