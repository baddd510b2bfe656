//! What held data really costs on the heap, for the memory budgets that must account it.
//!
//! A budget that counts only the bytes a structure asked for understates what the process holds:
//! the allocator rounds every block up and keeps a header beside it, and a hash table holds empty
//! buckets and a control byte per bucket. These helpers turn a requested size or a table's
//! capacity into the bytes a block of the system allocator (glibc malloc on Linux: 8 bytes of
//! header, 16-byte granularity, 32 bytes at least) and a `std` hash table (power-of-two buckets
//! at most 7/8 full, one control byte per bucket plus a group of trailing ones) really take.
//! `crates/undust-core/tests/held_bytes.rs` checks the figures against dhat's heap counts.
//! The `undust` binary itself runs on jemalloc (`src/main.rs`), whose small blocks carry no
//! header and whose larger size classes are up to a quarter apart: there these figures are
//! estimates of the same order, not exact counts (BENCHMARKS.md gives measured RSS per host and
//! per sample).

/// Bytes the allocator takes for a block of `requested` bytes (0 for no block).
pub fn alloc_bytes(requested: usize) -> usize {
    if requested == 0 {
        return 0;
    }
    (requested.saturating_add(8 + 15) & !15).max(32)
}

/// Bytes of a `Vec<T>` buffer of `capacity` elements of `element` bytes.
pub fn vec_bytes(capacity: usize, element: usize) -> usize {
    alloc_bytes(capacity.saturating_mul(element))
}

/// Bytes of a `std` hash table's buffer that can hold `capacity` entries of `entry` bytes
/// (`HashMap::capacity`), control bytes included.
pub fn hash_table_bytes(capacity: usize, entry: usize) -> usize {
    if capacity == 0 {
        return 0;
    }
    let buckets = if capacity < 8 {
        (capacity + 1).next_power_of_two()
    } else {
        (capacity.saturating_mul(8) / 7).next_power_of_two()
    };
    // One control byte per bucket and a trailing group of 16.
    alloc_bytes(buckets.saturating_mul(entry + 1).saturating_add(16))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_round_up_and_tables_keep_spare_buckets() {
        assert_eq!(alloc_bytes(0), 0);
        assert_eq!(alloc_bytes(1), 32);
        assert_eq!(alloc_bytes(24), 32);
        assert_eq!(alloc_bytes(25), 48);
        assert_eq!(vec_bytes(64, 2), 144);
        let map: std::collections::HashMap<u64, u64> = (0..100).map(|i| (i, i)).collect();
        // 100 entries need 128 buckets (at most 7/8 full): 128 × 17 + 16 bytes, rounded up.
        assert_eq!(
            hash_table_bytes(map.capacity(), 16),
            alloc_bytes(128 * 17 + 16)
        );
    }
}
