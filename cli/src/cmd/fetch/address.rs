//! A release's URL: its directory, each file's, and the same with credentials struck out for
//! printing (they are sent, never shown).

use anyhow::{bail, Result};
use kingmaker_tablefmt::release::manifest::MANIFEST;

/// The release's directory URL: `real` is asked for (its credentials, if any, are sent as
/// HTTP basic authentication), `shown` is printed (its credentials replaced by `***`).
pub(super) struct Base {
    pub(super) real: String,
    pub(super) shown: String,
    /// The credentials as typed and as the URL parser writes them, to be struck from any text.
    secrets: Vec<String>,
}

/// One URL of the release: what is asked for and what is printed.
pub(super) struct Link {
    pub(super) real: String,
    pub(super) shown: String,
}

impl Base {
    /// The URL of the release's file `name` (a plain name: see `check_file_name`).
    pub(super) fn file(&self, name: &str) -> Link {
        Link {
            real: format!("{}{name}", self.real),
            shown: format!("{}{name}", self.shown),
        }
    }

    /// `text` without the URL's credentials.
    pub(super) fn redact(&self, text: &str) -> String {
        self.secrets.iter().fold(text.to_string(), |t, secret| {
            t.replace(secret.as_str(), "***@")
        })
    }
}

/// `url` with its credentials, if any, replaced by `***`.
pub(super) fn redacted(url: &url::Url) -> String {
    let mut shown = url.clone();
    if !url.username().is_empty() || url.password().is_some() {
        let _ = shown.set_password(None);
        let _ = shown.set_username("***");
    }
    shown.into()
}

/// `text`, a URL that may not parse, with whatever stands between `://` and an `@` before the
/// next `/` replaced by `***`.
pub(super) fn redact_text(text: &str) -> String {
    let Some((scheme, rest)) = text.split_once("://") else {
        return text.to_string();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://***{}", &rest[at..]),
        None => text.to_string(),
    }
}

/// `URL` as a directory URL ending in `/` (a trailing `manifest.json` is dropped). Refused: a URL
/// that does not parse (a port above 65535 among them) or names port 0, and one with a query or
/// a fragment, which could not go with every file's request as typed.
pub(super) fn base_url(text: &str) -> Result<Base> {
    let text = text.trim();
    let shown = redact_text(text);
    if !(text.starts_with("http://") || text.starts_with("https://")) {
        bail!("{shown:?} is not an http:// or https:// URL");
    }
    let mut url =
        url::Url::parse(text).map_err(|e| anyhow::anyhow!("{shown:?} is not a valid URL: {e}"))?;
    if url.port() == Some(0) {
        bail!("{shown:?} is not a valid URL: port 0 is no server's port");
    }
    let mut secrets = Vec::new();
    if let Some((_, rest)) = text.split_once("://") {
        let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
        if let Some(at) = authority.rfind('@') {
            secrets.push(authority[..=at].to_string());
        }
    }
    if !url.username().is_empty() || url.password().is_some() {
        let pass = url.password().map_or(String::new(), |p| format!(":{p}"));
        secrets.push(format!("{}{pass}@", url.username()));
    }
    // Longest first, so that no part of one is left behind by a shorter one.
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let shown = redacted(&url);
    if url.query().is_some() || url.fragment().is_some() {
        bail!(
            "{shown:?} has a query or a fragment (after '?' or '#'): fetch asks for each file of \
             the release by its name under the release's directory URL, so neither could go with \
             every request as typed; give the directory's URL alone (ending in /)"
        );
    }
    let path = url.path();
    let path = path.strip_suffix(MANIFEST).unwrap_or(path);
    let path = if path.ends_with('/') {
        path.to_string()
    } else {
        format!("{path}/")
    };
    url.set_path(&path);
    Ok(Base {
        shown: redacted(&url),
        real: url.into(),
        secrets,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_release_url_is_a_directory_url_with_nothing_after_its_path() {
        let b = base_url(" http://h:8080/rel ").unwrap();
        assert_eq!(
            (b.real.as_str(), b.shown.as_str()),
            ("http://h:8080/rel/", "http://h:8080/rel/")
        );
        assert_eq!(
            base_url("https://h/rel/manifest.json").unwrap().real,
            "https://h/rel/"
        );
        for (bad, why) in [
            ("http://127.0.0.1:99999/x/", "invalid port"),
            ("http://127.0.0.1:0/x/", "port 0"),
            ("http://host/rel/?x=1", "query or a fragment"),
            ("http://host/rel/#top", "query or a fragment"),
            ("http://host/rel/?", "query or a fragment"),
            ("ftp://host/rel/", "not an http"),
        ] {
            let e = base_url(bad)
                .err()
                .unwrap_or_else(|| panic!("{bad} accepted"))
                .to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn credentials_are_sent_and_never_shown() {
        let b = base_url("http://al%69ce:s3cr%2Ft@h/rel/").unwrap();
        assert_eq!(b.real, "http://al%69ce:s3cr%2Ft@h/rel/");
        assert_eq!(b.shown, "http://***@h/rel/");
        assert_eq!(b.file("solo.kmt").shown, "http://***@h/rel/solo.kmt");
        let said = format!(
            "bad uri: {}solo.kmt, then http://al%69ce:s3cr%2Ft@h/",
            b.real
        );
        assert!(!b.redact(&said).contains("s3cr"), "{}", b.redact(&said));
        for bad in [
            "http://u:p4ss@h:99999/rel/",
            "http://u:p4ss@h/rel/?x=1",
            "ftp://u:p4ss@h/",
            "http://u:p4ss@[::1/rel/",
        ] {
            let e = base_url(bad).err().unwrap().to_string();
            assert!(!e.contains("p4ss") && e.contains("***@"), "{e}");
        }
        let u = url::Url::parse("https://user:pw@elsewhere/x").unwrap();
        assert_eq!(redacted(&u), "https://***@elsewhere/x");
        assert_eq!(redact_text("http://a:b@c/d@e"), "http://***@c/d@e");
        assert_eq!(redact_text("not a url"), "not a url");
    }
}
