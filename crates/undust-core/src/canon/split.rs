//! Splitting URL parts at one ASCII byte (`&`, `=`, `/`, `;`, `.`), for the hot path.
//!
//! The parts split per URL are short (a parameter, a segment, a host label: mostly under 32
//! bytes), where `str::split` with a `char` pattern pays for its general searcher and `memchr`'s
//! set-up more than for the bytes it looks at (the stop 22 profile put `str::split` and `memchr`
//! at about a tenth of `Canonicalizer::canonicalize`). A plain byte loop is cheaper there and
//! gives exactly what `str::split(sep)` and `str::split_once(sep)` give.

/// The pieces of `s` between the occurrences of `sep`, as `s.split(char::from(sep))` gives
/// them (an empty `s` gives one empty piece). `sep` must be ASCII, so every cut falls on a
/// character boundary.
pub fn split_byte(s: &str, sep: u8) -> SplitByte<'_> {
    debug_assert!(sep.is_ascii());
    SplitByte { rest: Some(s), sep }
}

/// `s.split_once(char::from(sep))` for an ASCII `sep`.
#[inline]
pub fn split_once_byte(s: &str, sep: u8) -> Option<(&str, &str)> {
    debug_assert!(sep.is_ascii());
    let at = s.bytes().position(|b| b == sep)?;
    Some((&s[..at], &s[at + 1..]))
}

/// Iterator of [`split_byte`].
#[derive(Clone, Debug)]
pub struct SplitByte<'a> {
    /// What is left to split; `None` once the last piece was given.
    rest: Option<&'a str>,
    sep: u8,
}

impl<'a> Iterator for SplitByte<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        let rest = self.rest?;
        match rest.bytes().position(|b| b == self.sep) {
            Some(at) => {
                self.rest = Some(&rest[at + 1..]);
                Some(&rest[..at])
            }
            None => {
                self.rest = None;
                Some(rest)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_as_the_standard_library_does() {
        for s in [
            "",
            "&",
            "&&",
            "a",
            "a=1",
            "a=1&b=2",
            "&a=1&",
            "a==b",
            "=x",
            "é&ü=ß&",
            "a&&b",
        ] {
            for sep in [b'&', b'='] {
                let ours: Vec<&str> = split_byte(s, sep).collect();
                let std: Vec<&str> = s.split(char::from(sep)).collect();
                assert_eq!(ours, std, "{s:?} at {sep}");
                assert_eq!(
                    split_once_byte(s, sep),
                    s.split_once(char::from(sep)),
                    "{s:?}"
                );
            }
        }
    }
}
