//! The run's shared token: every call carries `authorization: Bearer <token>`, and a worker refuses
//! any call without it. The token is never logged.

use tonic::metadata::MetadataValue;
use tonic::service::Interceptor;
use tonic::{Request, Status};

/// The environment variable both binaries read the token from (when `--token` is not given).
pub const TOKEN_ENV: &str = "KINGMAKER_TOKEN";

/// Adds the token to every outgoing call (coordinator → worker, worker → worker).
#[derive(Clone)]
pub struct AddToken {
    header: MetadataValue<tonic::metadata::Ascii>,
}

impl AddToken {
    /// Tokens must be printable ASCII (they travel in an HTTP header).
    pub fn new(token: &str) -> Result<AddToken, String> {
        check_token(token)?;
        let header = format!("Bearer {token}")
            .parse()
            .map_err(|_| "the token must be printable ASCII".to_string())?;
        Ok(AddToken { header })
    }
}

impl Interceptor for AddToken {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        request
            .metadata_mut()
            .insert("authorization", self.header.clone());
        Ok(request)
    }
}

/// Refuses every incoming call that does not carry the token.
#[derive(Clone)]
pub struct CheckToken {
    expected: Vec<u8>,
}

impl CheckToken {
    /// Accept only calls carrying `token` (printable ASCII, as for [`AddToken::new`]).
    pub fn new(token: &str) -> Result<CheckToken, String> {
        check_token(token)?;
        Ok(CheckToken {
            expected: format!("Bearer {token}").into_bytes(),
        })
    }
}

impl Interceptor for CheckToken {
    fn call(&mut self, request: Request<()>) -> Result<Request<()>, Status> {
        let given = request
            .metadata()
            .get("authorization")
            .map(|v| v.as_bytes())
            .unwrap_or_default();
        if constant_time_eq(given, &self.expected) {
            Ok(request)
        } else {
            Err(Status::unauthenticated(
                "missing or wrong token: give the coordinator the token this worker was started with \
                 (--token or KINGMAKER_TOKEN)",
            ))
        }
    }
}

/// Why a token is unusable (empty, or not printable ASCII).
pub fn check_token(token: &str) -> Result<(), String> {
    if token.is_empty() {
        return Err(format!(
            "the token is empty: pass --token or set {TOKEN_ENV}"
        ));
    }
    if !token.bytes().all(|b| (0x21..0x7F).contains(&b)) {
        return Err("the token must be printable ASCII without spaces".to_string());
    }
    Ok(())
}

/// Compare without an early exit, so timing does not reveal how much of a guess was right.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = u8::from(a.len() != b.len());
    for (i, &x) in b.iter().enumerate() {
        diff |= x ^ a.get(i).copied().unwrap_or(0);
    }
    diff == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_checked() {
        let mut add = AddToken::new("s3cret").unwrap();
        let mut check = CheckToken::new("s3cret").unwrap();
        let request = add.call(Request::new(())).unwrap();
        assert!(check.call(request).is_ok());
        let mut wrong = AddToken::new("s3cre").unwrap();
        let status = check
            .call(wrong.call(Request::new(())).unwrap())
            .unwrap_err();
        assert_eq!(status.code(), tonic::Code::Unauthenticated);
        assert_eq!(
            check.call(Request::new(())).unwrap_err().code(),
            tonic::Code::Unauthenticated
        );
        assert!(AddToken::new("").is_err());
        assert!(AddToken::new("with space").is_err());
    }

    #[test]
    fn comparison() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abd", b"abc"));
        assert!(!constant_time_eq(b"ab", b"abc"));
        assert!(!constant_time_eq(b"abcd", b"abc"));
        assert!(!constant_time_eq(b"", b"abc"));
    }
}
