//! The learned part of the local decider: a logistic model over a
//! candidate's features and the calibration of its best score.
//!
//! The weights are data, fitted by `train/fit_decider.py` from features the
//! decider itself dumps (`examples/decider_features.rs`), and compiled in
//! from `decider_model.json`. The model ranks candidates by their log-odds;
//! a Platt calibration fitted on questions the ranker never saw turns the
//! best candidate's log-odds and its lead over the next note into
//! `confidence`, the probability that the answer is right. Its threshold for
//! an answered-precision of 0.9 on those questions is the default
//! `--answer-threshold` of `--decider learned`.

use std::sync::LazyLock;

use serde::Deserialize;

use super::decider::{Features, FEATURES, N_FEATURES};

/// The lead of a best candidate with no other note to compare with, and
/// the largest lead the calibration reads (the training script clips alike).
pub const MAX_LEAD: f32 = 4.0;

/// The fitted model as the training script writes it.
#[derive(Debug, Deserialize)]
pub struct DeciderModel {
    /// Feature names, in the order of [`FEATURES`].
    pub features: Vec<String>,
    pub weights: Vec<f32>,
    pub bias: f32,
    pub calibration: Calibration,
    /// The confidence at which answered-precision reached 0.9 on the
    /// development questions.
    pub threshold: f32,
}

/// Platt scaling of the best candidate's log-odds and lead.
#[derive(Debug, Deserialize)]
pub struct Calibration {
    pub logit: f32,
    pub lead: f32,
    pub bias: f32,
}

impl DeciderModel {
    /// Parses a model and checks that it names the decider's features.
    pub fn parse(json: &str) -> Result<DeciderModel, String> {
        let model: DeciderModel = serde_json::from_str(json).map_err(|e| e.to_string())?;
        if model.features != FEATURES || model.weights.len() != N_FEATURES {
            return Err(format!(
                "the model's features {:?} are not the decider's {:?}",
                model.features, FEATURES
            ));
        }
        Ok(model)
    }

    /// The log-odds that a candidate is the right answer.
    pub fn logit(&self, features: &Features) -> f32 {
        self.bias
            + self
                .weights
                .iter()
                .zip(features)
                .map(|(w, x)| w * x)
                .sum::<f32>()
    }

    /// The probability that the best candidate, with this log-odds and this
    /// lead over the next note, is right.
    pub fn confidence(&self, logit: f32, lead: f32) -> f32 {
        let c = &self.calibration;
        let z = c.bias + c.logit * logit + c.lead * lead.clamp(-MAX_LEAD, MAX_LEAD);
        1.0 / (1.0 + (-z).exp())
    }
}

/// The compiled-in model.
static DECIDER: LazyLock<DeciderModel> = LazyLock::new(|| {
    // The file is part of the source and a unit test parses it, so a
    // failure here is a build that never passed its tests.
    DeciderModel::parse(include_str!("decider_model.json")).expect("decider_model.json is valid")
});

/// The decider's model.
pub fn decider() -> &'static DeciderModel {
    &DECIDER
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compiled_model_names_the_deciders_features() {
        let model = DeciderModel::parse(include_str!("decider_model.json")).unwrap();
        assert!((0.0..=1.0).contains(&model.threshold));
        assert_eq!(
            model.threshold,
            crate::research::LEARNED_THRESHOLD,
            "LEARNED_THRESHOLD must be the threshold the training script chose"
        );
    }

    #[test]
    fn a_model_with_other_features_is_refused() {
        let json = r#"{"features": ["coverage"], "weights": [1.0], "bias": 0.0,
            "calibration": {"logit": 1.0, "lead": 0.0, "bias": 0.0}, "threshold": 0.5}"#;
        assert!(DeciderModel::parse(json).is_err());
    }

    #[test]
    fn confidence_grows_with_score_and_lead() {
        let model = decider();
        let low = model.confidence(-2.0, 0.0);
        let high = model.confidence(2.0, 0.0);
        assert!(low < high, "{low} < {high}");
        assert!(model.confidence(1.0, 0.0) <= model.confidence(1.0, 2.0));
    }
}
