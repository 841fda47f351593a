//! Mixing the lexical (BM25) and dense rankings of a query's passages with
//! reciprocal rank fusion: a passage scores `1 / (K + rank)` in each list
//! it appears in. Ranks, not scores, are mixed, because BM25 scores and
//! cosines live on unrelated scales; `K = 60` is the constant of Cormack et
//! al. (2009), which keeps a single first place from outweighing agreement
//! lower down.

use std::collections::HashMap;
use std::hash::Hash;

/// The rank-damping constant.
pub const RRF_K: f32 = 60.0;

/// Fuses two rankings (best first) of items named by `key`; returns at most
/// `limit` items, best first, each with its fused score. An item in both
/// lists is taken from the lexical one.
pub fn reciprocal_rank_fusion<T, K: Hash + Eq>(
    lexical: Vec<T>,
    dense: Vec<T>,
    key: impl Fn(&T) -> K,
    limit: usize,
) -> Vec<(T, f32)> {
    let mut fused: Vec<(T, f32)> = Vec::with_capacity(lexical.len() + dense.len());
    let mut position: HashMap<K, usize> = HashMap::new();
    for ranked in [lexical, dense] {
        for (rank, item) in ranked.into_iter().enumerate() {
            let score = 1.0 / (RRF_K + rank as f32 + 1.0);
            let k = key(&item);
            match position.get(&k) {
                Some(&at) => fused[at].1 += score,
                None => {
                    position.insert(k, fused.len());
                    fused.push((item, score));
                }
            }
        }
    }
    // Stable: among equal scores the lexical order (then dense) stays.
    fused.sort_by(|a, b| b.1.total_cmp(&a.1));
    fused.truncate(limit);
    fused
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fuse(lexical: &[&'static str], dense: &[&'static str]) -> Vec<&'static str> {
        reciprocal_rank_fusion(lexical.to_vec(), dense.to_vec(), |s| *s, 10)
            .into_iter()
            .map(|(s, _)| s)
            .collect()
    }

    #[test]
    fn agreement_beats_a_single_first_place() {
        // "b" is second in both lists; "a" and "x" are first in one only.
        assert_eq!(fuse(&["a", "b", "c"], &["x", "b", "y"])[0], "b");
    }

    #[test]
    fn one_empty_list_keeps_the_other_order() {
        assert_eq!(fuse(&["a", "b", "c"], &[]), vec!["a", "b", "c"]);
        assert_eq!(fuse(&[], &["x", "y"]), vec!["x", "y"]);
    }

    #[test]
    fn ties_keep_the_lexical_order_and_the_limit_holds() {
        assert_eq!(fuse(&["a", "b"], &["b", "a"]), vec!["a", "b"]);
        let many: Vec<&'static str> = vec!["p"; 1];
        let got = reciprocal_rank_fusion(vec!["a", "b", "c"], many, |s| *s, 2);
        assert_eq!(got.len(), 2);
        assert!((got[0].1 - 1.0 / 61.0).abs() < 1e-6);
    }
}
