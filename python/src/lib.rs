//! The Python module `kingmaker._kingmaker`: the probing library's `Tables` for Python.
//! 1. The package `kingmaker` (kingmaker/__init__.py) wraps it with numpy arrays and iteration.
//! 2. Every argument is checked before anything is allocated or read: an index or a count is a
//!    Python int (not a bool), and one outside the game is refused (`PositionError`; `IndexError`
//!    in a bulk read), so no input panics or aborts.

use kingmaker_probe::{Game, Kind, Notation, ProbeError, Tables};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyIndexError, PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyString};
use pythonize::pythonize;

create_exception!(
    _kingmaker,
    KingmakerError,
    PyException,
    "Any error reading Kingmaker tables."
);
create_exception!(
    _kingmaker,
    NotTablesError,
    KingmakerError,
    "The path holds no finished tables."
);
create_exception!(
    _kingmaker,
    MissingLayerError,
    KingmakerError,
    "The tables lack the layer asked for."
);
create_exception!(
    _kingmaker,
    PositionError,
    KingmakerError,
    "Position text that does not parse, or an index outside the game."
);
create_exception!(
    _kingmaker,
    DamagedTableError,
    KingmakerError,
    "A file that fails its checks."
);

fn py_err(e: ProbeError) -> PyErr {
    let text = e.to_string();
    match e {
        // A release opened by its URL whose manifest cannot be had or believed: no tables there.
        ProbeError::NotTables { .. }
        | ProbeError::Unfinished { .. }
        | ProbeError::Game { .. }
        | ProbeError::Remote { .. } => NotTablesError::new_err(text),
        // A values-only copy asked for depths: a healthy file without the part asked for.
        ProbeError::MissingLayer { .. }
        | ProbeError::KeptOnWorkers { .. }
        | ProbeError::AbsentFile { .. }
        | ProbeError::NoDepths { .. } => MissingLayerError::new_err(text),
        ProbeError::BadPosition { .. } => PositionError::new_err(text),
        // Python's error for a range outside a sequence.
        ProbeError::OutOfRange { .. } => PyIndexError::new_err(text),
        ProbeError::Format(_) => DamagedTableError::new_err(text),
    }
}

fn to_py<T: serde::Serialize>(py: Python<'_>, value: &T) -> PyResult<Py<PyAny>> {
    Ok(pythonize(py, value)
        .map_err(|e| KingmakerError::new_err(e.to_string()))?
        .unbind())
}

/// Solved tables: a release or a finished run directory.
#[pyclass(name = "Tables", module = "kingmaker._kingmaker", frozen)]
struct PyTables {
    inner: Tables,
}

#[pymethods]
impl PyTables {
    #[new]
    fn new(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        // Without the GIL: a release opened by its URL waits on the network (perhaps on a
        // server in this very interpreter).
        Ok(PyTables {
            inner: py.detach(|| Tables::open(path)).map_err(py_err)?,
        })
    }

    /// The directory the tables were opened from.
    #[getter]
    fn path(&self) -> String {
        self.inner.dir().display().to_string()
    }

