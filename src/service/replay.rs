//! Answers kept for retries: a client that retries a recording Canonicalize batch under the same
//! `request_id` gets the answer the first attempt got, instead of DUPLICATE for URLs the first
//! attempt recorded but whose answer never reached it (a timeout, a cut connection, UNAVAILABLE
//! while waiting for the commit). Without it, a client that retries everything would drop URLs.
//! What is kept is the answer with the seen-log drain it waits for, so a retry of an answer whose
//! commit had not come yet waits for that commit too.
//!
//! Concurrent attempts of one id are answered once: the second waits for the first. Answers are
//! kept within a byte budget, oldest first out; an id whose answer was evicted is answered afresh
//! (its URLs are then DUPLICATE), so the budget should hold the answers of the client's retry
//! window (the default holds about a minute of 20,000 URLs/s).

use std::collections::VecDeque;
use std::sync::Arc;

use dashmap::DashMap;
use parking_lot::Mutex;
use tonic::Status;

// The request as the server decodes it: strings as bytes, so one URL that is not UTF-8 is answered
// INVALID on its own (see `crate::pb::lenient`).
use crate::pb::lenient::CanonicalizeRequest;
use crate::pb::CanonicalizeResponse;

/// Longest `request_id` accepted, in bytes.
pub const MAX_REQUEST_ID_BYTES: usize = 128;

/// One id's slot: empty while its first attempt runs, then the answer.
type Slot = Arc<tokio::sync::Mutex<Option<Kept>>>;

#[derive(Clone)]
struct Kept {
    /// Hash of the batch's URLs and dry-run flag: a reused id with another batch is refused.
    batch: u64,
    response: Arc<CanonicalizeResponse>,
    /// The drain that makes what the answer recorded durable.
    recorded_in: Option<u64>,
}

/// An answer and the seen-log drain it waits for (see [`crate::service::durable`]).
pub type Answer = (CanonicalizeResponse, Option<u64>);

/// Kept ids, oldest first, with the bytes each answer holds; and the bytes in all.
type KeptOrder = (VecDeque<(Vec<u8>, usize)>, usize);

/// The kept answers.
pub struct ReplayCache {
    budget: usize,
    slots: DashMap<Vec<u8>, Slot>,
    /// Ids in the order their answers were kept, with the bytes each holds.
    order: Mutex<KeptOrder>,
}

impl ReplayCache {
    /// A cache holding at most `budget` bytes of answers (0: no replay).
    pub fn new(budget: usize) -> Self {
        ReplayCache {
            budget,
            slots: DashMap::new(),
            order: Mutex::new((VecDeque::new(), 0)),
        }
    }

    /// Answers `request` through `answer`, or with the answer kept for its id. Requests without an
    /// id, and dry runs (they record nothing, so a retry is answered alike), skip the cache.
    pub async fn answer<F, Fut>(
        &self,
        request: CanonicalizeRequest,
        answer: F,
    ) -> Result<Answer, Status>
    where
        F: FnOnce(CanonicalizeRequest) -> Fut,
        Fut: std::future::Future<Output = Result<Answer, Status>>,
    {
        if request.request_id.is_empty() || request.dry_run || self.budget == 0 {
            return answer(request).await;
        }
        if request.request_id.len() > MAX_REQUEST_ID_BYTES {
            return Err(Status::invalid_argument(format!(
                "request_id of {} bytes exceeds {MAX_REQUEST_ID_BYTES} bytes",
                request.request_id.len()
            )));
        }
        let batch = batch_hash(&request);
        let sequence = request.sequence;
        let slot = Arc::clone(
            self.slots
                .entry(request.request_id.clone())
                .or_default()
                .value(),
        );
        // A failed or cancelled attempt leaves no empty slot behind (the map stays bounded by the
        // kept answers and the attempts running now). Declared before the lock so that it drops
        // after it.
        let mut pending = Pending {
            cache: self,
            id: Some(request.request_id.clone()),
        };
        // Held across the answer: a concurrent attempt of the same id waits for this one.
        let mut kept = slot.lock().await;
        if let Some(kept) = kept.as_ref() {
            if kept.batch != batch {
                return Err(Status::failed_precondition(format!(
                    "request_id {:?} was used for a different batch; give every batch its own id",
                    String::from_utf8_lossy(&request.request_id)
                )));
            }
            metrics::counter!(crate::telemetry::CANONICALIZE_REPLAYED).increment(1);
            let mut response = CanonicalizeResponse::clone(&kept.response);
            response.sequence = sequence;
            return Ok((response, kept.recorded_in));
        }
        let id = request.request_id.clone();
        let (response, recorded_in) = answer(request).await?;
        let bytes = held_bytes(&response) + id.len();
        *kept = Some(Kept {
            batch,
            response: Arc::new(response.clone()),
            recorded_in,
        });
        drop(kept);
        pending.id = None;
        self.keep(id, bytes);
        Ok((response, recorded_in))
    }

