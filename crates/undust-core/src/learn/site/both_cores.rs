//! Two independent parts of the site-rule search on two threads, on large hosts.
//!
//! A round's candidate searches and page indexes read the same outputs and write nothing
//! shared, so one half can run beside the other; the results are put together in the order the
//! sequential code wrote them, so the candidates, their order and hence the rules learned do
//! not depend on the threads. Small hosts learn in milliseconds, where starting a thread would
//! cost more than it saves: they run sequentially ([`PARALLEL_MIN_SAMPLES`]).

/// Fewest samples for which a host's site-rule search uses a second thread.
pub(super) const PARALLEL_MIN_SAMPLES: usize = 20_000;

/// `(a(), b())`, with `b` on a scoped thread when `parallel`. A panic in `b` is resumed on the
/// caller's thread, as if `b` had run there.
pub(super) fn join<A, B>(
    parallel: bool,
    a: impl FnOnce() -> A,
    b: impl FnOnce() -> B + Send,
) -> (A, B)
where
    B: Send,
{
    if !parallel {
        let ra = a();
        return (ra, b());
    }
    std::thread::scope(|scope| {
        let handle = scope.spawn(b);
        let ra = a();
        match handle.join() {
            Ok(rb) => (ra, rb),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}
