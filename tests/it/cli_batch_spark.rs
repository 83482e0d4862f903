//! The Spark runner (contrib/spark/rdq_spark.py) in `local[2]` mode writes what a local
//! `batch` run writes. Skipped, with the reason, when pyspark or Java is absent, except under
//! CI (`CI=true`), where .ci/run installs them and their absence is a failure.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::common;
use common::{need_or_skip, run, scratch, stderr, without_seconds};

/// Why the runner cannot be tested here, if it cannot.
fn missing() -> Option<String> {
    let java = Command::new("java").arg("-version").output();
    if !java.is_ok_and(|o| o.status.success()) {
        return Some("no java on PATH (Debian: apt-get install openjdk-17-jre-headless)".into());
    }
    let pyspark = Command::new("python3")
        .args(["-c", "import pyspark"])
        .output();
    match pyspark {
        Ok(o) if o.status.success() => None,
        Ok(_) => Some("python3 cannot import pyspark (pip install 'pyspark==3.5.*')".into()),
        Err(_) => Some("no python3 on PATH (Debian: apt-get install python3)".into()),
    }
}

/// `python` running the Spark runner on this test build's binary in `local[2]` mode, recording
/// the manifest after every shard (as a long run does every 30 s); the folders and the command
/// follow.
fn spark_runner(mut python: Command) -> Command {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/spark/rdq_spark.py");
    python.arg(script).args([
        "--binary",
        env!("CARGO_BIN_EXE_rdq-envelope"),
        "--master",
        "local[2]",
        "--record-every",
        "0",
    ]);
    python
}

/// The names in `dir`, hidden ones (the lock, temporary files) left out, sorted.
pub(crate) fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    names
}

#[test]
fn the_spark_runner_writes_what_batch_writes() {
    let found = missing().map_or(Ok(()), Err);
    if need_or_skip(found, "the Spark runner's test (pyspark and Java)").is_none() {
        return;
    }
    let dir = scratch("spark");
    let input = dir.join("in");
    fs::create_dir_all(&input).unwrap();
    for (i, count) in [300u32, 200, 250].into_iter().enumerate() {
        let lines = run(
            &[
                "gen",
                "--count",
                &count.to_string(),
                "--seed",
                &i.to_string(),
                "--version",
                "1",
                "--invalid-rate",
                "0.05",
            ],
            b"",
        )
        .stdout;
        let name = format!("part-{i:04}.jsonl.zst");
        fs::write(input.join(name), zstd::encode_all(&lines[..], 3).unwrap()).unwrap();
    }
    fs::write(
        input.join("plain.jsonl"),
        run(&["gen", "--count", "50"], b"").stdout,
    )
    .unwrap();

    let local = dir.join("local");
    let o = Command::new(env!("CARGO_BIN_EXE_rdq-envelope"))
        .args(["batch", "migrate", "-q", "--to", "2"])
        .arg(&input)
        .arg("--out")
        .arg(&local)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));

    let spark = dir.join("spark");
    let o = spark_runner(Command::new("python3"))
        .arg(&input)
        .arg(&spark)
        .args(["--", "migrate", "--to", "2"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));

    assert_eq!(names(&spark), names(&local));
    assert_eq!(names(&local).len(), 4 * 3 + 2);
    for name in names(&local) {
        let (a, b) = (
            fs::read(local.join(&name)).unwrap(),
            fs::read(spark.join(&name)).unwrap(),
        );
        if name.ends_with(".json") {
            // Summaries and the manifest: the same bytes but for the wall-clock seconds.
            assert_eq!(without_seconds(&a), without_seconds(&b), "{name}");
        } else {
            assert!(a == b, "{name} differs");
        }
    }

    // A driver that died leaves a manifest with the shards recorded so far: the rerun (here,
    // locally) runs only the others. Here the manifest says every shard is done.
    let o = Command::new(env!("CARGO_BIN_EXE_rdq-envelope"))
        .args(["batch", "migrate", "--to", "2"])
        .arg(&input)
        .arg("--out")
        .arg(&spark)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("nothing to run"), "{}", stderr(&o));
    fs::remove_dir_all(&dir).unwrap();
}

/// Over `s3://` prefixes (no shared file system): the driver lists through the binary, each
/// task reads and writes object storage itself, and what it writes is what `batch` over the
/// same prefix writes, byte for byte (`seconds` aside). The moto environment reaches the
/// executors by inheritance (local mode).
#[cfg(feature = "s3")]
#[test]
fn the_spark_runner_over_s3_writes_what_batch_over_s3_writes() {
    let found = missing().map_or(Ok(()), Err);
    if need_or_skip(found, "the Spark runner's test (pyspark and Java)").is_none() {
        return;
    }
    let Some(s3) = common::s3::server() else {
        return;
    };
    let bucket = s3.bucket("spark");
    for (i, count) in [300u32, 200, 250].into_iter().enumerate() {
        let lines = common::gen_lines(count as usize, i as u64, Some(1), 0.05);
        let name = format!("in/part-{i:04}.jsonl.zst");
        s3.put(&bucket, &name, &zstd::encode_all(&lines[..], 3).unwrap());
    }
    s3.put(
        &bucket,
        "in/plain.jsonl",
        &run(&["gen", "--count", "50"], b"").stdout,
    );
    s3.put(&bucket, "in/deeper/not-a-shard.jsonl", b"not json\n");
    let input = format!("s3://{bucket}/in");

    let o = s3
        .bin()
        .args(["batch", "migrate", "-q", "--to", "2", &input, "--out"])
        .arg(format!("s3://{bucket}/local/"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));

    let mut python = Command::new("python3");
    s3.env(&mut python);
    let o = spark_runner(python)
        .arg(&input)
        .arg(format!("s3://{bucket}/spark"))
        .args(["--", "migrate", "--to", "2"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));

    let under = |prefix: &str| -> Vec<String> {
        s3.keys(&bucket, prefix)
            .into_iter()
            .map(|k| k[prefix.len()..].to_owned())
            .collect()
    };
    let (local, spark) = (under("local/"), under("spark/"));
    assert_eq!(spark, local, "the same objects, and no lock left");
    assert_eq!(local.len(), 4 * 3 + 2);
    for name in &local {
        let a = s3.get(&bucket, &format!("local/{name}")).unwrap();
        let b = s3.get(&bucket, &format!("spark/{name}")).unwrap();
        if name.ends_with(".json") {
            assert_eq!(without_seconds(&a), without_seconds(&b), "{name}");
        } else {
            assert!(a == b, "{name} differs");
        }
    }

    // A rerun by `batch` over the runner's prefix finds every shard done.
    let o = s3
        .bin()
        .args(["batch", "migrate", "--to", "2", &input, "--out"])
        .arg(format!("s3://{bucket}/spark/"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("nothing to run"), "{}", stderr(&o));
}
