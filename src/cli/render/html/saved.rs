//! The saved result `kpol report` reads: the fields of `kpol check --format json` (schema
//! version 1, docs/OUTPUT.md) the page shows, borrowed from the text where JSON escapes allow.

use std::borrow::Cow;

use serde::Deserialize;

/// One rule result as `--format json` writes it (the fields the report reads).
#[derive(Deserialize)]
pub struct Entry<'a> {
    #[serde(borrow)]
    pub policy: Cow<'a, str>,
    #[serde(borrow, default)]
    pub rule: Cow<'a, str>,
    #[serde(borrow)]
    pub result: Cow<'a, str>,
    #[serde(borrow, default)]
    pub action: Cow<'a, str>,
    #[serde(borrow, default)]
    pub message: Cow<'a, str>,
    #[serde(borrow)]
    pub resource: Resource<'a>,
    #[serde(borrow, default)]
    pub file: Option<Cow<'a, str>>,
    #[serde(default)]
    pub start: Option<Line>,
    /// The PolicyExceptions that made this result a skip.
    #[serde(borrow, default)]
    pub exceptions: Vec<Cow<'a, str>>,
    /// An inline suppression or baseline entry that made this result a skip, where the run
    /// records one (its reason and expiry are shown as given).
    #[serde(borrow, default)]
    pub suppression: Option<Suppression<'a>>,
}

#[derive(Deserialize)]
pub struct Resource<'a> {
    #[serde(borrow, default, rename = "apiVersion")]
    pub api_version: Cow<'a, str>,
    #[serde(borrow, default)]
    pub kind: Cow<'a, str>,
    #[serde(borrow, default)]
    pub namespace: Cow<'a, str>,
    #[serde(borrow, default)]
    pub name: Cow<'a, str>,
}

#[derive(Clone, Copy, Deserialize)]
pub struct Line {
    pub line: u32,
    #[serde(default)]
    pub column: u32,
}

#[derive(Clone, Default, Deserialize)]
pub struct Suppression<'a> {
    #[serde(borrow, default)]
    pub reason: Option<Cow<'a, str>>,
    /// The last day it holds (`until=`).
    #[serde(borrow, default)]
    pub until: Option<Cow<'a, str>>,
}

/// A policy as `--format json` lists it under `policies`.
#[derive(Deserialize)]
pub struct PolicyMeta<'a> {
    #[serde(borrow)]
    pub policy: Cow<'a, str>,
    #[serde(borrow, default)]
    pub title: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub description: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub category: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub severity: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
pub struct Diag<'a> {
    #[serde(borrow, default)]
    pub code: Cow<'a, str>,
    #[serde(borrow, default)]
    pub severity: Cow<'a, str>,
    #[serde(borrow, default)]
    pub message: Cow<'a, str>,
    #[serde(default)]
    pub location: Option<DiagLocation>,
}

#[derive(Deserialize)]
pub struct DiagLocation {
    #[serde(default)]
    pub file: String,
    #[serde(default)]
    pub start: Option<Line>,
}

/// The saved document (`kpol check --format json`, or `kpol merge`'s).
#[derive(Deserialize)]
pub struct Document<'a> {
    pub version: u32,
    #[serde(borrow)]
    pub results: Vec<Entry<'a>>,
    #[serde(borrow, default)]
    pub diagnostics: Vec<Diag<'a>>,
    pub summary: SavedSummary,
    #[serde(borrow, default)]
    pub policies: Vec<PolicyMeta<'a>>,
}

#[derive(Deserialize)]
pub struct SavedSummary {
    #[serde(default)]
    pub pass: usize,
    #[serde(default)]
    pub fail: usize,
    #[serde(default)]
    pub warn: usize,
    #[serde(default)]
    pub error: usize,
    #[serde(default)]
    pub skip: usize,
    #[serde(default, rename = "inputErrors")]
    pub input_errors: usize,
    #[serde(default, rename = "policyErrors")]
    pub policy_errors: usize,
    #[serde(default, rename = "otherErrors")]
    pub other_errors: usize,
    #[serde(default)]
    pub suppressed: usize,
    #[serde(default)]
    pub baselined: usize,
    #[serde(default, rename = "baselineStale")]
    pub baseline_stale: usize,
}
