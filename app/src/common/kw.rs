//! Integer protocol keywords (`snmp.version`, `dhcp.leasetime`, `ike.exchtype` ...): Suricata's
//! unsigned-integer syntax (`shrike_rules::parse::UintMatch`) against a value the protocol reads
//! from a transaction.

use shrike_rules::parse::UintMatch;

use crate::registry::{AppParser, TxMatch};
use crate::Dir;

/// Reads the keyword's value from transaction `tx` (`None`: the transaction has none, no match).
pub type Getter = fn(&dyn AppParser, u64) -> Option<u64>;

/// An integer comparison on a transaction value.
#[derive(Debug)]
pub struct UintKw {
    m: UintMatch,
    get: Getter,
}

impl UintKw {
    /// Parse `v` for keyword `kw` with values up to `max`.
    pub fn setup(
        v: Option<&str>,
        max: u64,
        kw: &'static str,
        get: Getter,
    ) -> Result<Box<dyn TxMatch>, String> {
        let v = v.ok_or_else(|| format!("{kw} needs a value"))?;
        let m = UintMatch::parse(v, max, kw).map_err(|e| e.detail)?;
        Ok(Box::new(UintKw { m, get }))
    }
}

impl TxMatch for UintKw {
    fn matches(&self, parser: &dyn AppParser, tx: u64, _dir: Dir) -> Option<bool> {
        Some((self.get)(parser, tx).is_some_and(|v| self.m.matches(v)))
    }
}

/// A keyword decided by a predicate on the transaction.
#[derive(Debug)]
pub struct PredKw<T: std::fmt::Debug + Send + Sync> {
    /// The parsed rule value.
    pub arg: T,
    /// Whether transaction `tx` matches `arg`.
    pub pred: fn(&T, &dyn AppParser, u64) -> bool,
}

impl<T: std::fmt::Debug + Send + Sync> TxMatch for PredKw<T> {
    fn matches(&self, parser: &dyn AppParser, tx: u64, _dir: Dir) -> Option<bool> {
        Some((self.pred)(&self.arg, parser, tx))
    }
}
