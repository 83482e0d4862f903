//! `rdq_envelope._native`: the library in a Python process (docs/python.md).
//!
//! The Python package (`python/rdq_envelope/`) checks and normalises every argument and calls
//! these functions; what they return (JSON text, Arrow streams) it turns into dicts and
//! tables. Every run over inputs happens on threads of its own while the calling thread has
//! released the GIL ([`running::run_interruptible`]), so Python threads run beside it and
//! Ctrl-C ends it within a tenth of a second, with every output as it was.

mod arrow_stream;
mod check;
mod commands;
mod running;
mod sources;

use std::ffi::OsString;

use pyo3::prelude::*;

pyo3::create_exception!(
    _native,
    Error,
    pyo3::exceptions::PyException,
    "A run that could not complete: `args` are (code, message)."
);

/// Raises [`Error`] with a code (`INPUT`, `OUTPUT`, `USAGE`, `INTERNAL`) and a message.
pub(crate) fn error(code: &str, message: impl std::fmt::Display) -> PyErr {
    Error::new_err((code.to_owned(), message.to_string()))
}

/// The `rdq-envelope` command, in this process: `argv` with the program's name first. Only for
/// the console script (`rdq_envelope._cli`): it installs the command line's signal handlers
/// and a signal ends the process, as the binary does.
#[pyfunction]
fn cli_main(py: Python<'_>, argv: Vec<OsString>) -> u8 {
    py.detach(move || rdq_envelope::cli::main_with_args(argv))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("Error", m.py().get_type::<Error>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(check::check, m)?)?;
    m.add_function(wrap_pyfunction!(commands::read, m)?)?;
    m.add_function(wrap_pyfunction!(commands::validate, m)?)?;
    m.add_function(wrap_pyfunction!(commands::migrate, m)?)?;
    m.add_function(wrap_pyfunction!(commands::filter, m)?)?;
    m.add_function(wrap_pyfunction!(commands::stats, m)?)?;
    m.add_function(wrap_pyfunction!(commands::compile_where, m)?)?;
    m.add_class::<arrow_stream::BatchStream>()?;
    m.add_class::<arrow_stream::Table>()?;
    Ok(())
}
