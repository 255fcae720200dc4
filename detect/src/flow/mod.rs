//! Flow tracking: keys, the per-worker flow table and its timer wheel.
