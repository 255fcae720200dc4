//! shrike-output
