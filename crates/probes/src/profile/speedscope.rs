//! The speedscope file format (<https://www.speedscope.app/file-format-schema.json>):
//! one `sampled` profile per recording, frames shared, one sample per distinct
//! folded stack weighted by its sample count.

use super::Folded;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The schema URL speedscope expects in `$schema`.
pub const SCHEMA: &str = "https://www.speedscope.app/file-format-schema.json";

/// A speedscope file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct File {
    /// Always [`SCHEMA`].
    #[serde(rename = "$schema")]
    pub schema: String,
    /// Frames shared by all profiles.
    pub shared: Shared,
    /// The profiles.
    pub profiles: Vec<SampledProfile>,
    /// Name shown in the title bar.
    pub name: String,
    /// Profile shown first.
    #[serde(rename = "activeProfileIndex")]
    pub active_profile_index: usize,
    /// Who wrote the file.
    pub exporter: String,
}

/// The shared part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shared {
    /// Frames, referred to by index.
    pub frames: Vec<Frame>,
}

/// One frame (a function).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Frame {
    /// Function name.
    pub name: String,
}

/// A `sampled` profile: `samples[i]` is a stack of frame indices (root first) with
/// weight `weights[i]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampledProfile {
    /// Always `sampled`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Profile name.
    pub name: String,
    /// Unit of the weights: `nanoseconds` (cpu-clock) or `none` (counts).
    pub unit: String,
    /// First value: 0.
    #[serde(rename = "startValue")]
    pub start_value: u64,
    /// Last value: the sum of the weights.
    #[serde(rename = "endValue")]
    pub end_value: u64,
    /// Stacks as frame indices, root first.
    pub samples: Vec<Vec<usize>>,
    /// One weight per sample.
    pub weights: Vec<u64>,
}

/// Builds a speedscope file from folded stacks.
/// `unit` is `nanoseconds` for `cpu-clock` recordings, `none` for plain counts.
pub fn from_folded(folded: &Folded, name: &str, unit: &str) -> File {
    let mut frames: Vec<Frame> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut samples = Vec::with_capacity(folded.stacks.len());
    let mut weights = Vec::with_capacity(folded.stacks.len());
    for (stack, n) in &folded.stacks {
        let ids = stack
            .iter()
            .map(|f| {
                *index.entry(f.as_str()).or_insert_with(|| {
                    frames.push(Frame { name: f.clone() });
                    frames.len() - 1
                })
            })
            .collect();
        samples.push(ids);
        weights.push(*n);
    }
    File {
        schema: SCHEMA.into(),
        shared: Shared { frames },
        profiles: vec![SampledProfile {
            kind: "sampled".into(),
            name: name.into(),
            unit: unit.into(),
            start_value: 0,
            end_value: folded.total(),
            samples,
            weights,
        }],
        name: name.into(),
        active_profile_index: 0,
        exporter: format!("xferbench {}", env!("CARGO_PKG_VERSION")),
    }
}

/// Checks a parsed speedscope document against the parts of the schema speedscope
/// relies on: `$schema`, named frames, and for each profile a known type, samples
/// and weights of equal length, frame indices in range and `endValue ≥ startValue`.
pub fn validate(doc: &serde_json::Value) -> Result<(), String> {
    if doc["$schema"] != SCHEMA {
        return Err(format!("$schema is {}, not {SCHEMA}", doc["$schema"]));
    }
    let frames = doc["shared"]["frames"]
        .as_array()
        .ok_or("shared.frames is not an array")?;
    for (i, f) in frames.iter().enumerate() {
        if !f["name"].is_string() {
            return Err(format!("frame {i} has no name"));
        }
    }
    let profiles = doc["profiles"]
        .as_array()
        .ok_or("profiles is not an array")?;
    if profiles.is_empty() {
        return Err("no profiles".into());
    }
    for (p, prof) in profiles.iter().enumerate() {
        if prof["type"] != "sampled" {
            return Err(format!(
                "profile {p}: type is {}, not sampled",
                prof["type"]
            ));
        }
        let unit = prof["unit"].as_str().unwrap_or("");
        let units = [
            "none",
            "nanoseconds",
            "microseconds",
            "milliseconds",
            "seconds",
            "bytes",
        ];
        if !units.contains(&unit) {
            return Err(format!("profile {p}: unknown unit {unit:?}"));
        }
        let samples = prof["samples"]
            .as_array()
            .ok_or("samples is not an array")?;
        let weights = prof["weights"]
            .as_array()
            .ok_or("weights is not an array")?;
        if samples.len() != weights.len() {
            return Err(format!(
                "profile {p}: {} samples but {} weights",
                samples.len(),
                weights.len()
            ));
        }
        for s in samples {
            for i in s.as_array().ok_or("a sample is not an array")? {
                let i = i.as_u64().ok_or("a frame index is not a number")? as usize;
                if i >= frames.len() {
                    return Err(format!("profile {p}: frame index {i} out of range"));
                }
            }
        }
        let (start, end) = (prof["startValue"].as_f64(), prof["endValue"].as_f64());
        match (start, end) {
            (Some(s), Some(e)) if e >= s => {}
            _ => return Err(format!("profile {p}: bad startValue/endValue")),
        }
    }
    Ok(())
}