    /// "run" or "release".
    #[getter]
    fn kind(&self) -> &'static str {
        match self.inner.kind() {
            Kind::Run => "run",
            Kind::Release => "release",
        }
    }

    /// The game and its parameters, e.g. {"game": "cc3p", "level": 1}.
    #[getter]
    fn game(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, self.inner.spec())
    }

    /// The game's short name, as in run names.
    #[getter]
    fn name(&self) -> String {
        self.inner.game().name()
    }

    /// The number of states of the game's index space.
    #[getter]
    fn states(&self) -> u64 {
        self.inner.game().size()
    }

    /// The players' names, by seat.
    #[getter]
    fn players(&self) -> Vec<String> {
        let game = self.inner.game();
        (0..game.players()).map(|p| game.player_name(p)).collect()
    }

    /// The layers: name, coalition, objective, present (its file is here), depths (kept).
    #[getter]
    fn layers(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        self.inner
            .layers()
            .iter()
            .map(|l| {
                let d = serde_json::json!({
                    "name": l.name, "coalition": l.coalition, "objective": l.objective,
                    "present": l.present, "depths": l.depths,
                });
                to_py(py, &d)
            })
            .collect()
    }

    /// The index of a position ("" for the start).
    fn index(&self, position: &Bound<'_, PyAny>) -> PyResult<u64> {
        let text = position.cast::<PyString>().map_err(|_| {
            PyTypeError::new_err(format!("a position is text, not {}", type_name(position)))
        })?;
        self.inner.position(&text_of(text)?).map_err(py_err)
    }

    /// The position text of an index.
    fn position(&self, index: &Bound<'_, PyAny>) -> PyResult<String> {
        let index = self.state(index)?;
        Ok(self.inner.game().format_position(index))
    }

    /// Everything the tables say about a position (text, or an index).
    fn probe(&self, py: Python<'_>, position: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let index = self.index_of(position)?;
        // Without the GIL, as every read: a file read where it lies waits on the network.
        let probe = py.detach(|| self.inner.probe_index(index));
        to_py(py, &probe.map_err(py_err)?)
    }

    /// Every move from a position, best first for the side to move.
    fn moves(&self, py: Python<'_>, position: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let index = self.index_of(position)?;
        let moves = py.detach(|| self.inner.moves_of(index));
        to_py(py, &moves.map_err(py_err)?)
    }

    /// The (move, child index) pairs of a state, in the game's order, without reading tables.
    fn children(&self, index: &Bound<'_, PyAny>) -> PyResult<Vec<(String, u64)>> {
        let index = self.state(index)?;
        Ok(self.inner.game().moves(index))
    }

    /// The value codes (0 illegal, 1 W, 2 L, 3 D) of `count` states from `first`, as a
    /// bytearray (numpy's array of them shares its memory), decoded without the GIL.
    fn values_bytes<'py>(
        &self,
        py: Python<'py>,
        layer: &str,
        first: &Bound<'_, PyAny>,
        count: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyByteArray>> {
        let (first, count) = self.range(layer, first, count)?;
        let out = self.allocate(py, layer, first, count, false)?;
        // SAFETY: the bytearray was made above and no Python code holds it yet, so nothing
        // resizes or reads it while the GIL is released.
        let bytes = unsafe { out.as_bytes_mut() };
        py.detach(|| self.inner.values_into(layer, first, bytes))
            .map_err(py_err)?;
        Ok(out)
    }

    /// The depths of `count` states from `first`, as a bytearray of u16 in the machine's byte
    /// order, decoded without the GIL.
    fn depths_bytes<'py>(
        &self,
        py: Python<'py>,
        layer: &str,
        first: &Bound<'_, PyAny>,
        count: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyByteArray>> {
        let (first, count) = self.range(layer, first, count)?;
        let out = self.allocate(py, layer, first, count, true)?;
        // SAFETY: as in `values_bytes`.
        let bytes = unsafe { out.as_bytes_mut() };
        // SAFETY: any two bytes are a u16.
        let (head, depths, _) = unsafe { bytes.align_to_mut::<u16>() };
        if !head.is_empty() {
            // Python's allocators align to 8 bytes at least: not expected to happen.
            return Err(KingmakerError::new_err(
                "the depths' buffer is not aligned for u16",
            ));
        }
        py.detach(|| self.inner.depths_into(layer, first, depths))
            .map_err(py_err)?;
        Ok(out)
    }
}

impl PyTables {
    /// A position given as text or as an index.
    fn index_of(&self, position: &Bound<'_, PyAny>) -> PyResult<u64> {
        if let Ok(text) = position.cast::<PyString>() {
            return self.inner.position(&text_of(text)?).map_err(py_err);
        }
        self.state(position).map_err(|e| {
            if e.is_instance_of::<PyTypeError>(position.py()) {
                PyTypeError::new_err(format!(
                    "a position is text or an index, not {}",
                    type_name(position)
                ))
            } else {
                e
            }
        })
    }

