//! [`Engine::build`]: compile, order, apply `threshold.config`, group.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use shrike_rules::config_files::{Classification, ThresholdEntry};
use shrike_rules::loader::LoadedRule;
use shrike_rules::mpm::select_fast_pattern;
use shrike_rules::parse::keywords::ThresholdType;
use shrike_rules::parse::BufferId;

use super::compile::{action_order, compile, Classes, Compiled, OrderKeys, VarNames};
use super::group::{FastPat, Groups};
use super::setup::NegatedHeaders;
use super::sig::SigKind;
use super::threshold::{Kind, SuppressSpec, ThresholdSpec};
use super::{BuildReport, Engine, EngineConfig, SkippedRule};

/// Everything [`Engine::build`] needs.
#[derive(Debug, Clone, Copy)]
pub struct BuildInput<'a> {
    /// Parsed rules (from [`shrike_rules::load_rules`]).
    pub rules: &'a [LoadedRule],
    /// Rules whose address lists contain a negation (Suricata runs those as packet rules,
    /// not IP-only); `None` treats every rule as negation-free.
    pub negated: Option<&'a NegatedHeaders>,
    /// `classification.config` entries.
    pub classifications: &'a HashMap<String, Classification>,
    /// `threshold.config` entries.
    pub thresholds: &'a [ThresholdEntry],
    /// Engine settings.
    pub config: &'a EngineConfig,
}

/// Suricata's signature order: action, flowbits, flowint, flowvar, pktvar, hostbits, ippairbits,
/// priority, sid.
fn order_key(c: &Compiled) -> (u8, std::cmp::Reverse<OrderKeys>, u32, u32, u32) {
    (
        action_order(c.sig.info.action),
        std::cmp::Reverse(c.order),
        c.sig.info.priority,
        c.sig.info.sid,
        c.sig.info.gid,
    )
}

impl PartialOrd for OrderKeys {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for OrderKeys {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (
            self.flowbits,
            self.flowint,
            self.flowvar,
            self.pktvar,
            self.hostbits,
            self.ippairbits,
        )
            .cmp(&(
                o.flowbits,
                o.flowint,
                o.flowvar,
                o.pktvar,
                o.hostbits,
                o.ippairbits,
            ))
    }
}

fn fast_pattern(l: &LoadedRule) -> FastPat {
    let c = select_fast_pattern(&l.rule)?;
    if c.buffer != BufferId::PAYLOAD || c.negated || c.pattern.is_empty() {
        return None;
    }
    let lower = c.pattern.to_ascii_lowercase();
    let exact = (!c.nocase).then(|| c.pattern.clone());
    Some((lower, exact))
}

