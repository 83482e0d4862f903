//! The Parquet side of `export`: Arrow arrays from the workers' column values, a Parquet
//! writer over an in-memory buffer that the writer's thread drains into each chunk's output.
//!
//! Parquet is written front to back (the footer, with every offset, comes last), so it needs no
//! seekable file: the bytes go through the run's ordinary output, atomic like every other.
//!
//! [`ArrowBatches`] is the same arrays without the file: record batches handed to an embedder
//! (the Python module's `read`).

use std::sync::Arc;

use arrow_array::builder::{Int64Builder, StringBuilder, TimestampMillisecondBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use super::{ColumnType, ColumnValues, ExportError, ExportField, ExportTally};
use super::{ROW_GROUP_BYTES, ROW_GROUP_ROWS};

/// The Parquet writer and what it has not handed out yet.
pub(super) struct ParquetSink {
    schema: SchemaRef,
    types: Vec<ColumnType>,
    /// `None` once finished, or after a failure (kept in `failed`).
    writer: Option<ArrowWriter<Vec<u8>>>,
    /// The first error: `settle` cannot fail, so it is reported when the run finishes.
    failed: Option<String>,
}

impl std::fmt::Debug for ParquetSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParquetSink")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

impl ParquetSink {
    pub(super) fn new(fields: &[ExportField]) -> Result<Self, ExportError> {
        let types: Vec<ColumnType> = fields.iter().map(ExportField::column_type).collect();
        let schema = schema(fields);
        let level = ZstdLevel::try_new(3).map_err(|e| ExportError::Parquet(e.to_string()))?;
        let properties = WriterProperties::builder()
            .set_compression(Compression::ZSTD(level))
            .set_max_row_group_size(ROW_GROUP_ROWS)
            .set_created_by(format!("rdq-envelope {}", env!("CARGO_PKG_VERSION")))
            .build();
        let writer = ArrowWriter::try_new(Vec::new(), Arc::clone(&schema), Some(properties))
            .map_err(|e| ExportError::Parquet(e.to_string()))?;
        Ok(ParquetSink {
            schema,
            types,
            writer: Some(writer),
            failed: None,
        })
    }

    /// Writes a chunk's rows and moves the encoded bytes ready so far to `out`.
    pub(super) fn append(&mut self, tally: &mut ExportTally, out: &mut Vec<u8>) {
        if tally.rows == 0 {
            return;
        }
        let Some(writer) = self.writer.as_mut() else {
            return;
        };
        let written = record_batch(&self.schema, &self.types, &tally.columns)
            .map_err(|e| e.to_string())
            .and_then(|batch| writer.write(&batch).map_err(|e| e.to_string()))
            .and_then(|()| {
                // Long texts: close the row group before its buffers grow past the budget.
                if writer.in_progress_size() > ROW_GROUP_BYTES {
                    writer.flush().map_err(|e| e.to_string())?;
                }
                Ok(())
            });
        match written {
            Ok(()) => {
                let encoded = writer.inner_mut();
                out.extend_from_slice(encoded);
                encoded.clear();
            }
            Err(e) => {
                self.failed.get_or_insert(e);
                self.writer = None;
            }
        }
    }

    /// The rows still held and the footer.
    pub(super) fn finish(&mut self) -> Result<Vec<u8>, ExportError> {
        if let Some(failed) = &self.failed {
            return Err(ExportError::Parquet(failed.clone()));
        }
        let writer = self
            .writer
            .take()
            .ok_or_else(|| ExportError::Parquet("the file was already finished".into()))?;
        writer
            .into_inner()
            .map_err(|e| ExportError::Parquet(e.to_string()))
    }
}

/// The Arrow schema of an export of `fields`: each column nullable, typed as
/// [`ColumnType`] says.
pub(super) fn schema(fields: &[ExportField]) -> SchemaRef {
    let columns: Vec<Field> = fields
        .iter()
        .map(|field| Field::new(field.name(), data_type(field.column_type()), true))
        .collect();
    Arc::new(Schema::new(columns))
}

/// Rows gathered from the chunks into record batches of about [`ROW_GROUP_ROWS`] rows (fewer
/// once their texts reach [`ROW_GROUP_BYTES`]), for [`super::ExportFormat::Arrow`].
#[derive(Debug)]
pub(super) struct ArrowBatches {
    schema: SchemaRef,
    types: Vec<ColumnType>,
    /// The rows not yet in a batch, column by column.
    pending: Vec<ColumnValues>,
    rows: usize,
}

impl ArrowBatches {
    pub(super) fn new(fields: &[ExportField]) -> Self {
        ArrowBatches {
            schema: schema(fields),
            types: fields.iter().map(ExportField::column_type).collect(),
            pending: (0..fields.len()).map(|_| ColumnValues::default()).collect(),
            rows: 0,
        }
    }

    /// Takes a chunk's rows; a batch when enough rows are gathered.
    pub(super) fn append(
        &mut self,
        tally: &ExportTally,
    ) -> Result<Option<RecordBatch>, ExportError> {
        for (pending, values) in self.pending.iter_mut().zip(&tally.columns) {
            pending.extend(values);
        }
        self.rows += tally.rows;
        let bytes: usize = self.pending.iter().map(|c| c.text.len()).sum();
        match self.rows >= ROW_GROUP_ROWS || bytes >= ROW_GROUP_BYTES {
            true => self.take().map(Some),
            false => Ok(None),
        }
    }

    /// The rows gathered so far as one batch (`None` when there are none).
    pub(super) fn finish(&mut self) -> Result<Option<RecordBatch>, ExportError> {
        match self.rows {
            0 => Ok(None),
            _ => self.take().map(Some),
        }
    }

    fn take(&mut self) -> Result<RecordBatch, ExportError> {
        let batch = record_batch(&self.schema, &self.types, &self.pending);
        self.pending.iter_mut().for_each(ColumnValues::clear);
        self.rows = 0;
        batch.map_err(|e| ExportError::Parquet(e.to_string()))
    }
}

/// The rows of `columns` (one [`ColumnValues`] per column, typed as `types` say) as one batch.
fn record_batch(
    schema: &SchemaRef,
    types: &[ColumnType],
    columns: &[ColumnValues],
) -> Result<RecordBatch, arrow_schema::ArrowError> {
    let arrays: Vec<ArrayRef> = columns
        .iter()
        .zip(types)
        .map(|(values, kind)| array(values, *kind))
        .collect();
    RecordBatch::try_new(Arc::clone(schema), arrays)
}

fn data_type(kind: ColumnType) -> DataType {
    match kind {
        ColumnType::Text => DataType::Utf8,
        ColumnType::Integer => DataType::Int64,
        ColumnType::Timestamp => DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
    }
}

/// One column's Arrow array.
fn array(values: &ColumnValues, kind: ColumnType) -> ArrayRef {
    let rows = values.valid.len();
    match kind {
        ColumnType::Text => {
            let mut builder = StringBuilder::with_capacity(rows, values.text.len());
            let mut start = 0;
            for (&end, &valid) in values.ends.iter().zip(&values.valid) {
                match valid {
                    true => builder.append_value(&values.text[start..end]),
                    false => builder.append_null(),
                }
                start = end;
            }
            Arc::new(builder.finish())
        }
        ColumnType::Integer => {
            let mut builder = Int64Builder::with_capacity(rows);
            builder.append_values(&values.numbers, &values.valid);
            Arc::new(builder.finish())
        }
        ColumnType::Timestamp => {
            let mut builder = TimestampMillisecondBuilder::with_capacity(rows).with_timezone("UTC");
            builder.append_values(&values.numbers, &values.valid);
            Arc::new(builder.finish())
        }
    }
}
