//! The settings the store clients are handed, read from the environment and checked before
//! use (docs/cli.md#environment). The S3 client and the HTTP client under it panic on some
//! values a person types (an endpoint without its scheme, a port over 65535, a space at an
//! end, a line break in a token); each such value is status 2 here, naming the variable and
//! its value, before any request. Nothing is trimmed: a space at an end is an error that says
//! so.

use std::io;
use std::net::Ipv6Addr;
use std::time::Duration;

use object_store::aws::AmazonS3ConfigKey;
use object_store::{BackoffConfig, RetryConfig};

/// A variable's value, or where a value came from, as a message shows it: quoted with its
/// escapes, so that a space or a control character shows; a secret's value is never shown, and
/// a URL's password neither.
fn shown(var: &str, value: &str) -> String {
    let secret = ["SECRET", "TOKEN", "CUSTOMER_KEY", "secret", "token"]
        .iter()
        .any(|s| var.contains(s))
        && !var.ends_with("_FILE");
    if secret {
        return format!("{var} (its value not shown)");
    }
    // `scheme://user:password@host` → `scheme://***@host`.
    let value = match (value.find("://"), value.rfind('@')) {
        (Some(a), Some(b)) if a + 3 < b && !value[a + 3..b].contains('/') => {
            format!("{}***{}", &value[..a + 3], &value[b..])
        }
        _ => value.to_owned(),
    };
    format!("{var}={value:?}")
}

pub(super) fn config_error(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

fn bad(var: &str, value: &str, why: impl std::fmt::Display) -> io::Error {
    config_error(format!("{}: {why}", shown(var, value)))
}

/// What every value must be: no control character, no white space at either end.
pub(super) fn plain(var: &str, value: &str) -> io::Result<()> {
    if let Some(c) = value.chars().find(|c| c.is_control()) {
        return Err(bad(
            var,
            value,
            format!("holds a control character ({c:?})"),
        ));
    }
    if value.starts_with(char::is_whitespace) {
        return Err(bad(var, value, "begins with a space (nothing is trimmed)"));
    }
    if value.ends_with(char::is_whitespace) {
        return Err(bad(var, value, "ends with a space (nothing is trimmed)"));
    }
    Ok(())
}

/// A variable of the environment: `None` when unset or empty (AWS's tools take an empty one
/// for unset); an error when it is not UTF-8 or not [`plain`].
pub(super) fn var(name: &str) -> io::Result<Option<String>> {
    match std::env::var(name) {
        Ok(value) if value.is_empty() => Ok(None),
        Ok(value) => {
            plain(name, &value)?;
            Ok(Some(value))
        }
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => {
            Err(config_error(format!("{name}: its value is not UTF-8")))
        }
    }
}

/// A yes-or-no variable, read as the S3 client reads them: `true`, `1`, `yes`, `on`, `y` or
/// `false`, `0`, `no`, `off`, `n`, in any case. Unset is `false`.
pub(super) fn flag(name: &str) -> io::Result<bool> {
    match var(name)? {
        None => Ok(false),
        Some(value) => boolean(name, &value),
    }
}

fn boolean(name: &str, value: &str) -> io::Result<bool> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" | "y" => Ok(true),
        "false" | "0" | "no" | "off" | "n" => Ok(false),
        _ => Err(bad(
            name,
            value,
            "is neither true nor false (true, 1, yes, on; false, 0, no, off)",
        )),
    }
}

