//! Ordered parallel map for the offline commands: a sequential source, a per-item step run on all
//! cores, and a sequential consumer that sees the results in input order.
//!
//! The offline reader (`undust clusters`, `learn`, `eval`) and `undust canonicalize` have the same
//! shape: reading the input is sequential (a file, stdin), the per-item work is pure and CPU-bound
//! (analysing a page, canonicalizing a URL), and what follows must see the items in input order
//! (the template model and the reservoir sampler are order-dependent and must stay deterministic;
//! canonicalize prints one line per input line). So the work runs as three stages joined by
//! bounded channels, in scoped threads:
//!
//! 1. a reader thread pulls items from the source and cuts them into batches (at most
//!    `batch_items` items and about `batch_bytes` bytes, so a run of large pages cannot hold much);
//! 2. a worker thread maps each batch with rayon on every core, keeping the batch's order;
//! 3. the calling thread consumes the mapped batches in order.
//!
//! Batches keep the per-item cost of the hand-off low (one channel message per batch, not per
//! item), and the stages overlap: the next batch is read and mapped while this one is consumed.
//! At most [`BATCHES_IN_FLIGHT`] batches wait between stages, so memory is bounded by a few
//! batches whatever the input's size.
//!
//! rayon does the mapping because its work stealing balances batches of very uneven items (a
//! 2 KB page beside a 2 MB one) across cores, which fixed chunks per thread do not.

use std::ops::ControlFlow;
use std::sync::mpsc::sync_channel;

use rayon::prelude::*;

/// Batches waiting in each channel between two stages.
pub const BATCHES_IN_FLIGHT: usize = 2;

/// How the source is cut into batches.
#[derive(Debug, Clone, Copy)]
pub struct Batching {
    /// Most items in one batch.
    pub batch_items: usize,
    /// A batch ends once its items weigh at least this many bytes.
    pub batch_bytes: usize,
}

/// Opens the source with `open` (on the reader thread: the source need not be `Send`), maps every
/// item with `map` on all cores and hands the results to `consume` in the source's order, until
/// the source ends or `consume` breaks (the stages then stop at their next hand-off). Returns
/// `open`'s error if it fails; a panic in any stage is resumed on the caller's thread.
pub fn map_in_order<S, T, U, E>(
    open: impl FnOnce() -> Result<S, E> + Send,
    weight: impl Fn(&T) -> usize + Send,
    map: impl Fn(T) -> U + Sync + Send,
    mut consume: impl FnMut(U) -> ControlFlow<()>,
    batching: Batching,
) -> Result<(), E>
where
    S: IntoIterator<Item = T>,
    T: Send,
    U: Send,
    E: Send,
{
    let batch_items = batching.batch_items.max(1);
    std::thread::scope(|scope| {
        let (read_tx, read_rx) = sync_channel::<Vec<T>>(BATCHES_IN_FLIGHT);
        let (mapped_tx, mapped_rx) = sync_channel::<Vec<U>>(BATCHES_IN_FLIGHT);
        let reader = scope.spawn(move || -> Result<(), E> {
            let mut items = open()?.into_iter();
            loop {
                let mut batch = Vec::with_capacity(batch_items);
                let mut bytes = 0usize;
                for item in items.by_ref() {
                    bytes = bytes.saturating_add(weight(&item));
                    batch.push(item);
                    if batch.len() >= batch_items || bytes >= batching.batch_bytes {
                        break;
                    }
                }
                // An empty batch is the end; a closed channel means the consumer stopped.
                if batch.is_empty() || read_tx.send(batch).is_err() {
                    return Ok(());
                }
            }
        });
        let map = &map;
        let mapper = scope.spawn(move || {
            for batch in read_rx {
                let mapped: Vec<U> = batch.into_par_iter().map(map).collect();
                if mapped_tx.send(mapped).is_err() {
                    return;
                }
            }
        });
        'consume: for batch in mapped_rx {
            for mapped in batch {
                if consume(mapped).is_break() {
                    // Dropping the receiver stops the mapper at its next send, and so the reader.
                    break 'consume;
                }
            }
        }
        if let Err(panic) = mapper.join() {
            std::panic::resume_unwind(panic);
        }
        match reader.join() {
            Ok(result) => result,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_arrive_in_input_order_across_batches() {
        let mut seen = Vec::new();
        let result: Result<(), ()> = map_in_order(
            || Ok(0..10_000u64),
            |_| 1,
            |x| x * 3,
            |y| {
                seen.push(y);
                ControlFlow::Continue(())
            },
            Batching {
                batch_items: 7,
                batch_bytes: usize::MAX,
            },
        );
        assert_eq!(result, Ok(()));
        assert_eq!(seen, (0..10_000u64).map(|x| x * 3).collect::<Vec<_>>());
    }

    #[test]
    fn heavy_items_end_a_batch_early_and_open_errors_are_returned() {
        let mut batches_seen = 0;
        let result: Result<(), String> = map_in_order(
            || Ok(vec![vec![0u8; 100]; 10]),
            Vec::len,
            |v| v.len(),
            |len| {
                assert_eq!(len, 100);
                batches_seen += 1;
                ControlFlow::Continue(())
            },
            Batching {
                batch_items: 1000,
                batch_bytes: 250,
            },
        );
        assert_eq!(result, Ok(()));
        assert_eq!(batches_seen, 10);
        let failed: Result<(), String> = map_in_order(
            || Err::<Vec<u8>, _>("cannot open".to_owned()),
            |_| 1,
            |x| x,
            |_| panic!("nothing to consume"),
            Batching {
                batch_items: 4,
                batch_bytes: 4,
            },
        );
        assert_eq!(failed, Err("cannot open".to_owned()));
    }

    #[test]
    fn a_consumer_that_breaks_stops_an_endless_source() {
        let mut taken = Vec::new();
        let result: Result<(), ()> = map_in_order(
            || Ok(0u64..),
            |_| 1,
            |x| x + 1,
            |y| {
                taken.push(y);
                if taken.len() == 1000 {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            },
            Batching {
                batch_items: 64,
                batch_bytes: usize::MAX,
            },
        );
        assert_eq!(result, Ok(()));
        assert_eq!(taken, (1..=1000u64).collect::<Vec<_>>());
    }
}
