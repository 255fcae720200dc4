//! shrike-detect