/// An endpoint or a proxy: `http://` or `https://` (a proxy may leave it out, as curl takes
/// it), a host (a name, an IPv4 address or a bracketed IPv6 one), a port from 1 to 65535, and
/// for an endpoint an optional path (no query string, no fragment, no user name).
pub(super) fn url(var: &str, value: &str, proxy: bool) -> io::Result<()> {
    plain(var, value)?;
    let (scheme, rest) = match value.split_once("://") {
        Some(split) => split,
        None if proxy => ("http", value),
        None => {
            return Err(bad(
                var,
                value,
                "has no scheme: write http://HOST:PORT or https://HOST",
            ))
        }
    };
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Err(bad(
            var,
            value,
            format!("the scheme {scheme:?} is not http or https"),
        ));
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let host_port = match authority.rsplit_once('@') {
        Some((_, host_port)) if proxy => host_port,
        Some(_) => {
            return Err(bad(
                var,
                value,
                "holds a user name: the credentials come from AWS_ACCESS_KEY_ID and \
                 AWS_SECRET_ACCESS_KEY",
            ))
        }
        None => authority,
    };
    let (host, port) = if let Some(v6) = host_port.strip_prefix('[') {
        let Some((address, after)) = v6.split_once(']') else {
            return Err(bad(var, value, "its IPv6 address has no closing ]"));
        };
        if address.parse::<Ipv6Addr>().is_err() {
            return Err(bad(
                var,
                value,
                format!("{address:?} is not an IPv6 address"),
            ));
        }
        match after.strip_prefix(':') {
            Some(port) => (address, Some(port)),
            None if after.is_empty() => (address, None),
            None => return Err(bad(var, value, "its host is not a host name or address")),
        }
    } else {
        match host_port.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (host_port, None),
        }
    };
    if host.is_empty() {
        return Err(bad(var, value, "has no host"));
    }
    if !host_port.starts_with('[')
        && !host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b))
    {
        return Err(bad(
            var,
            value,
            format!("{host:?} is not a host name or address"),
        ));
    }
    if let Some(port) = port {
        let number = port
            .bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| port.parse::<u16>().ok())
            .flatten();
        if !matches!(number, Some(1..)) {
            return Err(bad(
                var,
                value,
                format!("the port {port:?} is not a number from 1 to 65535"),
            ));
        }
    }
    if !proxy && tail.contains(['?', '#']) {
        return Err(bad(
            var,
            value,
            "an endpoint has no query string or fragment",
        ));
    }
    if let Some(c) = tail.chars().find(|c| !c.is_ascii_graphic()) {
        return Err(bad(var, value, format!("holds {c:?}, which a URL cannot")));
    }
    // Both parsers the clients use must take it as it will be used: what they refuse, they
    // panic on.
    let whole = if value.contains("://") {
        value.to_owned()
    } else {
        format!("http://{value}")
    };
    let request = format!("{}/bucket/key", whole.trim_end_matches('/'));
    if let Err(e) = request.parse::<http::Uri>() {
        return Err(bad(var, value, format!("is not a URL ({e})")));
    }
    if let Err(e) = url::Url::parse(&request) {
        return Err(bad(var, value, format!("is not a URL ({e})")));
    }
    Ok(())
}

/// A region: letters, digits, hyphens (and the dots and underscores some stores' own region
/// names have).
pub(super) fn region(var: &str, value: &str) -> io::Result<()> {
    plain(var, value)?;
    if value
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b))
    {
        Ok(())
    } else {
        Err(bad(
            var,
            value,
            "is not a region (letters, digits and hyphens, as us-east-1)",
        ))
    }
}

/// What goes into a request's header as it is (an access key ID, a session token, a KMS key
/// ID): visible ASCII characters, no space.
pub(super) fn header_word(var: &str, value: &str) -> io::Result<()> {
    plain(var, value)?;
    match value.chars().find(|c| !c.is_ascii_graphic()) {
        None => Ok(()),
        Some(c) => Err(bad(
            var,
            value,
            format!("holds {c:?}: only visible ASCII characters, no space, can be sent"),
        )),
    }
}

