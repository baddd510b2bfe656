//! The well-known tracking and session parameter lists static normalization uses, and the test
//! that decides whether an ambiguous parameter's value is a session token.
//!
//! The lists were compiled from what analytics, ad and e-mail platforms append to links (Google
//! Analytics/Ads, Meta, Microsoft Ads, Yandex, HubSpot, Mailchimp, Matomo/Piwik, Marketo, ...)
//! and from the session mechanisms of common server stacks (Java servlets, PHP, classic ASP,
//! ColdFusion, BroadVision, osCommerce/Zen Cart). Names are matched ASCII-case-insensitively on
//! the parameter name only; host-specific junk parameters are the learner's job, not this list's.

/// Exact names of tracking parameters removed by default (lowercase).
///
/// Every entry only ever carries attribution data: removing it never changes the page served.
/// Deliberately absent: generic names such as `ref`, `source`, `cid`, `spm`, `mc` that are
/// tracking on some sites and content selectors on others (the learner decides those per host).
pub const TRACKING_PARAMS: &[&str] = &[
    // Google Ads / Analytics / Merchant Center / Search.
    "gclid",
    "gclsrc",
    "dclid",
    "gbraid",
    "wbraid",
    "gad_source",
    "gad_campaignid",
    "_ga",
    "_gl",
    "srsltid",
    "gs_l",
    // Meta (Facebook, Instagram).
    "fbclid",
    "fb_action_ids",
    "fb_action_types",
    "fb_source",
    "fb_ref",
    "action_object_map",
    "action_type_map",
    "action_ref_map",
    "igshid",
    "igsh",
    // Microsoft, Yandex, X/Twitter, TikTok, LinkedIn, Pinterest-style click ids.
    "msclkid",
    "yclid",
    "ysclid",
    "_openstat",
    "twclid",
    "__twitter_impression",
    "ttclid",
    "li_fat_id",
    "epik",
    // E-mail and marketing automation (Mailchimp, HubSpot, Marketo, MailerLite, Vero, Olytics).
    "mc_eid",
    "mc_cid",
    "mc_tc",
    "_hsenc",
    "_hsmi",
    "__hssc",
    "__hstc",
    "__hsfp",
    "hsctatracking",
    "mkt_tok",
    "ml_subscriber",
    "ml_subscriber_hash",
    "vero_conv",
    "vero_id",
    "oly_anon_id",
    "oly_enc_id",
    "_kx",
    // Adobe Analytics / Webtrekk / misc. affiliate and click ids.
    "s_cid",
    "s_kwcid",
    "ef_id",
    "wt_mc",
    "wt_zmc",
    "wtrid",
    "rb_clickid",
    "wickedid",
    "irclickid",
    "zanpid",
    "clickid",
    "cmpid",
    "os_ehash",
    "tracking_source",
    "ceneo_spo",
    "_branch_match_id",
    "_bta_tid",
    "_bta_c",
    // Publisher and e-mail tools: Echobox social posts, Drip e-mail.
    "echobox",
    "__s",
    // Piwik/Matomo campaign names that are not covered by a prefix below.
    "pk_campaign",
    "pk_cpn",
    "pk_kwd",
    "pk_keyword",
    "pk_source",
    "pk_medium",
    "pk_content",
    "pk_cid",
    "itm_source",
    "itm_medium",
    "itm_campaign",
    "hmb_campaign",
    "hmb_medium",
    "hmb_source",
    "utm",
];

/// Name prefixes of tracking parameter families removed by default (lowercase).
///
/// Only prefixes whose every member is attribution data: `utm_` (Urchin/Google Analytics),
/// `mtm_`/`matomo_`/`piwik_` (Matomo), `ga_` (Google Analytics campaign aliases), `hsa_`
/// (HubSpot ads), `otm_`, `stm_` (e-mail campaign tags).
pub const TRACKING_PREFIXES: &[&str] = &[
    "utm_", "mtm_", "matomo_", "piwik_", "ga_", "hsa_", "otm_", "stm_",
];

/// Session parameter names removed whatever their value (lowercase).
///
/// These names are only ever used by server frameworks for session state: Java servlets
/// (`jsessionid`), PHP (`phpsessid`), ColdFusion (`cfid`, `cftoken`), BroadVision
/// (`bv_sessionid`, `bv_engineid`), osCommerce (`oscsid`), Zen Cart (`zenid`).
pub const SESSION_PARAMS: &[&str] = &[
    "jsessionid",
    "phpsessid",
    "cfid",
    "cftoken",
    "bv_sessionid",
    "bv_engineid",
    "oscsid",
    "zenid",
];

/// Session parameter name prefixes removed whatever their value (lowercase): classic ASP's
/// `ASPSESSIONIDxxxxxxxx` cookie name carries a random suffix.
pub const SESSION_PREFIXES: &[&str] = &["aspsessionid"];

/// Parameter names that are session ids only when the value looks like a random token
/// (lowercase), see [`looks_like_session_token`]. `sid=3` or `session=2024-spring` stay.
pub const SESSION_PARAMS_IF_TOKEN: &[&str] = &[
    "sid",
    "_sid",
    "sessid",
    "sess",
    "session",
    "sessionid",
    "session_id",
    "session-id",
    "_sessionid",
    "sessionkey",
    "sesskey",
    "s_id",
];

