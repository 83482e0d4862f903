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

use object_store::aws::{AmazonS3, AmazonS3Builder, S3ConditionalPut};
use object_store::client::{HttpClient, HttpConnector, ReqwestConnector};
use object_store::ClientOptions;

use super::settings::{self, config_error, var};

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

/// The longest a request may take (S3), or an `http(s)://` input may go without a byte: 60 s
/// (an 8 MiB part at 140 KB/s).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// [`REQUEST_TIMEOUT`], but for a hook of test builds only (none in release builds):
/// `RDQ_ENVELOPE_TEST_TIMEOUT_MS`, so that a test of a store too slow to answer ends in seconds.
fn request_timeout() -> Duration {
    #[cfg(debug_assertions)]
    if let Some(ms) = std::env::var("RDQ_ENVELOPE_TEST_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|&ms| ms > 0)
    {
        return Duration::from_millis(ms);
    }
    REQUEST_TIMEOUT
}

/// Connections: 5 s to connect, [`REQUEST_TIMEOUT`] for one request; plain http only where
/// `AWS_ALLOW_HTTP` says so.
fn client_options(allow_http: bool) -> ClientOptions {
    ClientOptions::new()
        .with_connect_timeout(Duration::from_secs(5))
        .with_timeout(request_timeout())
        .with_allow_http(allow_http)
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
    // each checked first, then what those tools add on top.
    let mut builder = AmazonS3Builder::new();
    for (key, value) in settings::s3_pairs()? {
        builder = builder.with_config(key, value);
    }
    settings::check_proxies()?;
    let mut builder = builder
        .with_bucket_name(bucket)
        .with_retry(settings::retry()?)
        .with_client_options(client_options(settings::flag("AWS_ALLOW_HTTP")?))
        .with_conditional_put(S3ConditionalPut::ETagMatch);
    if var("AWS_REGION")?.is_none() && var("AWS_DEFAULT_REGION")?.is_none() {
        if let Some(region) = profile::region()? {
            builder = builder.with_region(region);
        }
    }
    let has_key = var("AWS_ACCESS_KEY_ID")?.is_some();
    let has_secret = var("AWS_SECRET_ACCESS_KEY")?.is_some();
    if has_key != has_secret {
        // The crate would say "missing SecretAccessKey" without naming the variable.
        return Err(config_error(if has_key {
            "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not".to_owned()
        } else {
            "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not".to_owned()
        }));
    }
    if !has_key {
        if let Some(keys) = profile::credentials()? {
            builder = builder
                .with_access_key_id(keys.access_key_id)
                .with_secret_access_key(keys.secret_access_key);
            if let Some(token) = keys.session_token {
                builder = builder.with_token(token);
            }
        } else if settings::flag("AWS_EC2_METADATA_DISABLED")?
            && !settings::flag("AWS_SKIP_SIGNATURE")?
            && var("AWS_WEB_IDENTITY_TOKEN_FILE")?.is_none()
            && var("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")?.is_none()
            && var("AWS_CONTAINER_CREDENTIALS_FULL_URI")?.is_none()
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

/// The client of `http(s)://` inputs, made once per run: 5 s to connect, then at most
/// [`REQUEST_TIMEOUT`] without a byte, but no bound on a whole answer (an export of some GB
/// over a slow link takes what it takes); plain `http://` as the URL says.
pub(super) fn http_client() -> io::Result<HttpClient> {
    static CLIENT: Mutex<Option<HttpClient>> = Mutex::new(None);
    let mut client = CLIENT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(client) = &*client {
        return Ok(client.clone());
    }
    settings::check_proxies()?;
    let options = ClientOptions::new()
        .with_connect_timeout(Duration::from_secs(5))
        .with_timeout_disabled()
        .with_read_timeout(request_timeout())
        .with_allow_http(true);
    let made = ReqwestConnector::default()
        .connect(&options)
        .map_err(|e| config_error(format!("the HTTP client: {}", super::error::cause(&e))))?;
    *client = Some(made.clone());
    Ok(made)
}

/// An `http(s)://` URL as the HTTP client will take it, checked by both parsers it uses (it
/// panics on what they refuse): a port over 65535, a host that is not one, an empty host.
pub(super) fn http_uri(url: &str) -> io::Result<http::Uri> {
    let bad = |why: String| config_error(format!("{url}: bad URL: {why}"));
    // The parser would drop these in silence.
    if let Some(c) = url.chars().find(|c| c.is_control()) {
        return Err(bad(format!("holds a control character ({c:?})")));
    }
    if url.ends_with(char::is_whitespace) {
        return Err(bad("ends with a space (nothing is trimmed)".to_owned()));
    }
    // `http:///x` would be read as the host `x`.
    if url
        .split_once("://")
        .is_some_and(|(_, rest)| rest.is_empty() || rest.starts_with(['/', '?', '#']))
    {
        return Err(bad("no host".to_owned()));
    }
    let parsed = ::url::Url::parse(url).map_err(|e| bad(e.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") || !parsed.has_host() {
        return Err(bad("not an http(s) URL with a host".to_owned()));
    }
    let uri: http::Uri = parsed
        .as_str()
        .parse()
        .map_err(|e: http::uri::InvalidUri| bad(e.to_string()))?;
    ::url::Url::parse(&uri.to_string()).map_err(|e| bad(e.to_string()))?;
    Ok(uri)
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

    fn home_file(name: &str, file: &str) -> io::Result<Option<PathBuf>> {
        Ok(var(name)?.map(PathBuf::from).or_else(|| {
            std::env::var_os("HOME")
                .filter(|home| !home.is_empty())
                .map(|home| PathBuf::from(home).join(".aws").join(file))
        }))
    }

    fn profile_name() -> io::Result<(String, bool)> {
        Ok(match var("AWS_PROFILE")? {
            Some(name) => (name, true),
            None => ("default".to_owned(), false),
        })
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
        let (name, named) = profile_name()?;
        let from_credentials = match home_file("AWS_SHARED_CREDENTIALS_FILE", "credentials")? {
            Some(path) => read(&path)?.and_then(|text| section(&text, std::slice::from_ref(&name))),
            None => None,
        };
        // The config file holds keys too, under `[profile NAME]` (or `[default]`).
        let from_config = match home_file("AWS_CONFIG_FILE", "config")? {
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
            (Some(access_key_id), Some(secret_access_key)) => {
                // Checked as the variables are: they go into the same headers.
                let what = |key: &str| format!("{key} of the profile {name}");
                settings::header_word(&what("aws_access_key_id"), &access_key_id)?;
                settings::plain(&what("aws_secret_access_key"), &secret_access_key)?;
                let session_token = get(&pairs, "aws_session_token");
                if let Some(token) = &session_token {
                    settings::header_word(&what("aws_session_token"), token)?;
                }
                Ok(Some(Keys {
                    access_key_id,
                    secret_access_key,
                    session_token,
                }))
            }
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
        let (name, _) = profile_name()?;
        let Some(path) = home_file("AWS_CONFIG_FILE", "config")? else {
            return Ok(None);
        };
        let region = read(&path)?
            .and_then(|text| section(&text, &[format!("profile {name}"), name.clone()]))
            .and_then(|pairs| get(&pairs, "region"));
        if let Some(region) = &region {
            settings::region(&format!("region of the profile {name}"), region)?;
        }
        Ok(region)
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