    /// An index that names a state of the game: an int, else TypeError; in the game, else
    /// PositionError.
    fn state(&self, index: &Bound<'_, PyAny>) -> PyResult<u64> {
        let states = self.inner.states();
        match int_arg(index, "an index")? {
            Some(i) if i < states => Ok(i),
            _ => Err(py_err(ProbeError::BadPosition {
                text: index.to_string(),
                reason: format!("the game has {states} states"),
            })),
        }
    }

    /// The zeroed bytearray that a bulk read of `count` states from `first` fills (two bytes a
    /// state for `depths`), allocated once the library has found nothing to refuse: a refused
    /// read allocates nothing.
    fn allocate<'py>(
        &self,
        py: Python<'py>,
        layer: &str,
        first: u64,
        count: usize,
        depths: bool,
    ) -> PyResult<Bound<'py, PyByteArray>> {
        // Opening the layer may read its files where they lie: without the GIL.
        py.detach(|| self.inner.check_read(layer, first, count, depths))
            .map_err(py_err)?;
        let width = if depths { 2 } else { 1 };
        // The range lies in the game; its bytes may still not fit a usize.
        let len = count
            .checked_mul(width)
            .ok_or_else(|| PyIndexError::new_err(format!("{count} states do not fit in memory")))?;
        PyByteArray::new_with(py, len, |_| Ok(()))
    }

    /// `first` and `count` of a bulk read as the library takes them: ints, else TypeError;
    /// ints no u64 holds (negative, or 2**64 and more) are IndexError here, and the library
    /// checks the rest against the game before it allocates.
    fn range(
        &self,
        layer: &str,
        first: &Bound<'_, PyAny>,
        count: &Bound<'_, PyAny>,
    ) -> PyResult<(u64, usize)> {
        let (f, c) = (int_arg(first, "first")?, int_arg(count, "count")?);
        match (f, c.and_then(|c| usize::try_from(c).ok())) {
            (Some(f), Some(c)) => Ok((f, c)),
            _ => Err(PyIndexError::new_err(format!(
                "layer {layer} has {states} states (0..{states}): {count} asked from state {first}",
                states = self.inner.states()
            ))),
        }
    }
}

/// An int argument as a u64: None for an int no u64 holds (negative, or 2**64 and more);
/// TypeError for anything that is not an int, a bool included (Python counts `True` as 1).
fn int_arg(value: &Bound<'_, PyAny>, what: &str) -> PyResult<Option<u64>> {
    if value.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "{what} is an int, not a bool"
        )));
    }
    match value.extract::<u64>() {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_instance_of::<PyOverflowError>(value.py()) => Ok(None),
        Err(_) => Err(PyTypeError::new_err(format!(
            "{what} is an int, not {}",
            type_name(value)
        ))),
    }
}

/// A position's text as UTF-8: a str that has none (a lone surrogate, as `os.fsdecode` makes
/// of undecodable bytes) cannot be a position, so it is a `PositionError`, not Python's
/// `UnicodeEncodeError`.
fn text_of<'a>(text: &'a Bound<'_, PyString>) -> PyResult<std::borrow::Cow<'a, str>> {
    text.to_cow().map_err(|e| {
        py_err(ProbeError::BadPosition {
            text: text.to_string_lossy().into_owned(),
            reason: format!("not a position's text ({e})"),
        })
    })
}

/// The name of a value's type, for messages.
fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map_or_else(|_| "that".into(), |n| n.to_string())
}

/// The native part of the `kingmaker` package.
#[pymodule]
fn _kingmaker(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTables>()?;
    let py = m.py();
    m.add("KingmakerError", py.get_type::<KingmakerError>())?;
    m.add("NotTablesError", py.get_type::<NotTablesError>())?;
    m.add("MissingLayerError", py.get_type::<MissingLayerError>())?;
    m.add("PositionError", py.get_type::<PositionError>())?;
    m.add("DamagedTableError", py.get_type::<DamagedTableError>())?;
    Ok(())
}
