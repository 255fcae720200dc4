//! shrike-detect

pub mod rules;
