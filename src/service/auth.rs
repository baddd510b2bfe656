//! Bearer-token authentication of the admin service, with a read role and a write role.
//!
//! Tokens are read from files (`--admin-read-token-file`, `--admin-write-token-file`; the first
//! non-empty line, surrounding white space ignored). When a file is not configured, the sidecar
//! generates a random token and writes it to `admin-read.token` / `admin-write.token` in the data
//! directory (mode 0600), reusing it on later starts, so the admin service is never open, yet works
//! out of the box for whoever can read the data directory.
//!
//! A caller sends `authorization: Bearer <token>`. Tokens are compared in constant time. The write
//! token grants both roles. No token: UNAUTHENTICATED; a read token on a write call:
//! PERMISSION_DENIED.

use std::io::Write;
use std::path::{Path, PathBuf};

use rand::Rng;
use subtle::ConstantTimeEq;
use tonic::{Request, Status};

/// What a call needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Read,
    Write,
}

/// Length of generated tokens, in hexadecimal characters (128 bits).
const GENERATED_TOKEN_HEX: usize = 32;

/// The admin tokens.
pub struct Tokens {
    read: String,
    write: String,
}

/// Why the tokens could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("admin token file {}: {message}", path.display())]
    File { path: PathBuf, message: String },
}

/// Reads a token file: its first non-empty line, trimmed, at least 16 characters.
pub(crate) fn read_token(path: &Path) -> Result<String, TokenError> {
    let text = std::fs::read_to_string(path).map_err(|err| TokenError::File {
        path: path.to_owned(),
        message: err.to_string(),
    })?;
    let token = text
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or_default();
    if token.len() < 16 {
        return Err(TokenError::File {
            path: path.to_owned(),
            message: "the token must be at least 16 characters".into(),
        });
    }
    Ok(token.to_owned())
}

fn generated_token(path: &Path) -> Result<String, TokenError> {
    if path.exists() {
        return read_token(path);
    }
    let mut rng = rand::rng();
    let token: String = (0..GENERATED_TOKEN_HEX)
        .map(|_| char::from_digit(rng.random_range(0..16), 16).unwrap_or('0'))
        .collect();
    let error = |err: std::io::Error| TokenError::File {
        path: path.to_owned(),
        message: err.to_string(),
    };
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).map_err(error)?;
    writeln!(file, "{token}").map_err(error)?;
    file.sync_all().map_err(error)?;
    Ok(token)
}

impl Tokens {
    /// Loads configured token files, generating the missing ones in `data_dir`.
    pub fn load(
        read_file: Option<&Path>,
        write_file: Option<&Path>,
        data_dir: &Path,
    ) -> Result<Tokens, TokenError> {
        let read = match read_file {
            Some(path) => read_token(path)?,
            None => generated_token(&data_dir.join("admin-read.token"))?,
        };
        let write = match write_file {
            Some(path) => read_token(path)?,
            None => generated_token(&data_dir.join("admin-write.token"))?,
        };
        Ok(Tokens { read, write })
    }

    /// Tokens given directly (tests, embedding).
    pub fn new(read: impl Into<String>, write: impl Into<String>) -> Tokens {
        Tokens {
            read: read.into(),
            write: write.into(),
        }
    }

    /// Checks a request's bearer token against the role a call needs.
    pub fn authorize<T>(&self, request: &Request<T>, needed: Role) -> Result<Role, Status> {
        let Some(value) = request.metadata().get("authorization") else {
            return Err(Status::unauthenticated(
                "missing `authorization: Bearer <token>` metadata",
            ));
        };
        let presented = value
            .to_str()
            .ok()
            .and_then(|value| {
                value
                    .strip_prefix("Bearer ")
                    .or_else(|| value.strip_prefix("bearer "))
            })
            .map(str::trim)
            .ok_or_else(|| {
                Status::unauthenticated("authorization metadata is not `Bearer <token>`")
            })?;
        // Both comparisons always run, so timing does not tell which token nearly matched.
        let is_write: bool = presented.as_bytes().ct_eq(self.write.as_bytes()).into();
        let is_read: bool = presented.as_bytes().ct_eq(self.read.as_bytes()).into();
        match (is_write, is_read, needed) {
            (true, _, _) => Ok(Role::Write),
            (false, true, Role::Read) => Ok(Role::Read),
            (false, true, Role::Write) => Err(Status::permission_denied(
                "this call needs the admin write token",
            )),
            (false, false, _) => Err(Status::unauthenticated("unknown admin token")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(token: Option<&str>) -> Request<()> {
        let mut request = Request::new(());
        if let Some(token) = token {
            if let Ok(value) = format!("Bearer {token}").parse() {
                request.metadata_mut().insert("authorization", value);
            }
        }
        request
    }

    #[test]
    fn roles_are_enforced() {
        let tokens = Tokens::new("read-token-0123456789", "write-token-0123456789");
        assert_eq!(
            tokens
                .authorize(&request(Some("read-token-0123456789")), Role::Read)
                .ok(),
            Some(Role::Read)
        );
        let denied = tokens
            .authorize(&request(Some("read-token-0123456789")), Role::Write)
            .unwrap_err();
        assert_eq!(denied.code(), tonic::Code::PermissionDenied);
        assert!(tokens
            .authorize(&request(Some("write-token-0123456789")), Role::Write)
            .is_ok());
        assert!(tokens
            .authorize(&request(Some("write-token-0123456789")), Role::Read)
            .is_ok());
        assert_eq!(
            tokens
                .authorize(&request(None), Role::Read)
                .unwrap_err()
                .code(),
            tonic::Code::Unauthenticated
        );
        assert_eq!(
            tokens
                .authorize(&request(Some("nope-nope-nope-nope")), Role::Read)
                .unwrap_err()
                .code(),
            tonic::Code::Unauthenticated
        );
    }

    #[test]
    fn generated_tokens_persist_across_loads() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = Tokens::load(None, None, dir.path()).expect("generate");
        let second = Tokens::load(None, None, dir.path()).expect("reload");
        assert_eq!(first.write, second.write);
        assert_ne!(first.read, first.write);
        assert_eq!(first.write.len(), GENERATED_TOKEN_HEX);
    }

    #[test]
    fn short_tokens_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t");
        std::fs::write(&path, "short\n").expect("write");
        assert!(Tokens::load(Some(&path), None, dir.path()).is_err());
    }
}
