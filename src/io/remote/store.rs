//! The stores behind the URLs, configured as AWS's own tools are (docs/cli.md#environment), and
//! the small runtime their requests run on.
//!
//! Everything else in this tool is synchronous: the reader thread, the workers and the writer
//! call [`block_on`] (or hand a future to [`spawn`]) and never run inside the runtime.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use object_store::aws::{AmazonS3, AmazonS3Builder, AmazonS3ConfigKey, S3ConditionalPut};
use object_store::http::{HttpBuilder, HttpStore};
use object_store::{BackoffConfig, ClientOptions, RetryConfig};

/// Two threads serve every request of a run: the work they do is waiting on sockets, and the
/// machine's cores belong to the workers that judge lines.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("rdq-object-io")
            .enable_all()
            .build()
            .expect("a runtime of two threads can be started")
    })
}

/// Runs a future to its end on the runtime, from a thread outside it.
pub(super) fn block_on<F: Future>(future: F) -> F::Output {
    runtime().block_on(future)
}

/// Starts a future on the runtime; the handle gives its result.
pub(super) fn spawn<F>(future: F) -> tokio::task::JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    runtime().spawn(future)
}

/// What is retried and how (docs/cli.md#object-storage): a 5xx, 429 or 408 answer, a refused or
/// reset connection, a timeout and a body cut short (resumed where it stopped, only while the
/// object's ETag is unchanged), up to 10 times by default or `AWS_MAX_ATTEMPTS - 1`, with
/// a backoff from 100 ms doubling up to 15 s, and never past 3 minutes after the first try.
fn retry() -> io::Result<RetryConfig> {
    let max_retries = match env("AWS_MAX_ATTEMPTS") {
        Some(text) => match text.trim().parse::<usize>() {
            Ok(attempts) if attempts >= 1 => attempts - 1,
            _ => {
                return Err(config_error(format!(
                    "AWS_MAX_ATTEMPTS={text:?} is not a number of attempts (1 or more)"
                )))
            }
        },
        None => 10,
    };
    Ok(RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(15),
            base: 2.0,
        },
        max_retries,
        retry_timeout: Duration::from_secs(180),
    })
}

/// Connections: 5 s to connect, 60 s for one request (an 8 MiB range or part at 140 KB/s);
/// plain http only where `AWS_ALLOW_HTTP` says so (or, for an input, where the URL does).
fn client_options() -> ClientOptions {
    ClientOptions::new()
        .with_connect_timeout(Duration::from_secs(5))
        .with_timeout(Duration::from_secs(60))
        .with_allow_http(env_true("AWS_ALLOW_HTTP"))
}