    /// Accounts a kept answer and evicts the oldest beyond the budget.
    fn keep(&self, id: Vec<u8>, bytes: usize) {
        let mut order = self.order.lock();
        let (queue, total) = &mut *order;
        queue.push_back((id, bytes));
        *total += bytes;
        while *total > self.budget {
            let Some((old, old_bytes)) = queue.pop_front() else {
                break;
            };
            *total -= old_bytes;
            self.slots.remove(&old);
        }
    }

    /// Answers kept now.
    pub fn len(&self) -> usize {
        self.order.lock().0.len()
    }

    /// True when no answer is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Removes its id's slot on drop unless the attempt kept an answer in it.
struct Pending<'a> {
    cache: &'a ReplayCache,
    id: Option<Vec<u8>>,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.cache.slots.remove_if(&id, |_, slot| {
                slot.try_lock().is_ok_and(|kept| kept.is_none())
            });
        }
    }
}

fn batch_hash(request: &CanonicalizeRequest) -> u64 {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    hasher.update(&[u8::from(request.dry_run)]);
    for url in &request.urls {
        hasher.update(&(url.len() as u64).to_le_bytes());
        hasher.update(url);
    }
    hasher.digest()
}

/// Bytes an answer holds (its strings and result structs).
fn held_bytes(response: &CanonicalizeResponse) -> usize {
    response
        .results
        .iter()
        .map(|r| {
            std::mem::size_of_val(r)
                + r.canonical.capacity()
                + r.enqueue_url.capacity()
                + r.rule_id.capacity()
                + r.invalid_reason.capacity()
        })
        .sum::<usize>()
        + std::mem::size_of::<CanonicalizeResponse>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pb::CanonicalizeResult;

    fn request(id: &str, urls: &[&str]) -> CanonicalizeRequest {
        CanonicalizeRequest {
            urls: urls.iter().map(|u| u.as_bytes().to_vec()).collect(),
            request_id: id.as_bytes().to_vec(),
            ..CanonicalizeRequest::default()
        }
    }

    fn answer_with(n: u32) -> Answer {
        let response = CanonicalizeResponse {
            results: vec![CanonicalizeResult {
                rules_version: u64::from(n),
                ..CanonicalizeResult::default()
            }],
            sequence: 0,
        };
        (response, Some(u64::from(n)))
    }

    #[tokio::test]
    async fn a_retry_gets_the_first_answer_and_a_reused_id_is_refused() {
        let cache = ReplayCache::new(1 << 20);
        let first = cache
            .answer(request("a", &["http://x/1"]), |_| async {
                Ok(answer_with(1))
            })
            .await
            .expect("answer");
        let again = cache
            .answer(request("a", &["http://x/1"]), |_| async {
                Ok(answer_with(2))
            })
            .await
            .expect("replayed");
        assert_eq!(first, again, "the same results, waiting for the same drain");
        let other = cache
            .answer(request("a", &["http://x/2"]), |_| async {
                Ok(answer_with(3))
            })
            .await
            .expect_err("another batch under the id");
        assert_eq!(other.code(), tonic::Code::FailedPrecondition);
    }

    #[tokio::test]
    async fn a_failed_attempt_keeps_nothing_and_the_budget_evicts_oldest_first() {
        let cache = ReplayCache::new(400);
        let failed = cache
            .answer(request("a", &["u"]), |_| async {
                Err(Status::unavailable("down"))
            })
            .await;
        assert!(failed.is_err());
        assert!(cache.slots.is_empty(), "a failed attempt leaves no slot");
        let fresh = cache
            .answer(request("a", &["u"]), |_| async { Ok(answer_with(7)) })
            .await
            .expect("answered afresh");
        assert_eq!(fresh.0.results[0].rules_version, 7);
        for id in ["b", "c", "d", "e"] {
            cache
                .answer(request(id, &["u"]), |_| async { Ok(answer_with(1)) })
                .await
                .expect("answer");
        }
        assert!(cache.len() < 5, "{} kept within 400 bytes", cache.len());
        let evicted = cache
            .answer(request("a", &["u"]), |_| async { Ok(answer_with(9)) })
            .await
            .expect("answer");
        assert_eq!(
            evicted.0.results[0].rules_version, 9,
            "the oldest went first"
        );
    }
}