/// The proxies the HTTP client reads, as curl reads them (`HTTPS_PROXY`, `HTTP_PROXY`,
/// `ALL_PROXY`, `NO_PROXY`, the upper-case name first): a value it would pass over in silence
/// (not a URL, a SOCKS proxy this build cannot use) is an error naming it. None is read under
/// CGI (`REQUEST_METHOD` set), as the client does.
pub(super) fn check_proxies() -> io::Result<()> {
    if std::env::var_os("REQUEST_METHOD").is_some() {
        return Ok(());
    }
    for (upper, lower) in [
        ("ALL_PROXY", "all_proxy"),
        ("HTTPS_PROXY", "https_proxy"),
        ("HTTP_PROXY", "http_proxy"),
        ("NO_PROXY", "no_proxy"),
    ] {
        // The first one set is the one read, even when empty.
        let name = if std::env::var_os(upper).is_some() {
            upper
        } else {
            lower
        };
        let Some(value) = var(name)? else { continue };
        if upper == "NO_PROXY" {
            continue;
        }
        if let Some((scheme, _)) = value.split_once("://") {
            if scheme.to_ascii_lowercase().starts_with("socks") {
                return Err(bad(
                    name,
                    &value,
                    "SOCKS proxies are not supported: give an http:// proxy",
                ));
            }
        }
        url(name, &value, true)?;
    }
    Ok(())
}

