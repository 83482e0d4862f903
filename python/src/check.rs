//! `check`: one line judged, in the calling thread (a line is judged in microseconds; the GIL
//! is released only for long ones).

use std::collections::BTreeMap;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use rdq_envelope::envelope::Checker;
use rdq_envelope::{Diagnostic, EnvelopeRules, RuleOptions};

/// Lines from this many bytes on are judged with the GIL released.
const LONG_LINE: usize = 64 << 10;

/// The rule options every function takes, as keyword arguments.
pub(crate) fn rule_options(
    submit: bool,
    require_version: Option<u32>,
    warnings: bool,
    max_envelope_bytes: Option<u64>,
    queue_limits: Option<BTreeMap<String, u64>>,
) -> PyResult<EnvelopeRules> {
    let mut options = RuleOptions::default();
    options.submit = submit;
    options.require_version = require_version;
    options.warnings = warnings;
    if let Some(bytes) = max_envelope_bytes {
        options.max_envelope_bytes = bytes;
    }
    options.queue_limits = queue_limits.unwrap_or_default();
    EnvelopeRules::new(options).map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))
}

/// Judges `line` (without its line feed): a dict with `valid`, `version`, `errors` and
/// `warnings` (each a dict of `code`, `pointer`, `message`, `offset`).
#[pyfunction]
#[pyo3(signature = (line, submit, require_version, warnings, max_envelope_bytes, queue_limits))]
pub(crate) fn check<'py>(
    py: Python<'py>,
    line: Vec<u8>,
    submit: bool,
    require_version: Option<u32>,
    warnings: bool,
    max_envelope_bytes: Option<u64>,
    queue_limits: Option<BTreeMap<String, u64>>,
) -> PyResult<Bound<'py, PyDict>> {
    let rules = rule_options(
        submit,
        require_version,
        warnings,
        max_envelope_bytes,
        queue_limits,
    )?;
    let long = line.len() >= LONG_LINE;
    let judge = move || {
        let mut checker = Checker::new(rules);
        let checked = checker.check(&line);
        let verdict = checked.verdict();
        (
            verdict.is_valid(),
            verdict.version,
            verdict.errors.clone(),
            verdict.warnings.clone(),
        )
    };
    let (valid, version, errors, warnings) = match long {
        true => py.detach(judge),
        false => judge(),
    };
    let result = PyDict::new(py);
    result.set_item("valid", valid)?;
    result.set_item("version", version)?;
    result.set_item("errors", diagnostics(py, &errors)?)?;
    result.set_item("warnings", diagnostics(py, &warnings)?)?;
    Ok(result)
}

/// Diagnostics as a list of dicts.
fn diagnostics<'py>(py: Python<'py>, all: &[Diagnostic]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for d in all {
        let item = PyDict::new(py);
        item.set_item("code", d.code.as_str())?;
        item.set_item("pointer", &d.path)?;
        item.set_item("message", &d.message)?;
        item.set_item("offset", d.offset)?;
        list.append(item)?;
    }
    Ok(list)
}
