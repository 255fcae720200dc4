//! Address specifications (`$HOME_NET`, `[10.0.0.0/8,!10.1.2.3]`, `any`, IPv6)
//! compiled into an [`IpSet`] of sorted IPv4 and IPv6 ranges.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::error::{ErrorKind, PResult, ParseError};
use super::ranges::RangeSet;
use super::vars::{split_top_level, strip_negations, strip_outer_brackets, Nesting, Vars};

/// A compiled address matcher: sorted, merged IPv4 and IPv6 ranges with every
/// negation already resolved.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct IpSet {
    /// IPv4 addresses as host-order `u32` ranges.
    pub v4: RangeSet<u32>,
    /// IPv6 addresses as `u128` ranges.
    pub v6: RangeSet<u128>,
}

impl IpSet {
    /// Matches every address of both families.
    pub fn any() -> Self {
        IpSet {
            v4: RangeSet::full(),
            v6: RangeSet::full(),
        }
    }

    /// True when every IPv4 and IPv6 address matches.
    pub fn is_any(&self) -> bool {
        self.v4.is_full() && self.v6.is_full()
    }

    /// True when nothing matches.
    pub fn is_empty(&self) -> bool {
        self.v4.is_empty() && self.v6.is_empty()
    }

    /// IPv4 membership (address in host order).
    #[inline]
    pub fn contains_v4(&self, a: u32) -> bool {
        self.v4.contains(a)
    }

    /// IPv6 membership.
    #[inline]
    pub fn contains_v6(&self, a: u128) -> bool {
        self.v6.contains(a)
    }

    /// Membership for either family.
    #[inline]
    pub fn contains(&self, a: IpAddr) -> bool {
        match a {
            IpAddr::V4(v) => self.contains_v4(u32::from(v)),
            IpAddr::V6(v) => self.contains_v6(u128::from(v)),
        }
    }

    fn union(&self, o: &IpSet) -> IpSet {
        IpSet {
            v4: self.v4.union(&o.v4),
            v6: self.v6.union(&o.v6),
        }
    }

    /// Parses and compiles an address specification, resolving `$VARS`.
    pub fn parse(spec: &str, vars: &Vars) -> PResult<IpSet> {
        let set = parse_group(spec.trim(), vars, &mut Nesting::new(ErrorKind::Address))?;
        if set.is_empty() {
            return Err(ParseError::new(
                ErrorKind::Address,
                format!("`{spec}` matches no address (complete IP space negated)"),
            ));
        }
        Ok(set)
    }
}

fn addr_err(spec: &str, why: &str) -> ParseError {
    ParseError::new(ErrorKind::Address, format!("{why}: `{spec}`"))
}

/// A group is an element, a list, or a negated group. A negated group is a
/// one-element list with a negative element. Every `[`, `!` and `$VAR` level
/// counts against [`super::vars::MAX_NESTING`]; a variable that refers back to
/// itself is reported as a loop.
fn parse_group<'v>(s: &str, vars: &'v Vars, nest: &mut Nesting<'v>) -> PResult<IpSet> {
    nest.enter(s)?;
    let r = parse_group_inner(s, vars, nest);
    nest.leave();
    r
}

fn parse_group_inner<'v>(s: &str, vars: &'v Vars, nest: &mut Nesting<'v>) -> PResult<IpSet> {
    if s.is_empty() {
        return Err(addr_err(s, "empty address"));
    }
    if s.starts_with('!') {
        return parse_list(&[s], vars, nest);
    }
    if s.starts_with('[') {
        let inner = strip_outer_brackets(s).ok_or_else(|| addr_err(s, "unbalanced brackets"))?;
        let parts = split_top_level(inner).ok_or_else(|| addr_err(s, "unbalanced brackets"))?;
        return parse_list(&parts, vars, nest);
    }
    if let Some(name) = s.strip_prefix('$') {
        let (key, val) = vars.address_entry(name).ok_or_else(|| {
            ParseError::new(
                ErrorKind::UndefinedVariable,
                format!("address variable `${name}` is not defined"),
            )
        })?;
        nest.push_var(key)?;
        let r = parse_group(val.trim(), vars, nest);
        nest.pop_var();
        return r;
    }
    if s.eq_ignore_ascii_case("any") {
        return Ok(IpSet::any());
    }
    parse_single(s)
}