/// What is retried and how (docs/cli.md#object-storage): a 5xx, 429 or 408 answer, a refused or
/// reset connection, a timeout and a body cut short (resumed where it stopped, only while the
/// object's ETag is unchanged), up to 10 times by default or `AWS_MAX_ATTEMPTS - 1`, with
/// a backoff from 100 ms doubling up to 15 s, and never past 3 minutes after the first try.
pub(super) fn retry() -> io::Result<RetryConfig> {
    let max_retries = match var("AWS_MAX_ATTEMPTS")? {
        Some(text) => match text.parse::<usize>() {
            Ok(attempts) if attempts >= 1 && text.bytes().all(|b| b.is_ascii_digit()) => {
                attempts - 1
            }
            _ => {
                return Err(bad(
                    "AWS_MAX_ATTEMPTS",
                    &text,
                    "is not a number of attempts (1 or more)",
                ))
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

/// The S3 client's settings from the `AWS_*` variables it knows, each checked, with the one
/// this tool reads when two name one setting: `AWS_ENDPOINT_URL` over `AWS_ENDPOINT`,
/// `AWS_SESSION_TOKEN` over `AWS_TOKEN`, `AWS_REGION` over `AWS_DEFAULT_REGION`
/// (`AWS_ENDPOINT_URL_S3` wins over both endpoints in the client itself). The HTTP client's
/// own variables (`AWS_TIMEOUT`, `AWS_PROXY_URL`...) are not read: the timeouts are this tool's,
/// and `AWS_ALLOW_HTTP` is read by [`flag`]. Nor are the bucket, conditional writes and copies,
/// which this tool sets or never uses.
pub(super) fn s3_pairs() -> io::Result<Vec<(AmazonS3ConfigKey, String)>> {
    use AmazonS3ConfigKey as K;
    let mut found: Vec<(K, String, String)> = Vec::new();
    let mut names: Vec<String> = std::env::vars_os()
        .filter_map(|(key, _)| key.into_string().ok())
        .filter(|key| key.starts_with("AWS_"))
        .collect();
    // The preferred name of two first: the AWS tools' own, then by name.
    let rank = |name: &str| match name {
        "AWS_ENDPOINT" | "AWS_TOKEN" | "AWS_DEFAULT_REGION" => 1,
        _ => 0,
    };
    names.sort_by(|a, b| rank(a).cmp(&rank(b)).then(a.cmp(b)));
    for name in names {
        let Ok(key) = name.to_ascii_lowercase().parse::<K>() else {
            continue;
        };
        if matches!(
            key,
            K::Client(_) | K::Bucket | K::ConditionalPut | K::CopyIfNotExists
        ) {
            continue;
        }
        // The client takes both as one setting, AWS_REGION first.
        let key = if key == K::DefaultRegion {
            K::Region
        } else {
            key
        };
        // Only the variable in effect is read, and so checked.
        if found.iter().any(|(k, _, _)| *k == key) {
            continue;
        }
        let Some(value) = var(&name)? else { continue };
        match key {
            K::Endpoint
            | K::S3Endpoint
            | K::StsEndpoint
            | K::MetadataEndpoint
            | K::ContainerCredentialsFullUri => url(&name, &value, false)?,
            K::ContainerCredentialsRelativeUri => {
                header_word(&name, &value)?;
                url(&name, &format!("http://169.254.170.2{value}"), false)
                    .map_err(|_| bad(&name, &value, "is not a path (/v2/credentials/...)"))?;
            }
            K::Region => region(&name, &value)?,
            K::AccessKeyId | K::Token => header_word(&name, &value)?,
            K::ImdsV1Fallback
            | K::VirtualHostedStyleRequest
            | K::S3Express
            | K::UnsignedPayload
            | K::SkipSignature
            | K::DisableTagging
            | K::DisableBulkDelete => {
                boolean(&name, &value)?;
            }
            K::RequestPayer if !value.eq_ignore_ascii_case("requester") => {
                boolean(&name, &value)?;
            }
            K::Encryption(_) if name != "AWS_SERVER_SIDE_ENCRYPTION" => {
                header_word(&name, &value)?;
            }
            _ => {}
        }
        found.push((key, name, value));
    }
    Ok(found
        .into_iter()
        .map(|(key, _, value)| (key, value))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_as_people_type_them() {
        for good in [
            "http://127.0.0.1:9000",
            "https://s3.example.com",
            "HTTP://localhost:9000/",
            "https://ACCOUNT.r2.cloudflarestorage.com",
            "http://[::1]:9000",
            "https://gateway.example.com/s3",
        ] {
            assert!(url("E", good, false).is_ok(), "{good}");
        }
        for (value, why) in [
            ("localhost:9000", "has no scheme"),
            ("127.0.0.1:9000", "has no scheme"),
            ("http://127.0.0.1:9000 ", "ends with a space"),
            (" http://127.0.0.1:9000", "begins with a space"),
            ("http://127.0.0.1:9000\n", "control character"),
            ("http://127.0.0.1:99999", "not a number from 1 to 65535"),
            ("http://127.0.0.1:0", "not a number from 1 to 65535"),
            ("http://127.0.0.1:", "not a number from 1 to 65535"),
            ("http://127.0.0.1:+9", "not a number from 1 to 65535"),
            ("http://", "has no host"),
            ("http:///x", "has no host"),
            ("ftp://127.0.0.1", "is not http or https"),
            ("http://[::1", "no closing ]"),
            ("http://[::g]:9", "not an IPv6 address"),
            ("http://a b:9", "not a host name"),
            ("http://é.example", "not a host name"),
            ("http://u:p@127.0.0.1:9", "holds a user name"),
            ("http://127.0.0.1:9?x=1", "no query string"),
            ("http://127.0.0.1:9#f", "no query string"),
            ("http://127.0.0.1:9/a b", "which a URL cannot"),
        ] {
            let e = url("AWS_ENDPOINT_URL", value, false)
                .unwrap_err()
                .to_string();
            assert!(
                (value.contains('@') || e.starts_with(&format!("AWS_ENDPOINT_URL={value:?}: ")))
                    && e.contains(why),
                "{value:?}: {e}"
            );
        }
        // A proxy may leave out its scheme and carry a user name, which is not shown.
        assert!(url("HTTPS_PROXY", "proxy.corp:3128", true).is_ok());
        let e = url("HTTPS_PROXY", "http://u:secret@proxy:99999", true)
            .unwrap_err()
            .to_string();
        assert!(!e.contains("secret") && e.contains("***@proxy"), "{e}");
    }

    #[test]
    fn secrets_are_never_shown() {
        let e = plain("AWS_SECRET_ACCESS_KEY", "hunter2 ")
            .unwrap_err()
            .to_string();
        assert!(
            !e.contains("hunter2") && e.contains("ends with a space"),
            "{e}"
        );
        let e = header_word("AWS_SESSION_TOKEN", "tok\u{e9}n")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("tok"), "{e}");
    }

    #[test]
    fn regions_and_flags() {
        assert!(region("R", "us-east-1").is_ok());
        assert!(region("R", "us east").is_err());
        assert!(region("R", "a/b").is_err());
        assert!(boolean("B", "TRUE").unwrap());
        assert!(!boolean("B", "off").unwrap());
        assert!(boolean("B", "maybe").is_err());
    }
}
