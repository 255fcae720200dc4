//! Pieces shared by several protocols. A protocol folder may depend on these (and on the
//! registry), never on a sibling protocol folder.

pub mod hex;
pub mod json;
pub mod kw;
#[cfg(test)]
pub mod testing;
pub mod txlist;