/// Minimum length of a value judged to be a session token. Session ids are 16 or more random
/// characters on every mainstream stack (PHP 26-32, Java 32, ASP.NET 24, UUIDs 36); 12 leaves
/// margin for short custom ids while keeping short words and small numbers out.
pub const SESSION_TOKEN_MIN_LEN: usize = 12;

/// Maximum length of a value judged to be a session token; longer values are payloads
/// (serialized state, redirect targets), not ids.
pub const SESSION_TOKEN_MAX_LEN: usize = 256;

/// Whether `value` looks like a random session token rather than a meaningful value.
///
/// True for [`SESSION_TOKEN_MIN_LEN`]..=[`SESSION_TOKEN_MAX_LEN`] characters drawn from the
/// hex / base64 / base64url / UUID alphabets (plus `.`, `%` escapes) that mix letters with digits.
/// A value of digits only is an ordinary numeric id (Nutch: "NewsID is NOT a session id"); a
/// value of letters only is a word.
pub fn looks_like_session_token(value: &str) -> bool {
    let bytes = value.as_bytes();
    if bytes.len() < SESSION_TOKEN_MIN_LEN || bytes.len() > SESSION_TOKEN_MAX_LEN {
        return false;
    }
    let mut digits = false;
    let mut letters = false;
    for &b in bytes {
        match b {
            b'0'..=b'9' => digits = true,
            b'a'..=b'z' | b'A'..=b'Z' => letters = true,
            b'-' | b'_' | b'+' | b'/' | b'=' | b'.' | b'%' | b'$' | b'!' | b'*' => {}
            _ => return false,
        }
    }
    digits && letters
}

/// Whether a path segment is an ASP.NET cookieless-state segment: `(S(token))`, `(A(token))`,
/// `(F(token))`, several of them in one pair of parentheses (`(A(x)S(y)F(z))`), or the
/// ASP.NET 1.x form `(24 chars of a-z0-5)`. Such segments are inserted by the server to carry
/// the session; the page is the same without them.
pub fn is_aspnet_cookieless_segment(segment: &str) -> bool {
    let Some(inner) = segment
        .strip_prefix('(')
        .and_then(|rest| rest.strip_suffix(')'))
    else {
        return false;
    };
    let bytes = inner.as_bytes();
    if bytes.len() == 24 && bytes.iter().all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'5')) {
        return true;
    }
    // One or more `L(token)` groups, L one of the ASP.NET markers S, A, F (any case).
    let mut rest = bytes;
    let mut groups = 0;
    while !rest.is_empty() {
        if rest.len() < 4 || !matches!(rest[0], b'S' | b's' | b'A' | b'a' | b'F' | b'f') {
            return false;
        }
        if rest[1] != b'(' {
            return false;
        }
        let Some(close) = rest[2..].iter().position(|&b| b == b')') else {
            return false;
        };
        let token = &rest[2..2 + close];
        if token.is_empty()
            || !token
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
        {
            return false;
        }
        rest = &rest[2 + close + 1..];
        groups += 1;
    }
    groups > 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_lowercase_and_unique() {
        let mut all: Vec<&str> = TRACKING_PARAMS
            .iter()
            .chain(SESSION_PARAMS)
            .chain(SESSION_PARAMS_IF_TOKEN)
            .copied()
            .collect();
        for name in &all {
            assert_eq!(*name, name.to_ascii_lowercase(), "{name} must be lowercase");
            assert!(!name.is_empty());
        }
        let len = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), len, "a name is listed twice");
    }

    #[test]
    fn session_tokens() {
        assert!(looks_like_session_token("9682993c8daa2c5497996114facdc805"));
        assert!(looks_like_session_token(
            "123e4567-e89b-12d3-a456-426614174000"
        ));
        assert!(looks_like_session_token("824A6C0A13a7e11205wxN28F44E3"));
        assert!(!looks_like_session_token("3"));
        assert!(!looks_like_session_token("1567539123456789"));
        assert!(!looks_like_session_token("qmyrcedtqmyrcedt"));
        assert!(!looks_like_session_token("summer 2024 sale"));
    }

    #[test]
    fn aspnet_segments() {
        assert!(is_aspnet_cookieless_segment(
            "(S(4hqa0555fwsecu455xqckv45))"
        ));
        assert!(is_aspnet_cookieless_segment("(4hqa0555fwsecu455xqckv45)"));
        assert!(is_aspnet_cookieless_segment(
            "(a(4hqa0555fwsecu455xqckv45)S(4hqa0555fwsecu455xqckv45)f(x-y_z))"
        ));
        assert!(!is_aspnet_cookieless_segment("(disambiguation)"));
        assert!(!is_aspnet_cookieless_segment("Foo_(band)"));
        assert!(!is_aspnet_cookieless_segment("(S())"));
        assert!(!is_aspnet_cookieless_segment("()"));
    }
}