fn config_error(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn env_true(name: &str) -> bool {
    env(name).is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// The store of one bucket, made once per run and shared by every input and output in it.
pub(super) fn s3(bucket: &str) -> io::Result<Arc<AmazonS3>> {
    static STORES: Mutex<Option<HashMap<String, Arc<AmazonS3>>>> = Mutex::new(None);
    let mut stores = STORES.lock().unwrap_or_else(|e| e.into_inner());
    let stores = stores.get_or_insert_with(HashMap::new);
    if let Some(store) = stores.get(bucket) {
        return Ok(Arc::clone(store));
    }
    let store = Arc::new(build_s3(bucket)?);
    stores.insert(bucket.to_owned(), Arc::clone(&store));
    Ok(store)
}

fn build_s3(bucket: &str) -> io::Result<AmazonS3> {
    // Every AWS_* variable the crate knows (keys, session token, region, endpoint, web identity
    // and container credentials), set and not empty (AWS's tools take an empty one for unset),
    // then what those tools add on top.
    let mut builder = AmazonS3Builder::new();
    for (key, value) in std::env::vars_os() {
        let (Some(key), Some(value)) = (key.to_str(), value.to_str()) else {
            continue;
        };
        if key.starts_with("AWS_") && !value.is_empty() {
            if let Ok(key) = key.to_ascii_lowercase().parse::<AmazonS3ConfigKey>() {
                builder = builder.with_config(key, value);
            }
        }
    }
    let mut builder = builder
        .with_bucket_name(bucket)
        .with_retry(retry()?)
        .with_client_options(client_options())
        .with_conditional_put(S3ConditionalPut::ETagMatch);
    if let Some(endpoint) = env("AWS_ENDPOINT_URL_S3") {
        builder = builder.with_endpoint(endpoint);
    }
    if env("AWS_REGION").is_none() && env("AWS_DEFAULT_REGION").is_none() {
        if let Some(region) = profile::region()? {
            builder = builder.with_region(region);
        }
    }
    let has_key = env("AWS_ACCESS_KEY_ID").is_some();
    if !has_key {
        if let Some(keys) = profile::credentials()? {
            builder = builder
                .with_access_key_id(keys.access_key_id)
                .with_secret_access_key(keys.secret_access_key);
            if let Some(token) = keys.session_token {
                builder = builder.with_token(token);
            }
        } else if env_true("AWS_EC2_METADATA_DISABLED")
            && !env_true("AWS_SKIP_SIGNATURE")
            && env("AWS_WEB_IDENTITY_TOKEN_FILE").is_none()
            && env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI").is_none()
            && env("AWS_CONTAINER_CREDENTIALS_FULL_URI").is_none()
        {
            // The crate's last resort is the instance metadata service, which this variable
            // forbids: say so rather than fail later with a signature error.
            return Err(config_error(
                "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or \
                 AWS_PROFILE, or AWS_SKIP_SIGNATURE=true for a public bucket \
                 (AWS_EC2_METADATA_DISABLED forbids asking the instance)"
                    .to_owned(),
            ));
        }
    }
    builder
        .build()
        .map_err(|e| config_error(format!("s3://{bucket}/: {}", super::error::cause(&e))))
}

/// The store of one `http(s)://` URL: the URL as given is the object (a presigned URL keeps its
/// query string), read with the same retries. A plain `http://` URL given as an input is taken
/// as meant.
pub(super) fn http(url: &str) -> io::Result<HttpStore> {
    HttpBuilder::new()
        .with_url(url)
        .with_retry(retry()?)
        .with_client_options(client_options().with_allow_http(true))
        .build()
        .map_err(|e| config_error(format!("{url}: {}", super::error::cause(&e))))
}

/// The shared credentials and config files (`~/.aws/credentials`, `~/.aws/config`, or
/// `AWS_SHARED_CREDENTIALS_FILE` and `AWS_CONFIG_FILE`), read for the profile `AWS_PROFILE`
/// names (`default` without it), as the AWS command line reads them. Only static keys are
/// read: a profile that names a role, SSO or a credential process is refused with the way out.
mod profile {
    use super::*;

    pub struct Keys {
        pub access_key_id: String,
        pub secret_access_key: String,
        pub session_token: Option<String>,
    }

    fn home_file(var: &str, name: &str) -> Option<PathBuf> {
        env(var)
            .map(PathBuf::from)
            .or_else(|| env("HOME").map(|home| PathBuf::from(home).join(".aws").join(name)))
    }

    fn profile_name() -> (String, bool) {
        match env("AWS_PROFILE") {
            Some(name) => (name, true),
            None => ("default".to_owned(), false),
        }
    }

    /// The `key = value` pairs of section `[section]` of an INI file, if it has one.
    fn section(text: &str, wanted: &[String]) -> Option<Vec<(String, String)>> {
        let mut found = None;
        let mut inside = false;
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
                continue;
            }
            if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                inside = wanted.iter().any(|w| w == name.trim());
                if inside {
                    found.get_or_insert_with(Vec::new);
                }
                continue;
            }
            if let (true, Some((key, value))) = (inside, line.split_once('=')) {
                found
                    .get_or_insert_with(Vec::new)
                    .push((key.trim().to_ascii_lowercase(), value.trim().to_owned()));
            }
        }
        found
    }

    fn read(path: &std::path::Path) -> io::Result<Option<String>> {
        match std::fs::read_to_string(path) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(config_error(format!(
                "{}: cannot read: {e}",
                path.display()
            ))),
        }
    }

    fn get(pairs: &[(String, String)], key: &str) -> Option<String> {
        pairs
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    }

    pub fn credentials() -> io::Result<Option<Keys>> {
        let (name, named) = profile_name();
        let from_credentials = match home_file("AWS_SHARED_CREDENTIALS_FILE", "credentials") {
            Some(path) => read(&path)?.and_then(|text| section(&text, std::slice::from_ref(&name))),
            None => None,
        };
        // The config file holds keys too, under `[profile NAME]` (or `[default]`).
        let from_config = match home_file("AWS_CONFIG_FILE", "config") {
            Some(path) => read(&path)?
                .and_then(|text| section(&text, &[format!("profile {name}"), name.clone()])),
            None => None,
        };
        let found = from_credentials.is_some() || from_config.is_some();
        let pairs: Vec<_> = from_config
            .into_iter()
            .flatten()
            .chain(from_credentials.into_iter().flatten())
            .collect();
        match (
            get(&pairs, "aws_access_key_id"),
            get(&pairs, "aws_secret_access_key"),
        ) {
            (Some(access_key_id), Some(secret_access_key)) => Ok(Some(Keys {
                access_key_id,
                secret_access_key,
                session_token: get(&pairs, "aws_session_token"),
            })),
            _ if named => Err(config_error(if found {
                format!(
                    "AWS_PROFILE={name}: the profile has no aws_access_key_id and \
                     aws_secret_access_key; this tool reads only static keys from a profile \
                     (for SSO or a role, export the session's keys: \
                     eval \"$(aws configure export-credentials --profile {name} --format env)\")"
                )
            } else {
                format!(
                    "AWS_PROFILE={name}: no such profile in ~/.aws/credentials or ~/.aws/config"
                )
            })),
            _ => Ok(None),
        }
    }

    pub fn region() -> io::Result<Option<String>> {
        let (name, _) = profile_name();
        let Some(path) = home_file("AWS_CONFIG_FILE", "config") else {
            return Ok(None);
        };
        Ok(read(&path)?
            .and_then(|text| section(&text, &[format!("profile {name}"), name.clone()]))
            .and_then(|pairs| get(&pairs, "region")))
    }

    #[cfg(test)]
    mod tests {
        use super::section;

        #[test]
        fn a_profile_section_is_read_as_the_aws_tools_read_it() {
            let text = "[default]\naws_access_key_id = A\n# note\n[profile ops]\n\
                        region=eu-west-1\nAWS_SECRET_ACCESS_KEY = S = T\n";
            let ops = section(text, &["profile ops".to_owned(), "ops".to_owned()]).unwrap();
            assert_eq!(
                ops,
                [
                    ("region".to_owned(), "eu-west-1".to_owned()),
                    ("aws_secret_access_key".to_owned(), "S = T".to_owned())
                ]
            );
            assert!(section(text, &["nope".to_owned()]).is_none());
            let default = section(text, &["default".to_owned()]).unwrap();
            assert_eq!(default.len(), 1);
        }
    }
}