impl Engine {
    /// Compile the rules into an engine. Never fails: rules that cannot be enforced are
    /// listed in [`Engine::report`] with their reason.
    pub fn build(input: BuildInput<'_>) -> Engine {
        let t0 = Instant::now();
        super::prefilter::configure(input.config.mpm_algo, input.config.mpm_cache_dir.clone());
        let classes: Classes = input
            .classifications
            .iter()
            .map(|(k, c)| {
                (
                    k.clone(),
                    (Arc::<str>::from(c.description.as_str()), c.priority),
                )
            })
            .collect();
        let mut names = VarNames::default();
        let mut report = BuildReport {
            rules: input.rules.len(),
            ..BuildReport::default()
        };
        let mut compiled: Vec<(Compiled, FastPat)> = Vec::with_capacity(input.rules.len());
        for l in input.rules {
            let neg = input.negated.is_some_and(|n| n.contains(&l.source));
            match compile(
                &l.rule,
                Arc::clone(&l.source.file),
                l.source.line,
                neg,
                &classes,
                &mut names,
                input.config.pcre,
            ) {
                Ok(c) => compiled.push((c, fast_pattern(l))),
                Err(reason) => {
                    *report.by_reason.entry(reason.to_string()).or_default() += 1;
                    report.skipped.push(SkippedRule {
                        file: Arc::clone(&l.source.file),
                        line: l.source.line,
                        sid: l.rule.sid,
                        reason,
                    });
                }
            }
        }
        compiled.sort_by_key(|(c, _)| order_key(c));

        // Thresholds: the rule's own first, then threshold.config.
        let mut thresholds: Vec<ThresholdSpec> = Vec::new();
        let mut suppress: Vec<SuppressSpec> = Vec::new();
        let mut own: Vec<Option<ThresholdSpec>> = Vec::with_capacity(compiled.len());
        for (c, _) in &compiled {
            own.push(c.threshold);
        }
        let mut by_id: HashMap<(u32, u32), Vec<usize>> = HashMap::new();
        for (i, (c, _)) in compiled.iter().enumerate() {
            by_id
                .entry((c.sig.info.gid, c.sig.info.sid))
                .or_default()
                .push(i);
        }
        let mut cfg_threshold: Vec<Option<ThresholdSpec>> = vec![None; compiled.len()];
        let mut noalert = vec![false; compiled.len()];
        let mut sup_of: Vec<Vec<u32>> = vec![Vec::new(); compiled.len()];
        let targets = |gid: u32, sid: u32| -> Vec<usize> {
            if sid != 0 {
                by_id.get(&(gid, sid)).cloned().unwrap_or_default()
            } else {
                compiled
                    .iter()
                    .enumerate()
                    .filter(|(_, (c, _))| gid == 0 || c.sig.info.gid == gid)
                    .map(|(i, _)| i)
                    .collect()
            }
        };
        for e in input.thresholds {
            match e {
                ThresholdEntry::Threshold {
                    gid,
                    sid,
                    kind,
                    track,
                    count,
                    seconds,
                    ..
                } => {
                    let spec = ThresholdSpec {
                        kind: match kind {
                            ThresholdType::Limit => Kind::Limit,
                            ThresholdType::Both => Kind::Both,
                            ThresholdType::DetectionFilter => Kind::Detection,
                            _ => Kind::Threshold,
                        },
                        track: *track,
                        count: *count,
                        seconds: *seconds,
                    };
                    let t = targets(*gid, *sid);
                    if t.is_empty() && *sid != 0 {
                        report.warnings.push(format!(
                            "threshold.config: no rule with gid {gid} sid {sid}"
                        ));
                    }
                    for i in t {
                        // A global entry leaves rules with their own threshold alone; a
                        // per-rule entry replaces the rule's threshold.
                        if *sid == 0 && own[i].is_some() {
                            continue;
                        }
                        cfg_threshold[i] = Some(spec);
                    }
                }
                ThresholdEntry::Suppress { gid, sid, target } => {
                    let t = targets(*gid, *sid);
                    match target {
                        None => t.into_iter().for_each(|i| noalert[i] = true),
                        Some((track, ips)) => {
                            let id = suppress.len() as u32;
                            suppress.push(SuppressSpec {
                                track: *track,
                                ips: ips.clone(),
                            });
                            t.into_iter().for_each(|i| sup_of[i].push(id));
                        }
                    }
                }
                ThresholdEntry::RateFilter { gid, sid, .. } => report.warnings.push(format!(
                    "threshold.config: rate_filter for gid {gid} sid {sid} accepted but not enforced (IDS mode)"
                )),
            }
        }

        let mut sigs = Vec::with_capacity(compiled.len());
        let mut fps = Vec::with_capacity(compiled.len());
        for (i, (c, fp)) in compiled.into_iter().enumerate() {
            let mut s = c.sig;
            if let Some(spec) = cfg_threshold[i].or(own[i]) {
                s.threshold = Some(thresholds.len() as u32);
                thresholds.push(spec);
            }
            s.noalert |= noalert[i];
            s.suppress = std::mem::take(&mut sup_of[i]).into_boxed_slice();
            report.prefiltered += usize::from(fp.is_some());
            sigs.push(s);
            fps.push(fp);
        }
        let iponly: Box<[u32]> = sigs
            .iter()
            .enumerate()
            .filter(|(_, s)| s.kind == SigKind::IpOnly)
            .map(|(i, _)| i as u32)
            .collect();
        report.ip_only = iponly.len();
        let iponly = super::iponly::IpOnlyIndex::build(&sigs, &iponly);
        report.decoder_event = sigs
            .iter()
            .filter(|s| s.kind == SigKind::DecoderEvent)
            .count();
        report.loaded = sigs.len();
        report.compile_time = t0.elapsed();
        let t1 = Instant::now();
        let groups = Groups::build(&sigs, &fps, input.config.max_port_groups);
        (report.groups, report.biggest_group) = groups.stats();
        report.port_groups = groups.distinct;
        report.prefilter_time = groups.prefilter_time;
        report.prefilter_patterns = groups.prefilter_patterns;
        report.group_time = t1.elapsed();
        let app = super::app_inspect::AppIndex::build(&sigs);
        let frame_sigs: Box<[u32]> = sigs
            .iter()
            .enumerate()
            .filter(|(_, s)| s.kind == SigKind::Frame)
            .map(|(i, _)| i as u32)
            .collect();
        report.prefiltered += sigs
            .iter()
            .filter(|s| s.app.as_ref().is_some_and(|a| a.is_tx() && a.fp.is_some()))
            .count();
        let has_tags = sigs.iter().any(|s| !s.tags.is_empty());
        let has_host_tags = sigs.iter().any(|s| {
            s.tags
                .iter()
                .any(|t| t.kind == shrike_rules::parse::keywords::TagKind::Host)
        });
        let has_hostbits = sigs
            .iter()
            .any(|s| !s.host_checks.is_empty() || !s.host_post.is_empty());
        let by_id = |m: &HashMap<String, u32>| {
            let mut v: Vec<Box<str>> = vec![Box::from(""); m.len()];
            for (k, &i) in m {
                if let Some(slot) = v.get_mut(i as usize) {
                    *slot = Box::from(k.as_str());
                }
            }
            v
        };
        let bit_names = by_id(&names.bits);
        let int_names = by_id(&names.ints);
        // Every prefilter is built: start compiling the Hyperscan upgrades (`mpm-algo: auto`).
        super::prefilter::spawn_upgrades();
        Engine {
            bit_names,
            int_names,
            has_tags,
            has_host_tags,
            has_hostbits,
            host: Default::default(),
            sigs,
            iponly,
            groups,
            app,
            frame_sigs,
            thresholds,
            suppress,
            cfg: input.config.clone(),
            report,
        }
    }
}