/// Suricata's merge rule: per address family, the positives are unioned;
/// when a family has negatives but no positives, the positives become that
/// whole family; the result is positives minus negatives.
fn parse_list<'v>(parts: &[&str], vars: &'v Vars, nest: &mut Nesting<'v>) -> PResult<IpSet> {
    let mut pos = IpSet::default();
    let mut neg = IpSet::default();
    // Suricata skips empty list elements (`[1.2.3.4,]` loads) but not an empty list.
    if parts.iter().all(|p| p.trim().is_empty()) {
        return Err(addr_err(&parts.join(","), "empty address list"));
    }
    for p in parts.iter().filter(|p| !p.trim().is_empty()) {
        let p = p.trim();
        let (negated, p) = strip_negations(p);
        if negated {
            let n = parse_group(p, vars, nest)?;
            neg = neg.union(&n);
        } else {
            let g = parse_group(p, vars, nest)?;
            pos = pos.union(&g);
        }
    }
    if neg.v4.is_full() && neg.v6.is_full() {
        return Err(addr_err(&parts.join(","), "complete IP space negated"));
    }
    if pos.v4.is_empty() && !neg.v4.is_empty() {
        pos.v4 = RangeSet::full();
    }
    if pos.v6.is_empty() && !neg.v6.is_empty() {
        pos.v6 = RangeSet::full();
    }
    Ok(IpSet {
        v4: pos.v4.subtract(&neg.v4),
        v6: pos.v6.subtract(&neg.v6),
    })
}

fn parse_single(s: &str) -> PResult<IpSet> {
    // Range form a-b.
    if let Some((a, b)) = s.split_once('-') {
        let (a, b) = (a.trim(), b.trim());
        return match (a.parse::<IpAddr>(), b.parse::<IpAddr>()) {
            (Ok(IpAddr::V4(a)), Ok(IpAddr::V4(b))) if u32::from(a) <= u32::from(b) => Ok(IpSet {
                v4: RangeSet::from_ranges(vec![(u32::from(a), u32::from(b))]),
                v6: RangeSet::empty(),
            }),
            (Ok(IpAddr::V6(a)), Ok(IpAddr::V6(b))) if u128::from(a) <= u128::from(b) => Ok(IpSet {
                v4: RangeSet::empty(),
                v6: RangeSet::from_ranges(vec![(u128::from(a), u128::from(b))]),
            }),
            _ => Err(addr_err(s, "bad address range")),
        };
    }
    let (ip, mask) = match s.split_once('/') {
        Some((ip, m)) => (ip.trim(), Some(m.trim())),
        None => (s, None),
    };
    if let Ok(v4) = ip.parse::<Ipv4Addr>() {
        let bits = match mask {
            None => 32,
            Some(m) => match m.parse::<u32>() {
                Ok(b) if b <= 32 => b,
                Ok(_) => return Err(addr_err(s, "IPv4 prefix longer than 32")),
                Err(_) => {
                    let mm: Ipv4Addr = m.parse().map_err(|_| addr_err(s, "bad netmask"))?;
                    let mv = u32::from(mm);
                    if mv.leading_ones() + mv.trailing_zeros() != 32 {
                        return Err(addr_err(s, "non-contiguous netmask"));
                    }
                    mv.leading_ones()
                }
            },
        };
        let hostmask: u32 = if bits == 0 {
            u32::MAX
        } else {
            (1u32 << (32 - bits)) - 1
        };
        let lo = u32::from(v4) & !hostmask;
        return Ok(IpSet {
            v4: RangeSet::from_ranges(vec![(lo, lo | hostmask)]),
            v6: RangeSet::empty(),
        });
    }
    if let Ok(v6) = ip.parse::<Ipv6Addr>() {
        let bits = match mask {
            None => 128,
            Some(m) => match m.parse::<u32>() {
                Ok(b) if b <= 128 => b,
                _ => return Err(addr_err(s, "bad IPv6 prefix length")),
            },
        };
        let hostmask: u128 = if bits == 0 {
            u128::MAX
        } else {
            (1u128 << (128 - bits)) - 1
        };
        let lo = u128::from(v6) & !hostmask;
        return Ok(IpSet {
            v4: RangeSet::empty(),
            v6: RangeSet::from_ranges(vec![(lo, lo | hostmask)]),
        });
    }
    Err(addr_err(s, "not an IP address"))
}
