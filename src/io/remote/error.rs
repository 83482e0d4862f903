//! An object store's error as a person reads it: the URL, then the cause in a few words, then
//! the store's own account (docs/cli.md#object-storage).

use std::io;

/// The cause of a store's error, in words: what failed, and the innermost reason the HTTP
/// client gave (a refused connection, a name that does not resolve, a timeout).
pub(super) fn cause(e: &object_store::Error) -> String {
    use object_store::Error as E;
    let what = match e {
        E::NotFound { .. } => {
            if mentions(e, "NoSuchBucket") {
                "no such bucket"
            } else {
                "no such object"
            }
        }
        E::PermissionDenied { .. } => "access denied",
        E::Unauthenticated { .. } => "not authenticated (check the credentials)",
        E::Precondition { .. } => "the object is not what was expected (a condition failed)",
        E::AlreadyExists { .. } => "the object already exists",
        E::NotModified { .. } => "not modified",
        E::NotSupported { .. } | E::NotImplemented { .. } => "not supported by this store",
        _ if mentions(e, "NoSuchBucket") => "no such bucket",
        _ if mentions(e, "is not allowed") && mentions(e, "http") => {
            return "the endpoint is plain http: set AWS_ALLOW_HTTP=true to allow it".to_owned()
        }
        _ if mentions(e, "Content-Length Header missing") => {
            return "the store's answer has no Content-Length (sent chunked?): an S3 store \
                    must give an object's size, as S3 does"
                .to_owned()
        }
        // A write's body cannot be sent again to follow a redirect (a read's is followed).
        _ if mentions(e, "non-2xx status code: 3") => {
            "the store answered with a redirect that this request cannot follow: set \
             AWS_ENDPOINT_URL (or AWS_REGION) to where it points"
        }
        _ => "",
    };
    let root = innermost(e);
    // The client's own words for a status it already named ("Server returned non-2xx status
    // code: 404 Not Found") add nothing.
    let root = if root.starts_with("Server returned non-2xx") {
        String::new()
    } else {
        root
    };
    match (what.is_empty(), root.is_empty()) {
        (false, true) => what.to_owned(),
        (false, false) => format!("{what} ({root})"),
        // A failure of the connection: the reason, then the store's account (the request, the
        // retries).
        (true, false) => format!("{root} ({})", flat(e)),
        (true, true) => flat(e),
    }
}

/// The store's account on one line, without its trailing parts.
fn flat(e: &object_store::Error) -> String {
    e.to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The innermost error in the chain, which names the socket's or the server's reason.
fn innermost(e: &object_store::Error) -> String {
    root(e)
}

/// The innermost error of a chain, in a few words: empty when the error has no source.
pub(super) fn root(e: &(dyn std::error::Error + 'static)) -> String {
    let mut inner: &dyn std::error::Error = e;
    while let Some(next) = inner.source() {
        inner = next;
    }
    if std::ptr::addr_eq(inner, e) {
        return String::new();
    }
    let text = inner.to_string();
    // A status answer's body is the store's XML: keep its message, not the markup.
    match (text.find("<Message>"), text.find("</Message>")) {
        (Some(a), Some(b)) if a < b => text[a + "<Message>".len()..b].to_owned(),
        _ => text.lines().next().unwrap_or("").trim().to_owned(),
    }
}

fn mentions(e: &object_store::Error, what: &str) -> bool {
    let mut inner: Option<&dyn std::error::Error> = Some(e);
    while let Some(err) = inner {
        if err.to_string().contains(what) {
            return true;
        }
        inner = err.source();
    }
    false
}

/// The error as an `io::Error` naming the URL, of the kind the store's error says.
pub(super) fn named(url: &str, e: &object_store::Error) -> io::Error {
    use object_store::Error as E;
    let kind = match e {
        E::NotFound { .. } => io::ErrorKind::NotFound,
        E::PermissionDenied { .. } | E::Unauthenticated { .. } => io::ErrorKind::PermissionDenied,
        E::AlreadyExists { .. } => io::ErrorKind::AlreadyExists,
        _ => io::ErrorKind::Other,
    };
    io::Error::new(kind, format!("{url}: {}", cause(e)))
}

/// Whether the request got no answer (a timeout, a connection refused or cut), as against an
/// answer that said no: a request that got none may have been done.
pub(super) fn no_answer(e: &object_store::Error) -> bool {
    let mut inner: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = inner {
        if err.is::<object_store::client::HttpError>() {
            return true;
        }
        inner = err.source();
    }
    false
}
