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
//!
//! Failed authentication is throttled ([`AuthThrottle`]): each peer address has a small bucket of
//! failures ([`FAILURE_BURST`], refilled at [`FAILURE_REFILL_PER_SEC`] a second); a peer whose
//! bucket is empty is answered UNAUTHENTICATED at once, without its token being looked at, until
//! the bucket refills. Guessing a token thus costs a second per attempt after the burst, while a
//! client with a stale token is still told so immediately. The refusals are logged at most
//! [`LOG_LINES_PER_MINUTE`] times a minute, the rest counted, so a flood of bad tokens cannot fill
//! the logs.

use std::collections::HashMap;
use std::io::Write;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

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

/// Failed authentications a peer may make in a burst before it is throttled.
pub const FAILURE_BURST: f64 = 10.0;
/// Failed authentications a peer regains per second.
pub const FAILURE_REFILL_PER_SEC: f64 = 1.0;
/// Peers whose failures are remembered; past it, forgiven peers are forgotten first.
const MAX_THROTTLED_PEERS: usize = 4_096;
/// Lines logged about refused admin calls per minute, at most.
pub const LOG_LINES_PER_MINUTE: u32 = 10;
const LOG_WINDOW: Duration = Duration::from_secs(60);

/// One peer's failure bucket.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    /// Failures it may still make (refilled over time, at most [`FAILURE_BURST`]).
    allowance: f64,
    updated: Instant,
}

impl Bucket {
    fn refilled(self, now: Instant) -> Bucket {
        let regained =
            now.saturating_duration_since(self.updated).as_secs_f64() * FAILURE_REFILL_PER_SEC;
        Bucket {
            allowance: (self.allowance + regained).min(FAILURE_BURST),
            updated: now,
        }
    }
}

/// The log lines of the current minute.
#[derive(Debug)]
struct LogWindow {
    started: Instant,
    lines: u32,
    /// Lines not logged since the last one that was.
    suppressed: u64,
}

/// Throttles failed authentication per peer, and the logging of refusals (see the module docs).
#[derive(Debug)]
pub struct AuthThrottle {
    peers: Mutex<HashMap<IpAddr, Bucket>>,
    log: Mutex<LogWindow>,
}

impl Default for AuthThrottle {
    fn default() -> Self {
        AuthThrottle::new(Instant::now())
    }
}

impl AuthThrottle {
    fn new(now: Instant) -> Self {
        AuthThrottle {
            peers: Mutex::new(HashMap::new()),
            log: Mutex::new(LogWindow {
                started: now,
                lines: 0,
                suppressed: 0,
            }),
        }
    }

    /// `Err(wait)` when `peer` used up its failures: refuse it without looking at its token.
    pub fn check(&self, peer: Option<IpAddr>, now: Instant) -> Result<(), Duration> {
        let Some(peer) = peer else { return Ok(()) };
        let peers = self.peers.lock();
        match peers.get(&peer).map(|bucket| bucket.refilled(now)) {
            Some(bucket) if bucket.allowance < 1.0 => Err(Duration::from_secs_f64(
                (1.0 - bucket.allowance) / FAILURE_REFILL_PER_SEC,
            )),
            _ => Ok(()),
        }
    }

    /// Counts one failed authentication of `peer`.
    pub fn failed(&self, peer: Option<IpAddr>, now: Instant) {
        let Some(peer) = peer else { return };
        let mut peers = self.peers.lock();
        if peers.len() >= MAX_THROTTLED_PEERS && !peers.contains_key(&peer) {
            // Forget the peers that are forgiven anyway; if all are still throttled, forget
            // them all rather than grow (a flood from that many addresses is not a guessing
            // attack the bucket could stop).
            peers.retain(|_, bucket| bucket.refilled(now).allowance < FAILURE_BURST);
            if peers.len() >= MAX_THROTTLED_PEERS {
                peers.clear();
            }
        }
        let bucket = peers.entry(peer).or_insert(Bucket {
            allowance: FAILURE_BURST,
            updated: now,
        });
        let mut refilled = bucket.refilled(now);
        refilled.allowance = (refilled.allowance - 1.0).max(0.0);
        *bucket = refilled;
    }

    /// Whether a refusal may be logged now; `Some(n)`: yes, and `n` refusals were not logged
    /// since the last line.
    pub fn may_log(&self, now: Instant) -> Option<u64> {
        let mut log = self.log.lock();
        if now.saturating_duration_since(log.started) >= LOG_WINDOW {
            log.started = now;
            log.lines = 0;
        }
        if log.lines >= LOG_LINES_PER_MINUTE {
            log.suppressed += 1;
            return None;
        }
        log.lines += 1;
        Some(std::mem::take(&mut log.suppressed))
    }
}

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
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, crate::store::PRIVATE_FILE_MODE);
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
        #[cfg(unix)]
        for name in ["admin-read.token", "admin-write.token"] {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(name))
                .expect("token file")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{name} is private");
        }
    }

    #[test]
    fn a_peer_is_throttled_after_a_burst_of_failures_and_forgiven_over_time() {
        let start = Instant::now();
        let throttle = AuthThrottle::new(start);
        let peer: Option<IpAddr> = "192.0.2.7".parse().ok();
        let other: Option<IpAddr> = "192.0.2.8".parse().ok();
        for _ in 0..10 {
            assert!(throttle.check(peer, start).is_ok());
            throttle.failed(peer, start);
        }
        let wait = throttle.check(peer, start).expect_err("throttled");
        assert!(
            wait > Duration::from_millis(900) && wait <= Duration::from_secs(1),
            "{wait:?}"
        );
        assert!(
            throttle.check(other, start).is_ok(),
            "other peers are not affected"
        );
        assert!(throttle.check(None, start).is_ok());
        let later = start + Duration::from_millis(1_100);
        assert!(throttle.check(peer, later).is_ok(), "one failure regained");
        throttle.failed(peer, later);
        assert!(throttle.check(peer, later).is_err());
        assert!(throttle
            .check(peer, later + Duration::from_secs(20))
            .is_ok());
    }

    #[test]
    fn refusals_are_logged_at_most_ten_times_a_minute() {
        let start = Instant::now();
        let throttle = AuthThrottle::new(start);
        let logged = (0..1_000)
            .filter(|_| throttle.may_log(start).is_some())
            .count();
        assert_eq!(logged, LOG_LINES_PER_MINUTE as usize);
        let next_minute = start + Duration::from_secs(61);
        assert_eq!(
            throttle.may_log(next_minute),
            Some(990),
            "the next line says how many were not"
        );
        assert_eq!(throttle.may_log(next_minute), Some(0));
    }

    #[test]
    fn short_tokens_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t");
        std::fs::write(&path, "short\n").expect("write");
        assert!(Tokens::load(Some(&path), None, dir.path()).is_err());
    }
}
